// Front-end of the token embedding: validates the arguments (typed errors naming the op and the
// tensors), runs the CPU or CUDA kernel, and reports an out-of-range id by its token and value.
// Tested by tests/kernels/test_embedding.cpp (CPU) and tests/kernels/test_embedding_cuda.cpp.
#include "zerotrain/kernels/embedding.h"

#include "zerotrain/kernels/check.h"
#include "zerotrain/kernels/cpu/embedding.h"
#include "zerotrain/kernels/cuda/embedding.h"
#include "zerotrain/kernels/dispatch.h"

namespace zt::kernels {

namespace {

void check_ids_arg(std::string_view op, const Tensor& ids) {
  check_defined(op, "ids", ids);
  check_contiguous(op, "ids", ids);
  check_dim(op, "ids", ids, 1);
  check_dtype(op, "ids", ids, kIndexTypes);
}

// rows: [N, C] with N = ids.size(0) and C = table's row width.
void check_rows(std::string_view op, std::string_view name, const Tensor& rows, const Tensor& ids,
                std::string_view table_name, const Tensor& table) {
  check_arg(op, name, rows, ids, "ids");
  if (rows.dim() != 2 || rows.size(0) != ids.size(0) || rows.size(1) != table.size(1))
    throw ShapeError(op, str(name, " ", rows.describe(), " must be [N, C] for ids ", ids.describe(),
                             " and ", table_name, " ", table.describe()));
}

void check_table(std::string_view op, std::string_view name, const Tensor& table,
                 const Tensor& ids) {
  check_arg(op, name, table, ids, "ids");
  check_dim(op, name, table, 2);
  check_dtype(op, name, table, kFloatTypes);
}

[[noreturn]] void throw_bad_id(std::string_view op, const Tensor& ids, int64_t token,
                               const Tensor& table, Stream stream) {
  const int64_t id = ids.slice(0, token, token + 1).to_ints(stream)[0];
  throw ValueError(op, str("ids[", token, "] = ", id, " is out of range [0, ", table.size(0),
                           ") for table ", table.describe()));
}

}  // namespace

void embedding_forward(const Tensor& ids, const Tensor& table, Tensor& out, bool check_ids,
                       Stream stream) {
  constexpr std::string_view op = "embedding_forward";
  check_ids_arg(op, ids);
  check_table(op, "table", table, ids);
  check_rows(op, "out", out, ids, "table", table);
  check_same_dtype(op, "table", table, "out", out);
  int64_t bad = -1;
  if (ids.device().is_cuda())
    ZT_ON_CUDA(op, bad = cuda::embedding_forward(ids, table, out, check_ids, stream));
  else
    bad = cpu::embedding_forward(ids, table, out);
  if (bad >= 0) throw_bad_id(op, ids, bad, table, stream);
}

void embedding_backward(const Tensor& ids, const Tensor& dout, Tensor& dtable, Stream stream) {
  constexpr std::string_view op = "embedding_backward";
  check_ids_arg(op, ids);
  check_table(op, "dtable", dtable, ids);
  check_rows(op, "dout", dout, ids, "dtable", dtable);
  check_dtype(op, "dout", dout, kFloatTypes);
  if (dtable.dtype() != DType::f32 && dtable.dtype() != dout.dtype())
    throw DTypeError(op, str("dtable ", dtable.describe(), ": dtype must be f32 or that of dout ",
                             dout.describe()));
  if (ids.device().is_cuda()) {
    ZT_ON_CUDA(op, cuda::embedding_backward(ids, dout, dtable, stream));
  } else {
    const int64_t bad = cpu::embedding_backward(ids, dout, dtable);
    if (bad >= 0) throw_bad_id(op, ids, bad, dtable, stream);
  }
}

}  // namespace zt::kernels
