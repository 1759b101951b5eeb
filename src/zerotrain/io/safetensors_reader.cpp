// SafetensorsReader: a validated, memory-mapped safetensors file (see safetensors.h).
#include <algorithm>

#include "zerotrain/core/io_error.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/io/tensor_copy.h"

namespace zt::io {

namespace {
constexpr std::string_view kComponent = "safetensors";
}  // namespace

SafetensorsReader::SafetensorsReader(const std::filesystem::path& path) : file_(path) {
  header_ = parse_safetensors_header(file_.data(), file_.size(), path.string());
  for (size_t i = 0; i < header_.entries.size(); ++i)
    index_.emplace(header_.entries[i].name, i);
}

std::vector<std::string> SafetensorsReader::names() const {
  std::vector<std::string> out;
  out.reserve(header_.entries.size());
  for (const SafetensorsEntry& e : header_.entries)
    out.push_back(e.name);
  std::sort(out.begin(), out.end());
  return out;
}

const SafetensorsEntry& SafetensorsReader::entry(const std::string& name) const {
  const auto it = index_.find(name);
  if (it == index_.end())
    throw ValueError(kComponent, str(path().string(), ": no tensor \"", name, "\""));
  return header_.entries[it->second];
}

const std::byte* SafetensorsReader::data(const SafetensorsEntry& e) const {
  return file_.data() + header_.data_start() + e.begin;
}

void SafetensorsReader::read(const std::string& name, const Tensor& dst, Stream stream) const {
  const SafetensorsEntry& e = entry(name);
  if (dst.defined() && dst.shape() != e.shape)
    throw ShapeError(kComponent,
                     str(path().string(), ": tensor \"", name, "\" is ", to_string(e.shape),
                         " but the destination is ", dst.describe()));
  read_elements(name, 0, e.numel(), dst, stream);
}

Tensor SafetensorsReader::read(const std::string& name, DType dtype, Device device,
                               Stream stream) const {
  Tensor out = Tensor::empty(entry(name).shape, dtype, device, stream);
  read(name, out, stream);
  return out;
}

void SafetensorsReader::read_rows(const std::string& name, int64_t r0, int64_t r1,
                                  const Tensor& dst, Stream stream) const {
  const SafetensorsEntry& e = entry(name);
  const std::string where = str(path().string(), ": tensor \"", name, "\" ", to_string(e.shape));
  if (e.shape.empty()) throw ShapeError(kComponent, str(where, ": a scalar has no rows"));
  if (r0 < 0 || r1 < r0 || r1 > e.shape[0])
    throw ShapeError(kComponent, str(where, ": rows [", r0, ", ", r1, ") out of range"));
  Shape want = e.shape;
  want[0] = r1 - r0;
  if (dst.defined() && dst.shape() != want)
    throw ShapeError(kComponent, str(where, ": rows [", r0, ", ", r1, ") are ", to_string(want),
                                     " but the destination is ", dst.describe()));
  const int64_t row = numel_of(Shape(e.shape.begin() + 1, e.shape.end()));
  read_elements(name, r0 * row, r1 * row, dst, stream);
}

void SafetensorsReader::read_elements(const std::string& name, int64_t begin, int64_t end,
                                      const Tensor& dst, Stream stream) const {
  const SafetensorsEntry& e = entry(name);
  const std::string where = str(path().string(), ": tensor \"", name, "\"");
  if (begin < 0 || end < begin || end > e.numel())
    throw ShapeError(kComponent, str(where, " ", to_string(e.shape), ": elements [", begin, ", ",
                                     end, ") out of range"));
  if (!dst.defined())
    throw ValueError(kComponent, str(where, ": the destination tensor is undefined"));
  if (dst.numel() != end - begin)
    throw ShapeError(kComponent,
                     str(where, ": elements [", begin, ", ", end, ") are ", end - begin,
                         " but the destination ", dst.describe(), " holds ", dst.numel()));
  const auto dtype = to_dtype(e.dtype);
  if (!dtype)
    throw DTypeError(kComponent, str(where, " is ", st_dtype_name(e.dtype),
                                     ", which zerotrain tensors cannot hold (F32, F16, BF16, I32, "
                                     "I64, U8)"));
  const auto offset = static_cast<size_t>(begin) * st_dtype_size(e.dtype);
  copy_host_elements(data(e) + offset, *dtype, dst, kComponent, where, stream);
  bytes_read_ += static_cast<uint64_t>(end - begin) * st_dtype_size(e.dtype);
}

}  // namespace zt::io
