// Chat and instruction records -> tokens and loss masks ([Note: assistant spans]) with the real
// Mistral v0.3, Qwen2 and Qwen3 templates over the test tokenizers; the tokenizer directory's
// template and special tokens (chat_template_config.h); and `data prepare` writing them as a
// version 2 token file, malformed records skipped and reported with their line numbers.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/temp_dir.h"
#include "support/test_util.h"
#include "zerotrain/data/chat_record.h"
#include "zerotrain/data/chat_template_config.h"
#include "zerotrain/data/token_file_prepare.h"

namespace zt::data {
namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path templates() {
  return test::fixtures_dir() / "chat_templates";
}

// The decoded text of each run of counted tokens.
std::vector<std::string> counted_runs(const Tokenizer& tok, const MaskedRecord& r) {
  std::vector<std::string> runs;
  std::vector<uint32_t> run;
  for (size_t i = 0; i <= r.tokens.size(); ++i) {
    if (i < r.tokens.size() && r.counts[i]) {
      run.push_back(r.tokens[i]);
    } else if (!run.empty()) {
      runs.push_back(tok.decode(run));
      run.clear();
    }
  }
  return runs;
}

class ChatRecord : public ::testing::Test {
 protected:
  Tokenizer sp_ = Tokenizer::from_file(test::fixtures_dir() / "tokenizer/sp_bpe/tokenizer.json");
  Tokenizer bpe_ =
      Tokenizer::from_file(test::fixtures_dir() / "tokenizer/small_bpe/tokenizer.json");
  ChatTemplate mistral_{"mistral", read(templates() / "mistral_v0_3.jinja")};
  ChatTemplate qwen_{"qwen2", read(templates() / "qwen2.jinja")};
  BpeCache cache_;

  MaskedRecord run(const std::string& line, const ChatTemplate* tpl, const Tokenizer& tok,
                   JsonlFields fields = {"", "", "", "messages"}, bool pairs_templated = false) {
    ChatRecordOptions o;
    o.fields = fields;
    o.chat_template = tpl;
    o.template_variables = {{"bos_token", TemplateValue::of(std::string("<s>"))},
                            {"eos_token", TemplateValue::of(std::string("</s>"))}};
    o.pairs_through_template = pairs_templated;
    return masked_record(line, o, tok, cache_);
  }
};

TEST_F(ChatRecord, MistralCountsOnlyTheAnswersEvenWithASystemPrompt) {
  const std::string line =
      R"({"messages": [{"role": "system", "content": "Be brief."},
          {"role": "user", "content": "Capital of France?"}, {"role": "assistant", "content": "Paris."},
          {"role": "user", "content": "And Germany?"}, {"role": "assistant", "content": "Berlin."}]})";
  std::string flat = line;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  const MaskedRecord r = run(flat, &mistral_, sp_);
  ASSERT_EQ(r.error, "");
  // The tokens are those of the rendered conversation (as apply_chat_template(tokenize=True)).
  EXPECT_EQ(r.tokens, sp_.encode("<s>[INST]Capital of France?[/INST]Paris.</s>[INST]And Germany?"
                                 "[/INST]Berlin.</s>"));
  EXPECT_EQ(counted_runs(sp_, r), (std::vector<std::string>{"Paris.</s>", "Berlin.</s>"}));
}

TEST_F(ChatRecord, Qwen2CountsTheAnswerAndItsEnd) {
  const MaskedRecord r = run(R"({"messages": [{"role": "user", "content": "Hi"},)"
                             R"( {"role": "assistant", "content": "Hello there!"}]})",
                             &qwen_, bpe_);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(counted_runs(bpe_, r), (std::vector<std::string>{"Hello there!<|im_end|>\n"}));
}

TEST_F(ChatRecord, Qwen3CountsEachAnswerAsRenderedInContext) {
  // Qwen3 renders an earlier answer without its reasoning and the last one with it, so a prefix
  // of the conversation renders differently from the whole: the spans come from the whole.
  const ChatTemplate qwen3("qwen3", read(templates() / "qwen3.jinja"));
  const MaskedRecord r =
      run(R"({"messages": [{"role": "user", "content": "Q1"},)"
          R"( {"role": "assistant", "content": "<think>\nR1\n</think>\n\nA1"},)"
          R"( {"role": "user", "content": "Q2"},)"
          R"( {"role": "assistant", "content": "A2", "reasoning_content": "R2"}]})",
          &qwen3, bpe_);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(bpe_.decode(r.tokens),
            "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>user\nQ2<|im_end|>\n<|im_start|>assistant\n<think>\nR2\n</think>\n\n"
            "A2<|im_end|>\n");
  const auto runs = counted_runs(bpe_, r);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], "A1<|im_end|>\n");
  EXPECT_NE(runs[1].find("R2\n</think>\n\nA2<|im_end|>\n"), std::string::npos) << runs[1];
  EXPECT_EQ(runs[1].find("assistant"), std::string::npos) << runs[1];
}

TEST_F(ChatRecord, PromptCompletionPairs) {
  const JsonlFields pair{"", "prompt", "completion", ""};
  // As TRL: prompt + completion, the prompt's own tokens masked.
  MaskedRecord r =
      run(R"({"prompt": "[INST] Hi [/INST]", "completion": " Hello."})", nullptr, sp_, pair);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.tokens, sp_.encode("[INST] Hi [/INST] Hello."));
  const size_t prompt = sp_.encode("[INST] Hi [/INST]").size();
  for (size_t i = 0; i < r.tokens.size(); ++i)
    EXPECT_EQ(r.counts[i], i >= prompt ? 1 : 0) << i;
  // Through the template: a user and an assistant message.
  r = run(R"({"prompt": "Hi", "completion": "Hello."})", &mistral_, sp_, pair, true);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.tokens, sp_.encode("<s>[INST]Hi[/INST]Hello.</s>"));
  EXPECT_EQ(counted_runs(sp_, r), std::vector<std::string>{"Hello.</s>"});
  // TRL's conversational form: only the completion's assistant messages count.
  r = run(
      R"({"prompt": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},)"
      R"( {"role": "user", "content": "c"}], "completion": [{"role": "assistant", "content": "d"}]})",
      &mistral_, sp_, pair);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(counted_runs(sp_, r), std::vector<std::string>{"d</s>"});
}

TEST_F(ChatRecord, MalformedRecordsSayWhy) {
  auto error = [&](const std::string& line) { return run(line, &mistral_, sp_).error; };
  EXPECT_EQ(error(R"({"text": "x"})"), "no field \"messages\"");
  EXPECT_EQ(error(R"({"messages": "hi"})"),
            "field \"messages\" is a string \"hi\", expected a list of messages");
  EXPECT_EQ(error(R"({"messages": [{"content": "hi"}]})"),
            "field \"messages\" message 0 has no string \"role\"");
  EXPECT_EQ(error(R"({"messages": [{"role": "user", "content": "hi"}]})"),
            "no assistant message to learn from");
  EXPECT_EQ(
      error(
          R"({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]})"),
      "chat template: mistral:18:32: raise_exception: After the optional system message, "
      "conversation roles must alternate user/assistant/user/assistant/...");
  EXPECT_NE(error("[1, 2]").find("expected a JSON object"), std::string::npos);
  EXPECT_THROW(run(R"({"messages": [{"role": "user", "content": "a"}]})", nullptr, sp_),
               ValueError);
}

TEST(ChatTemplateConfig, ReadsTheTemplateAndSpecialTokens) {
  test::TempDir dir;
  dir.write("tokenizer_config.json", R"({
    "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
    "eos_token": "</s>", "pad_token": null,
    "chat_template": [{"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}"},
                      {"name": "tool_use", "template": "T"}]})");
  TokenizerChatConfig c = read_tokenizer_chat_config(dir.path());
  ASSERT_TRUE(c.chat_template);
  EXPECT_EQ(c.special_tokens.size(), 2u);
  const TemplateValue messages =
      from_json(nlohmann::ordered_json::parse(R"([{"role": "user", "content": "x"}])"));
  EXPECT_EQ(c.chat_template->render(messages, false, c.special_tokens), "<s>x");
  EXPECT_EQ(
      read_tokenizer_chat_config(dir.path(), "tool_use").chat_template->render(messages, false, {}),
      "T");
  try {
    read_tokenizer_chat_config(dir.path(), "rag");
    ADD_FAILURE() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("no template named \"rag\" (it has: default, tool_use)"),
              std::string::npos)
        << e.what();
  }
  // chat_template.jinja beside it wins, as in transformers >= 4.51.
  dir.write("chat_template.jinja", "J{{ messages|length }}");
  EXPECT_EQ(read_tokenizer_chat_config(dir.path()).chat_template->render(messages, false, {}),
            "J1");
  test::TempDir empty;
  EXPECT_FALSE(read_tokenizer_chat_config(empty.path()).chat_template);
}

TEST(ChatPrepare, WritesAVersion2FileAndReportsSkippedRecords) {
  test::TempDir dir;
  const Tokenizer tok =
      Tokenizer::from_file(test::fixtures_dir() / "tokenizer/sp_bpe/tokenizer.json");
  const ChatTemplate tpl("mistral", read(templates() / "mistral_v0_3.jinja"));
  const auto input = dir.write(
      "chat.jsonl",
      R"({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]})"
      "\n\n{\"messages\": 5}\n"
      R"({"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}]})"
      "\n");
  PrepareOptions opt;
  opt.inputs = {input};
  opt.format = InputFormat::JsonLines;
  opt.fields.messages = "messages";
  opt.output = dir / "chat.bin";
  opt.append_eos = true;
  opt.eos_token = "</s>";
  std::vector<std::string> skipped;
  opt.report_skipped = [&](const std::string& s) { skipped.push_back(s); };
  EXPECT_THROW(prepare_token_file(tok, opt), DataInputError);  // no template given
  opt.chat_template = &tpl;
  opt.template_variables = {{"bos_token", TemplateValue::of(std::string("<s>"))},
                            {"eos_token", TemplateValue::of(std::string("</s>"))}};
  opt.threads = 2;
  const PrepareSummary s = prepare_token_file(tok, opt);
  EXPECT_EQ(s.documents, 2u);
  EXPECT_EQ(s.skipped_records, 1u);
  EXPECT_EQ(skipped, std::vector<std::string>{
                         input.string() +
                         ":3: field \"messages\" is a number 5, expected a list of messages"});
  const TokenFile f(opt.output);
  ASSERT_TRUE(f.has_flags());
  EXPECT_NO_THROW(f.check_tokens());
  // Document 1: <s>[INST]Hi[/INST]Hello.</s> + the appended eos, which counts after an answer.
  const auto first = tok.encode("<s>[INST]Hi[/INST]Hello.</s>");
  const auto answer = tok.encode("Hello.</s>").size();
  uint64_t counted = 0;
  for (uint64_t i = 0; i < f.size(); ++i)
    counted += (f.flags(i) & kTokenCountsAsTarget) != 0;
  EXPECT_EQ(counted, s.target_tokens);
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ((f.flags(i) & kTokenCountsAsTarget) != 0, i >= first.size() - answer) << i;
  EXPECT_EQ(f.flags(first.size()), kTokenCountsAsTarget);      // the eos
  EXPECT_EQ(f.flags(first.size() + 1), kTokenStartsDocument);  // document 2
}

}  // namespace
}  // namespace zt::data
