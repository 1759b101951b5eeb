"""Bad chat data for `zerotrain data prepare --messages-field`: the tokenizer directory's
tokenizer_config.json (not JSON, a chat_template of the wrong type, named templates without the
one asked for, bad special tokens), chat templates that do not parse (one line naming the
template, its line and column), chat data without a template, and Parquet inputs."""
import json

from case import Case
from fixtures import tokenizer_base

TOKENIZER = json.dumps(tokenizer_base("sp_bpe"))
CHAT = '{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}]}\n'


def chat_case(name, config, expect, template=None, rc=1, extra=(), inputs=("{d}/chat.jsonl",),
              files=None):
    f = {"tok/tokenizer.json": TOKENIZER, "chat.jsonl": CHAT}
    if config is not None:
        f["tok/tokenizer_config.json"] = config if isinstance(config, str) else json.dumps(config)
    if template is not None:
        f["tok/chat_template.jinja"] = template
    f.update(files or {})
    return Case(name=f"chat_{name}", family="chat",
                argv=["data", "prepare", "--tokenizer", "{d}/tok/tokenizer.json", "--input",
                      *inputs, "--messages-field", "messages", "--output", "{d}/out.bin",
                      "--quiet"] + list(extra),
                files=f, expect=expect, rc=rc)


def cases():
    return [
        chat_case("no_template", {"eos_token": "</s>"},
                  "chat records are rendered through the model's chat template: "),
        chat_case("no_config", None, "has no chat_template.jinja and its tokenizer_config.json no"),
        chat_case("config_not_json", "{chat_template: x}", "tokenizer_config.json"),
        chat_case("config_array", "[]", "tokenizer_config.json: expected a JSON object"),
        chat_case("template_number", {"chat_template": 7},
                  "chat_template: expected a string or a list of named templates"),
        chat_case("named_without_default", {"chat_template": [{"name": "tool_use", "template": "x"}]},
                  'no template named "default" (it has: tool_use)'),
        chat_case("named_entry_bad", {"chat_template": [{"name": "default"}]},
                  'each entry needs a string "name" and "template"'),
        chat_case("bos_number", {"bos_token": 1, "chat_template": "x"},
                  'bos_token is an integer 1, expected a string or an object with a "content"'),
        chat_case("unknown_tag", {"chat_template": "ok\n{% macro m() %}{% endmacro %}"},
                  'tokenizer_config.json chat_template:2:4: unknown tag "macro"'),
        chat_case("unclosed_if", {"chat_template": "{% if messages %}x"},
                  "chat_template:1:18: missing {% endif %} at the end of the template"),
        chat_case("unclosed_string", {"chat_template": "{{ 'abc }}"}, "chat_template:1:4: unclosed string"),
        chat_case("bad_character", {"chat_template": "{{ messages ? 1 }}"},
                  "chat_template:1:13: unexpected character '?' in a tag"),
        chat_case("jinja_file_error", {"chat_template": "fine"}, "chat_template.jinja:1:8: expected a value, got the end of the tag",
                  template="{{ 1 + }}"),
        # Found by fuzzing (fuzz_chat_template): an index past 64 bits threw out of the parser.
        chat_case("huge_integer_index", {"chat_template": "{{ messages." + "5" * 200 + " }}"},
                  "chat_template:1:13: integer \"5555"),
        chat_case("huge_integer", {"chat_template": "{{ " + "9" * 30 + " }}"},
                  "chat_template:1:4: integer \"9999"),
        # Found by fuzzing: integer arithmetic past 64 bits overflowed (undefined behaviour). The
        # one record is skipped, and a prepare that skipped every record is an error.
        chat_case("integer_power_overflow", {"chat_template": "{{ 13888 ** 8 }}"},
                  "chat_template:1:4: integer overflow in 13888 ** 8 (template integers are 64-bit)"),
        chat_case("integer_product_overflow", {"chat_template": "{{ 3037000500 * 3037000500 }}"},
                  "integer overflow in 3037000500 * 3037000500"),
        # Found by fuzzing: loops nested over strings ran 45 s into 800 MB; a render has a budget.
        chat_case("endless_loops", {"chat_template": "{% for a in range(1000) %}{% for b in range(1000) %}"
                                                    "{% for c in range(9) %}x{% endfor %}{% endfor %}{% endfor %}"},
                  "ran more than 1000000 statements for one conversation"),
        chat_case("deep_template", {"chat_template": "{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}"},
                  "expression nested deeper than 200 levels"),
        # A chain grows the tree one level per link without nesting: bounded like nesting.
        chat_case("long_plus_chain", {"chat_template": "{{ 1" + " + 1" * 100000 + " }}"},
                  "expression chained or nested deeper than 500 levels"),
        chat_case("long_filter_chain", {"chat_template": "{{ 'x'" + " | trim" * 100000 + " }}"},
                  "expression chained or nested deeper than 500 levels"),
        chat_case("long_attribute_chain", {"chat_template": "{{ a" + ".a" * 100000 + " }}"},
                  "expression chained or nested deeper than 500 levels"),
        chat_case("doubling_string", {"chat_template": "{% set s = 'ab' %}" +
                                      "{% set s = s + s %}" * 30 + "{{ s }}"},
                  "the rendered conversation passed 64 MiB"),
        chat_case("parquet_name", {"chat_template": "x"}, "Parquet is not supported",
                  inputs=("{d}/train.parquet",), files={"train.parquet": b"PAR1\x00\x00PAR1"}),
        chat_case("parquet_magic", {"chat_template": "x"}, "Parquet is not supported",
                  inputs=("{d}/data.jsonl",), files={"data.jsonl": b"PAR1\x15\x04"}),
    ]
