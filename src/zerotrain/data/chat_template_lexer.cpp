// Chat template lexer (see chat_template_lexer.h).
#include "zerotrain/data/chat_template_lexer.h"

#include <cctype>

#include "zerotrain/data/utf8.h"

namespace zt::data {
namespace {

using Kind = TemplateToken::Kind;

class Lexer {
 public:
  Lexer(std::string_view src, const std::string& name) : src_(src), name_(name) {}

  std::vector<TemplateToken> run() {
    bool strip_next_text = false;    // a "-" closed the last tag
    bool trim_next_newline = false;  // trim_blocks after a block tag or comment
    while (at_ < src_.size()) {
      const size_t open = find_tag(at_);
      std::string text(src_.substr(at_, open - at_));
      const SourcePos text_pos = pos_of(at_);
      if (strip_next_text) {
        text.erase(0, text.find_first_not_of(" \t\r\n\f\v") == std::string::npos
                          ? text.size()
                          : text.find_first_not_of(" \t\r\n\f\v"));
      } else if (trim_next_newline) {
        if (text.rfind("\r\n", 0) == 0)
          text.erase(0, 2);
        else if (!text.empty() && text[0] == '\n')
          text.erase(0, 1);
      }
      strip_next_text = trim_next_newline = false;
      if (open == src_.size()) {
        push_text(text, text_pos);
        break;
      }
      const char kind = src_[open + 1];  // '{', '%' or '#'
      const char marker = open + 2 < src_.size() ? src_[open + 2] : '\0';
      if (marker == '-') {
        text.erase(text.find_last_not_of(" \t\r\n\f\v") + 1);
      } else if (kind != '{' && marker != '+') {
        // lstrip_blocks: spaces and tabs between a line's start (in the source) and a block tag
        // go.
        const std::string_view raw = src_.substr(at_, open - at_);
        const size_t last = raw.find_last_not_of(" \t");
        const bool line_start =
            last == std::string_view::npos ? at_line_start(at_) : raw[last] == '\n';
        if (line_start) text.erase(text.find_last_not_of(" \t") + 1);
      }
      push_text(text, text_pos);
      at_ = open + 2 + ((marker == '-' || marker == '+') ? 1 : 0);
      if (kind == '#') {
        const size_t end = src_.find("#}", at_);
        if (end == std::string_view::npos) fail(open, "unclosed comment (no \"#}\")");
        strip_next_text = end > at_ && src_[end - 1] == '-';
        trim_next_newline = !strip_next_text;
        at_ = end + 2;
        continue;
      }
      tokens_.push_back({kind == '%' ? Kind::BlockOpen : Kind::ExprOpen, "", pos_of(open)});
      strip_next_text = lex_tag(kind == '%' ? '%' : '}', open);
      trim_next_newline = kind == '%' && !strip_next_text;
    }
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& why) const {
    const SourcePos p = pos_of(at);
    throw ChatTemplateError(str(name_, ":", p.line, ":", p.column, ": ", why));
  }

  // Line and column of byte `at`, counted on from the last position asked for (tokens come in
  // order, so the whole source is walked about once).
  SourcePos pos_of(size_t at) const {
    if (at < counted_to_) {
      counted_to_ = 0;
      counted_ = SourcePos{};
    }
    for (; counted_to_ < at && counted_to_ < src_.size(); ++counted_to_) {
      const char c = src_[counted_to_];
      if (c == '\n') {
        ++counted_.line;
        counted_.column = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++counted_.column;
      }
    }
    return counted_;
  }

  bool at_line_start(size_t text_begin) const {
    return text_begin == 0 || src_[text_begin - 1] == '\n';
  }

  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    return src_.size();
  }

  void push_text(const std::string& text, SourcePos pos) {
    if (!text.empty()) tokens_.push_back({Kind::Text, text, pos});
  }

  // Expression tokens up to the closing "%}" or "}}"; returns whether it was "-%}" / "-}}".
  bool lex_tag(char closer, size_t open) {
    int depth = 0;  // open brackets: "}}" inside {'a': {}} closes a dict, not the tag
    while (true) {
      while (at_ < src_.size() && std::isspace(static_cast<unsigned char>(src_[at_])))
        ++at_;
      if (at_ >= src_.size()) fail(open, str("unclosed tag (no \"", closer, "}\")"));
      const char c = src_[at_];
      if (depth == 0 && c == '-' && at_ + 2 < src_.size() && src_[at_ + 1] == closer &&
          src_[at_ + 2] == '}') {
        tokens_.push_back({Kind::Close, "", pos_of(at_)});
        at_ += 3;
        return true;
      }
      if (depth == 0 && c == closer && at_ + 1 < src_.size() && src_[at_ + 1] == '}') {
        tokens_.push_back({Kind::Close, "", pos_of(at_)});
        at_ += 2;
        return false;
      }
      const size_t start = at_;
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        while (at_ < src_.size() &&
               (std::isalnum(static_cast<unsigned char>(src_[at_])) || src_[at_] == '_'))
          ++at_;
        tokens_.push_back(
            {Kind::Name, std::string(src_.substr(start, at_ - start)), pos_of(start)});
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        bool real = false;
        while (at_ < src_.size() &&
               (std::isdigit(static_cast<unsigned char>(src_[at_])) || src_[at_] == '_' ||
                (src_[at_] == '.' && !real && at_ + 1 < src_.size() &&
                 std::isdigit(static_cast<unsigned char>(src_[at_ + 1]))))) {
          real |= src_[at_] == '.';
          ++at_;
        }
        if (at_ < src_.size() && (src_[at_] == 'e' || src_[at_] == 'E')) {
          real = true;
          ++at_;
          if (at_ < src_.size() && (src_[at_] == '+' || src_[at_] == '-')) ++at_;
          while (at_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[at_])))
            ++at_;
        }
        std::string digits;
        for (char d : src_.substr(start, at_ - start))
          if (d != '_') digits.push_back(d);
        tokens_.push_back({real ? Kind::Float : Kind::Int, digits, pos_of(start)});
      } else if (c == '\'' || c == '"') {
        tokens_.push_back({Kind::String, lex_string(c), pos_of(start)});
      } else {
        static const char* const kOps[] = {"//", "**", "==", "!=", "<=", ">=", "(", ")", "[",
                                           "]",  "{",  "}",  ".",  ",",  ":",  "|", "~", "+",
                                           "-",  "*",  "/",  "%",  "<",  ">",  "="};
        std::string op;
        for (const char* o : kOps)
          if (src_.substr(at_).rfind(o, 0) == 0) {
            op = o;
            break;
          }
        if (op.empty()) fail(at_, str("unexpected character '", c, "' in a tag"));
        if (op == "(" || op == "[" || op == "{") ++depth;
        if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
        tokens_.push_back({Kind::Op, op, pos_of(start)});
        at_ += op.size();
      }
    }
  }

  // A quoted string with Python's escapes; at_ is on the opening quote.
  std::string lex_string(char quote) {
    const size_t start = at_++;
    std::string out;
    while (at_ < src_.size() && src_[at_] != quote) {
      char c = src_[at_++];
      if (c != '\\' || at_ >= src_.size()) {
        out.push_back(c);
        continue;
      }
      const char e = src_[at_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case '0':
          out += '\0';
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case '\n':
          break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (at_ + n > src_.size()) fail(at_, "truncated escape in a string");
          const std::string hex(src_.substr(at_, n));
          if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
            fail(at_, str("bad escape \\", e, hex));
          append_utf8(out, static_cast<char32_t>(std::stoul(hex, nullptr, 16)));
          at_ += n;
          break;
        }
        default:
          out += '\\';
          out += e;
      }
    }
    if (at_ >= src_.size()) fail(start, "unclosed string");
    ++at_;
    return out;
  }

  std::string_view src_;
  const std::string& name_;
  size_t at_ = 0;
  std::vector<TemplateToken> tokens_;
  mutable size_t counted_to_ = 0;  // pos_of's walk so far
  mutable SourcePos counted_;
};

}  // namespace

std::vector<TemplateToken> lex_chat_template(std::string_view source, const std::string& name) {
  return Lexer(source, name).run();
}

}  // namespace zt::data
