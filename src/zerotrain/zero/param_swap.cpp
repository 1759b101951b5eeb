// Parameter shards in a swap file; see param_swap.h.
#include "zerotrain/zero/param_swap.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

#include "zerotrain/core/error.h"
#include "zerotrain/io/aligned_host_buffer.h"
#include "zerotrain/zero/host_buffer.h"

namespace zt::zero {

namespace {

constexpr size_t kNoUnit = static_cast<size_t>(-1);

}  // namespace

// One staging buffer: page-locked memory (page-aligned, so reads into it are direct) or, without
// pinning or where the OS refused it, aligned ordinary memory.
struct ParamSwap::Buffer {
  Tensor pinned;
  io::AlignedHostBuffer plain;
  std::byte* data = nullptr;
  int64_t bytes = 0;
  size_t unit = kNoUnit;
  int pins = 0;
  std::thread::id pinner;           // the thread holding the pins
  uint64_t used = 0;                // clock of the last use, for least recently used
  std::optional<CudaEvent> copies;  // the last copies queued from it (GPU only)
};

ParamSwap::ParamSwap(std::vector<Shard> shards, const ParamOffload& target,
                     const config::AioConfig& aio, Device device)
    : shards_(std::move(shards)) {
  const auto bytes_of = [](const Shard& s) {
    return io::swap_aligned(s.numel * static_cast<int64_t>(dtype_size(s.dtype)));
  };
  int64_t largest = 0, widest = 1;
  for (const Shard& s : shards_) {
    largest = std::max(largest, bytes_of(s));
    widest = std::max(widest, static_cast<int64_t>(dtype_size(s.dtype)));
  }
  // A unit holds consecutive groups up to max(buffer_size, the largest shard) elements.
  const int64_t capacity = std::max(largest, io::swap_aligned(target.buffer_size * widest));
  int64_t total = 0;
  for (const Shard& s : shards_) {
    const int64_t b = bytes_of(s);
    if (units_.empty() || units_.back().bytes + b > capacity) units_.push_back({total, 0});
    unit_of_.push_back(units_.size() - 1);
    offset_in_.push_back(units_.back().bytes);
    units_.back().bytes += b;
    total += b;
  }
  int64_t buffer = 0;
  for (const Unit& u : units_)
    buffer = std::max(buffer, u.bytes);
  dir_ = std::make_unique<io::SwapDirectory>(io::SwapDirectory::create(target.nvme_path, total));
  file_ =
      std::make_unique<io::SwapFile>(*dir_, "parameters.swap", std::max<int64_t>(total, 1), aio);
  pin_key_ = target.pin_memory ? "offload_param.pin_memory" : "";
  device_ = device;
  buffer_size_bytes_ = std::max<int64_t>(buffer, io::kSwapAlignment);
  const auto unit_count = std::max<int64_t>(1, static_cast<int64_t>(units_.size()));
  const int64_t staging = std::min<int64_t>(target.buffer_count, unit_count);
  const int64_t cached =
      std::min(unit_count - staging, target.max_in_cpu / (buffer_size_bytes_ / widest));
  staging_count_ = static_cast<size_t>(staging);
  buffer_limit_ = static_cast<size_t>(staging + cached);
  for (size_t i = 0; i < staging_count_; ++i)
    add_buffer();
}

void ParamSwap::add_buffer() {
  auto b = std::make_unique<Buffer>();
  b->bytes = buffer_size_bytes_;
  if (!pin_key_.empty()) b->pinned = host_buffer(b->bytes, DType::u8, pin_key_);
  if (b->pinned.defined() && io::is_swap_aligned(b->pinned.data())) {
    b->data = static_cast<std::byte*>(b->pinned.data());
  } else {
    b->pinned = Tensor();
    b->plain = io::AlignedHostBuffer(b->bytes);
    b->data = b->plain.data();
  }
  if (device_.is_cuda()) b->copies.emplace(device_);
  buffers_.push_back(std::move(b));
}

ParamSwap::~ParamSwap() = default;

ParamSwap::Buffer* ParamSwap::holding(size_t unit) {
  for (auto& b : buffers_)
    if (b->unit == unit) return b.get();
  return nullptr;
}

ParamSwap::Buffer& ParamSwap::free_buffer(std::unique_lock<std::mutex>& lock) {
  if (buffers_.size() < buffer_limit_) {  // an unused buffer, else a new cache buffer
    for (auto& b : buffers_)
      if (b->pins == 0 && b->unit == kNoUnit) {
        if (b->copies) b->copies->synchronize();
        return *b;
      }
    add_buffer();
    return *buffers_.back();
  }
  Buffer* best = nullptr;
  for (;;) {
    bool mine = true;  // every pinned buffer is this thread's: waiting would never end
    for (auto& b : buffers_) {
      if (b->pins == 0 && (!best || b->used < best->used)) best = b.get();
      if (b->pins > 0 && b->pinner != std::this_thread::get_id()) mine = false;
    }
    if (best) break;
    if (mine)
      throw ValueError("config",
                       str("zero_optimization.offload_param.buffer_count: all ", buffers_.size(),
                           buffers_.size() > staging_count_ ? " staging and cache" : " staging",
                           " buffers are in use at once"));
    unpinned_.wait(lock);
  }
  if (best->copies) best->copies->synchronize();  // the device has what it copied from it
  best->unit = kNoUnit;
  return *best;
}

ParamSwap::Buffer& ParamSwap::resident(size_t unit, std::unique_lock<std::mutex>& lock) {
  Buffer* b = holding(unit);
  if (!b) {
    Buffer& free = free_buffer(lock);  // may wait, while the other thread reads `unit` in
    b = holding(unit);
    if (!b) {
      b = &free;
      file_->read(units_[unit].offset, b->data, units_[unit].bytes).wait();
      b->unit = unit;
    }
  }
  b->used = ++clock_;
  return *b;
}

Tensor ParamSwap::pin(size_t g) {
  std::unique_lock lock(mu_);
  Buffer& b = resident(unit_of_.at(g), lock);
  if (b.pins++ == 0) b.pinner = std::this_thread::get_id();
  return Tensor::wrap(b.data + offset_in_[g], {shards_[g].numel}, shards_[g].dtype, Device::cpu());
}

void ParamSwap::unpin(size_t g, Stream copies) {
  std::lock_guard lock(mu_);
  Buffer* b = holding(unit_of_.at(g));
  ZT_ASSERT(b && b->pins > 0, "zero", "a parameter shard unpinned without being pinned");
  --b->pins;
  if (b->copies) b->copies->record(copies);
  if (b->pins == 0) unpinned_.notify_all();
}

void ParamSwap::load(size_t g, const Tensor& dst) {
  if (dst.device() != Device::cpu() || dst.numel() != shards_.at(g).numel ||
      dst.dtype() != shards_[g].dtype || !dst.is_contiguous())
    throw ValueError("zero", str("parameter swap: group ", g, " loads into ", dst.describe()));
  std::unique_lock lock(mu_);
  const Buffer& b = resident(unit_of_[g], lock);
  std::memcpy(dst.data(), b.data + offset_in_[g], dst.nbytes());
}

void ParamSwap::store(size_t g, const Tensor& src, Stream stream) {
  if (src.numel() != shards_.at(g).numel || src.dtype() != shards_[g].dtype)
    throw ValueError("zero", str("parameter swap: group ", g, " stores ", src.describe()));
  Tensor host = src.contiguous();
  if (host.device() != Device::cpu()) {
    host = host.to(Device::cpu(), stream);
    synchronize(stream);
  }
  std::unique_lock lock(mu_);
  const size_t u = unit_of_[g];
  // The group's bytes go into the buffer holding its unit (which stays valid; other groups of it
  // may be pinned, this one is not), or through a free buffer that holds no unit afterwards.
  Buffer* b = holding(u);
  if (!b) {
    Buffer& free = free_buffer(lock);  // may wait, while the other thread reads `u` in
    b = holding(u);
    if (!b) b = &free;
  }
  const bool keep = b->unit == u;
  const auto n = static_cast<int64_t>(host.nbytes());
  const int64_t region = io::swap_aligned(n);
  std::memcpy(b->data + offset_in_[g], host.data(), static_cast<size_t>(n));
  std::memset(b->data + offset_in_[g] + n, 0, static_cast<size_t>(region - n));
  file_->write(units_[u].offset + offset_in_[g], b->data + offset_in_[g], region).wait();
  if (keep) b->used = ++clock_;
}

int64_t ParamSwap::file_bytes() const {
  return file_->bytes();
}

int64_t ParamSwap::buffer_bytes() const {
  return static_cast<int64_t>(staging_count_) * buffer_size_bytes_;
}

int64_t ParamSwap::cache_bytes() const {
  return static_cast<int64_t>(buffer_limit_ - staging_count_) * buffer_size_bytes_;
}

int64_t ParamSwap::bytes_read() const {
  return file_->bytes_read();
}

}  // namespace zt::zero
