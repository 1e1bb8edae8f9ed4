/** @file
 *  Running the command-line tool from a test: its exit status and what it printed.
 *  HM_CLI_PATH, the tool's path in this build, comes from tests/CMakeLists.txt.
 */
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

/// Runs `command` in a shell: its exit status (-1 if it did not exit) and what it printed,
/// standard error included.
inline std::pair<int, std::string> run_shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed: " + command};
  std::string output;
  char chunk[512];
  while (size_t got = fread(chunk, 1, sizeof chunk, pipe)) output.append(chunk, got);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

/// Runs the command-line tool with `args`.
inline std::pair<int, std::string> run_cli(const std::string& args) {
  return run_shell(std::string(HM_CLI_PATH) + " " + args);
}

/// The whole of the file at `path` (a JSON file the tool wrote), or "" if it cannot be read.
inline std::string file_text(const std::string& path) {
  std::ifstream file(path);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

/// The flat JSON object of the tool's output that starts at `at`, up to its closing brace.
inline std::string object_at(const std::string& text, size_t at) {
  return text.substr(at, text.find('}', at) - at);
}
