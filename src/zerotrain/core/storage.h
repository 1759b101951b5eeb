// A block of memory on one device, returned to its allocator when the last owner goes away.
#pragma once

#include <cstddef>
#include <memory>

#include "zerotrain/core/allocator.h"

namespace zt {

class Storage {
 public:
  // Allocates nbytes from `alloc`; the block is tied to `stream` (see [Note: caching allocator]).
  Storage(size_t nbytes, Allocator& alloc, Stream stream);
  // Wraps memory owned elsewhere (not freed).
  Storage(void* external, size_t nbytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Device device_;
  Allocator* alloc_ = nullptr;  // null for external memory
  Stream stream_;
};

}  // namespace zt
