"""Inputs that are not regular files (issue 37): a FIFO or a device given as a token file, a
tokenizer, model weights, a ds_config or a checkpoint shard. Opening a FIFO blocks until a writer
comes and /dev/zero never ends, so each must be refused in one line before it is opened
(core/files.h: non_regular_kind)."""
import os
import shutil

from case import Case
from cases_checkpoint import RESUME_FLAGS, SHARD
from fixtures import TRAIN_FLAGS

TRAIN = ["train", "--model", "{config}", "--data", "{tokens}", "--out", "{d}/out"] + TRAIN_FLAGS


def fifo(rel):
    def setup(d, fx):
        os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
        os.mkfifo(os.path.join(d, rel))
    return setup


def special_case(name, argv, expect, setup=None, files=None):
    return Case(name=f"special_{name}", family="special_files", argv=argv, expect=expect,
                files=files or {}, setup=setup)


def model_with_fifo_weights(d, fx):
    os.makedirs(os.path.join(d, "m"))
    shutil.copy(os.path.join(fx.model, "config.json"), os.path.join(d, "m", "config.json"))
    os.mkfifo(os.path.join(d, "m", "model.safetensors"))


def checkpoint_with_fifo_shard(d, fx):
    shutil.copytree(fx.ckpt, os.path.join(d, "ck"))
    shard = os.path.join(d, "ck", SHARD)
    os.remove(shard)
    os.mkfifo(shard)


def cases():
    return [
        special_case("data_fifo", [a if a != "{tokens}" else "{d}/tokens.bin" for a in TRAIN],
                     "tokens.bin: a FIFO, not a regular file", fifo("tokens.bin")),
        special_case("data_dev_zero", [a if a != "{tokens}" else "/dev/zero" for a in TRAIN],
                     "/dev/zero: a character device, not a regular file"),
        special_case("tokenizer_fifo", ["data", "prepare", "--tokenizer", "{d}/tokenizer.json",
                                        "--input", "{text}", "--output", "{d}/out.bin"],
                     "the tokenizer file is a FIFO, not a regular file", fifo("tokenizer.json")),
        special_case("weights_fifo", ["train", "--model", "{d}/m", "--data", "{tokens}", "--out",
                                      "{d}/out"] + TRAIN_FLAGS,
                     '"model.safetensors", not a regular file', model_with_fifo_weights),
        special_case("ds_config_fifo", TRAIN + ["--deepspeed", "{d}/ds.json"],
                     "ds.json is a FIFO, not a regular file", fifo("ds.json")),
        special_case("config_check_fifo", ["config", "check", "{d}/ds.json"],
                     "ds.json is a FIFO, not a regular file", fifo("ds.json")),
        special_case("resume_shard_fifo", ["train", "--model", "{model}", "--data", "{tokens}",
                                           "--out", "{d}/out", "--resume", "{d}/ck"] + RESUME_FLAGS,
                     "is a FIFO, not a regular file", checkpoint_with_fifo_shard),
    ]
