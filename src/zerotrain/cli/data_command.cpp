// `zerotrain data prepare`: text or JSON Lines files (plain text records, prompt/completion pairs,
// chat messages rendered through the model's chat template) -> a token file, with a progress bar,
// one line on stderr per skipped (malformed) record and a summary. Tested by the CLI tests of
// tests/CMakeLists.txt (data_prepare_jsonl*, data_prepare_chat*).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "zerotrain/cli/command_line_guards.h"
#include "zerotrain/cli/commands.h"
#include "zerotrain/cli/progress.h"
#include "zerotrain/cli/tokenizer_load.h"
#include "zerotrain/core/files.h"
#include "zerotrain/data/chat_template_config.h"
#include "zerotrain/data/token_file_prepare.h"
#include "zerotrain/data/tokenizer.h"

namespace zt::cli {
namespace {

struct PrepareArgs {
  std::string tokenizer;
  std::vector<std::string> inputs;
  std::string output;
  bool append_eos = false;
  std::string eos_token = "<|endoftext|>";
  bool split_on_blank_lines = false;
  std::string text_field;    // JSON Lines: the field holding each record's text
  std::string prompt_field;  // JSON Lines: prompt + completion fields joined
  std::string completion_field;
  std::string messages_field;  // JSON Lines: a list of chat messages
  std::string chat_template;   // a Jinja file instead of the tokenizer directory's template
  std::string chat_template_name = "default";
  bool apply_chat_template = false;  // prompt/completion strings as a user and an assistant turn
  int threads = 0;
  bool quiet = false;
};

// Records are JSON Lines when one of their fields is named.
bool is_json_lines(const PrepareArgs& a) {
  return !a.text_field.empty() || !a.prompt_field.empty() || !a.messages_field.empty();
}

// The options of a run, but for the chat template and the skipped-record report.
data::PrepareOptions prepare_options(const PrepareArgs& a) {
  data::PrepareOptions opt;
  for (const auto& in : a.inputs)
    opt.inputs.emplace_back(in);
  opt.output = a.output;
  opt.append_eos = a.append_eos;
  opt.eos_token = a.eos_token;
  opt.split_on_blank_lines = a.split_on_blank_lines;
  opt.threads = a.threads;
  if (is_json_lines(a)) {
    opt.format = data::InputFormat::JsonLines;
    opt.fields.text = a.text_field;
    opt.fields.prompt = a.prompt_field;
    opt.fields.completion = a.completion_field;
    opt.fields.messages = a.messages_field;
  }
  return opt;
}

// Chat data: the template (and the special tokens it prints) from the tokenizer's directory, read
// into `chat`, which `opt` then points into.
void use_chat_template(const PrepareArgs& a, data::TokenizerChatConfig& chat,
                       data::PrepareOptions& opt) {
  const std::filesystem::path dir = std::filesystem::path(a.tokenizer).parent_path();
  chat = data::read_tokenizer_chat_config(dir.empty() ? "." : dir, a.chat_template_name);
  if (!a.chat_template.empty())
    chat.chat_template.emplace(a.chat_template, read_text_file(a.chat_template, "data"));
  opt.chat_template = chat.chat_template ? &*chat.chat_template : nullptr;
  opt.template_variables = chat.special_tokens;
  opt.template_variables.emplace_back("tools", data::TemplateValue::none());
  opt.template_variables.emplace_back("documents", data::TemplateValue::none());
  opt.pairs_through_template = a.apply_chat_template;
  opt.no_chat_template_reason =
      str((dir.empty() ? std::filesystem::path(".") : dir).string(),
          " has no chat_template.jinja and its tokenizer_config.json no \"chat_template\" "
          "(give one with --chat-template FILE)");
}

// The summary after the token file is written: what it holds, what was skipped or masked, and
// how fast the input was read.
void print_prepare_report(const PrepareArgs& a, const data::PrepareOptions& opt,
                          const data::PrepareSummary& s, bool masked, double secs) {
  std::printf("wrote %s: %llu documents, %llu tokens (uint%u, vocab %llu%s)\n", a.output.c_str(),
              static_cast<unsigned long long>(s.documents),
              static_cast<unsigned long long>(s.tokens), s.header.token_bytes * 8,
              static_cast<unsigned long long>(s.header.vocab_size),
              s.header.eos_id ? (", eos " + std::to_string(*s.header.eos_id)).c_str() : "");
  if (is_json_lines(a))
    std::printf("records: %llu read, %llu skipped as malformed\n",
                static_cast<unsigned long long>(s.documents + s.skipped_records),
                static_cast<unsigned long long>(s.skipped_records));
  if (masked)
    std::printf("loss mask: %llu of %llu tokens count as targets (version 2 token file%s)\n",
                static_cast<unsigned long long>(s.target_tokens),
                static_cast<unsigned long long>(s.tokens),
                opt.chat_template ? (", chat template " + opt.chat_template->name()).c_str() : "");
  std::printf(
      "read %s in %.2f s (%s/s), %.3f tokens/byte\n",
      format_si_bytes(static_cast<double>(s.input_bytes)).c_str(), secs,
      format_si_bytes(secs > 0 ? static_cast<double>(s.input_bytes) / secs : 0.0).c_str(),
      s.input_bytes ? static_cast<double>(s.tokens) / static_cast<double>(s.input_bytes) : 0.0);
}

int run_prepare(const PrepareArgs& a) {
  data::PrepareOptions opt = prepare_options(a);
  const bool masked = is_json_lines(a) && a.text_field.empty();

  const uint64_t total = data::total_input_bytes(opt.inputs);  // fail on a bad input before loading
  const data::Tokenizer tokenizer = load_tokenizer(a.tokenizer);
  data::TokenizerChatConfig chat;
  if (masked) use_chat_template(a, chat, opt);

  ProgressOptions popt;
  popt.out = stdout;
  popt.bytes = true;
  ProgressBar bar("encoding", total, popt);
  opt.report_skipped = [&](const std::string& line) {
    if (!a.quiet && bar.is_tty()) {
      std::fputs("\r\033[K", stdout);  // clear the bar's line; it is redrawn on its next update
      std::fflush(stdout);
    }
    std::fprintf(stderr, "skipped %s\n", line.c_str());
  };
  const auto start = std::chrono::steady_clock::now();
  data::PrepareSummary s = data::prepare_token_file(tokenizer, opt, [&](uint64_t done) {
    if (!a.quiet) bar.update(done);
  });
  if (!a.quiet) {
    bar.update(s.input_bytes);
    bar.finish();
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_prepare_report(a, opt, s, masked, secs);
  return 0;
}

// The JSON Lines fields and the chat template, with the combinations they exclude or need.
void add_json_lines_flags(CLI::App& prep, PrepareArgs& a, CLI::Option* split) {
  auto* text_field =
      prep.add_option("--text-field", a.text_field,
                      "the inputs are JSON Lines; each record's field NAME (a string) is one "
                      "document; malformed "
                      "records are skipped, each reported on stderr with its line number")
          ->type_name("NAME")
          ->check(non_empty_name());
  auto* prompt_field =
      prep.add_option("--prompt-field", a.prompt_field,
                      "the inputs are JSON Lines of prompt/completion pairs: this field and "
                      "--completion-field's, joined, are one document (as TRL's SFTTrainer)")
          ->type_name("NAME")
          ->check(non_empty_name());
  auto* completion_field = prep.add_option("--completion-field", a.completion_field,
                                           "the completion's field (with --prompt-field)")
                               ->type_name("NAME")
          ->check(non_empty_name());
  auto* messages_field =
      prep.add_option("--messages-field", a.messages_field,
                      "the inputs are chat JSON Lines: this field holds a list of "
                      "{\"role\", \"content\"} messages, rendered through the model's chat "
                      "template; only the assistant messages' tokens count in the loss")
          ->type_name("NAME")
          ->check(non_empty_name());
  auto* chat_template =
      prep.add_option("--chat-template", a.chat_template,
                      "a Jinja chat template file to use instead of the tokenizer directory's "
                      "(chat_template.jinja, or tokenizer_config.json's \"chat_template\")")
          ->check(CLI::ExistingFile)
          ->type_name("FILE");
  prep.add_option("--chat-template-name", a.chat_template_name,
                  "which of tokenizer_config.json's named templates to use")
      ->capture_default_str();
  auto* apply = prep.add_flag("--apply-chat-template", a.apply_chat_template,
                              "render prompt/completion strings through the chat template as a "
                              "user and an assistant message");
  text_field->excludes(split)->excludes(prompt_field)->excludes(messages_field);
  prompt_field->needs(completion_field)->excludes(split)->excludes(messages_field);
  completion_field->needs(prompt_field);
  messages_field->excludes(split);
  apply->needs(prompt_field);
  chat_template->excludes(text_field);
}

}  // namespace

void add_data_command(CLI::App& app, std::function<int()>& action) {
  auto* data = app.add_subcommand("data", "Prepare training data");
  data->require_subcommand(1);
  data->footer(
      "Run `zerotrain data prepare --help` for its options.\n\n"
      "Example:\n"
      "  zerotrain data prepare --tokenizer tokenizer.json --input corpus.txt --output data.bin");
  auto* prep = data->add_subcommand(
      "prepare", "Tokenize text files into a token file (.bin) for `zerotrain train --data`");
  auto a = std::make_shared<PrepareArgs>();
  prep->add_option("--tokenizer", a->tokenizer,
                   "Hugging Face tokenizer.json (byte-level BPE as GPT-2's, or SentencePiece-style "
                   "BPE as Llama 2's and Mistral's)")
      ->required();
  prep->add_option("--input", a->inputs,
                   "text files, each one a document (see --split-on-blank-lines), or JSON Lines "
                   "files with --text-field / --prompt-field / --messages-field")
      ->required()
      ->expected(1, -1);
  prep->add_option("--output", a->output, "the token file to write (replaced atomically)")
      ->required();
  prep->add_flag("--append-eos", a->append_eos, "end every document with the eos token");
  prep->add_option("--eos-token", a->eos_token, "the eos token's text")->capture_default_str();
  auto* split = prep->add_flag("--split-on-blank-lines", a->split_on_blank_lines,
                               "documents are the blocks of lines between blank lines");
  add_json_lines_flags(*prep, *a, split);
  prep->add_option("--threads", a->threads, "encoding threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
  prep->add_flag("--quiet", a->quiet, "no progress display");
  prep->footer(
      "Examples:\n"
      "  zerotrain data prepare --tokenizer assets/tokenizers/kjv-bpe-4096/tokenizer.json \\\n"
      "      --input data/corpus/kjv.txt --split-on-blank-lines --append-eos --output "
      "data/kjv.bin\n"
      "  zerotrain data prepare --tokenizer tokenizer.json --input a.txt b.txt c.txt \\\n"
      "      --append-eos --output tokens.bin --threads 8\n"
      "  zerotrain data prepare --tokenizer llama/tokenizer.json --input train.jsonl \\\n"
      "      --text-field text --append-eos --eos-token '</s>' --output train.bin\n"
      "  zerotrain data prepare --tokenizer qwen/tokenizer.json --input chat.jsonl \\\n"
      "      --messages-field messages --output chat.bin   # masks all but the answers\n\n"
      "Parquet is not read (Debian 12 has no Apache Arrow C++ library): convert it to JSON "
      "Lines.");
  prep->callback([&action, a] { action = [a] { return run_prepare(*a); }; });
}

}  // namespace zt::cli
