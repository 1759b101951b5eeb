"""Bad config.json files: the JSON itself, every shape key of the Llama and GPT-2 layouts with wrong
types, non-positive, absurd (past 64 bits, wrapping byte counts) and inconsistent values, the
string and boolean keys, rope_scaling. Each runs through `zerotrain train` (a config.json path: a
random init) and the size keys also through `zerotrain estimate`."""
import json

from case import Case
from fixtures import TRAIN_FLAGS, dumps, tiny_config

GPT2 = {"model_type": "gpt2", "vocab_size": 64, "n_embd": 16, "n_layer": 1, "n_head": 2,
        "n_positions": 64, "tie_word_embeddings": True}


def config_case(name, text, expect, estimate=False):
    text = text if isinstance(text, (str, bytes)) else dumps(text)
    argv = (["estimate", "--model", "{d}/config.json", "--seq", "16"] if estimate else
            ["train", "--model", "{d}/config.json", "--data", "{tokens}", "--out", "{d}/out"] +
            TRAIN_FLAGS)
    return Case(name=("estimate_" if estimate else "config_") + name, family="config", argv=argv,
                files={"config.json": text}, expect=expect)


def gpt2(**changes):
    c = dict(GPT2)
    c.update(changes)
    return c


LLAMA_INT_KEYS = ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                  "num_attention_heads", "num_key_value_heads", "max_position_embeddings"]
WRONG_TYPES = [("string", "16"), ("float", 16.5), ("bool", True), ("array", [16]),
               ("object", {"v": 16}), ("past_64_bits", 2**64)]


def cases():
    out = [
        config_case("empty", "", "not valid JSON"),
        config_case("not_json", "model_type = llama", "not valid JSON"),
        config_case("array", "[]", "expected a JSON object"),
        config_case("number", "7", "expected a JSON object"),
        config_case("deep_arrays", "[" * 70000 + "]" * 70000, "nested deeper than 64 levels"),
        config_case("deep_inside", json.dumps(tiny_config())[:-1] + ', "x": ' + "[" * 80 + "]" * 80
                    + "}", "nested deeper than 64 levels"),
        config_case("duplicate_key", json.dumps(tiny_config())[:-1] + ', "hidden_size": 32}',
                    'key "hidden_size" appears more than once'),
        config_case("binary", b"\x00\x01\x02\xff\xfe" * 20, "not valid JSON"),
        config_case("invalid_utf8", b'{"model_type": "ll\xffama"}', "not valid JSON"),
        config_case("truncated", json.dumps(tiny_config())[:100], "not valid JSON"),
        config_case("no_model_type", tiny_config(**{"-model_type": None}),
                    'missing required key "model_type"'),
        config_case("model_type_bert", tiny_config(model_type="bert"),
                    'model_type: "bert" is not supported'),
        config_case("model_type_number", tiny_config(model_type=5), "model_type: expected a string"),
        config_case("model_type_null", tiny_config(model_type=None), "model_type must not be null"),
        config_case("model_type_long", tiny_config(model_type="x" * 1000000),
                    'model_type: "xxxxxxxx'),
        config_case("model_type_raw_bytes", tiny_config(model_type="\x1b[2J\x07llama"),
                    r'model_type: "\u001b[2J\u0007llama" is not supported'),
        config_case("hidden_act_relu", tiny_config(hidden_act="relu"),
                    'hidden_act: "relu" is not supported'),
        config_case("hidden_act_number", tiny_config(hidden_act=1), "hidden_act: expected a string"),
        config_case("torch_dtype_float64", tiny_config(torch_dtype="float64"),
                    'torch_dtype: "float64" is not supported'),
        config_case("torch_dtype_number", tiny_config(torch_dtype=32),
                    "torch_dtype: expected a string"),
        config_case("tie_string", tiny_config(tie_word_embeddings="yes"),
                    "tie_word_embeddings: expected true or false"),
        config_case("tie_number", tiny_config(tie_word_embeddings=1),
                    "tie_word_embeddings: expected true or false"),
        config_case("attention_bias_string", tiny_config(attention_bias="false"),
                    "attention_bias: expected true or false"),
        config_case("mlp_bias_number", tiny_config(mlp_bias=0), "mlp_bias: expected true or false"),
        config_case("eps_zero", tiny_config(rms_norm_eps=0), "rms_norm_eps: must be positive"),
        config_case("eps_negative", tiny_config(rms_norm_eps=-1e-5),
                    "rms_norm_eps: must be positive"),
        config_case("eps_string", tiny_config(rms_norm_eps="1e-5"), "rms_norm_eps: expected a number"),
        config_case("eps_infinite", '{"model_type": "llama", "vocab_size": 64, "hidden_size": 16, '
                    '"intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, '
                    '"max_position_embeddings": 64, "rms_norm_eps": 1e999}', "number overflow parsing '1e999'"),
        config_case("rope_theta_zero", tiny_config(rope_theta=0), "rope_theta: must be positive"),
        config_case("rope_theta_negative", tiny_config(rope_theta=-10000.0),
                    "rope_theta: must be positive"),
        config_case("rope_theta_string", tiny_config(rope_theta="1e4"),
                    "rope_theta: expected a number"),
        config_case("rope_theta_infinite", json.dumps(tiny_config())[:-1] + ', "rope_parameters": '
                    '{"rope_theta": 1e999}}', "number overflow parsing '1e999'"),
        config_case("rope_scaling_string", tiny_config(rope_scaling="llama3"),
                    "rope_scaling: expected an object"),
        config_case("rope_scaling_yarn", tiny_config(rope_scaling={"rope_type": "yarn", "factor": 4}),
                    'rope_scaling.rope_type: "yarn" is not supported'),
        config_case("rope_scaling_type_number", tiny_config(rope_scaling={"type": 3}),
                    "rope_scaling.type: expected a string"),
        config_case("llama3_no_factor", tiny_config(rope_scaling={
            "rope_type": "llama3", "low_freq_factor": 1, "high_freq_factor": 4,
            "original_max_position_embeddings": 32}), 'missing required key "rope_scaling.factor"'),
        config_case("llama3_factor_zero", tiny_config(rope_scaling={
            "rope_type": "llama3", "factor": 0, "low_freq_factor": 1, "high_freq_factor": 4,
            "original_max_position_embeddings": 32}), "rope_scaling.factor: must be positive"),
        config_case("llama3_freq_order", tiny_config(rope_scaling={
            "rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 1,
            "original_max_position_embeddings": 32}), "high_freq_factor: must exceed low_freq_factor"),
        config_case("llama3_original_zero", tiny_config(rope_scaling={
            "rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
            "original_max_position_embeddings": 0}),
            "original_max_position_embeddings: must be positive"),
        config_case("rope_parameters_array", tiny_config(rope_parameters=[1]),
                    "rope_parameters: expected an object"),
        config_case("hidden_not_multiple_of_heads", tiny_config(hidden_size=17),
                    "hidden_size: 17 is not a multiple of num_attention_heads (2)"),
        config_case("kv_heads_not_dividing", tiny_config(num_attention_heads=4,
                                                         num_key_value_heads=3),
                    "num_key_value_heads: 3 does not divide num_attention_heads (4)"),
        config_case("head_dim_negative", tiny_config(head_dim=-8), "head_dim: must be positive"),
        config_case("head_dim_string", tiny_config(head_dim="8"), "head_dim: expected an integer"),
        config_case("head_dim_2_62", tiny_config(head_dim=2**62), "head_dim"),
        config_case("bos_string", tiny_config(bos_token_id="<s>"), "bos_token_id: expected an integer"),
        config_case("eos_list_of_strings", tiny_config(eos_token_id=["</s>"]),
                    "eos_token_id: expected an integer or a list of integers"),
        config_case("mistral_window_negative", tiny_config(model_type="mistral", sliding_window=-1),
                    "sliding_window: must not be negative"),
        config_case("mistral_window_string", tiny_config(model_type="mistral", sliding_window="4k"),
                    "sliding_window: expected an integer"),
        config_case("qwen2_partial_window", tiny_config(
            model_type="qwen2", num_hidden_layers=2, use_sliding_window=True, sliding_window=8,
            max_window_layers=1), "max_window_layers: a sliding window on 1 of 2 layers"),
        config_case("qwen2_layer_types_number", tiny_config(
            model_type="qwen2", use_sliding_window=True, layer_types=5),
            "layer_types: expected a list of strings"),
        config_case("qwen2_window_flag_string", tiny_config(model_type="qwen2",
                                                            use_sliding_window="yes"),
                    "use_sliding_window: expected true or false"),
        config_case("gpt2_activation", gpt2(activation_function="relu"),
                    'activation_function: "relu" is not supported'),
        config_case("gpt2_scale_attn_false", gpt2(scale_attn_weights=False),
                    "scale_attn_weights: false is not supported"),
        config_case("gpt2_cross_attention", gpt2(add_cross_attention=True),
                    "add_cross_attention: true is not supported"),
        config_case("gpt2_embd_not_multiple", gpt2(n_embd=18, n_head=4),
                    "n_embd: 18 is not a multiple of n_head (4)"),
        config_case("gpt2_positions_2_62", gpt2(n_positions=2**62), "n_positions"),
        config_case("gpt2_inner_2_62", gpt2(n_inner=2**62), "n_inner"),
        config_case("gpt2_layer_1e9", gpt2(n_layer=10**9), "n_layer"),
        config_case("vocab_2_59_hidden_32", tiny_config(vocab_size=2**59, hidden_size=32),
                    "vocab_size"),
        config_case("intermediate_2_62", tiny_config(intermediate_size=2**62), "intermediate_size"),
        config_case("layers_1e9", tiny_config(num_hidden_layers=10**9), "num_hidden_layers"),
        config_case("heads_1e9", tiny_config(num_attention_heads=10**9, num_key_value_heads=1),
                    "num_attention_heads"),
        config_case("max_pos_below_seq_len", tiny_config(max_position_embeddings=8),
                    "seq_len 16 (--seq-len) exceeds the model's max_position_embeddings 8"),
        config_case("vocab_below_token_ids", tiny_config(vocab_size=32),
                    "has vocab size 64 but the model's vocab_size is 32"),
        config_case("too_big_for_the_machine", tiny_config(
            vocab_size=2**20, hidden_size=2**16, num_attention_heads=2**8, num_key_value_heads=2**8,
            intermediate_size=2**16), "vocab_size"),
    ]
    for key in LLAMA_INT_KEYS:
        for label, value in [("zero", 0), ("negative", -1)] + WRONG_TYPES:
            expect = key if label in ("zero", "negative") else f"{key}: expected an integer"
            out.append(config_case(f"{key}_{label}", tiny_config(**{key: value}), expect))
        if key not in ("num_key_value_heads", "max_position_embeddings"):
            out.append(config_case(f"{key}_missing", tiny_config(**{"-" + key: None}),
                                   f'missing required key "{key}"'))
            out.append(config_case(f"{key}_null", tiny_config(**{key: None}),
                                   f"{key} must not be null"))
    for key in ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                "max_position_embeddings"]:
        for label, value in [("2_62", 2**62), ("2_63_minus_1", 2**63 - 1)]:
            out.append(config_case(f"{key}_{label}", tiny_config(**{key: value}), key))
            out.append(config_case(f"{key}_{label}", tiny_config(**{key: value}), key,
                                   estimate=True))
    for key in ["n_embd", "n_layer", "n_head"]:
        out.append(config_case(f"gpt2_{key}_zero", gpt2(**{key: 0}), f"{key}: must be positive"))
        out.append(config_case(f"gpt2_{key}_string", gpt2(**{key: "8"}),
                               f"{key}: expected an integer"))
    out.append(config_case("deep_arrays", "[" * 70000 + "]" * 70000, "nested deeper than 64 levels",
                           estimate=True))
    out.append(config_case("heads_1e9", tiny_config(num_attention_heads=10**9,
                                                    num_key_value_heads=1),
                           "num_attention_heads", estimate=True))
    return out
