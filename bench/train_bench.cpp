// Training-step throughput: a Llama- or GPT-2-shaped model (bench_models.h; random init, random
// tokens) trained with 16-bit compute, f32 master weights, f32 gradients and AdamW, as
// ../shared/bench/fsdp2_peer.py trains its model, so the two are compared in the same run. Prints
// a table and writes one JSON result with tokens/s/GPU, MFU (the peer's FLOP count over 989
// TFLOP/s), the GPU peak and the host's peak resident memory.
// Under a launcher with several ranks (mpirun, `zerotrain launch`) it trains data-parallel through
// the ZeRO engine (zero/zero_stage.h; --zero-stage 0 is DDP, 3 shards the parameters as the peer's
// fsdp2 mode does), one GPU per rank, each rank on its own random tokens; rank 0 reports.
// Offload (zero::OffloadPolicy) is set by the flags DeepSpeed's keys map to; --measure-parts times
// the parts of an offloaded step alone in the same process (offload_parts.h): GPU compute
// (forward + backward of every micro-step, no reduction or update), CPU Adam over this rank's
// shard, the PCIe copies of the gradient and value shards, and the pinned copy ceiling.
//   build/bin/train_bench --model 1b --seq 4096 --mbs 2 [--steps 10 --warmup 3] [--ac] [--json
//   out.json]
//   zerotrain launch -n 4 -- build/bin/train_bench --model 8b --mbs 1 --zero-stage 3
//   build/bin/train_bench --model 3b --mbs 1 --gpu-memory-cap 24GiB   # rehearse a 24 GiB GPU
//   build/bin/train_bench --model 3b --zero-stage 2 --grad-accum 8 --offload-optimizer cpu
//     --init tiled --measure-parts
// The CPU smoke run of the offload options is ctest train_bench_offload_smoke.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "bench/bench_models.h"
#include "bench/offload_parts.h"
#include "bench/tiled_init.h"
#include "zerotrain/comm/process_group.h"
#include "zerotrain/config/offload_device.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/tensor.h"
#include "zerotrain/estimate/units.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/loss_targets.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/train/grad_clip.h"
#include "zerotrain/train/step_measures.h"
#include "zerotrain/zero/shard_init.h"
#include "zerotrain/zero/zero_stage.h"

using namespace zt;

namespace {

constexpr double kGiB = 1073741824.0;
constexpr double kF16LossScale = 1024.0;  // static: a benchmark of speed, not of the scaler

config::OffloadDevice parse_offload_device(const std::string& name) {
  if (name == "cpu") return config::OffloadDevice::cpu;
  if (name == "nvme") return config::OffloadDevice::nvme;
  return config::OffloadDevice::none;
}

DType parse_bench_dtype(const std::string& name) {
  if (name == "f16" || name == "fp16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  return DType::f32;
}

struct OffloadFlags {
  std::string optimizer = "none", params = "none", nvme_path;
  bool pin_memory = true;
  int64_t sub_group_size = 1'000'000'000;
  double ratio = 1.0;

  zero::OffloadPolicy policy() const {
    zero::OffloadPolicy p;
    p.optimizer.device = parse_offload_device(optimizer);
    p.optimizer.pin_memory = pin_memory;
    p.optimizer.nvme_path = nvme_path;
    p.optimizer.ratio = ratio;
    p.params.device = parse_offload_device(params);
    p.params.pin_memory = pin_memory;
    p.params.nvme_path = nvme_path;
    p.sub_group_size = sub_group_size;
    return p;
  }
  nlohmann::json to_json() const {
    return {{"optimizer", optimizer},           {"param", params},
            {"nvme_path", nvme_path},           {"pin_memory", pin_memory},
            {"sub_group_size", sub_group_size}, {"ratio", ratio}};
  }
};

void print_parts(const nlohmann::json& parts, bool cuda) {
  const auto part = [&](const char* key) {
    return parts.contains(key) ? parts[key].get<double>() : 0.0;
  };
  std::printf(
      "parts alone: GPU compute %.4f s, CPU Adam %.4f s (%lld elements, %d threads), PCIe "
      "%.4f s (d2h %.4f + h2d %.4f); step / max(parts) = %.3f\n",
      part("gpu_compute_s"), part("cpu_adam_s"),
      static_cast<long long>(parts["shard_elements"].get<int64_t>()),
      parts["omp_threads"].get<int>(), part("pcie_s"), part("pcie_d2h_grads_s"),
      part("pcie_h2d_values_s"), part("step_over_max_part"));
  if (cuda)
    std::printf("pinned copies at 256 MiB: host->device %.1f GB/s, device->host %.1f GB/s\n",
                part("pinned_256mib_h2d_gbs"), part("pinned_256mib_d2h_gbs"));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Training-step throughput of a transformer (compare with fsdp2_peer.py)"};
  std::string model = "1b", device_name = cuda_available() ? "cuda" : "cpu", json_path,
              commit = ZT_GIT_COMMIT, dtype_flag, init = "seeded";
  int64_t seq = 4096, mbs = 1;
  std::vector<int64_t> grad_accums{1};
  int steps = 10, warmup = 3;
  bool ac = false, measure_parts = false, zero_init = true;
  int64_t bucket = 500'000'000;
  int zero_stage = 0;
  std::string gpu_cap;
  OffloadFlags off;
  const std::vector<std::string> devices{"none", "cpu", "nvme"};
  app.add_option("--model", model, "shape (bench_models.h): 1b, 3b, 8b, gpt2-xl, 0.7b ... 7b, tiny")
      ->check(CLI::IsMember(bench::bench_model_names()));
  app.add_option("--seq", seq, "sequence length");
  app.add_option("--mbs", mbs, "micro-batch size");
  app.add_option(
         "--grad-accum", grad_accums,
         "micro-steps per optimizer step; several (--grad-accum 1 8): each timed in turn in "
         "the same process, one result each (the JSON then holds a list)")
      ->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps");
  app.add_option("--warmup", warmup, "untimed steps first");
  app.add_flag("--ac", ac, "activation checkpointing per layer");
  app.add_option("--device", device_name, "cuda or cpu");
  app.add_option("--dtype", dtype_flag,
                 "bf16, f16 (static loss scale 1024) or f32 (default: bf16 "
                 "on a GPU, f32 on the CPU)")
      ->check(CLI::IsMember({"bf16", "f16", "fp16", "f32"}));
  app.add_option("--init", init, "seeded (the models' init) or tiled (fast, for big shapes)")
      ->check(CLI::IsMember({"seeded", "tiled"}));
  app.add_option("--json", json_path, "write the result here");
  app.add_option("--commit", commit, "commit recorded in the JSON");
  app.add_option("--reduce-bucket-size", bucket, "data-parallel: elements per all-reduce bucket");
  app.add_option("--zero-stage", zero_stage, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  app.add_flag("--zero-init,!--no-zero-init", zero_init,
               "stage 3: build only the value shards (zero.Init; default on)");
  app.add_option("--gpu-memory-cap", gpu_cap,
                 "cap the GPU allocator (24GiB) to rehearse a smaller GPU");
  app.add_option("--offload-optimizer", off.optimizer, "offload_optimizer.device")
      ->check(CLI::IsMember(devices));
  app.add_option("--offload-param", off.params, "offload_param.device (stage 3)")
      ->check(CLI::IsMember(devices));
  app.add_option("--nvme-path", off.nvme_path, "nvme: where the swap directory is made");
  app.add_flag("--pin-memory,!--no-pin-memory", off.pin_memory, "pinned host buffers (default on)");
  app.add_option("--sub-group-size", off.sub_group_size,
                 "elements the host Adam steps as one unit");
  app.add_option("--offload-ratio", off.ratio,
                 "stage 3: fraction of the optimizer state offloaded");
  app.add_flag("--measure-parts", measure_parts,
               "also time GPU compute, CPU Adam and PCIe copies alone, and the pinned ceiling");
  CLI11_PARSE(app, argc, argv);
  try {
    const nn::ModelConfig mc = bench::bench_model(model, seq);
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
    const DType dtype =
        parse_bench_dtype(dtype_flag.empty() ? (dev.is_cuda() ? "bf16" : "f32") : dtype_flag);
    const bool shard_init = zero_stage == 3 && zero_init;
    nn::TransformerOptions mo;
    mo.device = dev;
    mo.param_dtype = dtype;
    mo.grad_dtype = DType::f32;
    mo.allocate_grads = false;  // the ZeRO stage's buffers hold the gradients
    mo.allocate = !shard_init;  // zero.Init: the engine builds only the shards
    const auto t_setup = std::chrono::steady_clock::now();
    nn::Transformer net(mc, mo);
    bench::TiledInit tiled;
    zero::SeededInitSource seeded(mc, 0);
    zero::ShardSource* source = init == "tiled" ? static_cast<zero::ShardSource*>(&tiled) : &seeded;
    if (!shard_init) {
      if (init == "tiled")
        tiled.init_full(net.parameters(), stream);
      else
        net.init_random(0);
    }
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
    zo.config.reduce_bucket_size = bucket;
    zo.config.zero_init = shard_init;
    zo.config.offload = off.policy();
    zo.grad_dtype = DType::f32;
    if (shard_init) {
      zo.initial_values = source;
      zo.initial_values_dtype = dtype;
    }
    zo.optimizer.config.beta2 = 0.999;  // torch.optim.AdamW's defaults, no weight decay
    zo.optimizer.config.weight_decay = 0.0;
    const std::unique_ptr<zero::ZeroStage> engine = zero::make_zero_stage(
        zo, net.blocks(),
        comm ? zero::ZeroContext(*comm, dev, stream) : zero::ZeroContext::one_process(dev, stream));
    nn::RunnerOptions ro;
    ro.checkpoint_layers = ac;
    nn::BlockRunner runner(net.blocks(), ro);
    runner.set_hooks(engine->hooks());
    synchronize(stream);
    const double setup_s = bench::seconds_since(t_setup);
    const int world = env.world_size;

    std::mt19937_64 rng(1 + static_cast<uint64_t>(env.rank));
    std::uniform_int_distribution<int64_t> tok(0, mc.vocab_size - 1);
    std::vector<int64_t> ids(static_cast<size_t>(mbs * seq)), tgt(ids.size());
    for (auto& x : ids)
      x = tok(rng);
    for (size_t i = 0; i < ids.size(); ++i)
      tgt[i] = (i + 1) % seq ? ids[i + 1] : -100;
    const double loss_scale = dtype == DType::f16 ? kF16LossScale : 1.0;
    nn::StepContext ctx;
    ctx.device = dev;
    ctx.stream = stream;
    ctx.compute_dtype = dtype;
    ctx.tokens = Tensor::from_ints(ids, {mbs, seq}, DType::i32, dev);
    ctx.targets = Tensor::from_ints(tgt, {mbs, seq}, DType::i32, dev);
    // Counted here, as the trainer counts its host batches: the head would otherwise copy the
    // targets to the host and wait for the GPU in every micro-step.
    ctx.num_items_in_batch =
        std::count_if(tgt.begin(), tgt.end(), [](int64_t t) { return t != nn::kIgnoreIndex; });
    double loss = 0;
    Tensor micro_loss;
    auto micro_step = [&](bool boundary) {
      engine->begin_micro_step(boundary);
      micro_loss = runner.forward_backward(ctx);
    };
    auto step = [&](int64_t accum) {
      ctx.loss_scale = static_cast<float>(loss_scale / static_cast<double>(world * accum));
      engine->zero_grad();
      for (int64_t m = 0; m < accum; ++m)
        micro_step(m + 1 == accum);
      engine->finish_gradient_sync();
      const double norm = engine->grad_norm() / loss_scale;
      if (std::isfinite(norm))  // an f16 overflow skips the update, as the trainer does
        engine->step(1e-5f, static_cast<float>(train::clip_coefficient(norm, 1.0) / loss_scale));
      loss = micro_loss.to_floats(stream)[0];
    };
    for (int i = 0; i < warmup; ++i)
      step(grad_accums.front());
    synchronize(stream);
    // The host's peak through setup and warmup; --measure-parts' own buffers are left out below.
    const int64_t setup_host_peak = bench::host_peak_bytes();

    // The parts an accumulation does not change: the host's Adam over this rank's shard and the
    // shard's PCIe copies, measured once, alone.
    nlohmann::json host_parts;
    if (measure_parts) {
      int64_t shard = 0;
      for (const auto& g : engine->groups())
        shard += g->shard_numel();
      const DType value_dtype = dtype;  // the 16-bit values the host Adam writes back
      const bench::CpuAdamPart adam =
          bench::time_cpu_adam(shard, value_dtype, *zo.grad_dtype,
                               std::min<int64_t>(off.sub_group_size, 1 << 27), zo.optimizer.config);
      host_parts = {{"shard_elements", shard},
                    {"value_dtype", std::string(dtype_name(value_dtype))},
                    {"grad_dtype", std::string(dtype_name(*zo.grad_dtype))},
                    {"cpu_adam_s", adam.seconds},
                    {"cpu_adam_slab", adam.slab},
                    {"omp_threads", adam.threads},
                    {"pcie_s", 0.0}};
      if (dev.is_cuda()) {
        const int64_t grad_bytes = shard * static_cast<int64_t>(dtype_size(*zo.grad_dtype));
        const int64_t value_bytes = shard * static_cast<int64_t>(dtype_size(value_dtype));
        constexpr int64_t kSlab = int64_t{1} << 30;
        const double d2h = bench::time_pinned_copies(grad_bytes, false, dev, stream, kSlab);
        const double h2d = bench::time_pinned_copies(value_bytes, true, dev, stream, kSlab);
        const bench::PinnedBandwidth bw = bench::pinned_bandwidth(dev, stream);
        host_parts["pcie_d2h_grads_s"] = d2h;
        host_parts["pcie_h2d_values_s"] = h2d;
        host_parts["pcie_s"] = d2h + h2d;
        host_parts["pinned_256mib_h2d_gbs"] = bw.h2d_gbs;
        host_parts["pinned_256mib_d2h_gbs"] = bw.d2h_gbs;
      }
    }

    // The peer's count: 6 x (params - input embedding) + 12 x layers x heads x head_dim x seq.
    const double fpt = train::flops_per_token(
        {mc.num_non_embedding_params(), mc.num_layers, mc.num_heads, mc.head_dim, seq});
    nlohmann::json results = nlohmann::json::array();
    if (env.rank == 0)
      std::printf("%-8s %-5s %-4s %-5s %-10s %9s %11s %7s %9s %9s\n", "model", "seq", "mbs",
                  "accum", "offload", "step (s)", "tokens/s", "MFU", "GPU GiB", "host GiB");
    for (size_t k = 0; k < grad_accums.size(); ++k) {
      const int64_t accum = grad_accums[k];
      if (k > 0) step(accum);  // one untimed step at this accumulation
      nlohmann::json parts;
      if (measure_parts) {
        // GPU compute alone: forward + backward of the step's micro-steps, none of them the
        // boundary, so nothing is reduced, copied to the host or stepped.
        ctx.loss_scale = static_cast<float>(loss_scale / static_cast<double>(world * accum));
        engine->zero_grad();
        synchronize(stream);
        auto t0 = std::chrono::steady_clock::now();
        for (int64_t m = 0; m < accum; ++m)
          micro_step(false);
        synchronize(stream);
        const double compute_s = bench::seconds_since(t0);
        // A boundary micro-step with its reduction (and, offloaded, the gradient stream to the
        // host) but no update, as a step an fp16 overflow skips: what the reduction adds.
        engine->zero_grad();
        synchronize(stream);
        t0 = std::chrono::steady_clock::now();
        micro_step(true);
        engine->finish_gradient_sync();
        engine->grad_norm();
        synchronize(stream);
        const double boundary_s = bench::seconds_since(t0);
        engine->zero_grad();
        parts = host_parts;
        parts["gpu_compute_s"] = compute_s;
        parts["boundary_micro_step_s"] = boundary_s;
        parts["max_part_s"] =
            std::max({compute_s, parts["cpu_adam_s"].get<double>(), parts["pcie_s"].get<double>()});
      }
      if (measure_parts) bench::reset_host_peak();  // the parts' own buffers are gone
      train::reset_peak_memory(dev);
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < steps; ++i)
        step(accum);
      synchronize(stream);
      const double dt = bench::seconds_since(t0) / steps;
      const double tok_s = static_cast<double>(mbs * seq * accum) / dt;
      const double peak_gib = train::memory_snapshot(dev).peak_allocated_gib;
      const zero::MemoryBytes mem = engine->memory();
      const double host_peak_gib =
          static_cast<double>(std::max(setup_host_peak, bench::host_peak_bytes())) / kGiB;
      if (measure_parts) parts["step_over_max_part"] = dt / parts["max_part_s"].get<double>();
      nlohmann::json r = {{"anchor", "zerotrain"},
                          {"model", model},
                          {"params_b", mc.num_params() / 1e9},
                          {"world", world},
                          {"mode", world > 1 ? "zero" + std::to_string(zero_stage) : "single"},
                          {"zero_stage", zero_stage},
                          {"offload", off.to_json()},
                          {"dtype", std::string(dtype_name(dtype))},
                          {"init", init},
                          {"model_state_gib",
                           {{"params", mem.params / kGiB},
                            {"grads", mem.grads / kGiB},
                            {"optimizer", mem.optimizer / kGiB},
                            {"host_params", mem.host_params / kGiB},
                            {"host_grads", mem.host_grads / kGiB},
                            {"host_optimizer", mem.host_optimizer / kGiB},
                            {"nvme", mem.nvme / kGiB}}},
                          {"seq", seq},
                          {"mbs", mbs},
                          {"grad_accum", accum},
                          {"ac", ac},
                          {"setup_s", setup_s},
                          {"step_s", dt},
                          {"tok_s_gpu", tok_s},
                          {"tflops_gpu", tok_s * fpt / 1e12},
                          {"mfu_989", tok_s * fpt / 989e12},
                          {"peak_mem_gib", peak_gib},
                          {"host_peak_gib", host_peak_gib},
                          {"host_ram_gib", static_cast<double>(bench::host_ram_bytes()) / kGiB},
                          {"cpu_cores", std::thread::hardware_concurrency()},
                          {"loss", loss},
                          {"gpu", dev.is_cuda() ? cuda_device_name(dev.index) : "cpu"},
                          {"commit", commit}};
      if (!gpu_cap.empty()) r["gpu_memory_cap"] = gpu_cap;
      if (dev.is_cuda())
        r["pinned_gib"] = static_cast<double>(pinned_host_allocator().stats().allocated) / kGiB;
      if (measure_parts) r["parts"] = parts;
      results.push_back(r);
      if (env.rank != 0) continue;
      std::printf("%-8s %-5lld %-4lld %-5lld %-10s %9.4f %11.1f %7.3f %9.2f %9.2f\n", model.c_str(),
                  static_cast<long long>(seq), static_cast<long long>(mbs),
                  static_cast<long long>(accum), (off.optimizer + "/" + off.params).c_str(), dt,
                  tok_s, tok_s * fpt / 989e12, peak_gib, host_peak_gib);
      if (measure_parts) print_parts(parts, dev.is_cuda());
      std::printf("RESULT %s\n", r.dump().c_str());
    }
    if (env.rank == 0 && !json_path.empty())
      std::ofstream(json_path) << (results.size() == 1 ? results[0] : results).dump(2) << "\n";
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
