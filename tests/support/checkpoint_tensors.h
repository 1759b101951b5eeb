// Every tensor of a sharded checkpoint, whole, as bytes: what stage-parity and resume tests compare
// (the per-rank files differ between stages and world sizes; the tensors they assemble must not).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "zerotrain/checkpoint/checkpoint_reader.h"
#include "zerotrain/checkpoint/checkpoint_store.h"

namespace zt::test {

// `given`: a checkpoint, a checkpoints directory or a run's --out (checkpoint::resolve_checkpoint).
inline std::map<std::string, std::string> checkpoint_tensor_bytes(const std::filesystem::path& given) {
  checkpoint::CheckpointReader reader(checkpoint::resolve_checkpoint(given));
  std::map<std::string, std::string> out;
  for (const auto& [name, info] : reader.tensors()) {
    Tensor t = Tensor::empty({numel_of(info.shape)}, info.dtype, Device::cpu());
    reader.read({name, info.shape, 0, numel_of(info.shape)}, t, {});
    out[name].assign(static_cast<const char*>(t.data()), t.nbytes());
  }
  return out;
}

}  // namespace zt::test
