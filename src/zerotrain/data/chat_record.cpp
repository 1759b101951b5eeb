// Instruction and chat records -> tokens and loss mask (see chat_record.h).
#include "zerotrain/data/chat_record.h"

#include <nlohmann/json.hpp>

namespace zt::data {
namespace {

using json = nlohmann::ordered_json;

// A list of messages from a JSON value, or the reason it is not one.
std::optional<TemplateValue> messages_of(const json& v, const std::string& what, std::string& error) {
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

// The first position >= from where `run` occurs in `tokens`, or npos.
size_t find_run(const std::vector<uint32_t>& tokens, const std::vector<uint32_t>& run, size_t from) {
  if (run.empty() || run.size() > tokens.size()) return std::string::npos;
  for (size_t i = from; i + run.size() <= tokens.size(); ++i)
    if (std::equal(run.begin(), run.end(), tokens.begin() + static_cast<long>(i))) return i;
  return std::string::npos;
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
    size_t searched_to = 0, spans = 0;
    for (size_t i = first_counted; i < messages.list->size(); ++i) {
      const TemplateValue* role = (*messages.list)[i].find("role");
      if (!role || to_text(*role) != "assistant") continue;
      const auto through = encode(tok, tpl.render(prefix(i + 1), false, o.template_variables), cache);
      // Where the message starts in `through`: after the generation prompt of the turns before
      // it, or after what the template writes for it with an empty content, whichever is later.
      size_t start = common_prefix(
          encode(tok, tpl.render(prefix(i), true, o.template_variables), cache), through);
      try {
        TemplateValue emptied = prefix(i + 1);
        ValueDict message = *(*messages.list)[i].dict;
        emptied.list->back() = TemplateValue::of(std::move(message));
        emptied.list->back().set("content", TemplateValue::of(std::string()));
        start = std::max(start, common_prefix(encode(tok, tpl.render(emptied, false,
                                                                      o.template_variables),
                                                     cache),
                                              through));
      } catch (const ChatTemplateError&) {
        // A template that refuses an empty message: the generation prompt alone marks the start.
      }
      const std::vector<uint32_t> run(through.begin() + static_cast<long>(start), through.end());
      if (run.empty()) continue;  // an empty message the template writes nothing for
      // Usually `through` begins the conversation's tokens and the run lies where it ends;
      // otherwise (the template renders earlier turns differently in context) it is searched for.
      const size_t at = common_prefix(through, out.tokens) == through.size() && start >= searched_to
                            ? start
                            : find_run(out.tokens, run, searched_to);
      if (at == std::string::npos) {
        out.error = str("message ", i, " (assistant): its ", run.size(),
                        " tokens are not in the rendered conversation; the chat template renders "
                        "it differently in context (see [Note: assistant spans])");
        return out;
      }
      std::fill(out.counts.begin() + static_cast<long>(at),
                out.counts.begin() + static_cast<long>(at + run.size()), 1);
      searched_to = at + run.size();
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

MaskedRecord masked_record(std::string_view line, const ChatRecordOptions& o,
                           const Tokenizer& tok, BpeCache& cache) {
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
