// `zerotrain generate`: text from a Hugging Face model directory (a downloaded model or a run's
// <out>/model) with a KV cache, on the CPU or a GPU: greedy by default (the tokens of
// transformers' generate with do_sample=False), or sampled with --temperature / --top-p and a
// seed. The new text goes to stdout as it comes; a summary line to stderr. Tested by the
// generate_* ctests (tests/CMakeLists.txt) and tools/parity/check_generate.py.
#include <cstdio>
#include <memory>
#include <string>

#include "zerotrain/cli/command_line_guards.h"
#include "zerotrain/cli/commands.h"
#include "zerotrain/cli/text_generation.h"
#include "zerotrain/core/device.h"
#include "zerotrain/core/error.h"

namespace zt::cli {

namespace {

struct GenerateArgs {
  std::string model;
  std::string tokenizer;
  std::string prompt;
  int64_t max_new_tokens = 64;
  double temperature = 0.0;
  double top_p = 1.0;
  uint64_t seed = 0;
  std::string device = cuda_available() ? "cuda" : "cpu";
  std::string dtype = "auto";
  bool quiet = false;
};

int run_generate(const GenerateArgs& a) {
  TextGenerationRequest r;
  r.model = a.model;
  r.tokenizer = a.tokenizer;
  r.prompt = a.prompt;
  r.generation.max_new_tokens = a.max_new_tokens;
  r.generation.sampling = {a.temperature, a.top_p, a.seed};
  r.device = parse_device(a.device);
  r.dtype =
      a.dtype == "auto" ? (r.device.is_cuda() ? DType::bf16 : DType::f32) : parse_dtype(a.dtype);
  const nn::GenerationResult g = generate_text(r, stdout);
  std::printf("\n");
  std::fflush(stdout);
  if (a.quiet) return 0;
  const auto n = static_cast<double>(g.tokens.size());
  const double rate = g.decode_seconds > 0 ? (n - 1) / g.decode_seconds : 0.0;
  std::fprintf(
      stderr, "[generate] %zu tokens (%s) on %s %s: first token %.0f ms, then %.1f tokens/s\n",
      g.tokens.size(), g.stopped ? "stopped at eos" : "max-new-tokens", to_string(r.device).c_str(),
      std::string(dtype_name(r.dtype)).c_str(), g.prefill_seconds * 1e3, rate);
  return 0;
}

// --top-p: a probability in (0, 1].
CLI::Validator probability() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          size_t used = 0;
          const double p = std::stod(text, &used);
          if (used == text.size() && p > 0 && p <= 1) return {};
        } catch (const std::exception&) {
        }
        return "must be in (0, 1], got " + text;
      },
      "(0, 1]");
}

}  // namespace

void add_generate_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand(
      "generate", "Generate text with a Hugging Face model directory (greedy or sampled)");
  auto a = std::make_shared<GenerateArgs>();
  cmd->add_option("--model", a->model,
                  "model directory: config.json, model.safetensors (or shards) and "
                  "tokenizer.json, e.g. a run's <out>/model")
      ->required();
  cmd->add_option("--prompt", a->prompt, "the text to continue")->required();
  cmd->add_option("--tokenizer", a->tokenizer,
                  "tokenizer.json (default: the one in the model directory)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-new-tokens", a->max_new_tokens,
                  "tokens to generate at most (an eos token stops earlier)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--temperature", a->temperature,
                  "0: greedy (transformers' do_sample=False); > 0: sample from softmax(logits / T)")
      ->check(non_negative())
      ->capture_default_str();
  cmd->add_option("--top-p", a->top_p,
                  "with --temperature > 0: sample among the most probable tokens whose "
                  "probability reaches P (nucleus sampling)")
      ->check(probability())
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "seed of the sampling (same seed, same text)")
      ->capture_default_str();
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--dtype", a->dtype,
                  "compute dtype: auto (f32 on the CPU, bf16 on a GPU), f32, bf16 or f16")
      ->check(CLI::IsMember({"auto", "f32", "bf16", "f16"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", a->quiet, "no summary line on stderr");
  cmd->footer(
      "The new text goes to stdout as it is generated (the prompt is not repeated); a summary\n"
      "line (tokens, why it stopped, tokens/s) goes to stderr.\n\n"
      "Examples:\n"
      "  zerotrain generate --model runs/kjv/model --prompt \"And God said\"\n"
      "  zerotrain generate --model runs/kjv/model --prompt \"In the beginning\" --max-new-tokens "
      "200 "
      "\\\n"
      "      --temperature 0.8 --top-p 0.95 --seed 7\n"
      "  zerotrain generate --model ./Qwen2.5-0.5B --prompt \"The capital of France is\" --device "
      "cuda --dtype bf16\n"
      "  zerotrain generate --model runs/ft/model --tokenizer ./Llama-2-7b/tokenizer.json "
      "--prompt \"[INST] Hi [/INST]\"");
  cmd->callback([&action, a] { action = [a] { return run_generate(*a); }; });
}

}  // namespace zt::cli
