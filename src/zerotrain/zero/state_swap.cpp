// Optimizer state in swap files; see state_swap.h.
#include "zerotrain/zero/state_swap.h"

#include <algorithm>
#include <cstring>

#include "zerotrain/core/error.h"

namespace zt::zero {

namespace {

// Bytes of one tensor's place in a sub-group's region: whole 4096-byte pages, so every transfer
// of a tensor is direct.
int64_t slot_bytes(const StateSwap::Slot& s) {
  return io::swap_aligned(s.numel * static_cast<int64_t>(dtype_size(s.dtype)));
}

}  // namespace

struct StateSwap::Buffer {
  io::AlignedHostBuffer memory;
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t holds = kNone;  // the sub-group read (or being read) into it
  io::SwapRequest read, write;
};

StateSwap::StateSwap(const std::string& nvme_path, std::vector<std::vector<Slot>> layout,
                     int64_t buffer_count, const config::AioConfig& aio)
    : layout_(std::move(layout)) {
  if (buffer_count < 1)
    throw ValueError("config", str("zero_optimization.offload_optimizer.buffer_count: must be "
                                   ">= 1, got ",
                                   buffer_count));
  int64_t total = 0, largest = 0;
  for (const std::vector<Slot>& slots : layout_) {
    int64_t b = 0;
    for (const Slot& s : slots)
      b += slot_bytes(s);
    offset_.push_back(total);
    bytes_.push_back(b);
    total += b;
    largest = std::max(largest, b);
  }
  dir_ = std::make_unique<io::SwapDirectory>(io::SwapDirectory::create(nvme_path, total));
  file_ = std::make_unique<io::SwapFile>(*dir_, "optimizer_state.swap", std::max<int64_t>(total, 1),
                                         aio);
  path_ = file_->path().string();
  const int64_t count = std::min<int64_t>(buffer_count, std::max<size_t>(layout_.size(), 1));
  for (int64_t i = 0; i < count; ++i) {
    buffers_.push_back(std::make_unique<Buffer>());
    buffers_.back()->memory = io::AlignedHostBuffer(largest);
  }
}

StateSwap::~StateSwap() {
  for (auto& b : buffers_) {  // requests in flight use the buffers and the file
    b->read = io::SwapRequest();
    b->write = io::SwapRequest();
  }
}

StateSwap::Buffer& StateSwap::buffer_of(size_t s) {
  return *buffers_[s % buffers_.size()];
}

void StateSwap::prefetch(size_t s) {
  Buffer& b = buffer_of(s);
  if (b.holds == s) return;
  b.write.wait();  // its last sub-group reached the file before the buffer is overwritten
  b.read = file_->read(offset_.at(s), b.memory.data(), bytes_[s]);
  b.holds = s;
}

std::vector<Tensor> StateSwap::load(size_t s) {
  prefetch(s);
  Buffer& b = buffer_of(s);
  b.read.wait();
  std::vector<Tensor> out;
  int64_t at = 0;
  for (const Slot& slot : layout_[s]) {
    out.push_back(Tensor::wrap(b.memory.data() + at, {slot.numel}, slot.dtype, Device::cpu()));
    at += slot_bytes(slot);
  }
  return out;
}

void StateSwap::store(size_t s, const std::vector<Tensor>& tensors) {
  if (tensors.size() != layout_.at(s).size())
    throw ValueError("zero", str("swap sub-group ", s, ": ", tensors.size(), " tensors for ",
                                 layout_[s].size(), " slots"));
  Buffer& b = buffer_of(s);
  b.read.wait();
  b.write.wait();
  int64_t at = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor host = tensors[k].contiguous().to(Device::cpu());
    const int64_t n = static_cast<int64_t>(host.nbytes());
    if (host.numel() != layout_[s][k].numel || host.dtype() != layout_[s][k].dtype)
      throw ValueError("zero", str("swap sub-group ", s, " slot ", k, ": got ", host.describe()));
    std::memcpy(b.memory.data() + at, host.data(), static_cast<size_t>(n));
    std::memset(b.memory.data() + at + n, 0, static_cast<size_t>(slot_bytes(layout_[s][k]) - n));
    at += slot_bytes(layout_[s][k]);
  }
  b.holds = s;
  b.write = file_->write(offset_[s], b.memory.data(), bytes_[s]);
  b.write.wait();
}

void StateSwap::write_back(size_t s) {
  Buffer& b = buffer_of(s);
  if (b.holds != s)
    throw ValueError("zero", str("swap sub-group ", s, ": written back without being loaded"));
  b.write = file_->write(offset_[s], b.memory.data(), bytes_[s]);
}

void StateSwap::finish() {
  for (auto& b : buffers_)
    b->write.wait();
}

int64_t StateSwap::file_bytes() const {
  return file_->bytes();
}

int64_t StateSwap::buffer_bytes() const {
  int64_t b = 0;
  for (const auto& buf : buffers_)
    b += buf->memory.bytes();
  return b;
}

}  // namespace zt::zero
