// A token file opened for a model, training's (--data) or evaluation's (--eval-data): the header's
// vocab_size and every token id checked against the model's vocab_size before the first step (a
// bad id would otherwise surface hours later, or never). Tested by tests/train/test_evaluation.cpp
// and the bad-input corpus (tests/bad_inputs/cases_tokens.py).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "zerotrain/data/token_file.h"
#include "zerotrain/nn/model_config.h"

namespace zt::train {

// `label` names the file in the message: "[train] <label> <path> has vocab size 65 but the
// model's vocab_size is 64". Throws ValueError for a vocab_size above the model's and the token
// file's errors for an unreadable file or an id out of range.
std::shared_ptr<data::TokenFile> open_token_file_for_model(const std::filesystem::path& path,
                                                           const nn::ModelConfig& model,
                                                           const std::string& label);

}  // namespace zt::train
