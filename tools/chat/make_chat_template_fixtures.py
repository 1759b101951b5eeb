"""Writes tests/fixtures/chat_templates/expected.json: what transformers' apply_chat_template
renders (tokenize=False) for each template of that folder over a set of conversations, or the
message of the exception the template raises. tests/chat/test_chat_template_transformers.cpp
renders the same cases with zerotrain's chat template engine and compares the text.

Run (no install at run time; needs transformers and Debian's python3-jinja2, as in the venv of
scripts/parity_cpu.sh, which sees the system site packages):
    build-cpu/parity-venv/bin/python tools/chat/make_chat_template_fixtures.py
"""
import json
import os

import jinja2
import transformers
from transformers import PreTrainedTokenizerFast

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "chat_templates")
TOKENIZER = os.path.join(ROOT, "tests", "fixtures", "tokenizer", "small_bpe", "tokenizer.json")

TEMPLATES = {
    "llama3_2": ("<|begin_of_text|>", "<|eot_id|>"),
    "mistral_v0_3": ("<s>", "</s>"),
    "qwen2": (None, "<|im_end|>"),
    "qwen3": (None, "<|im_end|>"),
}

SYSTEM = {"role": "system", "content": "  You answer in one short sentence. \n"}
USER1 = {"role": "user", "content": "What is the capital of France?"}
ASSISTANT1 = {"role": "assistant", "content": " Paris is the capital of France.\n"}
USER2 = {"role": "user", "content": "And of Germany? Antworte bitte auf Deutsch: Grüße!"}
ASSISTANT2 = {"role": "assistant", "content": "Berlin ist die Hauptstadt. 🇩🇪"}
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather of a city, \"now\".",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                    "days": {"type": "integer"}},
                   "required": ["city"]}}}
TOOL_CALL = {"role": "assistant", "tool_calls": [{"id": "call12345", "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]}
TOOL_RESULT = {"role": "tool", "tool_call_id": "call12345", "content": "{\"temp\": 21.5}"}

CONVERSATIONS = {
    "single_turn": [USER1, ASSISTANT1],
    "system_multi_turn": [SYSTEM, USER1, ASSISTANT1, USER2, ASSISTANT2],
    "prompt_only": [USER1],
    "system_prompt_only": [SYSTEM, USER1],
    "multi_turn_open": [USER1, ASSISTANT1, USER2],
    "not_alternating": [USER1, USER2],
    "empty_content": [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}],
    "tool_round": [USER1, TOOL_CALL, TOOL_RESULT, ASSISTANT1],
    "thinking": [USER1, {"role": "assistant", "content": "<think>\nParis, surely.\n</think>\n\nParis."},
                 USER2, {"role": "assistant", "content": "Berlin.", "reasoning_content": "Easy."}],
}


def render(tokenizer, template, messages, add_generation_prompt, tools=None):
    try:
        text = tokenizer.apply_chat_template(
            messages, chat_template=template, tools=tools, tokenize=False,
            add_generation_prompt=add_generation_prompt, date_string="26 Jul 2024")
        return {"render": text}
    except (jinja2.TemplateError, ValueError, TypeError, KeyError) as e:
        return {"error": str(e)}


def main():
    cases = []
    for name, (bos, eos) in TEMPLATES.items():
        with open(os.path.join(FIXTURES, name + ".jinja"), encoding="utf-8") as f:
            template = f.read()
        tokenizer = PreTrainedTokenizerFast(tokenizer_file=TOKENIZER, bos_token=bos, eos_token=eos)
        for conv, messages in CONVERSATIONS.items():
            for gen in (False, True):
                for tools in (None, [WEATHER_TOOL]):
                    if tools and conv not in ("single_turn", "system_prompt_only", "tool_round"):
                        continue
                    case = {"template": name, "conversation": conv, "messages": messages,
                            "add_generation_prompt": gen, "bos_token": bos, "eos_token": eos,
                            "date_string": "26 Jul 2024"}
                    if tools:
                        case["tools"] = tools
                    case.update(render(tokenizer, template, messages, gen, tools))
                    cases.append(case)
    out = {"transformers": transformers.__version__, "jinja2": jinja2.__version__, "cases": cases}
    with open(os.path.join(FIXTURES, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases")


if __name__ == "__main__":
    main()
