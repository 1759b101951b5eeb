// Training-step throughput: a Llama-shaped model (random init, random tokens) trained with bf16
// compute, f32 master weights, f32 gradients and AdamW, as ../shared/bench/fsdp2_peer.py trains
// its model, so the two are compared in the same run. Prints a table and writes one JSON result
// with tokens/s/GPU, MFU (the peer's FLOP count over 989 TFLOP/s) and peak memory.
// Under a launcher with several ranks (mpirun, `zerotrain launch`) it trains data-parallel through
// the ZeRO engine (zero/zero_stage.h; --zero-stage 0 is DDP, 3 shards the parameters as the peer's
// fsdp2 mode does), one GPU per rank, each rank on its own random tokens; rank 0 reports.
//   build/bin/train_bench --model 1b --seq 4096 --mbs 2 [--steps 10 --warmup 3] [--ac] [--json
//   out.json]
//   zerotrain launch -n 4 -- build/bin/train_bench --model 1b --mbs 2 --json ddp.json
//   zerotrain launch -n 4 -- build/bin/train_bench --model 8b --mbs 1 --zero-stage 3
//   build/bin/train_bench --model 3b --mbs 1 --gpu-memory-cap 24GiB   # rehearse a 24 GiB GPU
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "zerotrain/comm/process_group.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/estimate/units.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/train/grad_clip.h"
#include "zerotrain/train/step_measures.h"
#include "zerotrain/zero/zero_stage.h"

using namespace zt;

namespace {

// The peer's shapes: hidden, layers, heads, kv heads, intermediate, vocab.
const std::map<std::string, std::array<int64_t, 6>> kShapes = {
    {"tiny", {512, 8, 8, 8, 1536, 32000}},
    {"1b", {2048, 16, 32, 8, 8192, 128256}},
    {"3b", {3072, 28, 24, 8, 8192, 128256}},
    {"8b", {4096, 32, 32, 8, 14336, 128256}},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Training-step throughput of a Llama-shaped model (compare with fsdp2_peer.py)"};
  std::string model = "1b", device_name = cuda_available() ? "cuda" : "cpu", json_path,
              commit = ZT_GIT_COMMIT;
  int64_t seq = 4096, mbs = 1;
  int steps = 10, warmup = 3;
  bool ac = false;
  int64_t bucket = 500'000'000;
  int zero_stage = 0;
  std::string gpu_cap;
  app.add_option("--model", model, "tiny, 1b, 3b or 8b")
      ->check(CLI::IsMember({"tiny", "1b", "3b", "8b"}));
  app.add_option("--seq", seq, "sequence length");
  app.add_option("--mbs", mbs, "micro-batch size");
  app.add_option("--steps", steps, "timed steps");
  app.add_option("--warmup", warmup, "untimed steps first");
  app.add_flag("--ac", ac, "activation checkpointing per layer");
  app.add_option("--device", device_name, "cuda or cpu");
  app.add_option("--json", json_path, "write the result here");
  app.add_option("--commit", commit, "commit recorded in the JSON");
  app.add_option("--reduce-bucket-size", bucket, "data-parallel: elements per all-reduce bucket");
  app.add_option("--zero-stage", zero_stage, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  app.add_option("--gpu-memory-cap", gpu_cap,
                 "cap the GPU allocator (24GiB) to rehearse a smaller GPU");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto [h, layers, heads, kv, inter, vocab] = kShapes.at(model);
    nn::ModelConfig mc;
    mc.family = nn::Family::llama;
    mc.hidden_size = h;
    mc.num_layers = layers;
    mc.num_heads = heads;
    mc.num_kv_heads = kv;
    mc.head_dim = h / heads;
    mc.intermediate_size = inter;
    mc.vocab_size = vocab;
    mc.max_position_embeddings = seq;
    mc.rope_theta = 500000;
    const comm::ProcessEnv env = comm::detect_process_env();
    std::unique_ptr<comm::ProcessGroup> group;
    if (env.world_size > 1) group = comm::init_process_group();
    const Device asked = parse_device(device_name);
    const Device dev = group && asked.is_cuda() ? group->local_device() : asked;
    const Stream stream = dev.is_cuda() ? Stream::default_for(dev) : Stream{};
    if (!gpu_cap.empty()) {
      if (!dev.is_cuda()) throw ValueError("train_bench", "--gpu-memory-cap needs --device cuda");
      set_cuda_memory_cap(dev.index,
                          static_cast<size_t>(estimate::parse_size(gpu_cap, "--gpu-memory-cap")));
    }
    nn::TransformerOptions mo;
    mo.device = dev;
    mo.param_dtype = dev.is_cuda() ? DType::bf16 : DType::f32;
    mo.grad_dtype = DType::f32;
    mo.allocate_grads = false;  // the ZeRO stage's buffers hold the gradients
    nn::Transformer net(mc, mo);
    net.init_random(0);
    std::unique_ptr<comm::Communicator> dcomm;  // NCCL on GPUs; CPU ranks use MPI
    comm::Communicator* comm = nullptr;
    if (group && dev.is_cuda()) {
      dcomm = group->make_device_communicator(dev);
      comm = dcomm.get();
    } else if (group) {
      comm = &group->host();
    }
    zero::ZeroOptions zo;
    zo.config.stage = zero_stage;
    zo.config.reduce_bucket_elements = bucket;
    zo.optimizer.adam.beta2 = 0.999;  // torch.optim.AdamW's defaults, no weight decay
    zo.optimizer.adam.weight_decay = 0.0;
    const std::unique_ptr<zero::ZeroStage> engine = zero::make_zero_stage(
        zo, net.blocks(),
        comm ? zero::ZeroContext(*comm, dev, stream) : zero::ZeroContext::one_process(dev, stream));
    nn::RunnerOptions ro;
    ro.checkpoint_layers = ac;
    nn::BlockRunner runner(net.blocks(), ro);
    runner.set_hooks(engine->hooks());
    const int world = env.world_size;

    std::mt19937_64 rng(1 + static_cast<uint64_t>(env.rank));
    std::uniform_int_distribution<int64_t> tok(0, vocab - 1);
    std::vector<int64_t> ids(static_cast<size_t>(mbs * seq)), tgt(ids.size());
    for (auto& x : ids)
      x = tok(rng);
    for (size_t i = 0; i < ids.size(); ++i)
      tgt[i] = (i + 1) % seq ? ids[i + 1] : -100;
    nn::StepContext ctx;
    ctx.device = dev;
    ctx.stream = stream;
    ctx.compute_dtype = mo.param_dtype;
    ctx.loss_scale = 1.0f / static_cast<float>(world);
    ctx.tokens = Tensor::from_ints(ids, {mbs, seq}, DType::i32, dev);
    ctx.targets = Tensor::from_ints(tgt, {mbs, seq}, DType::i32, dev);
    double loss = 0;
    auto step = [&] {
      engine->zero_grad();
      engine->begin_micro_step(true);
      Tensor l = runner.forward_backward(ctx);
      engine->finish_gradient_sync();
      const double norm = engine->grad_norm();
      engine->step(1e-5f, static_cast<float>(train::clip_coefficient(norm, 1.0)));
      loss = l.to_floats(stream)[0];
    };
    for (int i = 0; i < warmup; ++i)
      step();
    synchronize(stream);
    train::reset_peak_memory(dev);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i)
      step();
    synchronize(stream);
    const double dt =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / steps;
    const double tok_s = static_cast<double>(mbs * seq) / dt;
    // The peer's count: 6 x (params - input embedding) + 12 x layers x heads x head_dim x seq.
    const double fpt =
        train::flops_per_token({mc.num_non_embedding_params(), layers, heads, mc.head_dim, seq});
    const double peak_gib = train::memory_snapshot(dev).peak_allocated_gib;
    nlohmann::json r = {{"anchor", "zerotrain"},
                        {"model", model},
                        {"params_b", mc.num_params() / 1e9},
                        {"world", world},
                        {"mode", world > 1 ? "zero" + std::to_string(zero_stage) : "single"},
                        {"zero_stage", zero_stage},
                        {"model_state_gib",
                         {{"params", engine->memory().params / 1073741824.0},
                          {"grads", engine->memory().grads / 1073741824.0},
                          {"optimizer", engine->memory().optimizer / 1073741824.0}}},
                        {"seq", seq},
                        {"mbs", mbs},
                        {"ac", ac},
                        {"step_s", dt},
                        {"tok_s_gpu", tok_s},
                        {"tflops_gpu", tok_s * fpt / 1e12},
                        {"mfu_989", tok_s * fpt / 989e12},
                        {"peak_mem_gib", peak_gib},
                        {"loss", loss},
                        {"gpu", dev.is_cuda() ? cuda_device_name(dev.index) : "cpu"},
                        {"commit", commit}};
    if (env.rank != 0) return 0;
    std::printf("%-10s %-6s %-5s %10s %12s %8s %10s\n", "model", "seq", "mbs", "step (s)",
                "tokens/s", "MFU", "peak GiB");
    std::printf("%-10s %-6lld %-5lld %10.4f %12.1f %8.3f %10.2f\n", model.c_str(),
                static_cast<long long>(seq), static_cast<long long>(mbs), dt, tok_s,
                tok_s * fpt / 989e12, peak_gib);
    std::printf("RESULT %s\n", r.dump().c_str());
    if (!json_path.empty()) std::ofstream(json_path) << r.dump(2) << "\n";
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
