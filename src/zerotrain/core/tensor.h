// Tensor: a strided view (shape, strides in elements, offset) of a Storage, with a dtype and a
// device. Copies share storage; `clone()` copies data. Kernels take contiguous tensors unless they
// say otherwise; views (slice, transpose, reshape) are free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/core/allocator.h"
#include "zerotrain/core/dtype.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/storage.h"

namespace zt {

using Shape = std::vector<int64_t>;
std::string to_string(const Shape& s);  // "[2, 3, 4]"
int64_t numel_of(const Shape& s);  // ShapeError past 2^63 elements

class Tensor {
 public:
  Tensor() = default;  // undefined tensor

  // Uninitialized memory from default_allocator(device) (or `alloc`), tied to `stream`.
  static Tensor empty(const Shape& shape, DType dtype, Device device = Device::cpu(),
                      Stream stream = {});
  static Tensor empty(const Shape& shape, DType dtype, Allocator& alloc, Stream stream = {});
  static Tensor zeros(const Shape& shape, DType dtype, Device device = Device::cpu(),
                      Stream stream = {});
  // Host values converted to `dtype`, then placed on `device`.
  static Tensor from_floats(const std::vector<float>& values, const Shape& shape, DType dtype,
                            Device device = Device::cpu());
  static Tensor from_ints(const std::vector<int64_t>& values, const Shape& shape, DType dtype,
                          Device device = Device::cpu());
  // Wraps external memory (not owned, not freed).
  static Tensor wrap(void* data, const Shape& shape, DType dtype, Device device);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const { return numel_of(shape_); }
  int64_t offset() const { return offset_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }
  size_t element_size() const { return dtype_size(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Pointer to the first element of the view.
  void* data() const;
  template <typename T>
  T* data_as() const {
    check_dtype_is(DTypeOf<T>::value);
    return static_cast<T*>(data());
  }

  // Views (share storage).
  Tensor view(const Shape& shape) const;  // contiguous only; one dim may be -1
  Tensor reshape(const Shape& shape) const { return view(shape); }
  Tensor slice(int64_t dim, int64_t start, int64_t end) const;  // [start, end) along dim
  Tensor select(int64_t dim, int64_t index) const;              // drops `dim`
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor flatten() const { return view({numel()}); }

  // Copies.
  Tensor contiguous(Stream stream = {}) const;  // itself when already contiguous
  Tensor clone(Stream stream = {}) const;
  Tensor to(Device device, Stream stream = {}) const;  // itself when already there
  // Copies `src` (same shape and dtype, any device, any strides on the host) into this tensor.
  void copy_from(const Tensor& src, Stream stream = {});
  // Sets every element (any device). `value` is converted to the dtype.
  void fill(double value, Stream stream = {});

  // Host copy of the values as float / int64 (synchronizes with `stream` when on a GPU).
  std::vector<float> to_floats(Stream stream = {}) const;
  std::vector<int64_t> to_ints(Stream stream = {}) const;

  std::string describe() const;  // "bf16[2, 3] on cuda:0"

 private:
  void check_dtype_is(DType t) const;

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;  // elements
  DType dtype_ = DType::f32;
};

Shape contiguous_strides(const Shape& shape);

// Raw byte copies between any two devices (cudaMemcpyAsync on `stream` when a GPU is involved).
void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes,
                Stream stream);
// Sets nbytes to zero (cudaMemsetAsync on GPU).
void zero_bytes(void* dst, Device dev, size_t nbytes, Stream stream);

namespace cuda_core {
// Device-side helpers behind Tensor (core/cuda/tensor_ops.cu).
void fill(const Tensor& t, double value, Stream stream);  // t contiguous
void strided_copy(const Tensor& dst, const Tensor& src,
                  Stream stream);  // dst contiguous, same device
}  // namespace cuda_core

}  // namespace zt
