// manifest.json of a sharded checkpoint; see manifest.h.
#include "zerotrain/checkpoint/manifest.h"

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <vector>

#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"

namespace zt::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr const char* kComponent = "checkpoint";

// Field access with one line naming `where` and the key.
class Fields {
 public:
  Fields(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail("", str("must be an object, got ", describe_json(j_)));
  }
  const nlohmann::json& at(const char* key) const {
    if (!j_.contains(key)) fail(key, "is missing");
    return j_[key];
  }
  int64_t integer(const char* key, int64_t lo = 0,
                  int64_t hi = std::numeric_limits<int64_t>::max()) const {
    const nlohmann::json& v = at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      fail(key, str("must be an integer in [", lo, ", ", hi, "], got ", describe_json(v)));
    return v.get<int64_t>();
  }
  std::string text(const char* key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_string()) fail(key, str("must be a string, got ", describe_json(v)));
    return v.get<std::string>();
  }
  bool flag(const char* key) const {
    const nlohmann::json& v = at(key);
    if (!v.is_boolean()) fail(key, str("must be true or false, got ", describe_json(v)));
    return v.get<bool>();
  }
  DType dtype(const char* key) const {
    const std::string name = text(key);
    for (DType t : {DType::f32, DType::bf16, DType::f16})
      if (name == dtype_name(t)) return t;
    fail(key, str("must be \"f32\", \"bf16\" or \"f16\", got ", quote_excerpt(name)));
  }
  uint32_t crc(const char* key) const {
    const std::string hex = text(key);
    unsigned long value = 0;
    char end = 0;
    if (hex.size() != 8 || std::sscanf(hex.c_str(), "%8lx%c", &value, &end) != 1)
      fail(key, str("must be 8 hex digits, got ", quote_excerpt(hex)));
    return static_cast<uint32_t>(value);
  }
  [[noreturn]] void fail(std::string_view key, std::string_view what) const {
    throw FormatError(kComponent, str(where_, key.empty() ? "" : ": ", key, " ", what));
  }
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json& j_;
  std::string where_;
};

}  // namespace

uint32_t crc32_of(const void* data, size_t n, uint32_t crc) {
  // A large buffer in chunks on every core, joined by zlib's crc32_combine: one core's CRC is
  // slower than a disk, and a save or resume would wait for it.
  constexpr size_t kChunk = size_t{16} << 20;
  const auto* bytes = static_cast<const Bytef*>(data);
  if (n <= 2 * kChunk) return static_cast<uint32_t>(crc32_z(crc, bytes, static_cast<z_size_t>(n)));
  const size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<uLong> parts(chunks);
#pragma omp parallel for schedule(static)
  for (ptrdiff_t i = 0; i < static_cast<ptrdiff_t>(chunks); ++i) {
    const size_t begin = static_cast<size_t>(i) * kChunk;
    parts[i] = crc32_z(0, bytes + begin, static_cast<z_size_t>(std::min(kChunk, n - begin)));
  }
  uLong out = crc;
  for (size_t i = 0; i < chunks; ++i)
    out = crc32_combine(out, parts[i], static_cast<z_off_t>(std::min(kChunk, n - i * kChunk)));
  return static_cast<uint32_t>(out);
}

std::string crc32_hex(uint32_t crc) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", crc);
  return buf;
}

nlohmann::json to_json(const SavedFile& f) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const SavedTensor& t : f.tensors)
    tensors.push_back({{"name", t.name},
                       {"shape", t.full_shape},
                       {"begin", t.begin},
                       {"end", t.end},
                       {"dtype", std::string(dtype_name(t.dtype))},
                       {"crc32", crc32_hex(t.crc32)}});
  return {{"name", f.name}, {"rank", f.rank}, {"bytes", f.bytes}, {"tensors", tensors}};
}

nlohmann::json to_json(const Manifest& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const SavedFile& f : m.files)
    files.push_back(to_json(f));
  nlohmann::json j = {{"format", kFormatName},
          {"version", m.version},
          {"tag", m.tag},
          {"step", m.step},
          {"optimizer_step", m.optimizer_step},
          {"world_size", m.world_size},
          {"stage", m.stage},
          {"universal", m.universal},
          {"dtype", std::string(dtype_name(m.dtype))},
          {"precision", m.precision},
          {"model_config", m.model_config},
          {"model_config_crc32", crc32_hex(crc32_of(m.model_config.data(), m.model_config.size()))},
          {"train_state", m.train_state},
          {"files", files}};
  if (m.weights_dtype)
    j["weights"] = {{"dir", kWeightsDir}, {"dtype", std::string(dtype_name(*m.weights_dtype))}};
  return j;
}

SavedFile saved_file_from_json(const nlohmann::json& j, const std::string& where) {
  const Fields f(j, where);
  SavedFile out;
  out.name = f.text("name");
  if (out.name.empty() || out.name.find('/') != std::string::npos || out.name[0] == '.')
    f.fail("name", str("must be a plain file name, got ", quote_excerpt(out.name)));
  out.rank = static_cast<int>(f.integer("rank", -1, std::numeric_limits<int>::max()));
  out.bytes = static_cast<uint64_t>(f.integer("bytes"));
  const nlohmann::json& tensors = f.at("tensors");
  if (!tensors.is_array()) f.fail("tensors", str("must be an array, got ", describe_json(tensors)));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Fields t(tensors[i], str(where, ": tensors[", i, "]"));
    SavedTensor s;
    s.name = t.text("name");
    const nlohmann::json& shape = t.at("shape");
    if (!shape.is_array()) t.fail("shape", str("must be an array, got ", describe_json(shape)));
    int64_t numel = 1;
    for (const nlohmann::json& d : shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (int64_t{1} << 40))
        t.fail("shape", str("holds ", describe_json(d), ", not a size in [0, 2^40]"));
      s.full_shape.push_back(d.get<int64_t>());
      if (numel > (int64_t{1} << 47) / std::max<int64_t>(1, d.get<int64_t>()))
        t.fail("shape", "has more than 2^47 elements");
      numel *= d.get<int64_t>();
    }
    s.begin = t.integer("begin", 0, numel);
    s.end = t.integer("end", s.begin, numel);
    s.dtype = t.dtype("dtype");
    s.crc32 = t.crc("crc32");
    out.tensors.push_back(std::move(s));
  }
  return out;
}

Manifest manifest_from_json(const nlohmann::json& j, const std::string& where) {
  const Fields f(j, where);
  if (f.text("format") != kFormatName)
    f.fail("format", str("is ", quote_excerpt(f.text("format")), ", not \"", kFormatName, "\""));
  Manifest m;
  m.version = static_cast<int>(f.integer("version", 1, std::numeric_limits<int>::max()));
  if (m.version > kFormatVersion)
    throw ValueError(kComponent, str(where, ": format version ", m.version,
                                     " is newer than this zerotrain reads (", kFormatVersion, ")"));
  m.tag = f.text("tag");
  m.step = f.integer("step");
  m.optimizer_step = f.integer("optimizer_step");
  m.world_size = static_cast<int>(f.integer("world_size", 1, 1 << 20));
  m.stage = static_cast<int>(f.integer("stage", 0, 3));
  m.universal = f.flag("universal");
  m.dtype = f.dtype("dtype");
  m.precision = f.text("precision");
  if (m.precision != "mixed" && m.precision != "low")
    f.fail("precision", str("must be \"mixed\" or \"low\", got ", quote_excerpt(m.precision)));
  m.model_config = f.text("model_config");
  // Absent in checkpoints written before it existed; where present it must match the text, so an
  // edited or damaged model config is named here rather than trained on.
  if (j.contains("model_config_crc32")) {
    const uint32_t saved = f.crc("model_config_crc32");
    const uint32_t actual = crc32_of(m.model_config.data(), m.model_config.size());
    if (saved != actual)
      f.fail("model_config_crc32", str(crc32_hex(saved), " does not match the model_config text (",
                                       crc32_hex(actual), "): the manifest was edited or damaged"));
  }
  m.train_state = f.at("train_state");
  if (!m.train_state.is_object())
    f.fail("train_state", str("must be an object, got ", describe_json(m.train_state)));
  const nlohmann::json& files = f.at("files");
  if (!files.is_array()) f.fail("files", str("must be an array, got ", describe_json(files)));
  for (size_t i = 0; i < files.size(); ++i)
    m.files.push_back(saved_file_from_json(files[i], str(where, ": files[", i, "]")));
  if (j.contains("weights")) {
    const Fields w(j["weights"], str(where, ": weights"));
    if (w.text("dir") != kWeightsDir)
      w.fail("dir", str("must be \"", kWeightsDir, "\", got ", quote_excerpt(w.text("dir"))));
    m.weights_dtype = w.dtype("dtype");
  }
  return m;
}

namespace {

// A directory named like a run's checkpoint ("step-" and digits) is found by that name (`latest`,
// the listing's order), so its manifest's tag must be the same; any other name (a copy called
// "best") is read by its manifest alone.
bool named_as_a_step(const std::string& name) {
  return name.size() > 5 && name.rfind("step-", 0) == 0 &&
         name.find_first_not_of("0123456789", 5) == std::string::npos;
}

std::string directory_name(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

}  // namespace

Manifest read_manifest(const fs::path& dir) {
  const fs::path path = dir / kManifestName;
  const nlohmann::json j = parse_json(read_text_file(path, kComponent), kComponent, path.string());
  Manifest m = manifest_from_json(j, path.string());
  const std::string name = directory_name(dir);
  if (named_as_a_step(name) && name != m.tag)
    throw FormatError(kComponent, str(path.string(), ": tag ", quote_excerpt(m.tag),
                                      " (step ", m.step, ") disagrees with the directory's name ",
                                      name, ": was it renamed? A run's checkpoint is named by its tag"));
  return m;
}

void write_manifest(const fs::path& dir, const Manifest& m) {
  write_file_atomic(dir / kManifestName, to_json(m).dump(1) + "\n");
}

}  // namespace zt::checkpoint
