#!/usr/bin/env bash
# The shell check: every shell script of the repository passes shellcheck at warning level
# (an unchecked cd, an unquoted expansion that splits, a variable used before it is set, …).
# Needs shellcheck; without it the test reports SKIPPED (exit 77) with the install line.
set -uo pipefail
cd "${1:?usage: tests/shell_check.sh SOURCE_DIR}" || exit 1
if ! command -v shellcheck >/dev/null; then
  echo "SKIPPED: no shellcheck (sudo apt-get install -y shellcheck)"
  exit 77
fi
scripts=(.ci/run scripts/*.sh scripts/*/*.sh tests/*.sh)
echo "shellcheck -S warning: ${scripts[*]}"
shellcheck -S warning "${scripts[@]}"
