// Argument checks shared by the kernel front-ends. Each throws a typed error whose message starts
// with the op name and shows the offending tensors, e.g.
//   [add] a f32[2, 3] on cpu and b f32[3, 2] on cpu: shapes differ
#pragma once

#include <initializer_list>
#include <string_view>

#include "zerotrain/core/tensor.h"

namespace zt::kernels {

void check_defined(std::string_view op, std::string_view name, const Tensor& t);
void check_contiguous(std::string_view op, std::string_view name, const Tensor& t);
void check_dim(std::string_view op, std::string_view name, const Tensor& t, int64_t ndim);
void check_shape(std::string_view op, std::string_view name, const Tensor& t,
                 const Shape& expected);
void check_dtype(std::string_view op, std::string_view name, const Tensor& t,
                 std::initializer_list<DType> allowed);
void check_same_shape(std::string_view op, std::string_view a_name, const Tensor& a,
                      std::string_view b_name, const Tensor& b);
void check_same_dtype(std::string_view op, std::string_view a_name, const Tensor& a,
                      std::string_view b_name, const Tensor& b);
void check_same_device(std::string_view op, std::string_view a_name, const Tensor& a,
                       std::string_view b_name, const Tensor& b);

// Defined, contiguous, and on the same device as `ref` (the usual trio for kernel arguments).
void check_arg(std::string_view op, std::string_view name, const Tensor& t, const Tensor& ref,
               std::string_view ref_name);

constexpr std::initializer_list<DType> kFloatTypes = {DType::f32, DType::f16, DType::bf16};
constexpr std::initializer_list<DType> kIndexTypes = {DType::i32, DType::i64};

}  // namespace zt::kernels
