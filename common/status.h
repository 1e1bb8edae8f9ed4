/** @file
 *  Errors as values.  Every host helper and every version's launcher returns a
 *  `hm::Status`: empty when the call worked, otherwise a message that names what failed
 *  and why.  Bad input never aborts the process and never reaches the GPU.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace hm {

/// The result of a call that can fail: ok, or an error message for a person to read.
class [[nodiscard]] Status {
 public:
  /// A successful result.
  Status() = default;

  /// A failed result carrying `message`.
  static Status error(std::string message) { return Status(std::move(message)); }

  /// True when the call worked.
  bool ok() const { return message_.empty(); }

  /// The error message; empty when ok().
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {
    if (message_.empty()) message_ = "unknown error";
  }
  std::string message_;
};

/// Turns a CUDA runtime result into a Status naming the call, its location and the error.
Status cuda_status(cudaError_t result, const char* call, const char* file, int line);

/// Throws std::runtime_error carrying the message when `status` is an error.  For the
/// command-line tool and the tests, where an error ends the current task.
inline void throw_if_error(const Status& status) {
  if (!status.ok()) throw std::runtime_error(status.message());
}

}  // namespace hm

/// Returns the Status of `expr` from the enclosing function when it is an error.
#define HM_TRY(expr)                              \
  do {                                            \
    if (::hm::Status hm_status_ = (expr); !hm_status_.ok()) \
      return hm_status_;                          \
  } while (0)

/// Returns an error Status from the enclosing function when the CUDA call `expr` fails.
#define HM_CUDA_TRY(expr) HM_TRY(::hm::cuda_status((expr), #expr, __FILE__, __LINE__))

/// Throws when the CUDA call `expr` fails (command-line tool and tests only).
#define HM_CUDA_CHECK(expr) \
  ::hm::throw_if_error(::hm::cuda_status((expr), #expr, __FILE__, __LINE__))
