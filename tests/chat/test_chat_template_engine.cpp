// The chat template engine on its own: transformers' whitespace rules (trim_blocks,
// lstrip_blocks, "-" markers), loops and the loop variable, if/elif/else, set and namespace(),
// filters, tests, string operators, slicing, Python's str() of values, and errors that name the
// template, line and column.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "zerotrain/data/chat_template.h"

namespace zt::data {
namespace {

std::string render(const std::string& source, const std::string& messages_json = "[]",
                   ValueDict vars = {}, bool gen = false) {
  const ChatTemplate t("t", source);
  return t.render(from_json(nlohmann::ordered_json::parse(messages_json)), gen, vars);
}

std::string error_of(const std::string& source, const std::string& messages_json = "[]") {
  try {
    render(source, messages_json);
  } catch (const ChatTemplateError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ChatTemplateEngine, WhitespaceRules) {
  // trim_blocks drops the line break after a block tag, lstrip_blocks the indentation before it.
  EXPECT_EQ(render("{% if true %}\n  A\n  {% endif %}\nB"), "  A\nB");
  EXPECT_EQ(render("x  {{- ' y ' -}}  \n z"), "x y z");
  EXPECT_EQ(render("a {%- if true -%} \n b {%- endif %}"), "ab");
  EXPECT_EQ(render("a\n{# note #}\nb"), "a\nb");
  EXPECT_EQ(render("{{ 'x' }}\n"), "x\n");  // an output tag keeps its line break
}

TEST(ChatTemplateEngine, LoopsConditionsAndAssignments) {
  const std::string msgs =
      R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
          {"role": "user", "content": "c"}])";
  EXPECT_EQ(render("{% for m in messages %}{{ loop.index0 }}{{ m.role[0] }}"
                   "{% if loop.first %}F{% elif loop.last %}L{% else %}-{% endif %}{% endfor %}",
                   msgs),
            "0uF1a-2uL");
  EXPECT_EQ(render("{% for m in messages if m.role == 'user' %}{{ loop.index }}/{{ loop.length }}"
                   "{{ m['content'] }} {% endfor %}",
                   msgs),
            "1/2a 2/2c ");
  // A set inside a loop stays there; a namespace carries values out.
  EXPECT_EQ(render("{% set x = 1 %}{% set ns = namespace(n=0) %}{% for m in messages %}"
                   "{% set x = 2 %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ x }}{{ ns.n }}",
                   msgs),
            "13");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': [2]}.items() %}{{ k }}={{ v }};{% endfor %}"),
            "a=1;b=[2];");
  EXPECT_EQ(render("{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}"
                   "{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}"),
            "02");
  EXPECT_EQ(render("{% for i in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{{ 'y' if add_generation_prompt else 'n' }}", "[]", {}, true), "y");
}

TEST(ChatTemplateEngine, FiltersTestsAndOperators) {
  EXPECT_EQ(render("{{ '  hi \n' | trim | upper }}|{{ [1, 2, 3] | length }}"), "HI|3");
  EXPECT_EQ(render("{{ {'a': [1, 2.5, none, true], 'b': 'é\"'} | tojson }}"),
            R"({"a": [1, 2.5, null, true], "b": "é\""})");
  EXPECT_EQ(render("{{ {'a': [1], 'b': {}} | tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
  EXPECT_EQ(render("{{ 'a' + 'b' ~ 1 ~ none }}"), "ab1None");
  EXPECT_EQ(render("{{ x is defined }}{{ y is not defined }}{{ none is none }}{{ 'a' is string }}",
                   "[]", {{"x", TemplateValue::of(int64_t{1})}}),
            "TrueTrueTrueTrue");
  EXPECT_EQ(render("{{ 'abcdef'[1:4] }}{{ 'abc'[::-1] }}{{ [1, 2, 3][-1] }}{{ [1, 2, 3][:-1] }}"),
            "bcdcba3[1, 2]");
  EXPECT_EQ(
      render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 0.1 + 0.2 }}"),
      "3 -4 1 3.5 1024 0.30000000000000004");
  EXPECT_EQ(render("{{ 'x' in 'xy' }}{{ 'role' in {'role': 1} }}{{ 3 not in [1, 2] }}"),
            "TrueTrueTrue");
  EXPECT_EQ(
      render("{{ [{'r': 'u'}, {'r': 'a'}, {'r': 'u'}] | selectattr('r', 'equalto', 'u') "
             "| list | length }}{{ ['a', 'b'] | join(', ') }}{{ [{'n': 1}] | map(attribute='n') "
             "| first }}"),
      "2a, b1");
  EXPECT_EQ(
      render("{{ ' a b '.strip().split(' ') }}{{ 'abc'.startswith('ab') }}{{ u | default('d') }}"),
      "['a', 'b']Trued");
  EXPECT_EQ(render("{{ 1e-05 }} {{ 1e16 }} {{ 100.0 }} {{ 1.5e3 }}"), "1e-05 1e+16 100.0 1500.0");
}

TEST(ChatTemplateEngine, ErrorsNameTheTemplateLineAndColumn) {
  EXPECT_EQ(error_of("ok\n{% frobnicate %}"),
            "[chat_template] t:2:4: unknown tag \"frobnicate\", got \"frobnicate\"");
  EXPECT_EQ(error_of("{{ 'a' "), "[chat_template] t:1:1: unclosed tag (no \"}}\")");
  EXPECT_EQ(error_of("{% if true %}x"),
            "[chat_template] t:1:14: missing {% endif %} at the end of the template");
  EXPECT_EQ(error_of("{{ raise_exception('bad ' ~ 1) }}"),
            "[chat_template] t:1:19: raise_exception: bad 1");
  EXPECT_EQ(error_of("{{ messages[0].content + 'x' }}", R"([{"role": "user"}])"),
            "[chat_template] t:1:16: 'dict object' has no attribute 'content'");
  EXPECT_EQ(error_of("{{ x | nofilter }}"),
            "[chat_template] t:1:8: filter nofilter: no filter named 'nofilter'");
  EXPECT_EQ(error_of("{% set s = 'a' %}{% set s.x = 1 %}"),
            "[chat_template] t:1:21: cannot assign attribute 'x' on str 's' (only a namespace() "
            "takes attributes)");
  // Hostile nesting is refused, not a stack overflow.
  EXPECT_NE(error_of("{{ " + std::string(20000, '(') + "1" + std::string(20000, ')') + " }}")
                .find("nested deeper than 200"),
            std::string::npos);
  std::string nots;
  for (int i = 0; i < 20000; ++i)
    nots += "not ";
  EXPECT_NE(error_of("{{ " + nots + "1 }}").find("nested deeper than 200"), std::string::npos);
  std::string ifs;
  for (int i = 0; i < 20000; ++i)
    ifs += "{% if 1 %}";
  EXPECT_NE(error_of(ifs).find("nested deeper than 200"), std::string::npos);
  // So are chains, which grow the tree one level per link without nesting (issue 37: 100,000
  // links overflowed the stack); 499 links still render.
  const auto chain = [](const std::string& first, const std::string& link, int links) {
    std::string text = "{{ " + first;
    for (int i = 0; i < links; ++i)
      text += link;
    return text + " }}";
  };
  for (const auto& [first, link] : std::vector<std::pair<std::string, std::string>>{
           {"1", " + 1"}, {"'x'", " | trim"}, {"messages", ".a"}, {"'a'", " ~ 'a'"}, {"x", "()"}})
    EXPECT_NE(error_of(chain(first, link, 100000)).find("chained or nested deeper than 500"),
              std::string::npos)
        << first << link;
  EXPECT_EQ(render(chain("1", " + 1", 499)), "500");
  EXPECT_EQ(render(chain("'a'", " | trim", 499)), "a");
  // Integers are 64-bit: a result past them is an error naming the operation, never a wrap
  // (found by fuzz_chat_template: 13888 ** 8 and 5 ** 55555 overflowed under UBSan).
  EXPECT_EQ(error_of("{{ 13888 ** 8 }}"),
            "[chat_template] t:1:4: integer overflow in 13888 ** 8 (template integers are 64-bit)");
  EXPECT_NE(error_of("{{ 5 ** 55555 }}").find("integer overflow in 5 ** 55555"), std::string::npos);
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ -9223372036854775807 - 2 }}").find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ 3037000500 * 3037000500 }}").find("integer overflow"), std::string::npos);
  EXPECT_NE(error_of("{{ (-9223372036854775807 - 1) // -1 }}").find("integer overflow"),
            std::string::npos);
  EXPECT_NE(error_of("{{ (-9223372036854775807 - 1) | abs }}").find("integer overflow in abs"),
            std::string::npos);
  // A render has a budget: statements (loops nested over long strings ran for minutes) and
  // rendered bytes (found by fuzz_chat_template).
  EXPECT_NE(error_of("{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(2) %}"
                     "x{% endfor %}{% endfor %}{% endfor %}")
                .find("ran more than 1000000 statements"),
            std::string::npos);
  EXPECT_NE(error_of("{% for a in range(700) %}{{ 'x' * 100000 }}{% endfor %}")  // 66.8 MiB
                .find("passed 64 MiB"),
            std::string::npos);
  EXPECT_NE(error_of("{{ ('x' * 1000) * 100000 }}").find("too large"), std::string::npos);
  EXPECT_EQ(render("{{ ([1, 2] * 3) | length }}{{ 'ab' * 2 }}{{ 'ab' * -1 }}"), "6abab");
  // What fits is exact, at the edges too.
  EXPECT_EQ(render("{{ 2 ** 62 }} {{ (-2) ** 63 }} {{ 3 ** 39 }} {{ 1 ** 99999 }} {{ (-1) ** 99999 }}"),
            "4611686018427387904 -9223372036854775808 4052555153018976267 1 -1");
  EXPECT_EQ(render("{{ 3037000499 * 3037000499 }} {{ -9223372036854775807 - 1 }} {{ 7 ** 0 }}"),
            "9223372030926249001 -9223372036854775808 1");
  // An undefined value writes nothing and is false; only using it is an error.
  EXPECT_EQ(render("[{{ nothing }}]{% if nothing %}x{% endif %}{{ nothing | length }}"), "[]0");
}

}  // namespace
}  // namespace zt::data
