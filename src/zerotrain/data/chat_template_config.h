// What `data prepare` needs from a tokenizer directory to render chat data as transformers does:
// the chat template (chat_template.jinja beside the tokenizer, as transformers >= 4.51 saves it,
// else tokenizer_config.json's "chat_template": a string, or a list of {"name", "template"} from
// which the one named `template_name` is taken, "default" unless asked otherwise) and the special
// tokens transformers hands the template (bos_token, eos_token, unk_token, pad_token: strings or
// AddedToken objects with a "content"). Tested in tests/chat/test_chat_record.cpp.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "zerotrain/data/chat_template.h"

namespace zt::data {

struct TokenizerChatConfig {
  std::optional<ChatTemplate> chat_template;  // none when the directory has none
  std::string source;                         // where it was read (for messages)
  ValueDict special_tokens;                   // bos_token, eos_token, ... as the template sees them
};

// `tokenizer_dir`: the directory of tokenizer.json. A missing tokenizer_config.json gives an empty
// config; a malformed one, or a list without `template_name`, throws ValueError naming the file
// (and the names it has); a template that does not parse throws ChatTemplateError.
TokenizerChatConfig read_tokenizer_chat_config(const std::filesystem::path& tokenizer_dir,
                                               const std::string& template_name = "default");

}  // namespace zt::data
