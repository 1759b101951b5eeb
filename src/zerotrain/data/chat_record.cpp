// Instruction and chat records -> tokens and loss mask (see chat_record.h).
#include "zerotrain/data/chat_record.h"

#include <nlohmann/json.hpp>

namespace zt::data {
namespace {

using json = nlohmann::ordered_json;

// A list of messages from a JSON value, or the reason it is not one.
std::optional<TemplateValue> messages_of(const json& v, const std::string& what,
                                         std::string& error) {
  if (!v.is_array()) {
    error = str(what, " is ", describe_jsonl_value(v), ", expected a list of messages");
    return std::nullopt;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const json& m = v[i];
    if (!m.is_object()) {
      error = str(what, " message ", i, " is ", describe_jsonl_value(m), ", expected an object");
      return std::nullopt;
    }
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      error = str(what, " message ", i, " has no string \"role\"");
      return std::nullopt;
    }
  }
  return from_json(v);
}

std::vector<uint32_t> encode(const Tokenizer& tok, const std::string& text, BpeCache& cache) {
  std::vector<uint32_t> ids;
  tok.encode(text, ids, cache);
  return ids;
}

// The length of the longest common suffix of a and b.
size_t common_suffix(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n])
    ++n;
  return n;
}

// A conversation rendered and masked: the assistant messages at index >= first_counted count.
MaskedRecord masked_conversation(const TemplateValue& messages, size_t first_counted,
                                 const ChatRecordOptions& o, const Tokenizer& tok,
                                 BpeCache& cache) {
  MaskedRecord out;
  if (!o.chat_template)
    throw ValueError("data", str("chat records are rendered through the model's chat template: ",
                                 o.no_chat_template_reason));
  const ChatTemplate& tpl = *o.chat_template;
  auto prefix = [&](size_t n) {
    ValueList head(messages.list->begin(), messages.list->begin() + static_cast<long>(n));
    return TemplateValue::of(std::move(head));
  };
  try {
    out.tokens = encode(tok, tpl.render(messages, false, o.template_variables), cache);
    out.counts.assign(out.tokens.size(), 0);
    size_t spans = 0;
    for (size_t i = first_counted; i < messages.list->size(); ++i) {
      const TemplateValue* role = (*messages.list)[i].find("role");
      if (!role || to_text(*role) != "assistant") continue;
      // The conversation with message i reduced to an empty assistant message.
      auto reduced = [&](size_t n) {
        TemplateValue m = prefix(n);
        (*m.list)[i] =
            TemplateValue::of(ValueDict{{"role", TemplateValue::of(std::string("assistant"))},
                                        {"content", TemplateValue::of(std::string())}});
        return m;
      };
      const auto others = encode(
          tok, tpl.render(reduced(messages.list->size()), false, o.template_variables), cache);
      const size_t start = common_prefix(out.tokens, others);
      const size_t after = std::min(common_suffix(out.tokens, others), out.tokens.size() - start);
      if (start + after == out.tokens.size()) continue;  // the template writes nothing for it
      // The tokens that close the turn (<|im_end|>\n, </s>, <|eot_id|>) are alike in both
      // renders; as the last message, the turn ends the render, so they are its common suffix.
      const auto through =
          encode(tok, tpl.render(prefix(i + 1), false, o.template_variables), cache);
      const auto through_reduced =
          encode(tok, tpl.render(reduced(i + 1), false, o.template_variables), cache);
      size_t closing = std::min(common_suffix(through, through_reduced), after);
      const size_t end = out.tokens.size() - after;
      while (closing > 0 && !std::equal(through.end() - static_cast<long>(closing), through.end(),
                                        out.tokens.begin() + static_cast<long>(end)))
        --closing;
      std::fill(out.counts.begin() + static_cast<long>(start),
                out.counts.begin() + static_cast<long>(end + closing), 1);
      ++spans;
    }
    if (spans == 0) out.error = "no assistant message to learn from";
  } catch (const ChatTemplateError& e) {
    std::string what = e.what();
    if (what.rfind("[chat_template] ", 0) == 0) what = what.substr(16);
    out.error = str("chat template: ", what);
  }
  return out;
}

}  // namespace

size_t common_prefix(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n])
    ++n;
  return n;
}

MaskedRecord masked_record(std::string_view line, const ChatRecordOptions& o, const Tokenizer& tok,
                           BpeCache& cache) {
  MaskedRecord out;
  const std::optional<json> record = parse_jsonl_object(line, out.error);
  if (!record) return out;
  const JsonlFields& f = o.fields;
  if (!f.messages.empty()) {
    auto it = record->find(f.messages);
    if (it == record->end()) {
      out.error = str("no field \"", f.messages, "\"");
      return out;
    }
    auto messages = messages_of(*it, str("field \"", f.messages, "\""), out.error);
    if (!messages) return out;
    return masked_conversation(*messages, 0, o, tok, cache);
  }
  auto prompt = record->find(f.prompt);
  auto completion = record->find(f.completion);
  if (prompt == record->end() || completion == record->end()) {
    out.error = str("no field \"", prompt == record->end() ? f.prompt : f.completion, "\"");
    return out;
  }
  if (prompt->is_array() || completion->is_array()) {  // TRL's conversational prompt-completion
    auto p = messages_of(*prompt, str("field \"", f.prompt, "\""), out.error);
    if (!p) return out;
    auto c = messages_of(*completion, str("field \"", f.completion, "\""), out.error);
    if (!c) return out;
    ValueList all = *p->list;
    all.insert(all.end(), c->list->begin(), c->list->end());
    return masked_conversation(TemplateValue::of(std::move(all)), p->list->size(), o, tok, cache);
  }
  const std::string* p = jsonl_string_field(*record, f.prompt, out.error);
  if (!p) return out;
  const std::string* c = jsonl_string_field(*record, f.completion, out.error);
  if (!c) return out;
  if (o.pairs_through_template) {
    ValueList conversation = {
        TemplateValue::of(ValueDict{{"role", TemplateValue::of(std::string("user"))},
                                    {"content", TemplateValue::of(*p)}}),
        TemplateValue::of(ValueDict{{"role", TemplateValue::of(std::string("assistant"))},
                                    {"content", TemplateValue::of(*c)}})};
    return masked_conversation(TemplateValue::of(std::move(conversation)), 0, o, tok, cache);
  }
  // TRL: the prompt's own tokens are masked, the rest of prompt + completion counts.
  out.tokens = encode(tok, *p + *c, cache);
  const size_t prompt_tokens = std::min(encode(tok, *p, cache).size(), out.tokens.size());
  out.counts.assign(out.tokens.size(), 1);
  std::fill(out.counts.begin(), out.counts.begin() + static_cast<long>(prompt_tokens), 0);
  return out;
}

}  // namespace zt::data
