// load_pretrained / save_pretrained over a parameter list (a fake with the HF names and shapes of
// llama, qwen2 and gpt2 models): round trips in every model dtype, bf16 checkpoints into f32
// models, sharding, tied heads, base-model checkpoints, and every mismatch named.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "io/fake_model.h"
#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/kernels/cast.h"

namespace zt::io {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;
using test::FakeModel;
using test::list_dir;
using test::make_fake_model;
using test::TempDir;

// All parameters of `m` as a checkpoint would hold them, minus `drop`, plus `extra`.
std::vector<NamedTensor> checkpoint_of(FakeModel& m, const std::set<std::string>& drop = {},
                                       const std::vector<NamedTensor>& extra = {}) {
  std::vector<NamedTensor> out;
  for (nn::Parameter& p : m.params)
    if (drop.count(p.name) == 0) out.push_back({p.name, p.value});
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

TEST(HfModel, SaveThenLoadEveryFamilyAndDtype) {
  for (const nn::ModelConfig& cfg : {test::tiny_llama(), test::tiny_qwen2(), test::tiny_gpt2()}) {
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      TempDir dir;
      FakeModel src = make_fake_model(cfg, dt, 100);
      save_pretrained(cfg, src.pointers(), dir.path(), dt);
      EXPECT_EQ(list_dir(dir.path()),
                (std::vector<std::string>{"config.json", "model.safetensors"}));
      const nn::ModelConfig back = read_hf_config(dir.path());
      EXPECT_EQ(back.torch_dtype, hf_torch_dtype(dt));
      nn::ModelConfig expected = cfg;
      expected.torch_dtype = hf_torch_dtype(dt);
      EXPECT_TRUE(config_differences(expected, back).empty());

      FakeModel dst = make_fake_model(back, dt, 0, /*zeros=*/true);
      std::ostringstream warnings;
      const LoadReport rep = load_pretrained(back, dst.pointers(), dir.path(), {}, &warnings);
      EXPECT_EQ(rep.loaded.size(), src.params.size());
      EXPECT_TRUE(rep.unexpected.empty());
      EXPECT_EQ(warnings.str(), "");
      for (size_t i = 0; i < src.params.size(); ++i)
        expect_bitwise_equal(src.params[i].value, dst.params[i].value, src.params[i].name);
    }
  }
}

TEST(HfModel, ConvertsOnSaveAndOnLoad) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  FakeModel src = make_fake_model(cfg, DType::f32, 7);
  save_pretrained(cfg, src.pointers(), dir.path(), DType::bf16);
  const SafetensorsReader file(dir / "model.safetensors");
  for (const SafetensorsEntry& e : file.entries())
    EXPECT_EQ(e.dtype, StDType::BF16) << e.name;
  EXPECT_EQ(file.metadata().at("format"), "pt");

  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true);
  load_pretrained(cfg, dst.pointers(), dir.path(), {}, nullptr);
  for (size_t i = 0; i < src.params.size(); ++i)
    expect_bitwise_equal(
        kernels::cast_to(kernels::cast_to(src.params[i].value, DType::bf16), DType::f32),
        dst.params[i].value, src.params[i].name);
}

TEST(HfModel, ShardedSaveLoadsBack) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  FakeModel src = make_fake_model(cfg, DType::f32, 9);
  save_pretrained(cfg, src.pointers(), dir.path(), DType::f32, /*max_shard_bytes=*/4096);
  const auto files = list_dir(dir.path());
  EXPECT_GT(files.size(), 3u);
  EXPECT_EQ(files.back(), "model.safetensors.index.json");
  EXPECT_TRUE(ShardedReader(dir.path()).sharded());
  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true);
  EXPECT_EQ(load_pretrained(cfg, dst.pointers(), dir.path(), {}, nullptr).loaded.size(),
            src.params.size());
  for (size_t i = 0; i < src.params.size(); ++i)
    expect_bitwise_equal(src.params[i].value, dst.params[i].value, src.params[i].name);
}

TEST(HfModel, TiedHeadIsOmittedAndReadFromTheEmbedding) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_qwen2();
  FakeModel src = make_fake_model(cfg, DType::f32, 11, false, /*list_tied_head=*/true);
  save_pretrained(cfg, src.pointers(), dir.path(), DType::f32);
  EXPECT_FALSE(ShardedReader(dir.path()).contains("lm_head.weight"));
  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true, true);
  load_pretrained(cfg, dst.pointers(), dir.path(), {}, nullptr);
  expect_bitwise_equal(src.at("model.embed_tokens.weight").value, dst.at("lm_head.weight").value,
                       "tied head");
  // An untied model needs its head.
  nn::ModelConfig untied = cfg;
  untied.tie_word_embeddings = false;
  FakeModel u = make_fake_model(untied, DType::f32, 0, true);
  expect_error<FormatError>([&] { load_pretrained(untied, u.pointers(), dir.path(), {}, nullptr); },
                            {"lacks 1 tensor(s)", "lm_head.weight"});
}

TEST(HfModel, TiedHeadStoredAnywayIsNotReported) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_qwen2();
  FakeModel src = make_fake_model(cfg, DType::f32, 12, false, true);
  write_sharded_safetensors(dir.path(), checkpoint_of(src), kDefaultMaxShardBytes);
  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true);
  std::ostringstream warnings;
  EXPECT_TRUE(load_pretrained(cfg, dst.pointers(), dir.path(), {}, &warnings).unexpected.empty());
  EXPECT_EQ(warnings.str(), "");
}

TEST(HfModel, MissingTensorsAreListed) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  FakeModel src = make_fake_model(cfg, DType::f32, 13);
  write_sharded_safetensors(
      dir.path(), checkpoint_of(src, {"model.norm.weight", "model.layers.1.mlp.up_proj.weight"}),
      kDefaultMaxShardBytes);
  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true);
  expect_error<FormatError>([&] { load_pretrained(cfg, dst.pointers(), dir.path(), {}, nullptr); },
                            {"[hf_model]", "lacks 2 tensor(s)", "model.layers.1.mlp.up_proj.weight",
                             "model.norm.weight"});
}

TEST(HfModel, ShapeMismatchIsNamedAndLoadsNothing) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  FakeModel src = make_fake_model(cfg, DType::f32, 14);
  src.at("model.layers.1.self_attn.k_proj.weight").value = Tensor::zeros({16, 16}, DType::f32);
  write_sharded_safetensors(dir.path(), checkpoint_of(src), kDefaultMaxShardBytes);
  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true);
  expect_error<ShapeError>([&] { load_pretrained(cfg, dst.pointers(), dir.path(), {}, nullptr); },
                           {"model.layers.1.self_attn.k_proj.weight", "checkpoint has [16, 16]",
                            "model.safetensors", "model expects [8, 16]"});
  for (const nn::Parameter& p : dst.params)
    EXPECT_EQ(p.value.to_floats(), std::vector<float>(static_cast<size_t>(p.value.numel()), 0.f))
        << p.name << " was written before the mismatch was found";
}

TEST(HfModel, UnexpectedTensorsWarnOnOneLine) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  FakeModel src = make_fake_model(cfg, DType::f32, 15);
  const std::vector<NamedTensor> extra = {
      {"model.layers.0.self_attn.rotary_emb.inv_freq", Tensor::zeros({2}, DType::f32)},
      {"model.layers.1.self_attn.rotary_emb.inv_freq", Tensor::zeros({2}, DType::f32)}};
  write_sharded_safetensors(dir.path(), checkpoint_of(src, {}, extra), kDefaultMaxShardBytes);
  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true);
  std::ostringstream warnings;
  const LoadReport rep = load_pretrained(cfg, dst.pointers(), dir.path(), {}, &warnings);
  EXPECT_EQ(rep.unexpected,
            (std::vector<std::string>{"model.layers.0.self_attn.rotary_emb.inv_freq",
                                      "model.layers.1.self_attn.rotary_emb.inv_freq"}));
  const std::string w = warnings.str();
  EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 1) << w;
  EXPECT_NE(w.find("[hf_model] warning"), std::string::npos) << w;
  EXPECT_NE(w.find("ignoring 2 checkpoint tensor(s)"), std::string::npos) << w;
  EXPECT_NE(w.find("model.layers.1.self_attn.rotary_emb.inv_freq"), std::string::npos) << w;
  expect_bitwise_equal(src.params[3].value, dst.params[3].value, src.params[3].name);
}

// A tensor name from the file with control bytes is shown escaped: the warning stays one line.
TEST(HfModel, UnexpectedNamesAreEscaped) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  FakeModel src = make_fake_model(cfg, DType::f32, 15);
  const std::vector<NamedTensor> extra = {
      {std::string("evil\x1b[2J\nname"), Tensor::zeros({2}, DType::f32)}};
  write_sharded_safetensors(dir.path(), checkpoint_of(src, {}, extra), kDefaultMaxShardBytes);
  FakeModel dst = make_fake_model(cfg, DType::f32, 0, true);
  std::ostringstream warnings;
  load_pretrained(cfg, dst.pointers(), dir.path(), {}, &warnings);
  const std::string w = warnings.str();
  EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 1) << w;
  EXPECT_NE(w.find(R"("evil\u001b[2J\nname")"), std::string::npos) << w;
  EXPECT_EQ(w.find('\x1b'), std::string::npos) << w;
}

TEST(HfModel, BaseModelCheckpointWithoutPrefix) {
  // gpt2's published checkpoint names "h.0.attn.c_attn.weight", not "transformer.h.0...", and
  // carries the causal-mask buffers "h.N.attn.bias".
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_gpt2();
  FakeModel src = make_fake_model(cfg, DType::f32, 16);
  std::vector<NamedTensor> base;
  for (nn::Parameter& p : src.params)
    base.push_back({p.name.substr(12), p.value});
  for (int l = 0; l < 2; ++l)
    base.push_back({str("h.", l, ".attn.bias"), Tensor::zeros({1, 1, 16, 16}, DType::u8)});
  write_sharded_safetensors(dir.path(), base, kDefaultMaxShardBytes);
  FakeModel dst = make_fake_model(cfg, DType::bf16, 0, true);
  std::ostringstream warnings;
  const LoadReport rep = load_pretrained(cfg, dst.pointers(), dir.path(), {}, &warnings);
  EXPECT_EQ(rep.loaded.size(), src.params.size());
  EXPECT_EQ(rep.unexpected, (std::vector<std::string>{"h.0.attn.bias", "h.1.attn.bias"}));
  EXPECT_NE(warnings.str().find("h.1.attn.bias"), std::string::npos);
  for (size_t i = 0; i < src.params.size(); ++i)
    expect_bitwise_equal(kernels::cast_to(src.params[i].value, DType::bf16), dst.params[i].value,
                         src.params[i].name);
}

TEST(HfModel, BadArgumentsAreNamed) {
  TempDir dir;
  const nn::ModelConfig cfg = test::tiny_llama();
  FakeModel m = make_fake_model(cfg, DType::f32, 17);
  expect_error<ValueError>([&] { save_pretrained(cfg, m.pointers(), dir.path(), DType::i32); },
                           {"torch_dtype", "i32"});
  m.at("model.norm.weight").value = Tensor();
  expect_error<ValueError>([&] { save_pretrained(cfg, m.pointers(), dir.path(), DType::f32); },
                           {"model.norm.weight", "no value buffer"});
  EXPECT_TRUE(list_dir(dir.path()).empty());
  nn::ModelConfig bad = cfg;
  bad.sliding_window = 8;  // a llama config.json cannot say this
  expect_error<ValueError>([&] { save_pretrained(bad, m.pointers(), dir.path(), DType::f32); },
                           {"sliding_window"});
  EXPECT_TRUE(list_dir(dir.path()).empty());
  expect_error<IoError>([&] { load_pretrained(cfg, m.pointers(), dir.path(), {}, nullptr); },
                        {"model.safetensors.index.json"});
}

}  // namespace
}  // namespace zt::io
