"""The four model families of bench/bf16_drift.py in plain PyTorch (no transformers): llama, qwen2,
mistral and gpt2 as Hugging Face computes them (rotate-half rope with llama3 scaling, RMSNorm in
f32, softmax and loss in f32, gelu_new), their parameters named and shaped as Hugging Face saves
them, so that `save_model` writes a directory (config.json + model.safetensors) that
`zerotrain train --model DIR` loads with the same weights. Standard library + torch only (Debian's
torch 1.13 on the CPU, torch 2 on the GPU machine): the safetensors file is written with
tests/bad_inputs/fixtures.py's byte-level writer.
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "bad_inputs"))
from fixtures import st_file, st_tensors  # noqa: E402

VOCAB = 2048

# Head dim 64 everywhere (the shape issue 32 measured); small enough for a CPU run of a few minutes.
CONFIGS = {
    # Llama 3 style: 6 query heads over 2 KV heads (GQA 3:1), llama3 rope scaling, tied embeddings.
    "llama": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": VOCAB,
              "hidden_size": 384, "intermediate_size": 1024, "num_hidden_layers": 3,
              "num_attention_heads": 6, "num_key_value_heads": 2, "head_dim": 64,
              "max_position_embeddings": 1024, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
              "hidden_act": "silu", "tie_word_embeddings": True, "attention_bias": False,
              "mlp_bias": False, "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32"},
    # Qwen2 style: 4 query heads over 1 KV head (MQA), q/k/v biases, tied embeddings.
    "qwen2": {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": VOCAB,
              "hidden_size": 256, "intermediate_size": 704, "num_hidden_layers": 3,
              "num_attention_heads": 4, "num_key_value_heads": 1, "max_position_embeddings": 1024,
              "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "hidden_act": "silu",
              "tie_word_embeddings": True, "use_sliding_window": False, "sliding_window": None,
              "max_window_layers": 3, "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32"},
    # Mistral style: 4 query heads over 2 KV heads, a 32-token sliding window, untied head.
    "mistral": {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "vocab_size": VOCAB,
                "hidden_size": 256, "intermediate_size": 704, "num_hidden_layers": 3,
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
                "max_position_embeddings": 1024, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                "sliding_window": 32, "hidden_act": "silu", "tie_word_embeddings": False,
                "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32"},
    # GPT-2: learned positions, LayerNorm with biases, Conv1D ([in, out]) weights, tied head.
    "gpt2": {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": VOCAB,
             "n_embd": 256, "n_layer": 3, "n_head": 4, "n_positions": 1024, "n_ctx": 1024,
             "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "resid_pdrop": 0.0,
             "embd_pdrop": 0.0, "attn_pdrop": 0.0, "tie_word_embeddings": True,
             "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32"},
}


def _normal(gen, *shape, std=0.02):
    return torch.randn(*shape, generator=gen) * std


def init_params(config, seed):
    """{Hugging Face name: f32 tensor}: normal(0, 0.02) weights (GPT-2's c_proj scaled by the depth,
    as transformers does), norms near one and biases near zero (small noise, so their gradients
    are not trivial)."""
    g = torch.Generator().manual_seed(seed)
    p = {}

    def vec(n, base):
        return base + _normal(g, n, std=0.1)

    if config["model_type"] == "gpt2":
        c, layers, v = config["n_embd"], config["n_layer"], config["vocab_size"]
        proj_std = 0.02 / math.sqrt(2 * layers)
        p["transformer.wte.weight"] = _normal(g, v, c)
        p["transformer.wpe.weight"] = _normal(g, config["n_positions"], c, std=0.01)
        for i in range(layers):
            b = f"transformer.h.{i}."
            p[b + "ln_1.weight"], p[b + "ln_1.bias"] = vec(c, 1.0), vec(c, 0.0)
            p[b + "attn.c_attn.weight"], p[b + "attn.c_attn.bias"] = _normal(g, c, 3 * c), vec(3 * c, 0.0)
            p[b + "attn.c_proj.weight"] = _normal(g, c, c, std=proj_std)
            p[b + "attn.c_proj.bias"] = vec(c, 0.0)
            p[b + "ln_2.weight"], p[b + "ln_2.bias"] = vec(c, 1.0), vec(c, 0.0)
            p[b + "mlp.c_fc.weight"], p[b + "mlp.c_fc.bias"] = _normal(g, c, 4 * c), vec(4 * c, 0.0)
            p[b + "mlp.c_proj.weight"] = _normal(g, 4 * c, c, std=proj_std)
            p[b + "mlp.c_proj.bias"] = vec(c, 0.0)
        p["transformer.ln_f.weight"], p["transformer.ln_f.bias"] = vec(c, 1.0), vec(c, 0.0)
        return p
    h, inter, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    d = head_dim(config)
    q, kv = config["num_attention_heads"] * d, config["num_key_value_heads"] * d
    qkv_bias = config["model_type"] == "qwen2" or config.get("attention_bias", False)
    p["model.embed_tokens.weight"] = _normal(g, v, h)
    for i in range(config["num_hidden_layers"]):
        b = f"model.layers.{i}."
        p[b + "input_layernorm.weight"] = vec(h, 1.0)
        for name, rows in (("q_proj", q), ("k_proj", kv), ("v_proj", kv)):
            p[b + f"self_attn.{name}.weight"] = _normal(g, rows, h)
            if qkv_bias:
                p[b + f"self_attn.{name}.bias"] = vec(rows, 0.0)
        p[b + "self_attn.o_proj.weight"] = _normal(g, h, q)
        p[b + "post_attention_layernorm.weight"] = vec(h, 1.0)
        p[b + "mlp.gate_proj.weight"] = _normal(g, inter, h)
        p[b + "mlp.up_proj.weight"] = _normal(g, inter, h)
        p[b + "mlp.down_proj.weight"] = _normal(g, h, inter)
    p["model.norm.weight"] = vec(h, 1.0)
    if not config["tie_word_embeddings"]:
        p["lm_head.weight"] = _normal(g, v, h)
    return p


def save_model(config, params, out_dir):
    """config.json + model.safetensors (f32, Hugging Face names) in out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    tensors = [(n, "F32", list(t.shape), t.detach().float().contiguous().cpu().numpy().tobytes())
               for n, t in sorted(params.items())]
    header, data = st_tensors(tensors, {"format": "pt"})
    with open(os.path.join(out_dir, "model.safetensors"), "wb") as f:
        f.write(st_file(header, data))


def head_dim(config):
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def window_of(config):
    if config["model_type"] == "mistral":
        return config.get("sliding_window") or 0
    if config["model_type"] == "qwen2" and config.get("use_sliding_window"):
        return config["sliding_window"]
    return 0


def rope_inv_freq(config):
    """Hugging Face's inverse frequencies, with the llama3 rescaling of long wavelengths."""
    d = head_dim(config)
    inv = 1.0 / (config["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    rs = config.get("rope_scaling")
    if not rs or rs.get("rope_type", rs.get("type")) != "llama3":
        return inv
    factor, lo, hi = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    scaled = torch.where(wavelen > old / lo, inv / factor, inv)
    smooth = (old / wavelen - lo) / (hi - lo)
    mid = (1 - smooth) * scaled / factor + smooth * scaled
    is_mid = ~(wavelen < old / hi) & ~(wavelen > old / lo)
    return torch.where(is_mid, mid, scaled)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def attention_mask(seq, window, device):
    """[S, S] bool, True where i may attend to j: causal, and i - j < window when there is one."""
    i = torch.arange(seq, device=device)[:, None]
    j = torch.arange(seq, device=device)[None, :]
    ok = j <= i
    if window:
        ok = ok & (i - j < window)
    return ok


def attend(q, k, v, mask, window):
    """q [B, H, S, D], k/v [B, Hkv, S, D] (repeated to H as transformers' repeat_kv does). SDPA
    where torch has it (transformers' default attention; is_causal without a window, as it
    passes), else the eager path (f32 softmax)."""
    rep = q.shape[1] // k.shape[1]
    if rep > 1:
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    if hasattr(F, "scaled_dot_product_attention"):
        if not window:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    w = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    w = w.masked_fill(~mask, torch.finfo(w.dtype).min)
    return torch.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype) @ v


def rms_norm(x, w, eps):
    dtype = x.dtype
    x = x.float()
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return w * x.to(dtype)


def llama_like_forward(config, p, ids):
    b, s = ids.shape
    d, nh, nkv = head_dim(config), config["num_attention_heads"], config["num_key_value_heads"]
    eps = config["rms_norm_eps"]
    x = F.embedding(ids, p["model.embed_tokens.weight"])
    freqs = torch.arange(s, device=ids.device).float()[:, None] * rope_inv_freq(config).to(ids.device)[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    window = window_of(config)
    mask = attention_mask(s, window, ids.device)
    for i in range(config["num_hidden_layers"]):
        pre = f"model.layers.{i}."

        def lin(name, t):
            return F.linear(t, p[pre + name + ".weight"], p.get(pre + name + ".bias"))

        h = rms_norm(x, p[pre + "input_layernorm.weight"], eps)
        q = lin("self_attn.q_proj", h).view(b, s, nh, d).transpose(1, 2)
        k = lin("self_attn.k_proj", h).view(b, s, nkv, d).transpose(1, 2)
        v = lin("self_attn.v_proj", h).view(b, s, nkv, d).transpose(1, 2)
        c, sn = cos.to(q.dtype), sin.to(q.dtype)
        q, k = q * c + rotate_half(q) * sn, k * c + rotate_half(k) * sn
        a = attend(q, k, v, mask, window).transpose(1, 2).reshape(b, s, nh * d)
        x = x + lin("self_attn.o_proj", a)
        h = rms_norm(x, p[pre + "post_attention_layernorm.weight"], eps)
        x = x + lin("mlp.down_proj", F.silu(lin("mlp.gate_proj", h)) * lin("mlp.up_proj", h))
    x = rms_norm(x, p["model.norm.weight"], eps)
    head = p["model.embed_tokens.weight"] if config["tie_word_embeddings"] else p["lm_head.weight"]
    return F.linear(x, head)


def gpt2_forward(config, p, ids):
    b, s = ids.shape
    c, nh, eps = config["n_embd"], config["n_head"], config["layer_norm_epsilon"]
    d = c // nh
    pos = torch.arange(s, device=ids.device)
    x = F.embedding(ids, p["transformer.wte.weight"]) + F.embedding(pos, p["transformer.wpe.weight"])
    mask = attention_mask(s, 0, ids.device)

    def conv1d(name, t):  # transformers' Conv1D: t @ W + b, W [in, out]
        return torch.addmm(p[name + ".bias"], t.reshape(-1, t.shape[-1]), p[name + ".weight"]).view(
            *t.shape[:-1], -1)

    def ln(name, t):
        return F.layer_norm(t, (c,), p[name + ".weight"], p[name + ".bias"], eps)

    for i in range(config["n_layer"]):
        pre = f"transformer.h.{i}."
        q, k, v = conv1d(pre + "attn.c_attn", ln(pre + "ln_1", x)).split(c, dim=-1)
        q, k, v = (t.view(b, s, nh, d).transpose(1, 2) for t in (q, k, v))
        a = attend(q, k, v, mask, 0).transpose(1, 2).reshape(b, s, c)
        x = x + conv1d(pre + "attn.c_proj", a)
        h = F.gelu(conv1d(pre + "mlp.c_fc", ln(pre + "ln_2", x)), approximate="tanh")
        x = x + conv1d(pre + "mlp.c_proj", h)
    return F.linear(ln("transformer.ln_f", x), p["transformer.wte.weight"])


def forward(config, params, ids):
    """Logits [B, S, V] of the model `config` with parameters `params` ({HF name: tensor})."""
    if config["model_type"] == "gpt2":
        return gpt2_forward(config, params, ids)
    return llama_like_forward(config, params, ids)


def loss(config, params, inputs, targets):
    """Mean next-token cross-entropy, computed in f32 as transformers does (targets already shifted)."""
    logits = forward(config, params, inputs).float()
    return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))
