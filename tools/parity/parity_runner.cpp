// The zerotrain side of tools/parity/parity.py: loads a Hugging Face model directory, runs the
// given batches and writes what PyTorch is compared against:
//   <out>/step0.safetensors  logits [B, S, V] and "grad.<name>" for every parameter at step 0, and
//                            final_logits after the AdamW steps (f32)
//   <out>/losses.json        {"losses": [...]}: the loss of each of the --steps AdamW steps
//   <out>/model/             the trained model (save_pretrained, f32)
// AdamW with a constant lr, weight decay on every parameter (as torch.optim.AdamW with one group),
// no clipping: the setting parity.py gives PyTorch; --weight-decay-mode l2 and --amsgrad make it
// torch.optim.Adam(weight_decay=wd, amsgrad=True).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/head_block.h"
#include "zerotrain/nn/transformer.h"
#include "zerotrain/optim/flat_optimizer.h"

namespace fs = std::filesystem;
using namespace zt;

namespace {

// Logits of the batch in ctx: every block but the head, then the head's projection.
Tensor logits_of(nn::Transformer& model, const nn::StepContext& ctx) {
  auto& blocks = model.blocks();
  Tensor x;
  for (size_t i = 0; i + 1 < blocks.size(); ++i)
    x = blocks[i]->forward(x, ctx);
  auto* head = dynamic_cast<nn::HeadBlock*>(blocks.back().get());
  if (!head) throw Error("parity", "the last block is not a HeadBlock");
  Tensor logits = head->logits(x, ctx).to(Device::cpu(), ctx.stream);
  for (auto& b : blocks)
    b->release_saved();
  return logits;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zerotrain side of the PyTorch parity check (tools/parity/parity.py)"};
  fs::path model_dir, batches_path, out;
  int steps = 20;
  double lr = 1e-3, wd = 0.1;
  std::string device_name = "cpu";
  app.add_option("--model", model_dir, "Hugging Face model directory")->required();
  app.add_option("--batches", batches_path,
                 "safetensors with input_ids.<t> and targets.<t>, i64 [B, S]")
      ->required();
  app.add_option("--steps", steps, "AdamW steps");
  app.add_option("--lr", lr, "constant learning rate");
  app.add_option("--weight-decay", wd, "weight decay on every parameter");
  std::string wd_mode = "decoupled";
  bool amsgrad = false;
  app.add_option("--weight-decay-mode", wd_mode, "decoupled (AdamW) or l2 (Adam)")
      ->check(CLI::IsMember({"decoupled", "l2"}));
  app.add_flag("--amsgrad", amsgrad, "amsgrad (the running max of v)");
  app.add_option("--device", device_name, "cpu or cuda");
  app.add_option("--out", out, "output directory")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const Device device = parse_device(device_name);
    const Stream stream = device.is_cuda() ? Stream::default_for(device) : Stream{};
    const nn::ModelConfig config = io::read_hf_config(model_dir / "config.json");
    nn::TransformerOptions mo;
    mo.device = device;
    nn::Transformer model(config, mo);
    io::load_pretrained(model, model_dir, stream);
    const io::SafetensorsReader batches(batches_path);
    auto batch = [&](int t, nn::StepContext& ctx) {
      ctx.tokens = batches.read("input_ids." + std::to_string(t), DType::i64, device, stream);
      ctx.targets = batches.read("targets." + std::to_string(t), DType::i64, device, stream);
    };
    nn::StepContext ctx;
    ctx.device = device;
    ctx.stream = stream;
    ctx.loss_scale = 1.0f;
    nn::BlockRunner runner(model.blocks());

    std::vector<io::NamedTensor> dump;
    batch(0, ctx);
    dump.push_back({"logits", logits_of(model, ctx)});
    model.zero_grads(stream);
    runner.forward_backward(ctx);
    for (nn::Parameter* p : model.parameters())
      dump.push_back({"grad." + p->name, p->grad.clone(stream).to(Device::cpu(), stream)});

    // torch.optim.AdamW with one group: every parameter decays. The flat Adam every ZeRO stage
    // steps, one run per parameter.
    optim::OptimizerConfig adam;
    adam.beta1 = 0.9;
    adam.beta2 = 0.999;
    adam.eps = 1e-8;
    adam.weight_decay = wd;
    adam.adam_w_mode = wd_mode == "decoupled";
    adam.amsgrad = amsgrad;
    const std::vector<nn::Parameter*> params = model.parameters();
    std::vector<optim::FlatParam> flat_params;
    std::vector<optim::FlatRun> runs;
    for (size_t i = 0; i < params.size(); ++i) {
      flat_params.push_back({params[i]->name, params[i]->shape, params[i]->value.dtype(), true});
      runs.push_back({params[i]->value.flatten(), {{i, 0, params[i]->value.numel(), 0}}});
    }
    optim::FlatOptimizer opt(flat_params, runs, adam, optim::Precision::mixed, nullptr, {}, stream);
    nlohmann::json losses = nlohmann::json::array();
    for (int t = 0; t < steps; ++t) {
      model.zero_grads(stream);
      batch(t, ctx);
      losses.push_back(runner.forward_backward(ctx).to_floats(stream)[0]);
      std::vector<Tensor> grads;
      for (const nn::Parameter* p : params)
        grads.push_back(p->grad.flatten());
      opt.step(grads, static_cast<float>(lr), 1.0f, stream);
    }
    batch(steps, ctx);
    dump.push_back({"final_logits", logits_of(model, ctx)});

    fs::create_directories(out);
    io::write_safetensors(out / "step0.safetensors", dump);
    std::ofstream(out / "losses.json") << nlohmann::json{{"losses", losses}}.dump(1) << "\n";
    io::save_pretrained(model, out / "model", DType::f32, io::kDefaultMaxShardBytes, stream);
    std::printf("parity_runner: %s on %s, %d steps, final loss %.6f\n", model_dir.string().c_str(),
                to_string(device).c_str(), steps, losses.back().get<double>());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
