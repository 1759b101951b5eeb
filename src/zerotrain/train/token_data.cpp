// open_token_file_for_model (token_data.h).
#include "zerotrain/train/token_data.h"

#include "zerotrain/core/error.h"

namespace zt::train {

std::shared_ptr<data::TokenFile> open_token_file_for_model(const std::filesystem::path& path,
                                                           const nn::ModelConfig& model,
                                                           const std::string& label) {
  auto tokens = std::make_shared<data::TokenFile>(path);
  if (tokens->vocab_size() > static_cast<uint64_t>(model.vocab_size))
    throw ValueError("train",
                     str(label, " ", path.string(), " has vocab size ", tokens->vocab_size(),
                         " but the model's vocab_size is ", model.vocab_size));
  tokens->check_tokens(static_cast<uint64_t>(model.vocab_size));
  // A loss over no target is 0 at every step: refused rather than trained on (issue 37).
  if (tokens->has_flags() && tokens->counted_targets() == 0)
    throw ValueError("train", str(label, " ", path.string(), ": no token counts as a target (every "
                                  "token is a prompt, system or user token): the loss would count "
                                  "nothing"));
  return tokens;
}

}  // namespace zt::train
