#include "zerotrain/core/storage.h"

namespace zt {

Storage::Storage(size_t nbytes, Allocator& alloc, Stream stream)
    : data_(alloc.allocate(nbytes, stream)),
      nbytes_(nbytes),
      device_(alloc.device()),
      alloc_(&alloc),
      stream_(stream) {}

Storage::Storage(void* external, size_t nbytes, Device device)
    : data_(external), nbytes_(nbytes), device_(device) {}

Storage::~Storage() {
  if (alloc_) alloc_->deallocate(data_, nbytes_, stream_);
}

}  // namespace zt
