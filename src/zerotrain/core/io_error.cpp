// throw_errno: the IoError of a failed system call (see io_error.h).
#include "zerotrain/core/io_error.h"

#include <cerrno>
#include <cstring>

namespace zt {

void throw_errno(std::string_view component, std::string_view what,
                 const std::filesystem::path& path) {
  const int err = errno;
  throw IoError(component, str(what, " ", path.string(), ": ", std::strerror(err)));
}

}  // namespace zt
