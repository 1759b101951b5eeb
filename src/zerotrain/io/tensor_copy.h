// Moving tensor bytes between host memory (a mapped file, a write buffer) and tensors on any
// device, converting between floating dtypes on the way (kernels::cast on the tensor's device).
// Tested through the safetensors reader and writer tests (tests/io/).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "zerotrain/core/stream.h"
#include "zerotrain/core/tensor.h"

namespace zt::io {

// Copies dst.numel() elements of `src_dtype` from host memory at `src` (any alignment) into `dst`
// (contiguous, any device). Floating dtypes convert into one another; integer dtypes must match.
// `what` names the source in errors. Returns once `src` may be released.
void copy_host_elements(const std::byte* src, DType src_dtype, const Tensor& dst,
                        std::string_view component, const std::string& what, Stream stream);

// A contiguous host tensor with t's values as `dtype` (t on any device, any strides). Floating
// dtypes convert into one another; integer dtypes must match.
Tensor host_copy_as(const Tensor& t, DType dtype, std::string_view component,
                    const std::string& what, Stream stream);

}  // namespace zt::io
