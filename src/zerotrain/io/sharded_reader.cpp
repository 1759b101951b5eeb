// ShardedReader: model.safetensors or shards + model.safetensors.index.json (see
// sharded_safetensors.h).
#include <algorithm>
#include <map>
#include <system_error>

#include "zerotrain/core/io_error.h"
#include "zerotrain/core/json_util.h"
#include "zerotrain/io/sharded_safetensors.h"

namespace zt::io {

namespace {
constexpr std::string_view kComponent = "safetensors";

// Shard names must stay inside the directory: no separators or NUL, and no longer than a file
// system allows (255 bytes).
bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
}
}  // namespace

ShardedReader::ShardedReader(const std::filesystem::path& dir) : dir_(dir) {
  const auto single = dir / kWeightsFile;
  const auto index = dir / kWeightsIndexFile;
  if (std::filesystem::is_regular_file(single)) {
    files_.emplace_back(single);
    for (const SafetensorsEntry& e : files_[0].entries())
      where_.emplace(e.name, 0);
  } else if (std::filesystem::is_regular_file(index)) {
    sharded_ = true;
    open_index(index);
  } else {
    throw IoError(kComponent, str(dir.string(), ": neither ", kWeightsFile, " nor ",
                                  kWeightsIndexFile, " found"));
  }
}

void ShardedReader::open_index(const std::filesystem::path& index_path) {
  const std::string src = index_path.string();
  const nlohmann::json j = parse_json(read_text_file(index_path, kComponent), kComponent, src);
  if (!j.is_object())
    throw FormatError(kComponent, str(src, ": expected a JSON object, got ", describe_json(j)));
  if (j.contains("metadata")) {
    const auto& m = j["metadata"];
    if (!m.is_object())
      throw FormatError(kComponent,
                        str(src, ": metadata: expected an object, got ", describe_json(m)));
    if (m.contains("total_size")) {
      const auto& t = m["total_size"];
      if (!t.is_number_unsigned())
        throw FormatError(kComponent, str(src,
                                          ": metadata.total_size: expected a non-negative "
                                          "integer, got ",
                                          describe_json(t)));
      total_size_ = t.get<uint64_t>();
    }
  }
  if (!j.contains("weight_map"))
    throw FormatError(kComponent, str(src, ": missing \"weight_map\""));
  const auto& wm = j["weight_map"];
  if (!wm.is_object())
    throw FormatError(kComponent,
                      str(src, ": weight_map: expected an object, got ", describe_json(wm)));

  std::map<std::string, std::vector<std::string>> by_file;  // sorted: files_ in name order
  for (const auto& [tensor, file] : wm.items()) {
    if (!file.is_string())
      throw FormatError(kComponent, str(src, ": weight_map[", quote_excerpt(tensor),
                                        "]: expected a file name, got ", describe_json(file)));
    const std::string name = file.get<std::string>();
    if (!is_plain_file_name(name))
      throw FormatError(
          kComponent, str(src, ": weight_map[", quote_excerpt(tensor), "] = ", quote_excerpt(name),
                          " is not a file name in the directory"));
    by_file[name].push_back(tensor);
  }
  for (const auto& [file, tensors] : by_file) {
    const auto path = dir_ / file;
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
      throw FormatError(kComponent,
                        str(src, ": tensor ", quote_excerpt(tensors.front()), " is mapped to ",
                            quote_excerpt(file), ", which ",
                            error && error != std::errc::no_such_file_or_directory
                                ? str("cannot be read (", error.message(), ")")
                                : std::string("does not exist")));
    files_.emplace_back(path);
    for (const std::string& t : tensors) {
      if (!files_.back().contains(t))
        throw FormatError(kComponent, str(src, ": tensor ", quote_excerpt(t), " is mapped to ",
                                          quote_excerpt(file), ", which does not hold it"));
      where_.emplace(t, files_.size() - 1);
    }
  }
}

std::vector<std::string> ShardedReader::names() const {
  std::vector<std::string> out;
  out.reserve(where_.size());
  for (const auto& kv : where_)
    out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  return out;
}

const SafetensorsReader& ShardedReader::file_of(const std::string& name) const {
  const auto it = where_.find(name);
  if (it == where_.end())
    throw ValueError(kComponent, str(dir_.string(), ": no tensor \"", name, "\""));
  return files_[it->second];
}

const SafetensorsEntry& ShardedReader::entry(const std::string& name) const {
  return file_of(name).entry(name);
}

void ShardedReader::read(const std::string& name, const Tensor& dst, Stream stream) const {
  file_of(name).read(name, dst, stream);
}

Tensor ShardedReader::read(const std::string& name, DType dtype, Device device,
                           Stream stream) const {
  return file_of(name).read(name, dtype, device, stream);
}

void ShardedReader::read_rows(const std::string& name, int64_t r0, int64_t r1, const Tensor& dst,
                              Stream stream) const {
  file_of(name).read_rows(name, r0, r1, dst, stream);
}

void ShardedReader::read_elements(const std::string& name, int64_t begin, int64_t end,
                                  const Tensor& dst, Stream stream) const {
  file_of(name).read_elements(name, begin, end, dst, stream);
}

uint64_t ShardedReader::bytes_read() const {
  uint64_t n = 0;
  for (const SafetensorsReader& f : files_)
    n += f.bytes_read();
  return n;
}

}  // namespace zt::io
