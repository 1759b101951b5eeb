// write_safetensors: the reference layout, streamed tensor by tensor into an AtomicFile.
#include <algorithm>
#include <numeric>
#include <set>

#include "zerotrain/core/io_error.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/io/tensor_copy.h"

namespace zt::io {

namespace {
constexpr std::string_view kComponent = "safetensors";

DType stored_dtype(DType dtype, const SafetensorsWriteOptions& options) {
  return options.float_dtype && is_floating(dtype) ? *options.float_dtype : dtype;
}

void check_tensors(const std::filesystem::path& path, const std::vector<NamedTensor>& tensors,
                   const SafetensorsWriteOptions& options) {
  if (options.float_dtype && !is_floating(*options.float_dtype))
    throw ValueError(kComponent, str(path.string(), ": float_dtype ",
                                     dtype_name(*options.float_dtype), " is not a floating dtype"));
  std::set<std::string_view> seen;
  for (const NamedTensor& nt : tensors) {
    if (nt.name == "__metadata__")
      throw ValueError(kComponent,
                       str(path.string(), ": \"__metadata__\" is reserved, not a tensor name"));
    if (!seen.insert(nt.name).second)
      throw ValueError(kComponent, str(path.string(), ": tensor \"", nt.name, "\" given twice"));
    if (!nt.defined())
      throw ValueError(kComponent, str(path.string(), ": tensor \"", nt.name, "\" is undefined"));
  }
}
}  // namespace

uint64_t stored_nbytes(const Tensor& t, const SafetensorsWriteOptions& options) {
  return static_cast<uint64_t>(t.numel()) * dtype_size(stored_dtype(t.dtype(), options));
}

uint64_t stored_nbytes(const NamedTensor& t, const SafetensorsWriteOptions& options) {
  return static_cast<uint64_t>(numel_of(t.shape_of())) *
         dtype_size(stored_dtype(t.dtype_of(), options));
}

void write_safetensors(const std::filesystem::path& path, const std::vector<NamedTensor>& tensors,
                       const SafetensorsWriteOptions& options) {
  check_tensors(path, tensors, options);
  // The reference writer's order: descending dtype (its alignment order), then name.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto st = [&](size_t i) { return to_st_dtype(stored_dtype(tensors[i].dtype_of(), options)); };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (st(a) != st(b)) return st(a) > st(b);
    return tensors[a].name < tensors[b].name;
  });
  std::vector<SafetensorsEntry> entries;
  entries.reserve(tensors.size());
  uint64_t offset = 0;
  for (size_t i : order) {
    SafetensorsEntry e;
    e.name = tensors[i].name;
    e.dtype = st(i);
    e.shape = tensors[i].shape_of();
    e.begin = offset;
    offset += stored_nbytes(tensors[i], options);
    e.end = offset;
    entries.push_back(std::move(e));
  }

  AtomicFile file(path);
  file.write(safetensors_header_bytes(entries, options.metadata));
  for (size_t i : order) {
    const NamedTensor& nt = tensors[i];
    if (numel_of(nt.shape_of()) == 0) continue;
    const Tensor t = nt.tensor.defined() ? nt.tensor : nt.load();
    if (t.shape() != nt.shape_of() || t.dtype() != nt.dtype_of())
      throw ValueError(kComponent, str(path.string(), ": tensor \"", nt.name, "\" was made as ",
                                       dtype_name(t.dtype()), " ", to_string(t.shape()), ", not ",
                                       dtype_name(nt.dtype_of()), " ", to_string(nt.shape_of())));
    const Tensor host = host_copy_as(t, stored_dtype(t.dtype(), options), kComponent,
                                     str(path.string(), ": tensor \"", nt.name, "\""),
                                     options.stream);
    file.write(host.data(), host.nbytes());
  }
  file.commit();
}

}  // namespace zt::io
