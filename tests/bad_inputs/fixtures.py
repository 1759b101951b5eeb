"""Valid inputs the bad-input cases start from, written with the standard library only: a tiny
Llama (config.json + model.safetensors), a token file for it, a tokenizer and a text, and the
byte-level builders the cases use to break them (safetensors files from a header object, token
file headers field by field). tools/bad_input_corpus.py writes them once per run into a shared
directory; the base checkpoint is made there by zerotrain itself (one training step).
"""
import copy
import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TINY_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "vocab_size": 64,
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 64,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "tie_word_embeddings": True,
    "torch_dtype": "float32",
}

# What every `train` case adds: small, one step, on the CPU.
TRAIN_FLAGS = ["--device", "cpu", "--steps", "1", "--seq-len", "16", "--micro-batch", "2",
               "--log-every", "1"]

def with_flags(argv, extra):
    """argv with the flags of `extra` ("--flag", value pairs): a flag argv already holds gets the
    new value in place (a flag given twice is its own command-line error), others are added."""
    argv = list(argv)
    extra = list(extra)
    for k in range(0, len(extra) - 1, 2):
        flag, value = extra[k], extra[k + 1]
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    return argv


def tiny_config(**changes):
    """TINY_CONFIG with keys set to new values; a key spelled "-name" (value None) is removed."""
    c = copy.deepcopy(TINY_CONFIG)
    for k, v in changes.items():
        if v is None and k.startswith("-"):
            c.pop(k[1:], None)
        else:
            c[k] = v
    return c


def tiny_shapes(config=TINY_CONFIG):
    """The parameter names and shapes of the tiny Llama, in Hugging Face layout (tied head)."""
    v, h, i = config["vocab_size"], config["hidden_size"], config["intermediate_size"]
    kv = config["num_key_value_heads"] * h // config["num_attention_heads"]
    shapes = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h]}
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        shapes.update({
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
            p + "self_attn.q_proj.weight": [h, h],
            p + "self_attn.k_proj.weight": [kv, h],
            p + "self_attn.v_proj.weight": [kv, h],
            p + "self_attn.o_proj.weight": [h, h],
            p + "mlp.gate_proj.weight": [i, h],
            p + "mlp.up_proj.weight": [i, h],
            p + "mlp.down_proj.weight": [h, i],
        })
    return shapes


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def f32_values(n, seed):
    """n small deterministic f32 values, little-endian."""
    return struct.pack(f"<{n}f", *[((k * 37 + seed * 11) % 17 - 8) * 0.01 for k in range(n)])


def st_file(header, data, pad=True):
    """A safetensors file from a header object (dict, written as given) and the data section."""
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def st_tensors(tensors, metadata=None):
    """(header, data) of named tensors [(name, dtype, shape, bytes)] laid out contiguously."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    return header, data


def tiny_tensors(config=TINY_CONFIG, skip=(), dtype="F32"):
    out = []
    for k, (name, shape) in enumerate(sorted(tiny_shapes(config).items())):
        if name in skip:
            continue
        raw = f32_values(numel(shape), k)
        if dtype == "BF16":
            raw = b"".join(raw[j + 2:j + 4] for j in range(0, len(raw), 4))
        out.append((name, dtype, shape, raw))
    return out


def tiny_weights(config=TINY_CONFIG, **kw):
    header, data = st_tensors(tiny_tensors(config, **kw), {"format": "pt"})
    return st_file(header, data)


def token_header(version=1, token_bytes=2, vocab_size=64, num_tokens=None, num_documents=1,
                 header_size=64, eos_id=0xFFFFFFFF, magic=b"ZTTOKENS", reserved=b"\0" * 16):
    return (magic + struct.pack("<II", version, token_bytes) +
            struct.pack("<QQQ", vocab_size, num_tokens, num_documents) +
            struct.pack("<II", header_size, eos_id) + reserved)


def token_file(tokens=None, **header):
    """A token file: the 64-byte header (fields as token_header's) and uint16/uint32 tokens."""
    if tokens is None:
        tokens = [(k * 7) % 64 for k in range(512)]
    tb = header.get("token_bytes", 2)
    header.setdefault("num_tokens", len(tokens))
    body = struct.pack(f"<{len(tokens)}{'H' if tb == 2 else 'I'}", *tokens) if tb in (2, 4) else b""
    return token_header(**header) + body


def tokenizer_base(which="small_bpe"):
    with open(os.path.join(ROOT, "tests/fixtures/tokenizer", which, "tokenizer.json")) as f:
        return json.load(f)


def dumps(obj):
    return json.dumps(obj, indent=1)


class Fixtures:
    """The shared valid inputs of one corpus run, under `root`."""

    def __init__(self, root):
        self.root = root
        self.model = os.path.join(root, "model")
        self.config = os.path.join(self.model, "config.json")
        self.tokens = os.path.join(root, "tokens.bin")
        self.tokenizer = os.path.join(ROOT, "tests/fixtures/tokenizer/small_bpe/tokenizer.json")
        self.text = os.path.join(root, "text.txt")
        self.ckpt = os.path.join(root, "base_run", "checkpoints", "step-00000001")
        self.ckpt16 = os.path.join(root, "base_run_f16", "checkpoints", "step-00000001")

    def write(self):
        os.makedirs(self.model, exist_ok=True)
        with open(self.config, "w") as f:
            f.write(dumps(TINY_CONFIG))
        with open(os.path.join(self.model, "model.safetensors"), "wb") as f:
            f.write(tiny_weights())
        with open(self.tokens, "wb") as f:
            f.write(token_file())
        with open(self.text, "w") as f:
            f.write("In the beginning was the word.\nAnd the word was short.\n")

    def base_run_argv(self, dtype="f32"):
        """The training run whose checkpoint the checkpoint cases start from (f16: with a loss
        scaler's state)."""
        out = os.path.join(self.root, "base_run" if dtype == "f32" else "base_run_" + dtype)
        return ["train", "--model", self.model, "--data", self.tokens, "--out", out,
                "--dtype", dtype] + TRAIN_FLAGS

    def placeholders(self, case_dir):
        return {"d": case_dir, "model": self.model, "config": self.config, "tokens": self.tokens,
                "tokenizer": self.tokenizer, "text": self.text, "ckpt": self.ckpt, "ckpt16": self.ckpt16, "repo": ROOT}
