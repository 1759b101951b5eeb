// Chat template evaluation (see chat_template_render.h).
#include "zerotrain/data/chat_template_render.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "zerotrain/data/chat_template_builtins.h"

namespace zt::data {
namespace {

using Kind = TemplateValue::Kind;
using EK = Expr::Kind;
using SK = Stmt::Kind;

enum class Flow { Normal, Break, Continue };

// A render's budget. A real chat template runs tens of statements per message and writes the
// conversation once; loops nested over long strings or ranges could run for hours and fill memory
// (fuzz_chat_template found a 4 kB template that ran 45 s and grew past 800 MB), so a render past
// either bound is an error.
constexpr int64_t kMaxStatements = 1'000'000;
constexpr size_t kMaxRenderedBytes = size_t{64} << 20;

// An error already carrying its position; passes through the enclosing nodes unchanged.
struct PositionedError {
  std::string message;
};

class Renderer {
 public:
  Renderer(const std::string& name, const ValueDict& globals) : name_(name) {
    scopes_.emplace_back();
    for (const auto& [k, v] : globals)
      scopes_.back()[k] = v;
  }

  std::string run(const StmtList& program) {
    try {
      exec(program);
    } catch (const PositionedError& e) {
      throw ChatTemplateError(e.message);
    }
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(SourcePos pos, const std::string& why) const {
    throw PositionedError{str(name_, ":", pos.line, ":", pos.column, ": ", why)};
  }

  Flow exec(const StmtList& body) {
    for (const auto& s : body) {
      const Flow f = exec(*s);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

  Flow exec(const Stmt& s) {
    if (++statements_ > kMaxStatements)
      fail(s.pos, str("the template ran more than ", kMaxStatements,
                      " statements for one conversation (a loop that does not end?)"));
    switch (s.kind) {
      case SK::Text:
        write(s.text, s.pos);
        return Flow::Normal;
      case SK::Output:
        write(to_text(eval(*s.expr)), s.pos);
        return Flow::Normal;
      case SK::If:
        for (const auto& [cond, body] : s.branches)
          if (!cond || truthy(eval(*cond))) return exec(body);
        return Flow::Normal;
      case SK::For:
        return exec_for(s);
      case SK::Set: {
        TemplateValue v = eval(*s.expr);
        if (s.targets.size() == 1) {
          scopes_.back()[s.targets[0]] = std::move(v);
        } else {
          TemplateValue ns = lookup(s.targets[0]);
          if (!ns.is(Kind::Namespace))
            fail(s.pos, str("cannot assign attribute '", s.targets[1], "' on ", type_name(ns), " '",
                            s.targets[0], "' (only a namespace() takes attributes)"));
          ns.set(s.targets[1], std::move(v));
        }
        return Flow::Normal;
      }
      case SK::Break:
        return Flow::Break;
      case SK::Continue:
        return Flow::Continue;
      case SK::Block:
        return exec(s.body);
    }
    return Flow::Normal;
  }

  Flow exec_for(const Stmt& s) {
    const TemplateValue iterable = eval(*s.expr);
    ValueList items;
    try {
      items = iterate(iterable);
    } catch (const TemplateRuntimeError& e) {
      fail(s.expr->pos, e.message);
    }
    scopes_.emplace_back();
    auto bind = [&](const TemplateValue& item) {
      if (s.targets.size() == 1) {
        scopes_.back()[s.targets[0]] = item;
        return;
      }
      ValueList parts = item.is(Kind::List) ? *item.list : ValueList{};
      if (parts.size() != s.targets.size())
        fail(s.pos, str("cannot unpack ", to_repr(item), " into ", s.targets.size(), " names"));
      for (size_t i = 0; i < parts.size(); ++i)
        scopes_.back()[s.targets[i]] = parts[i];
    };
    if (s.filter) {  // "for x in xs if cond": the loop counts only the items kept
      ValueList kept;
      for (const TemplateValue& item : items) {
        bind(item);
        if (truthy(eval(*s.filter))) kept.push_back(item);
      }
      items = std::move(kept);
    }
    const auto n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      bind(items[static_cast<size_t>(i)]);
      ValueDict loop = {
          {"index", TemplateValue::of(i + 1)},
          {"index0", TemplateValue::of(i)},
          {"revindex", TemplateValue::of(n - i)},
          {"revindex0", TemplateValue::of(n - i - 1)},
          {"first", TemplateValue::of(i == 0)},
          {"last", TemplateValue::of(i == n - 1)},
          {"length", TemplateValue::of(n)},
          {"previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : TemplateValue::undefined()},
          {"nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : TemplateValue::undefined()},
      };
      scopes_.back()["loop"] = TemplateValue::of(std::move(loop));
      if (exec(s.body) == Flow::Break) break;
    }
    scopes_.pop_back();
    if (n == 0) return exec(s.else_body);
    return Flow::Normal;
  }

  TemplateValue lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    if (is_global_function(name)) return TemplateValue::function(name);
    return TemplateValue::undefined(str("'", name, "' is undefined"));
  }

  BuiltinArgs eval_args(const CallArgs& args) {
    BuiltinArgs out;
    for (const auto& a : args.positional)
      out.positional.push_back(eval(*a));
    for (const auto& [k, a] : args.keyword)
      out.keyword.emplace_back(k, eval(*a));
    return out;
  }

  // The undefined value's own reason, or a generic one.
  static std::string why_undefined(const TemplateValue& v) {
    return v.text.empty() ? "a value is undefined" : v.text;
  }

  TemplateValue get_item(const TemplateValue& obj, const TemplateValue& key, SourcePos pos) {
    if (obj.is(Kind::Undefined)) fail(pos, why_undefined(obj));
    if (obj.is_mapping()) {
      const std::string k = key.is(Kind::String) ? key.text : to_text(key);
      if (const TemplateValue* v = obj.find(k)) return *v;
      return TemplateValue::undefined(str("'", type_name(obj), "' has no attribute '", k, "'"));
    }
    if (obj.is(Kind::List) || obj.is(Kind::String)) {
      if (!key.is(Kind::Int)) {
        if (key.is(Kind::String))
          return TemplateValue::undefined(
              str("'", type_name(obj), " object' has no attribute '", key.text, "'"));
        fail(pos, str(type_name(obj), " indices must be integers, got ", type_name(key)));
      }
      std::vector<std::string> cps;
      if (obj.is(Kind::String)) cps = code_points(obj.text);
      const auto size = static_cast<int64_t>(obj.is(Kind::List) ? obj.list->size() : cps.size());
      const int64_t i = key.integer < 0 ? key.integer + size : key.integer;
      if (i < 0 || i >= size)
        return TemplateValue::undefined(
            str(type_name(obj), " index ", key.integer, " out of range"));
      return obj.is(Kind::List) ? (*obj.list)[static_cast<size_t>(i)]
                                : TemplateValue::of(cps[static_cast<size_t>(i)]);
    }
    return TemplateValue::undefined(
        str("'", type_name(obj), "' has no attribute '", to_text(key), "'"));
  }

  TemplateValue slice(const Expr& e) {
    const TemplateValue obj = eval(*e.object);
    auto bound = [&](const ExprPtr& x) -> std::optional<int64_t> {
      if (!x) return std::nullopt;
      const TemplateValue v = eval(*x);
      if (v.is(Kind::None)) return std::nullopt;
      if (!v.is(Kind::Int)) fail(x->pos, str("slice indices must be integers, got ", type_name(v)));
      return v.integer;
    };
    const std::optional<int64_t> a = bound(e.start), b = bound(e.stop), c = bound(e.step);
    const int64_t step = c.value_or(1);
    if (step == 0) fail(e.pos, "slice step cannot be zero");
    if (!obj.is(Kind::List) && !obj.is(Kind::String))
      fail(e.pos,
           str("cannot slice ", obj.is(Kind::Undefined) ? why_undefined(obj) : type_name(obj)));
    std::vector<std::string> cps;
    if (obj.is(Kind::String)) cps = code_points(obj.text);
    const auto n = static_cast<int64_t>(obj.is(Kind::List) ? obj.list->size() : cps.size());
    // Python's slice.indices().
    auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
      if (!v) return fallback;
      int64_t x = *v < 0 ? *v + n : *v;
      if (step > 0) return std::clamp<int64_t>(x, 0, n);
      return std::clamp<int64_t>(x, -1, n - 1);
    };
    const int64_t start = clamp(a, step > 0 ? 0 : n - 1), stop = clamp(b, step > 0 ? n : -1);
    ValueList items;
    std::string text;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (obj.is(Kind::List))
        items.push_back((*obj.list)[static_cast<size_t>(i)]);
      else
        text += cps[static_cast<size_t>(i)];
    }
    return obj.is(Kind::List) ? TemplateValue::of(std::move(items)) : TemplateValue::of(text);
  }

  TemplateValue call(const Expr& e) {
    const Expr& callee = *e.object;
    if (callee.kind == EK::Attribute) {
      const TemplateValue obj = eval(*callee.object);
      if (obj.is(Kind::Undefined)) fail(callee.pos, why_undefined(obj));
      BuiltinArgs args = eval_args(e.args);
      try {
        if (auto r = call_method(obj, callee.name, args)) return *r;
      } catch (const TemplateRuntimeError& err) {
        fail(e.pos, err.message);
      }
      fail(callee.pos, str("'", type_name(obj), "' has no method '", callee.name, "'"));
    }
    const TemplateValue f = eval(callee);
    if (!f.is(Kind::Function))
      fail(e.pos, f.is(Kind::Undefined) ? why_undefined(f)
                                        : str("'", type_name(f), "' object is not callable"));
    BuiltinArgs args = eval_args(e.args);
    try {
      return call_global(f.text, args);
    } catch (const TemplateRuntimeError& err) {
      fail(e.pos, err.raised ? str("raise_exception: ", err.message) : err.message);
    }
  }

  TemplateValue arithmetic(const std::string& op, const TemplateValue& l, const TemplateValue& r,
                           SourcePos pos) {
    if (l.is(Kind::Undefined)) fail(pos, why_undefined(l));
    if (r.is(Kind::Undefined)) fail(pos, why_undefined(r));
    const bool nums = (l.is_number() || l.is(Kind::Bool)) && (r.is_number() || r.is(Kind::Bool));
    const bool ints = nums && !l.is(Kind::Float) && !r.is(Kind::Float);
    auto num = [](const TemplateValue& v) {
      return v.is(Kind::Float) ? v.real
                               : static_cast<double>(v.is(Kind::Bool) ? v.boolean : v.integer);
    };
    auto integer = [](const TemplateValue& v) {
      return v.is(Kind::Bool) ? int64_t{v.boolean} : v.integer;
    };
    // Python's integers are unbounded; ours are 64 bits, and a result past them is an error.
    auto checked = [&](bool overflowed, int64_t value) {
      if (overflowed)
        fail(pos, str("integer overflow in ", integer(l), " ", op, " ", integer(r),
                      " (template integers are 64-bit)"));
      return TemplateValue::of(value);
    };
    if (op == "+") {
      int64_t sum = 0;
      if (ints) {
        const bool overflowed = __builtin_add_overflow(integer(l), integer(r), &sum);
        return checked(overflowed, sum);
      }
      if (nums) return TemplateValue::of(num(l) + num(r));
      if (l.is(Kind::String) && r.is(Kind::String)) return TemplateValue::of(l.text + r.text);
      if (l.is(Kind::List) && r.is(Kind::List)) {
        ValueList out = *l.list;
        out.insert(out.end(), r.list->begin(), r.list->end());
        return TemplateValue::of(std::move(out));
      }
    } else if (op == "-") {
      int64_t difference = 0;
      if (ints) {
        const bool overflowed = __builtin_sub_overflow(integer(l), integer(r), &difference);
        return checked(overflowed, difference);
      }
      if (nums) return TemplateValue::of(num(l) - num(r));
    } else if (op == "*") {
      int64_t product = 0;
      if (ints) {
        const bool overflowed = __builtin_mul_overflow(integer(l), integer(r), &product);
        return checked(overflowed, product);
      }
      if (nums) return TemplateValue::of(num(l) * num(r));
      const TemplateValue& seq = l.is(Kind::Int) ? r : l;
      const TemplateValue& times = l.is(Kind::Int) ? l : r;
      if (times.is(Kind::Int) && (seq.is(Kind::String) || seq.is(Kind::List))) {
        if (times.integer > 100000) fail(pos, "repetition count above 100000");
        const int64_t n = std::max<int64_t>(times.integer, 0);
        const size_t piece = seq.is(Kind::String) ? seq.text.size() : seq.list->size();
        const size_t limit =
            seq.is(Kind::String) ? kMaxRenderedBytes : static_cast<size_t>(kMaxStatements);
        if (piece * static_cast<size_t>(n) > limit)
          fail(pos, str("a repetition of ", n, " x ", piece,
                        seq.is(Kind::String) ? " characters" : " items", " is too large"));
        if (seq.is(Kind::String)) {
          std::string out;
          out.reserve(piece * static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i)
            out += seq.text;
          return TemplateValue::of(std::move(out));
        }
        ValueList out;
        out.reserve(piece * static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
          out.insert(out.end(), seq.list->begin(), seq.list->end());
        return TemplateValue::of(std::move(out));
      }
    } else if (op == "/" || op == "//" || op == "%") {
      if (nums) {
        if (num(r) == 0) fail(pos, str("division by zero (", op, ")"));
        if (op == "/") return TemplateValue::of(num(l) / num(r));
        if (ints) {
          const int64_t a = integer(l), b = integer(r);
          if (a == INT64_MIN && b == -1) return checked(true, 0);  // the one quotient past int64
          int64_t q = a / b, m = a % b;
          if (m != 0 && ((m < 0) != (b < 0))) {
            --q;
            m += b;
          }
          return TemplateValue::of(op == "//" ? q : m);
        }
        const double q = std::floor(num(l) / num(r));
        return TemplateValue::of(op == "//" ? q : num(l) - q * num(r));
      }
    } else if (op == "**") {
      if (ints && integer(r) >= 0) {
        // Square-and-multiply: at most 63 squarings before any base above 1 overflows.
        int64_t out = 1, base = integer(l);
        bool overflowed = false;
        for (int64_t e = integer(r); e > 0 && !overflowed; e >>= 1) {
          if (e & 1) overflowed = __builtin_mul_overflow(out, base, &out);
          if (e > 1 && !overflowed) overflowed = __builtin_mul_overflow(base, base, &base);
        }
        return checked(overflowed, out);
      }
      if (nums) return TemplateValue::of(std::pow(num(l), num(r)));
    }
    fail(pos, str("unsupported operand types for ", op, ": '", type_name(l), "' and '",
                  type_name(r), "'"));
  }

  TemplateValue binary(const Expr& e) {
    const std::string& op = e.name;
    if (op == "and") {
      TemplateValue l = eval(*e.left);
      return truthy(l) ? eval(*e.right) : l;
    }
    if (op == "or") {
      TemplateValue l = eval(*e.left);
      return truthy(l) ? l : eval(*e.right);
    }
    const TemplateValue l = eval(*e.left), r = eval(*e.right);
    if (op == "~") return TemplateValue::of(to_text(l) + to_text(r));
    if (op == "==") return TemplateValue::of(equal(l, r));
    if (op == "!=") return TemplateValue::of(!equal(l, r));
    try {
      if (op == "<") return TemplateValue::of(less(l, r));
      if (op == ">") return TemplateValue::of(less(r, l));
      if (op == "<=") return TemplateValue::of(!less(r, l));
      if (op == ">=") return TemplateValue::of(!less(l, r));
      if (op == "in" || op == "not in") {
        if (r.is(Kind::Undefined)) fail(e.pos, why_undefined(r));
        BuiltinArgs a;
        a.positional.push_back(r);
        return TemplateValue::of(apply_test("in", l, a) == (op == "in"));
      }
    } catch (const TemplateRuntimeError& err) {
      fail(e.pos, err.message);
    }
    return arithmetic(op, l, r, e.pos);
  }

  TemplateValue eval(const Expr& e) {
    switch (e.kind) {
      case EK::Literal:
        return e.value;
      case EK::Name:
        return lookup(e.name);
      case EK::ListLit: {
        ValueList items;
        for (const auto& i : e.items)
          items.push_back(eval(*i));
        return TemplateValue::of(std::move(items));
      }
      case EK::DictLit: {
        ValueDict d;
        TemplateValue out = TemplateValue::of(std::move(d));
        for (size_t i = 0; i + 1 < e.items.size(); i += 2)
          out.set(to_text(eval(*e.items[i])), eval(*e.items[i + 1]));
        return out;
      }
      case EK::Attribute: {
        const TemplateValue obj = eval(*e.object);
        if (obj.is(Kind::Undefined)) fail(e.pos, why_undefined(obj));
        return get_item(obj, TemplateValue::of(e.name), e.pos);
      }
      case EK::Subscript:
        return get_item(eval(*e.object), eval(*e.right), e.pos);
      case EK::Slice:
        return slice(e);
      case EK::Call:
        return call(e);
      case EK::Filter: {
        const TemplateValue v = eval(*e.object);
        BuiltinArgs args = eval_args(e.args);
        try {
          return apply_filter(e.name, v, args);
        } catch (const TemplateRuntimeError& err) {
          fail(e.pos, str("filter ", e.name, ": ", err.message));
        }
      }
      case EK::Test: {
        const TemplateValue v = eval(*e.object);
        BuiltinArgs args = eval_args(e.args);
        try {
          return TemplateValue::of(apply_test(e.name, v, args) != e.negated);
        } catch (const TemplateRuntimeError& err) {
          fail(e.pos, str("test ", e.name, ": ", err.message));
        }
      }
      case EK::Unary: {
        const TemplateValue v = eval(*e.object);
        if (e.name == "not") return TemplateValue::of(!truthy(v));
        if (e.name == "-") return arithmetic("-", TemplateValue::of(int64_t{0}), v, e.pos);
        return arithmetic("+", TemplateValue::of(int64_t{0}), v, e.pos);
      }
      case EK::Binary:
        return binary(e);
      case EK::Conditional:
        return truthy(eval(*e.object)) ? eval(*e.left) : eval(*e.right);
    }
    return TemplateValue::undefined();
  }

  void write(const std::string& text, SourcePos pos) {
    if (out_.size() + text.size() > kMaxRenderedBytes)
      fail(pos, str("the rendered conversation passed ", kMaxRenderedBytes >> 20, " MiB"));
    out_ += text;
  }

  const std::string& name_;
  std::vector<std::map<std::string, TemplateValue>> scopes_;
  std::string out_;
  int64_t statements_ = 0;
};

}  // namespace

std::string render_chat_template(const StmtList& program, const std::string& name,
                                 const ValueDict& globals) {
  return Renderer(name, globals).run(program);
}

}  // namespace zt::data
