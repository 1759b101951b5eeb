// The end-of-training sample (see training_sample.h).
#include "zerotrain/cli/training_sample.h"

#include <cstdio>

#include "zerotrain/cli/text_generation.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/files.h"

namespace zt::cli {

void add_sample_options(CLI::App& cmd, SampleOptions& o) {
  cmd.add_option("--sample-tokens", o.tokens,
                 "at the end, print a greedy sample of this many tokens from the trained model "
                 "(0: none; needs a tokenizer: --sample-tokenizer or tokenizer.json beside "
                 "--model)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--sample-prompt", o.prompt, "the text the sample continues")
      ->capture_default_str();
  cmd.add_option("--sample-tokenizer", o.tokenizer,
                 "tokenizer.json for the sample (also copied into <out>/model for `zerotrain "
                 "generate`)")
      ->check(CLI::ExistingFile);
}

void print_training_sample(const SampleOptions& o, const std::filesystem::path& model,
                           const std::filesystem::path& model_dir, Device device, DType dtype) {
  if (o.tokens == 0) return;
  const std::filesystem::path tokenizer =
      o.tokenizer.empty() ? tokenizer_beside(model) : std::filesystem::path(o.tokenizer);
  if (tokenizer.empty() || !std::filesystem::is_directory(model_dir)) return;
  try {
    const std::filesystem::path copy = model_dir / "tokenizer.json";
    if (!std::filesystem::exists(copy)) write_file_atomic(copy, read_text_file(tokenizer, "train"));
    TextGenerationRequest r;
    r.model = model_dir;
    r.tokenizer = tokenizer;
    r.prompt = o.prompt;
    r.generation.max_new_tokens = o.tokens;
    r.device = device;
    r.dtype = dtype;
    std::printf("\n%-22s %s", "sample (greedy)", o.prompt.c_str());
    std::fflush(stdout);
    generate_text(r, stdout);
    std::printf("\n");
  } catch (const std::exception& e) {
    std::printf("\n");
    std::fprintf(stderr, "[train] no sample: %s\n", e.what());
  }
}

}  // namespace zt::cli
