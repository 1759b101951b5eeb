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
// B = the tokens of render(messages[:i+1]); the message starts in B after the longest common
// prefix of B with the tokens of render(messages[:i], add_generation_prompt=True) or with those of
// render(messages[:i+1] with message i's content emptied), whichever is longer (the second
// matters for templates whose generation prompt differs from a rendered turn, such as Mistral's,
// which writes the system prompt into the last user turn only); its tokens run to the end of B
// (the content and whatever the template closes it with: <|eot_id|>, </s>, <|im_end|>\n). When B
// begins R (the usual case) the run lies at the same place in R; otherwise it is searched for in
// R after the previous assistant span. A record whose run is not in R is skipped and reported; so
// is a record with no assistant message, or one whose template raises (raise_exception's message
// is reported).
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
  JsonlFields fields;                        // messages, or prompt + completion
  const ChatTemplate* chat_template = nullptr;  // needed by messages and templated pairs
  ValueDict template_variables;              // bos_token, eos_token, ... (chat_template_config.h)
  bool pairs_through_template = false;       // string pairs as a user and an assistant message
  std::string no_chat_template_reason;       // the error's text when a record needs a template
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
