// Errors of file access, for every layer that reads or writes files. IoError: the operating system
// refused (open, read, write, fsync, rename), with the path and the system's reason. FormatError: a
// file's content is malformed (a safetensors header, an index, a config.json), naming the file and
// the bad key, tensor or offset.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "zerotrain/core/error.h"

namespace zt {

class IoError : public Error {
  using Error::Error;
};

class FormatError : public Error {
  using Error::Error;
};

// IoError "[component] <what> <path>: <strerror(errno)>" for the current errno.
[[noreturn]] void throw_errno(std::string_view component, std::string_view what,
                              const std::filesystem::path& path);

}  // namespace zt
