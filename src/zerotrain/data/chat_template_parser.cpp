// Recursive-descent parser of chat templates (see chat_template_parser.h).
#include "zerotrain/data/chat_template_parser.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <stdexcept>

#include "zerotrain/core/json_util.h"

namespace zt::data {
namespace {

using TK = TemplateToken::Kind;
using EK = Expr::Kind;
using SK = Stmt::Kind;

class Parser {
  // Counts the nesting of the recursive calls it is in.
  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser);
    ~DepthGuard() { --p.expr_depth_; }
  };

 public:
  Parser(const std::vector<TemplateToken>& tokens, const std::string& name)
      : tokens_(tokens), name_(name) {}

  StmtList parse() {
    std::string end;
    StmtList body = parse_body({}, end);
    return body;
  }

 private:
  // Statements up to a block tag whose keyword is in `ends` (returned in `end`, the tag's
  // keyword consumed) or the end of the template.
  StmtList parse_body(const std::set<std::string>& ends, std::string& end) {
    StmtList out;
    while (at_ < tokens_.size()) {
      const TemplateToken& t = tokens_[at_];
      if (t.kind == TK::Text) {
        auto s = stmt(SK::Text, t.pos);
        s->text = t.text;
        out.push_back(std::move(s));
        ++at_;
      } else if (t.kind == TK::ExprOpen) {
        ++at_;
        auto s = stmt(SK::Output, t.pos);
        s->expr = parse_expression();
        expect_close();
        out.push_back(std::move(s));
      } else if (t.kind == TK::BlockOpen) {
        ++at_;
        const TemplateToken& kw = peek();
        if (kw.kind != TK::Name) fail(kw, "expected a tag name after \"{%\"");
        if (ends.count(kw.text)) {
          ++at_;
          end = kw.text;
          return out;
        }
        out.push_back(parse_statement());
      } else {
        fail(t, "unexpected token");
      }
    }
    if (!ends.empty())
      fail_at(tokens_.empty() ? SourcePos{} : tokens_.back().pos,
              str("missing {% ", *ends.rbegin(), " %} at the end of the template"));
    return out;
  }

  std::unique_ptr<Stmt> parse_statement() {
    const TemplateToken& kw = next();
    if (block_depth_ >= kMaxExprDepth)
      fail(kw, str("blocks nested deeper than ", kMaxExprDepth, " levels"));
    ++block_depth_;
    std::unique_ptr<Stmt> s = parse_statement_of(kw);
    --block_depth_;
    return s;
  }

  std::unique_ptr<Stmt> parse_statement_of(const TemplateToken& kw) {
    if (kw.text == "if") return parse_if(kw.pos);
    if (kw.text == "for") return parse_for(kw.pos);
    if (kw.text == "set") {
      auto s = stmt(SK::Set, kw.pos);
      s->targets.push_back(expect_name());
      if (accept_op(".")) s->targets.push_back(expect_name());
      if (!accept_op("="))
        fail(peek(), "expected \"=\" in {% set %} (block assignments are not supported)");
      s->expr = parse_expression();
      expect_close();
      return s;
    }
    if (kw.text == "break" || kw.text == "continue") {
      expect_close();
      return stmt(kw.text == "break" ? SK::Break : SK::Continue, kw.pos);
    }
    if (kw.text == "generation") {
      expect_close();
      auto s = stmt(SK::Block, kw.pos);
      std::string end;
      s->body = parse_body({"endgeneration"}, end);
      expect_close();
      return s;
    }
    fail(kw, str("unknown tag \"", kw.text, "\""));
  }

  std::unique_ptr<Stmt> parse_if(SourcePos pos) {
    auto s = stmt(SK::If, pos);
    ExprPtr cond = parse_expression();
    expect_close();
    while (true) {
      std::string end;
      StmtList body = parse_body({"elif", "else", "endif"}, end);
      s->branches.emplace_back(std::move(cond), std::move(body));
      if (end == "endif") break;
      if (end == "elif") {
        cond = parse_expression();
      } else {
        cond = nullptr;
        expect_close();
        StmtList rest = parse_body({"endif"}, end);
        s->branches.emplace_back(nullptr, std::move(rest));
        break;
      }
      expect_close();
    }
    expect_close();
    return s;
  }

  std::unique_ptr<Stmt> parse_for(SourcePos pos) {
    auto s = stmt(SK::For, pos);
    s->targets.push_back(expect_name());
    while (accept_op(","))
      s->targets.push_back(expect_name());
    if (!accept_name("in")) fail(peek(), "expected \"in\" in {% for %}");
    s->expr = parse_or();
    if (accept_name("if")) s->filter = parse_or();
    if (accept_name("recursive")) fail(tokens_[at_ - 1], "recursive loops are not supported");
    expect_close();
    std::string end;
    s->body = parse_body({"else", "endfor"}, end);
    if (end == "else") {
      expect_close();
      s->else_body = parse_body({"endfor"}, end);
    }
    expect_close();
    return s;
  }

  ExprPtr parse_expression() {
    ExprPtr e = parse_or();
    if (!accept_name("if")) return e;
    auto c = expr(EK::Conditional, e->pos);
    c->left = std::move(e);
    c->object = parse_or();
    if (accept_name("else")) {
      c->right = parse_expression();
    } else {
      c->right = expr(EK::Literal, c->pos);
    }
    return grown(std::move(c));
  }

  ExprPtr binary(std::string op, ExprPtr l, ExprPtr r) {
    auto b = expr(EK::Binary, l->pos);
    b->name = std::move(op);
    b->left = std::move(l);
    b->right = std::move(r);
    return grown(std::move(b));
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (accept_name("or"))
      e = binary("or", std::move(e), parse_and());
    return e;
  }
  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (accept_name("and"))
      e = binary("and", std::move(e), parse_not());
    return e;
  }
  ExprPtr parse_not() {
    const DepthGuard guard(*this);
    if (peek().kind == TK::Name && peek().text == "not") {
      auto u = expr(EK::Unary, next().pos);
      u->name = "not";
      u->object = parse_not();
      return u;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    ExprPtr e = parse_math1();
    while (true) {
      const TemplateToken& t = peek();
      if (t.kind == TK::Op && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" ||
                               t.text == "<=" || t.text == ">=")) {
        ++at_;
        e = binary(t.text, std::move(e), parse_math1());
      } else if (t.kind == TK::Name && t.text == "in") {
        ++at_;
        e = binary("in", std::move(e), parse_math1());
      } else if (t.kind == TK::Name && t.text == "not" && at_ + 1 < tokens_.size() &&
                 tokens_[at_ + 1].kind == TK::Name && tokens_[at_ + 1].text == "in") {
        at_ += 2;
        e = binary("not in", std::move(e), parse_math1());
      } else {
        return e;
      }
    }
  }
  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (peek_op("+") || peek_op("-")) {
      const std::string op = next().text;
      e = binary(op, std::move(e), parse_concat());
    }
    return e;
  }
  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    while (accept_op("~"))
      e = binary("~", std::move(e), parse_math2());
    return e;
  }
  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (peek_op("*") || peek_op("/") || peek_op("//") || peek_op("%")) {
      const std::string op = next().text;
      e = binary(op, std::move(e), parse_pow());
    }
    return e;
  }
  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (accept_op("**"))
      e = binary("**", std::move(e), parse_unary(true));
    return e;
  }
  ExprPtr parse_unary(bool with_filter) {
    // Each nesting level of an expression passes here: a bound keeps a hostile template's
    // "((((..." from exhausting the stack.
    const DepthGuard guard(*this);
    ExprPtr e;
    if (peek_op("-") || peek_op("+")) {
      e = expr(EK::Unary, peek().pos);
      e->name = next().text;
      e->object = parse_unary(false);
    } else {
      e = parse_postfix(parse_primary());
    }
    return with_filter ? parse_filters(std::move(e)) : std::move(e);
  }

  ExprPtr parse_primary() {
    const TemplateToken& t = next();
    switch (t.kind) {
      case TK::Name: {
        auto e = expr(EK::Literal, t.pos);
        if (t.text == "true" || t.text == "True")
          e->value = TemplateValue::of(true);
        else if (t.text == "false" || t.text == "False")
          e->value = TemplateValue::of(false);
        else if (t.text == "none" || t.text == "None")
          e->value = TemplateValue::none();
        else {
          e->kind = EK::Name;
          e->name = t.text;
        }
        return e;
      }
      case TK::String: {
        std::string s = t.text;
        while (peek().kind == TK::String)  // adjacent literals join, as in Python
          s += next().text;
        auto e = expr(EK::Literal, t.pos);
        e->value = TemplateValue::of(std::move(s));
        return e;
      }
      case TK::Int:
      case TK::Float: {
        auto e = expr(EK::Literal, t.pos);
        try {
          e->value = t.kind == TK::Int ? TemplateValue::of(int_literal(t))
                                       : TemplateValue::of(std::stod(t.text));
        } catch (const std::logic_error&) {  // stod's out_of_range (int_literal's own error passes)
          fail_at(t.pos, str("number ", quote_excerpt(t.text), " is out of range"));
        }
        return e;
      }
      case TK::Op:
        if (t.text == "(") {
          ExprPtr inner = parse_expression();
          if (accept_op(",")) {  // a tuple: a list here
            auto l = expr(EK::ListLit, t.pos);
            l->items.push_back(std::move(inner));
            while (!peek_op(")")) {
              l->items.push_back(parse_expression());
              if (!accept_op(",")) break;
            }
            inner = grown(std::move(l));
          }
          expect_op(")");
          return inner;
        }
        if (t.text == "[") {
          auto l = expr(EK::ListLit, t.pos);
          while (!peek_op("]")) {
            l->items.push_back(parse_expression());
            if (!accept_op(",")) break;
          }
          expect_op("]");
          return grown(std::move(l));
        }
        if (t.text == "{") {
          auto d = expr(EK::DictLit, t.pos);
          while (!peek_op("}")) {
            d->items.push_back(parse_expression());
            expect_op(":");
            d->items.push_back(parse_expression());
            if (!accept_op(",")) break;
          }
          expect_op("}");
          return grown(std::move(d));
        }
        break;
      default:
        break;
    }
    fail(t, "expected a value");
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      if (accept_op(".")) {
        const TemplateToken& t = next();
        if (t.kind != TK::Name && t.kind != TK::Int)
          fail(t, "expected an attribute name after \".\"");
        auto a = expr(t.kind == TK::Name ? EK::Attribute : EK::Subscript, t.pos);
        a->object = std::move(e);
        if (t.kind == TK::Name) {
          a->name = t.text;
        } else {
          a->right = expr(EK::Literal, t.pos);
          a->right->value = TemplateValue::of(int_literal(t));
        }
        e = grown(std::move(a));
      } else if (peek_op("[")) {
        const SourcePos pos = next().pos;
        ExprPtr start = peek_op(":") ? nullptr : parse_expression();
        if (accept_op(":")) {
          auto s = expr(EK::Slice, pos);
          s->object = std::move(e);
          s->start = std::move(start);
          if (!peek_op(":") && !peek_op("]")) s->stop = parse_expression();
          if (accept_op(":") && !peek_op("]")) s->step = parse_expression();
          e = grown(std::move(s));
        } else {
          auto s = expr(EK::Subscript, pos);
          s->object = std::move(e);
          s->right = std::move(start);
          e = grown(std::move(s));
        }
        expect_op("]");
      } else if (peek_op("(")) {
        auto c = expr(EK::Call, next().pos);
        c->object = std::move(e);
        c->args = parse_args();
        e = grown(std::move(c));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_filters(ExprPtr e) {
    while (true) {
      if (accept_op("|")) {
        const TemplateToken& n = peek();
        auto f = expr(EK::Filter, n.pos);
        f->name = expect_name();
        f->object = std::move(e);
        if (peek_op("(")) {
          ++at_;
          f->args = parse_args();
        }
        e = grown(std::move(f));
      } else if (peek().kind == TK::Name && peek().text == "is") {
        auto t = expr(EK::Test, next().pos);
        t->negated = accept_name("not");
        t->name = expect_name();
        t->object = std::move(e);
        const TemplateToken& a = peek();
        if (peek_op("(")) {
          ++at_;
          t->args = parse_args();
        } else if ((a.kind == TK::Name && a.text != "else" && a.text != "or" && a.text != "and") ||
                   a.kind == TK::String || a.kind == TK::Int || a.kind == TK::Float ||
                   peek_op("[") || peek_op("{")) {
          t->args.positional.push_back(parse_postfix(parse_primary()));
        }
        e = grown(std::move(t));
      } else if (peek_op("(")) {
        auto c = expr(EK::Call, next().pos);
        c->object = std::move(e);
        c->args = parse_args();
        e = grown(std::move(c));
      } else {
        return e;
      }
    }
  }

  // Arguments after "(", through ")".
  CallArgs parse_args() {
    CallArgs args;
    while (!peek_op(")")) {
      if (peek().kind == TK::Name && at_ + 1 < tokens_.size() && tokens_[at_ + 1].kind == TK::Op &&
          tokens_[at_ + 1].text == "=") {
        std::string key = next().text;
        ++at_;
        args.keyword.emplace_back(std::move(key), parse_expression());
      } else {
        args.positional.push_back(parse_expression());
      }
      if (!accept_op(",")) break;
    }
    expect_op(")");
    return args;
  }

  std::unique_ptr<Stmt> stmt(SK kind, SourcePos pos) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->pos = pos;
    return s;
  }
  ExprPtr expr(EK kind, SourcePos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    e->value = TemplateValue::undefined();
    return e;
  }

  // `e` with its height set from its children's. Chains ("1 + 1 + ...", "x | trim | trim ...",
  // "a.a.a...") grow a tree one level per link without nesting, so the depth guard does not see
  // them; rendering and freeing recurse as deep as the tree, so its height is bounded here.
  ExprPtr grown(ExprPtr e) {
    int below = 0;
    const auto see = [&below](const ExprPtr& c) {
      if (c) below = std::max(below, c->height);
    };
    for (const ExprPtr* c : {&e->object, &e->left, &e->right, &e->start, &e->stop, &e->step})
      see(*c);
    for (const ExprPtr& c : e->items)
      see(c);
    for (const ExprPtr& c : e->args.positional)
      see(c);
    for (const auto& kv : e->args.keyword)
      see(kv.second);
    e->height = below + 1;
    if (e->height > kMaxExprHeight)
      fail(peek(), str("expression chained or nested deeper than ", kMaxExprHeight, " levels"));
    return e;
  }

  const TemplateToken& peek() const { return at_ < tokens_.size() ? tokens_[at_] : end_; }
  const TemplateToken& next() {
    const TemplateToken& t = peek();
    if (at_ >= tokens_.size()) fail(t, "unexpected end of the template");
    ++at_;
    return t;
  }
  bool peek_op(const char* op) const { return peek().kind == TK::Op && peek().text == op; }
  bool accept_op(const char* op) {
    if (!peek_op(op)) return false;
    ++at_;
    return true;
  }
  bool accept_name(const char* name) {
    if (peek().kind != TK::Name || peek().text != name) return false;
    ++at_;
    return true;
  }
  void expect_op(const char* op) {
    if (!accept_op(op)) fail(peek(), str("expected \"", op, "\""));
  }
  std::string expect_name() {
    const TemplateToken& t = peek();
    if (t.kind != TK::Name) fail(t, "expected a name");
    ++at_;
    return t.text;
  }
  void expect_close() {
    if (peek().kind != TK::Close || at_ >= tokens_.size())
      fail(peek(), "expected the end of the tag");
    ++at_;
  }

  [[noreturn]] void fail(const TemplateToken& t, const std::string& why) const {
    std::string got;
    switch (t.kind) {
      case TK::Close:
        got = &t == &end_ ? "the end of the template" : "the end of the tag";
        break;
      case TK::String:
        got = "a string";
        break;
      case TK::Text:
        got = "text";
        break;
      default:
        got = str("\"", t.text, "\"");
    }
    fail_at(t.pos, str(why, ", got ", got));
  }
  // An integer token's value; one that does not fit in 64 bits is the template's error.
  int64_t int_literal(const TemplateToken& t) const {
    int64_t v = 0;
    const char* end = t.text.data() + t.text.size();
    const auto [at, ec] = std::from_chars(t.text.data(), end, v);
    if (ec != std::errc() || at != end)
      fail_at(t.pos, str("integer ", quote_excerpt(t.text), " does not fit in 64 bits"));
    return v;
  }
  [[noreturn]] void fail_at(SourcePos pos, const std::string& why) const {
    throw ChatTemplateError(str(name_, ":", pos.line, ":", pos.column, ": ", why));
  }

  static constexpr int kMaxExprDepth = 200;
  static constexpr int kMaxExprHeight = 500;
  const std::vector<TemplateToken>& tokens_;
  const std::string& name_;
  size_t at_ = 0;
  int expr_depth_ = 0;
  int block_depth_ = 0;
  // What peek() returns past the last token.
  const TemplateToken end_{TK::Close, "", tokens_.empty() ? SourcePos{} : tokens_.back().pos};
};

Parser::DepthGuard::DepthGuard(Parser& parser) : p(parser) {
  if (++p.expr_depth_ > kMaxExprDepth) {
    --p.expr_depth_;
    p.fail(p.peek(), str("expression nested deeper than ", kMaxExprDepth, " levels"));
  }
}

}  // namespace

StmtList parse_chat_template(const std::vector<TemplateToken>& tokens, const std::string& name) {
  return Parser(tokens, name).parse();
}

}  // namespace zt::data
