// Parsing, validation and layout of safetensors headers (see safetensors_header.h).
#include "zerotrain/io/safetensors_header.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <tuple>

#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"

namespace zt::io {

static_assert(std::endian::native == std::endian::little,
              "safetensors files are little-endian; zerotrain reads them in place");

namespace {
constexpr std::string_view kComponent = "safetensors";
using nlohmann::json;

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw FormatError(kComponent, str(file, ": ", what));
}

uint64_t read_u64(const json& v, const std::string& file, const std::string& what) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0)
    return static_cast<uint64_t>(v.get<int64_t>());
  fail(file, str(what, ": expected a non-negative integer, got ", describe_json(v)));
}

SafetensorsEntry parse_entry(const std::string& name, const json& v, const std::string& file) {
  const std::string where = str("tensor ", quote_excerpt(name));
  if (!v.is_object()) fail(file, str(where, ": expected an object, got ", describe_json(v)));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!v.contains(key)) fail(file, str(where, ": missing \"", key, "\""));
  SafetensorsEntry e;
  e.name = name;
  const json& dt = v["dtype"];
  if (!dt.is_string())
    fail(file, str(where, ": dtype: expected a string, got ", describe_json(dt)));
  const auto st = parse_st_dtype(dt.get<std::string>());
  if (!st) fail(file, str(where, ": unknown dtype ", quote_excerpt(dt.get<std::string>())));
  e.dtype = *st;

  const json& shape = v["shape"];
  if (!shape.is_array())
    fail(file, str(where, ": shape: expected an array, got ", describe_json(shape)));
  uint64_t numel = 1;
  for (const json& d : shape) {
    const uint64_t n = read_u64(d, file, str(where, ": shape"));
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(numel, n, &numel))
      fail(file, str(where, ": shape ", describe_json(shape), " overflows 64 bits"));
    e.shape.push_back(static_cast<int64_t>(n));
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, st_dtype_size(e.dtype), &nbytes))
    fail(file, str(where, ": shape ", describe_json(shape), " overflows 64 bits"));

  const json& off = v["data_offsets"];
  if (!off.is_array() || off.size() != 2)
    fail(file, str(where, ": data_offsets: expected [begin, end], got ", describe_json(off)));
  e.begin = read_u64(off[0], file, str(where, ": data_offsets"));
  e.end = read_u64(off[1], file, str(where, ": data_offsets"));
  if (e.end < e.begin)
    fail(file, str(where, ": data_offsets [", e.begin, ", ", e.end, "] end before they begin"));
  if (e.end - e.begin != nbytes)
    fail(file,
         str(where, ": data_offsets [", e.begin, ", ", e.end, "] hold ", e.end - e.begin,
             " bytes but ", st_dtype_name(e.dtype), " ", to_string(e.shape), " needs ", nbytes));
  return e;
}

std::map<std::string, std::string> parse_metadata(const json& v, const std::string& file) {
  if (!v.is_object()) fail(file, str("__metadata__: expected an object, got ", describe_json(v)));
  std::map<std::string, std::string> out;
  for (const auto& [k, s] : v.items()) {
    if (!s.is_string())
      fail(file, str("__metadata__ key ", quote_excerpt(k), ": expected a string, got ",
                     describe_json(s)));
    out[k] = s.get<std::string>();
  }
  return out;
}

// Offsets must tile the data section exactly: sorted, contiguous from 0, no overlap, no gap, and
// the last one ends at the end of the file.
void check_layout(const std::vector<SafetensorsEntry>& entries, uint64_t data_bytes,
                  const std::string& file) {
  uint64_t expected = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry& e : entries) {
    const std::string where =
        str("tensor ", quote_excerpt(e.name), " data_offsets [", e.begin, ", ", e.end, "]");
    if (e.end > data_bytes)
      fail(file, str(where, " are out of range: the data section has ", data_bytes,
                     " bytes (truncated file?)"));
    if (e.begin < expected)
      fail(file, str(where, " overlap tensor ", quote_excerpt(prev->name), " [", prev->begin, ", ",
                     prev->end, "]"));
    if (e.begin > expected)
      fail(file, str(where, " leave bytes [", expected, ", ", e.begin,
                     ") unused: the data is not contiguous"));
    expected = e.end;
    prev = &e;
  }
  if (expected != data_bytes)
    fail(file, str("the tensors cover ", expected, " bytes but the data section has ", data_bytes,
                   " (", data_bytes - expected, " trailing bytes)"));
}
}  // namespace

SafetensorsHeader parse_safetensors_header(const std::byte* file_data, size_t file_size,
                                           const std::string& file) {
  if (file_size < 8)
    fail(file, str("the file has ", file_size, " bytes, too few for the 8-byte header length"));
  uint64_t n = 0;
  std::memcpy(&n, file_data, 8);
  if (n > kMaxSafetensorsHeaderBytes)
    fail(file,
         str("header length ", n, " exceeds the ", kMaxSafetensorsHeaderBytes, "-byte limit"));
  if (n > file_size - 8)
    fail(file, str("header length ", n, " exceeds the file (", file_size, " bytes)"));

  SafetensorsHeader h;
  h.header_bytes = n;
  h.data_bytes = file_size - 8 - n;
  const std::string_view text(reinterpret_cast<const char*>(file_data) + 8, n);
  // JSON has no NUL outside or inside a string; writers pad headers with spaces.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    fail(file,
         str("header: a NUL byte at offset ", 8 + nul, " (headers are JSON, padded with spaces)"));
  const json j = parse_json(text, kComponent, str(file, ": header"));
  if (!j.is_object()) fail(file, str("header: expected a JSON object, got ", describe_json(j)));
  for (const auto& [key, value] : j.items()) {
    if (key == "__metadata__")
      h.metadata = parse_metadata(value, file);
    else
      h.entries.push_back(parse_entry(key, value, file));
  }
  std::sort(h.entries.begin(), h.entries.end(), [](const auto& a, const auto& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  check_layout(h.entries, h.data_bytes, file);
  return h;
}

std::string safetensors_header_bytes(const std::vector<SafetensorsEntry>& entries,
                                     const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata)
      m[k] = v;
    j["__metadata__"] = std::move(m);
  }
  for (const SafetensorsEntry& e : entries) {
    nlohmann::ordered_json t = nlohmann::ordered_json::object();
    t["dtype"] = std::string(st_dtype_name(e.dtype));
    t["shape"] = e.shape;
    t["data_offsets"] = {e.begin, e.end};
    j[e.name] = std::move(t);
  }
  std::string text;
  try {
    text = j.dump();
  } catch (const nlohmann::json::exception& err) {
    throw ValueError(kComponent, str("cannot encode the header (tensor names and metadata must be "
                                     "UTF-8): ",
                                     err.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t n = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + text;
}

}  // namespace zt::io
