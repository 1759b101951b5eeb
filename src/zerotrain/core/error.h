// Typed errors. Every message starts with "[component]" and shows the bad value; library code
// throws, only the CLI turns errors into exit codes.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace zt {

// Concatenates anything streamable: str("got ", n, " elements").
template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

class Error : public std::runtime_error {
 public:
  Error(std::string_view component, const std::string& message)
      : std::runtime_error(str("[", component, "] ", message)), component_(component) {}
  const std::string& component() const { return component_; }

 private:
  std::string component_;
};

// A bad argument value (not a shape/dtype/device mismatch).
class ValueError : public Error {
  using Error::Error;
};
// Tensor shapes that do not fit together.
class ShapeError : public Error {
  using Error::Error;
};
// An element type the operation does not accept.
class DTypeError : public Error {
  using Error::Error;
};
// Tensors on the wrong device, or a backend that is not built.
class DeviceError : public Error {
  using Error::Error;
};
// An allocation that does not fit (real device memory or the configured cap).
class OutOfMemoryError : public Error {
  using Error::Error;
};
// A CUDA / cuBLAS / NCCL call that failed.
class BackendError : public Error {
  using Error::Error;
};

// Thrown by CUDA entry points in a build without the CUDA backend.
[[noreturn]] void throw_no_cuda(std::string_view op);

// Internal invariant; a failure is a zerotrain bug, not a user error.
#define ZT_ASSERT(cond, component, ...)                                                           \
  do {                                                                                            \
    if (!(cond))                                                                                  \
      throw ::zt::Error(component, ::zt::str("internal check failed: " #cond " (", __FILE__, ":", \
                                             __LINE__, ") ", ##__VA_ARGS__));                     \
  } while (0)

}  // namespace zt
