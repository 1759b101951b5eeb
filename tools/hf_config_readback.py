#!/usr/bin/env python3
"""Loads config.json files with transformers.AutoConfig and prints, as one JSON list on stdout,
the model each describes in zerotrain's ModelConfig terms (what transformers resolves: defaulted
num_key_value_heads and head_dim, rope parameters, qwen2's per-layer sliding windows, ...).
tests/io/test_hf_config_transformers.cpp compares these with the configs write_hf_config wrote.
Works with transformers 4.x (rope_theta / rope_scaling / torch_dtype) and 5.x (rope_parameters /
dtype). Needs: pip install transformers (torch is not needed).

Run: python3 tools/hf_config_readback.py DIR_OR_CONFIG_JSON...
"""
import json
import sys

from transformers import AutoConfig


def dtype_name(cfg):
    d = getattr(cfg, "dtype", None) or getattr(cfg, "torch_dtype", None) or "float32"
    return str(d).replace("torch.", "")


def rope(cfg):
    params = getattr(cfg, "rope_parameters", None)
    if params is None:
        params = dict(getattr(cfg, "rope_scaling", None) or {})
        params["rope_theta"] = getattr(cfg, "rope_theta", 10000.0)
    out = {"rope_theta": float(params.get("rope_theta", 10000.0)), "rope_scaling_factor": 0.0}
    kind = params.get("rope_type", params.get("type", "default"))
    if kind == "llama3":
        out.update(
            rope_scaling_factor=float(params["factor"]),
            low_freq_factor=float(params["low_freq_factor"]),
            high_freq_factor=float(params["high_freq_factor"]),
            original_max_position_embeddings=int(params["original_max_position_embeddings"]),
        )
    elif kind != "default":
        out["rope_type"] = kind
    return out


def sliding_window(cfg):
    if cfg.model_type == "mistral":
        return cfg.sliding_window or 0
    if cfg.model_type != "qwen2" or not getattr(cfg, "use_sliding_window", False):
        return 0
    types = getattr(cfg, "layer_types", None) or [
        "sliding_attention" if i >= cfg.max_window_layers else "full_attention"
        for i in range(cfg.num_hidden_layers)
    ]
    if all(t == "sliding_attention" for t in types):
        return cfg.sliding_window
    if all(t == "full_attention" for t in types):
        return 0
    return -1


def first_token(v):
    if isinstance(v, list):
        return v[0] if v else -1
    return -1 if v is None else v


def describe(cfg):
    common = {
        "model_type": cfg.model_type,
        "architectures": getattr(cfg, "architectures", None),
        "vocab_size": cfg.vocab_size,
        "tie_word_embeddings": bool(cfg.tie_word_embeddings),
        "torch_dtype": dtype_name(cfg),
        "bos_token_id": first_token(cfg.bos_token_id),
        "eos_token_id": first_token(cfg.eos_token_id),
    }
    if cfg.model_type == "gpt2":
        return {
            **common,
            "hidden_size": cfg.n_embd,
            "intermediate_size": cfg.n_inner if cfg.n_inner is not None else 4 * cfg.n_embd,
            "num_layers": cfg.n_layer,
            "num_heads": cfg.n_head,
            "num_kv_heads": cfg.n_head,
            "head_dim": cfg.n_embd // cfg.n_head,
            "max_position_embeddings": cfg.n_positions,
            "norm_eps": cfg.layer_norm_epsilon,
            "hidden_act": cfg.activation_function,
            "attention_bias": True,
            "mlp_bias": True,
            "sliding_window": 0,
        }
    heads = cfg.num_attention_heads
    return {
        **common,
        **rope(cfg),
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size,
        "num_layers": cfg.num_hidden_layers,
        "num_heads": heads,
        "num_kv_heads": cfg.num_key_value_heads or heads,
        "head_dim": getattr(cfg, "head_dim", None) or cfg.hidden_size // heads,
        "max_position_embeddings": cfg.max_position_embeddings,
        "norm_eps": cfg.rms_norm_eps,
        "hidden_act": cfg.hidden_act,
        # Qwen2 always has q/k/v biases; Mistral never has biases.
        "attention_bias": cfg.model_type == "qwen2" or bool(getattr(cfg, "attention_bias", False)),
        "mlp_bias": cfg.model_type == "llama" and bool(getattr(cfg, "mlp_bias", False)),
        "sliding_window": sliding_window(cfg),
    }


def main():
    print(json.dumps([describe(AutoConfig.from_pretrained(p)) for p in sys.argv[1:]]))


if __name__ == "__main__":
    main()
