"""Bad model.safetensors files in a model directory, loaded by `zerotrain train`: the header length,
the JSON text, each entry's dtype / shape / data_offsets, the layout of the data section, the
metadata, and tensors the model needs that are missing or have the wrong shape."""
import json
import struct

from case import Case
from fixtures import (TINY_CONFIG, TRAIN_FLAGS, dumps, st_file, st_tensors, tiny_shapes,
                      tiny_tensors, tiny_weights)

EMBED = "model.embed_tokens.weight"


def weights_case(name, weights, expect, config=TINY_CONFIG):
    return Case(name=f"st_{name}", family="safetensors",
                argv=["train", "--model", "{d}/m", "--data", "{tokens}", "--out", "{d}/out"] +
                TRAIN_FLAGS,
                files={"m/config.json": dumps(config), "m/model.safetensors": weights},
                expect=expect)


def header_with(entry_changes=None, extra=None, metadata={"format": "pt"}, drop=()):
    """The tiny model's header and data with the embedding's entry changed or keys added."""
    header, data = st_tensors(tiny_tensors(), metadata)
    for key in drop:
        header[EMBED].pop(key)
    if entry_changes is not None:
        header[EMBED].update(entry_changes)
    if extra:
        header.update(extra)
    return header, data


def with_entry(**changes):
    header, data = header_with(changes)
    return st_file(header, data)


def raw_header(text, data=b""):
    return struct.pack("<Q", len(text)) + text + data


def cases():
    good = tiny_weights()
    header, data = st_tensors(tiny_tensors(), {"format": "pt"})
    text = json.dumps(header).encode()
    out = [
        weights_case("empty_file", b"", "too few for the 8-byte header length"),
        weights_case("seven_bytes", b"\x10\0\0\0\0\0\0", "too few for the 8-byte header length"),
        weights_case("header_length_2_63", struct.pack("<Q", 2**63) + good[8:],
                     "exceeds the 100000000-byte limit"),
        weights_case("header_length_all_ones", b"\xff" * 8 + good[8:],
                     "exceeds the 100000000-byte limit"),
        weights_case("header_length_past_file", struct.pack("<Q", 99_999_999) + good[8:],
                     "exceeds the file"),
        weights_case("header_length_limit_plus_one", struct.pack("<Q", 100_000_001) + good[8:],
                     "exceeds the 100000000-byte limit"),
        weights_case("header_length_zero", struct.pack("<Q", 0) + good[8:], "not valid JSON"),
        weights_case("header_length_short", struct.pack("<Q", 20) + good[8:], "not valid JSON"),
        weights_case("header_not_json", raw_header(b"hello, world!   "), "not valid JSON"),
        weights_case("header_array", raw_header(b"[1, 2, 3]       "), "expected a JSON object"),
        weights_case("header_string", raw_header(b'"model"         '), "expected a JSON object"),
        weights_case("header_number", raw_header(b"12345678"), "expected a JSON object"),
        weights_case("header_null", raw_header(b"null    "), "expected a JSON object"),
        weights_case("header_nul_padded", raw_header(text + b"\0" * 8, data), "a NUL byte"),
        weights_case("header_nul_inside", raw_header(text[:10] + b"\0" + text[11:], data),
                     "a NUL byte"),
        weights_case("header_deep_arrays", raw_header(b"[" * 70000 + b"]" * 70000),
                     "nested deeper than 64 levels"),
        weights_case("header_deep_objects",
                     raw_header(b'{"a":' * 5000 + b"1" + b"}" * 5000), "nested deeper than 64"),
        weights_case("header_duplicate_tensor",
                     raw_header(text[:-1] + b', "model.norm.weight": {}}', data),
                     "appears more than once"),
        weights_case("header_invalid_utf8",
                     raw_header(b'{"\xff\xfe": {"dtype": "F32"}}' + b" " * 5), "not valid JSON"),
        weights_case("header_control_bytes",
                     raw_header(b'{"a\x01\x02": 1}' + b" " * 3), "not valid JSON"),
        weights_case("header_cut_short", raw_header(text[:len(text) // 2]), "not valid JSON"),
        weights_case("header_trailing_garbage", raw_header(text + b" xyz", data),
                     "not valid JSON"),
        weights_case("data_truncated", good[:-10], "truncated file?"),
        weights_case("data_truncated_to_header", good[:8 + struct.unpack("<Q", good[:8])[0]],
                     "truncated file?"),
        weights_case("data_trailing_bytes", good + b"\0" * 12, "trailing bytes"),
        weights_case("entry_not_object", st_file(*header_with(extra={"x.weight": 5})),
                     "expected an object"),
        weights_case("entry_array", st_file(*header_with(extra={"x.weight": []})),
                     "expected an object"),
        weights_case("metadata_not_object", st_file(*header_with(metadata=[1])),
                     "__metadata__: expected an object"),
        weights_case("metadata_value_number", st_file(*header_with(metadata={"format": 5})),
                     "__metadata__ key \"format\": expected a string"),
        weights_case("metadata_value_null", st_file(*header_with(metadata={"step": None})),
                     "__metadata__ key \"step\": expected a string"),
        weights_case("metadata_value_object", st_file(*header_with(metadata={"a": {"b": 1}})),
                     "__metadata__ key \"a\": expected a string"),
        weights_case("overlap",
                     st_file(*header_with({"data_offsets": [4, 4 + 64 * 16 * 4]})),
                     "overlap"),
        weights_case("gap_and_short", st_file(*header_with({"data_offsets": [8, 8 + 64 * 16 * 4]})),
                     "data_offsets"),
        weights_case("name_with_raw_bytes",
                     st_file(*st_tensors([(n.replace("embed", "e\x01\x7fmbed"), d, s, r)
                                          for n, d, s, r in tiny_tensors()])),
                     "the checkpoint lacks 1 tensor(s) the model needs: " + EMBED),
        weights_case("name_long", st_file(*st_tensors([(n if n != EMBED else "x" * 100000, d, s, r)
                                                       for n, d, s, r in tiny_tensors()])),
                     "the checkpoint lacks 1 tensor(s) the model needs: " + EMBED),
        weights_case("empty_header_object", raw_header(b"{}      "),
                     "the checkpoint lacks 11 tensor(s)"),
        weights_case("only_metadata", st_file({"__metadata__": {"format": "pt"}}, b""),
                     "the checkpoint lacks 11 tensor(s)"),
    ]
    for key in ("dtype", "shape", "data_offsets"):
        out.append(weights_case(f"entry_missing_{key}", st_file(*header_with(drop=(key,))),
                                f'missing "{key}"'))
    for label, value in [("number", 5), ("null", None), ("array", ["F32"]), ("object", {})]:
        out.append(weights_case(f"dtype_{label}", with_entry(dtype=value),
                                "dtype: expected a string"))
    for label, value in [("f8", "F8"), ("lowercase", "f32"), ("empty", ""), ("fp32", "fp32"),
                         ("control", "F\x00\x1b32"), ("long", "F" * 5000)]:
        out.append(weights_case(f"dtype_unknown_{label}", with_entry(dtype=value),
                                "unknown dtype"))
    for label, value, expect in [
            ("not_array", 5, "shape: expected an array"),
            ("string", "64,16", "shape: expected an array"),
            ("null", None, "shape: expected an array"),
            ("negative", [-64, 16], "shape: expected a non-negative integer"),
            ("float", [64.0, 16], "shape: expected a non-negative integer"),
            ("string_dim", ["64", 16], "shape: expected a non-negative integer"),
            ("nested", [[64], 16], "shape: expected a non-negative integer"),
            ("bool", [True, 16], "shape: expected a non-negative integer"),
            ("dim_2_63", [2**63, 1], "overflows 64 bits"),
            ("dim_2_64_minus_1", [2**64 - 1], "overflows 64 bits"),
            ("product_overflow", [2**32, 2**32, 16], "overflows 64 bits"),
            ("bytes_overflow", [2**62, 1], "overflows 64 bits"),
            ("wrong_numel", [64, 15], "hold 4096 bytes but F32 [64, 15] needs 3840"),
            ("zero_dim", [0, 16], "hold 4096 bytes but F32 [0, 16] needs 0"),
            ("scalar", [], "hold 4096 bytes but F32 [] needs 4")]:
        out.append(weights_case(f"shape_{label}", with_entry(shape=value), expect))
    for label, value, expect in [
            ("not_array", 5, "data_offsets: expected [begin, end]"),
            ("one", [0], "data_offsets: expected [begin, end]"),
            ("three", [0, 4096, 8192], "data_offsets: expected [begin, end]"),
            ("null", None, "data_offsets: expected [begin, end]"),
            ("negative", [-4096, 0], "data_offsets: expected a non-negative integer"),
            ("float", [0.0, 4096], "data_offsets: expected a non-negative integer"),
            ("string", ["0", 4096], "data_offsets: expected a non-negative integer"),
            ("end_before_begin", [4096, 0], "end before they begin"),
            ("huge", [2**64 - 4096, 2**64 - 1], "hold"),
            ("past_file", [10**12, 10**12 + 4096], "the data is not contiguous"),
            ("size_mismatch", [0, 4092], "hold 4092 bytes but F32 [64, 16] needs 4096")]:
        out.append(weights_case(f"offsets_{label}", with_entry(data_offsets=value), expect))
    # Each tensor the model needs, missing or with another shape.
    for k, (name, shape) in enumerate(sorted(tiny_shapes().items())):
        tag = name.replace("model.", "").replace("layers.0.", "l0_").replace(".weight", "")
        tag = tag.replace(".", "_")
        out.append(weights_case(f"missing_{tag}", tiny_weights(skip=(name,)),
                                f"the checkpoint lacks 1 tensor(s) the model needs: {name}"))
        bad = [(n, d, (s[:-1] + [s[-1] + 1]) if n == name else s,
                r + b"\0" * 4 * (len(r) // 4 // s[-1]) if n == name else r)
               for n, d, s, r in tiny_tensors()]
        out.append(weights_case(f"shape_of_{tag}", st_file(*st_tensors(bad)),
                                f"{name}: the checkpoint has"))
    return out
