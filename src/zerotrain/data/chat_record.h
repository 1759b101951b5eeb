// One instruction or chat JSON Lines record -> its tokens and loss mask, for `zerotrain data
// prepare`. Three kinds of record:
//  - messages (`fields.messages`): a list of {"role", "content", ...}, rendered through the
//    model's chat template; the assistant messages' tokens count;
//  - prompt/completion strings, joined as TRL's SFTTrainer joins them (prompt + completion, one
//    text): the tokens past the prompt's own tokens count (TRL's completion_only_loss); with
//    `pairs_through_template`, a user and an assistant message rendered through the template;
//  - prompt/completion lists of messages (TRL's conversational form): rendered as one
//    conversation; only the completion's assistant messages count.
//
// [Note: assistant spans] Which tokens of a rendered conversation R are an assistant message i's:
// R' = the tokens of the same conversation rendered with message i reduced to an empty assistant
// message ({"role": "assistant", "content": ""}: no content, reasoning or tool calls). Every
// other turn renders alike in both, in the same context, so the message's own tokens are R past
// the longest common prefix of R and R' and before their longest common suffix. The tokens the
// template closes the turn with (<|eot_id|>, </s>, <|im_end|>\n) are alike in both too: they are
// taken from render(messages[:i+1]) and render(the same, reduced), where the turn is last and its
// closing is their common suffix, and counted where they follow the message in R. So the loss
// learns the answer (and its reasoning and tool calls, as far as they differ from an empty turn)
// and to end it; the role header ("<|im_start|>assistant\n") is prompt. A record with no assistant
// message is skipped and reported, as is one whose template raises (raise_exception's message is
// reported).
// Tested in tests/chat/test_chat_record.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/data/chat_template.h"
#include "zerotrain/data/jsonl_record.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::data {

struct ChatRecordOptions {
  JsonlFields fields;                           // messages, or prompt + completion
  const ChatTemplate* chat_template = nullptr;  // needed by messages and templated pairs
  ValueDict template_variables;         // bos_token, eos_token, ... (chat_template_config.h)
  bool pairs_through_template = false;  // string pairs as a user and an assistant message
  std::string no_chat_template_reason;  // the error's text when a record needs a template
};

struct MaskedRecord {
  std::vector<uint32_t> tokens;
  std::vector<uint8_t> counts;  // 1 where the token counts as a target
  std::string error;            // nonempty: the record is skipped, reported with this
};

MaskedRecord masked_record(std::string_view line, const ChatRecordOptions& options,
                           const Tokenizer& tokenizer, BpeCache& cache);

// The length of the longest common prefix of a and b.
size_t common_prefix(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

}  // namespace zt::data
