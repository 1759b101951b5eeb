// `zerotrain checkpoint inspect|consolidate|universal`: the saved checkpoints of a run
// (checkpoint/checkpoint_tools.h), with a progress bar on the long ones. A bad checkpoint is one
// "[checkpoint] ..." line and exit 1; `inspect --verify` exits 1 when a checksum fails.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/checkpoint/checkpoint_tools.h"
#include "zerotrain/cli/commands.h"
#include "zerotrain/cli/progress.h"
#include "zerotrain/core/allocator.h"
#include "zerotrain/core/error.h"
#include "zerotrain/estimate/units.h"

namespace zt::cli {

namespace {

struct ToolArgs {
  std::string src, out;
  bool verify = false;
  std::string dtype;
  std::string max_shard_size = "5GB";
};

// A progress bar over tensors, on stderr so that the output stays clean.
checkpoint::ToolProgress bar_for(const char* label,
                                 std::shared_ptr<std::unique_ptr<ProgressBar>> bar) {
  return [label, bar](int64_t done, int64_t total) {
    if (!*bar) {
      ProgressOptions o;
      o.out = stderr;
      *bar = std::make_unique<ProgressBar>(label, static_cast<uint64_t>(total), o);
    }
    (*bar)->update(static_cast<uint64_t>(done));
    if (done == total) (*bar)->finish();
  };
}

void print_report(const char* what, const checkpoint::ToolReport& r, const std::string& out) {
  std::printf("%s %s: %lld tensors, %s in %zu file(s); largest held at once %s\n", what,
              out.c_str(), static_cast<long long>(r.tensors), format_bytes(r.bytes).c_str(),
              r.files.size(), format_bytes(r.largest_tensor).c_str());
}

// `zerotrain checkpoint inspect DIR [--verify]`.
void add_inspect_command(CLI::App& cmd, std::function<int()>& action,
                         const std::shared_ptr<ToolArgs>& a) {
  auto* inspect =
      cmd.add_subcommand("inspect", "Print a checkpoint's step, layout, dtypes, files and tensors");
  inspect->add_option("DIR", a->src, "a checkpoint, a checkpoints directory or a run's --out")
      ->required();
  inspect->add_flag("--verify", a->verify,
                    "also check every tensor against its checksum (exit 1 naming any bad file)");
  inspect->footer(
      "Examples:\n"
      "  zerotrain checkpoint inspect runs/kjv\n"
      "  zerotrain checkpoint inspect runs/kjv/checkpoints/step-00000500 --verify");
  inspect->callback([&action, a] {
    action = [a] {
      std::vector<std::string> problems;
      std::printf("%s", checkpoint::inspect_checkpoint(a->src, a->verify, problems).c_str());
      for (const std::string& p : problems)
        std::fprintf(stderr, "%s\n", p.c_str());
      return problems.empty() ? 0 : 1;
    };
  });
}

// --max-shard-size in bytes: at least one, below 2^63 (a size past it would wrap).
uint64_t shard_bytes(const std::string& text) {
  const double bytes = estimate::parse_size(text, "--max-shard-size");
  if (!(bytes >= 1.0 && bytes < 9223372036854775808.0))
    throw ValueError("checkpoint", str("--max-shard-size: \"", text, "\" is ", bytes,
                                       " bytes; give one from 1 byte to below 2^63"));
  return static_cast<uint64_t>(bytes);
}

// `zerotrain checkpoint consolidate SRC OUT`: a Hugging Face model directory.
void add_consolidate_command(CLI::App& cmd, std::function<int()>& action,
                             const std::shared_ptr<ToolArgs>& a) {
  auto* consolidate = cmd.add_subcommand(
      "consolidate", "Write a checkpoint's weights as a Hugging Face model directory");
  consolidate->add_option("SRC", a->src, "a checkpoint, a checkpoints directory or a run's --out")
      ->required();
  consolidate
      ->add_option("OUT", a->out, "the model directory to write (config.json, *.safetensors)")
      ->required();
  consolidate
      ->add_option("--dtype", a->dtype,
                   "f32, bf16 or f16 (default: the training dtype; from the f32 masters when "
                   "there are any)")
      ->check(CLI::IsMember({"f32", "bf16", "f16", "fp16", "float32", "bfloat16", "float16"}));
  consolidate
      ->add_option("--max-shard-size", a->max_shard_size,
                   "split the weights into shards of at most this size, with an index "
                   "(GB, GiB, MB, MiB)")
      ->capture_default_str();
  consolidate->footer(
      "Memory stays bounded by the largest tensor, whatever the model and the world size that\n"
      "saved it. The output loads with transformers' from_pretrained.\n"
      "Examples:\n"
      "  zerotrain checkpoint consolidate runs/kjv kjv-hf\n"
      "  zerotrain checkpoint consolidate runs/llama/checkpoints/step-00001000 llama-hf --dtype "
      "bf16 --max-shard-size 2GB");
  consolidate->callback([&action, a] {
    action = [a] {
      checkpoint::ConsolidateOptions o;
      if (!a->dtype.empty()) o.dtype = parse_dtype(a->dtype);
      o.max_shard_bytes = shard_bytes(a->max_shard_size);
      o.progress = bar_for("consolidate", std::make_shared<std::unique_ptr<ProgressBar>>());
      print_report("wrote", checkpoint::consolidate_checkpoint(a->src, a->out, o), a->out);
      return 0;
    };
  });
}

// `zerotrain checkpoint universal SRC DST`: one file set per parameter.
void add_universal_command(CLI::App& cmd, std::function<int()>& action,
                           const std::shared_ptr<ToolArgs>& a) {
  auto* universal = cmd.add_subcommand(
      "universal", "Rewrite a checkpoint per parameter (DeepSpeed's ds_to_universal)");
  universal->add_option("SRC", a->src, "a checkpoint, a checkpoints directory or a run's --out")
      ->required();
  universal->add_option("DST", a->out, "a new directory for the universal checkpoint")->required();
  universal->footer(
      "`zerotrain train --resume` reads a universal checkpoint, or any zerotrain checkpoint\n"
      "directly, at another world size or ZeRO stage.\n"
      "Examples:\n"
      "  zerotrain checkpoint universal runs/big universal-big\n"
      "  zerotrain train --model config.json --data tokens.bin --out runs/big4 --nproc 4 "
      "--resume universal-big --steps 2000");
  universal->callback([&action, a] {
    action = [a] {
      print_report("wrote",
                   checkpoint::universal_checkpoint(
                       a->src, a->out,
                       bar_for("universal", std::make_shared<std::unique_ptr<ProgressBar>>())),
                   a->out);
      return 0;
    };
  });
}

}  // namespace

void add_checkpoint_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand("checkpoint", "Inspect, verify and convert saved checkpoints");
  cmd->require_subcommand(1);
  cmd->footer(
      "A run writes <out>/checkpoints/step-N/ (a manifest, one shard file per rank, COMPLETE)\n"
      "and <out>/checkpoints/latest. Wherever a checkpoint is asked for, a run's --out or its\n"
      "checkpoints/ directory stands for the latest one.\n\n"
      "Examples:\n"
      "  zerotrain checkpoint inspect runs/kjv --verify\n"
      "  zerotrain checkpoint consolidate runs/kjv hf-model --dtype bf16\n"
      "  zerotrain checkpoint universal runs/kjv/checkpoints/step-00000500 universal-500");
  auto a = std::make_shared<ToolArgs>();

  add_inspect_command(*cmd, action, a);
  add_consolidate_command(*cmd, action, a);
  add_universal_command(*cmd, action, a);
}

}  // namespace zt::cli
