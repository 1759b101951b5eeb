"""Model directories and --model paths without loadable weights (issue 17's silent fallback): a
directory is its weights or an error naming what it holds, never a silent random init."""
import os
import shutil
import struct

from case import Case
from fixtures import TINY_CONFIG, TRAIN_FLAGS, dumps, st_file, st_tensors, tiny_tensors, tiny_weights


def dir_case(name, expect, files=None, setup=None, model="{d}/m", extra=(), rc=1):
    base = {"m/config.json": dumps(TINY_CONFIG)}
    base.update(files or {})
    return Case(name=f"model_{name}", family="model_dir",
                argv=["train", "--model", model, "--data", "{tokens}", "--out", "{d}/out"] +
                TRAIN_FLAGS + list(extra), files=base, expect=expect, setup=setup, rc=rc)


def link(name, target):
    return lambda d, fx: os.symlink(target, os.path.join(d, "m", name))


def mkdir(name):
    return lambda d, fx: os.makedirs(os.path.join(d, "m", name))


def generate_case(name, expect, files, max_new_tokens="2", prompt="a"):
    """`zerotrain generate` over the tiny model with its tokenizer and the given extra files."""
    base = {"m/config.json": dumps(TINY_CONFIG), "m/model.safetensors": tiny_weights()}
    base.update(files)

    def setup(d, fx):
        shutil.copy(fx.tokenizer, os.path.join(d, "m", "tokenizer.json"))
    return Case(name=f"model_{name}", family="model_dir",
                argv=["generate", "--model", "{d}/m", "--prompt", prompt, "--max-new-tokens",
                      max_new_tokens, "--device", "cpu"], files=base, expect=expect, setup=setup)


def weights_with_a_nan(name):
    """The tiny model's weights with the first element of `name` set to NaN."""
    tensors = [(n, dt, shape, struct.pack("<f", float("nan")) + raw[4:] if n == name else raw)
               for n, dt, shape, raw in tiny_tensors()]
    header, data = st_tensors(tensors, {"format": "pt"})
    return st_file(header, data)


def cases():
    w = tiny_weights()
    return [
        # A decision (issue 37): no scan at load; a non-finite first loss names the tensor.
        dir_case("nan_weight", "parameter model.layers.0.mlp.down_proj.weight holds NaN or Inf",
                 files={"m/model.safetensors":
                        weights_with_a_nan("model.layers.0.mlp.down_proj.weight")}),
        generate_case("generation_config_list", "generation_config.json: the file: expected a JSON "
                      "object", {"m/generation_config.json": "[1, 2]"}),
        generate_case("max_new_tokens_1e12", "max_new_tokens 1000000000000 needs a KV cache", {},
                      max_new_tokens="1000000000000", prompt="!"),  # "!": an id below 64
        generate_case("tokenizer_config_string", "tokenizer_config.json: the file: expected a JSON "
                      "object", {"m/tokenizer_config.json": '"add_bos_token"'}),
        dir_case("no_weights", "it holds no weight files"),
        dir_case("dangling_symlink", "a dangling symlink",
                 setup=link("model.safetensors", "../../blobs/3f2a")),
        dir_case("dangling_index_symlink", "a dangling symlink",
                 setup=link("model.safetensors.index.json", "../../blobs/77aa")),
        dir_case("pytorch_bin_only", "PyTorch weights (zerotrain reads safetensors only)",
                 files={"m/pytorch_model.bin": b"PK\x03\x04"}),
        dir_case("pt_only", "PyTorch weights", files={"m/model.pt": b"\x80\x02"}),
        dir_case("lone_shard", "a shard without model.safetensors.index.json",
                 files={"m/model-00001-of-00001.safetensors": w}),
        dir_case("misspelled_safetensor", 'not named model.safetensors',
                 files={"m/model.safetensor": w}),
        dir_case("other_safetensors_name", "not named model.safetensors",
                 files={"m/weights.safetensors": w}),
        dir_case("tf_h5", "a format zerotrain does not read", files={"m/tf_model.h5": b"\x89HDF"}),
        dir_case("flax_msgpack", "a format zerotrain does not read",
                 files={"m/flax_model.msgpack": b"\x80"}),
        dir_case("gguf", "a format zerotrain does not read", files={"m/model.gguf": b"GGUF"}),
        dir_case("weights_is_directory", "not a regular file", setup=mkdir("model.safetensors")),
        dir_case("many_weight_files", "and 2 more",
                 files={f"m/pytorch_model-0000{k}-of-00008.bin": b"" for k in range(1, 9)}),
        dir_case("raw_bytes_in_name", "PyTorch weights",
                 files={"m/\x1b[31mmodel\x07.bin": b""}),
        dir_case("no_config", "no model config at", files={"m/model.safetensors": w},
                 setup=lambda d, fx: os.remove(os.path.join(d, "m", "config.json"))),
        dir_case("config_is_directory", "no model config at", files={"m/model.safetensors": w},
                 setup=lambda d, fx: (os.remove(os.path.join(d, "m", "config.json")),
                                      os.makedirs(os.path.join(d, "m", "config.json")))),
        dir_case("missing_path", "no model config at", model="{d}/absent"),
        dir_case("init_pretrained_config_file", "is a config file, which holds no weights",
                 model="{d}/m/config.json", extra=["--init", "pretrained"]),
        dir_case("init_bogus", "--init: bogus not in {pretrained,random}", extra=["--init", "bogus"],
                 rc=2),
        dir_case("model_is_weights_file", "not valid JSON", files={"m/model.safetensors": w},
                 model="{d}/m/model.safetensors"),
        dir_case("model_is_token_file", "not valid JSON", model="{tokens}"),
    ]
