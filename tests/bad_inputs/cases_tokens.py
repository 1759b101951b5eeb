"""Bad token files (.bin from `zerotrain data prepare`), given to `zerotrain train --data`: every
header field, truncated and overlong files, token ids at or above the file's or the model's
vocabulary (checked before the first step, naming the file, the offset and the id), and version 2
files whose flags section is missing, truncated or holds bad flags ([Note: token flags])."""
import os
import struct

from case import Case
from fixtures import TRAIN_FLAGS, token_file


def tokens_case(name, data, expect, data_path="{d}/t.bin", setup=None, rc=1, extra=()):
    files = {"t.bin": data} if data is not None else {}
    return Case(name=f"tokens_{name}", family="tokens",
                argv=["train", "--model", "{model}", "--data", data_path, "--out", "{d}/out"] +
                TRAIN_FLAGS + list(extra), files=files, expect=expect, setup=setup, rc=rc)


def good_tokens(n=512):
    return [(k * 7) % 64 for k in range(n)]


def with_token(index, value, n=512, token_bytes=2, vocab=64):
    t = good_tokens(n)
    t[index] = value
    return token_file(t, token_bytes=token_bytes, vocab_size=vocab)


def v2_file(flags=None, tokens=None, num_documents=2, flags_offset=None, cut=0):
    """A version 2 token file: tokens, then a flags byte per token (two documents by default)."""
    tokens = good_tokens() if tokens is None else tokens
    if flags is None:
        flags = [1] * len(tokens)
        flags[0] = flags[256] = 2
    offset = 64 + 2 * len(tokens) if flags_offset is None else flags_offset
    reserved = struct.pack("<Q", offset) + b"\0" * 8
    data = token_file(tokens, version=2, num_documents=num_documents, reserved=reserved) + bytes(flags)
    return data[:len(data) - cut]


def v2_cases():
    unknown = [1] * 512
    unknown[0], unknown[256], unknown[300] = 2, 2, 0x81
    no_start = [1] * 512
    counting_start = [1] * 512
    counting_start[0], counting_start[256] = 2, 3
    no_target = [0] * 512
    no_target[0] = no_target[256] = 2
    return [
        # A decision (issue 37): a loss over no counted target is 0 at every step; refused.
        tokens_case("v2_no_counted_target", v2_file(no_target),
                    "no token counts as a target (every token is a prompt, system or user token)"),
        tokens_case("v2_flags_missing", token_file(version=2),
                    "num_tokens: 512 tokens of 2 bytes and a flags byte, but the file has 1024"),
        tokens_case("v2_flags_truncated", v2_file(cut=5),
                    "num_tokens: 512 tokens of 2 bytes and a flags byte, but the file has 1531"),
        tokens_case("v2_flags_offset", v2_file(flags_offset=64), "flags_offset: expected 1088 (the end of the tokens), got 64"),
        tokens_case("v2_unknown_flag_bits", v2_file(unknown),
                    "flags of token 300 (byte offset 1388) are 0x81: unknown bits (known: 0x03)"),
        tokens_case("v2_first_token_not_a_start", v2_file(no_start),
                    "flags of token 0 (byte offset 1088) are 0x01: the first token must start"),
        tokens_case("v2_start_counts", v2_file(counting_start),
                    "token 256 (byte offset 1344) are 0x03: a document's first token cannot count"),
        tokens_case("v2_document_count", v2_file(num_documents=3),
                    "num_documents: the header says 3, the flags start 2 documents"),
    ]


def cases():
    good = token_file()
    out = [
        tokens_case("empty", b"", "0 bytes, shorter than the 64-byte header"),
        tokens_case("short", good[:63], "63 bytes, shorter than the 64-byte header"),
        tokens_case("bad_magic", b"GPT2TOKS" + good[8:], 'magic: expected "ZTTOKENS"'),
        tokens_case("raw_magic", b"\x1b[2J\x07\x00\xff\xfe" + good[8:],
                    r'magic: expected "ZTTOKENS", got "\x1b[2J\x07\x00\xff\xfe"'),
        tokens_case("text_file", b"In the beginning God created the heaven and the earth. " * 4,
                    'magic: expected "ZTTOKENS"'),
        tokens_case("numpy_file", b"\x93NUMPY\x01\x00" + b"v" * 120, 'magic: expected "ZTTOKENS"'),
        tokens_case("directory", None, "--data: File is actually a directory", rc=2, data_path="{d}/dir",
                    setup=lambda d, fx: os.makedirs(os.path.join(d, "dir"))),
        tokens_case("missing", None, "--data: File does not exist", rc=2,
                    data_path="{d}/absent.bin"),
        tokens_case("dangling_symlink", None, "--data: File does not exist", rc=2,
                    data_path="{d}/link.bin",
                    setup=lambda d, fx: os.symlink("gone.bin", os.path.join(d, "link.bin"))),
        tokens_case("truncated", good[:-3], "num_tokens: 512 tokens of 2 bytes"),
        tokens_case("overlong", good + b"\0\0", "num_tokens: 512 tokens of 2 bytes"),
        tokens_case("odd_trailing_byte", good + b"\0", "num_tokens"),
        tokens_case("num_tokens_2_63", token_file(num_tokens=2**63), "num_tokens: 9223372036854775808"),
        tokens_case("num_tokens_all_ones", token_file(num_tokens=2**64 - 1), "num_tokens"),
        tokens_case("num_tokens_wraps_times_4", token_file(good_tokens(), token_bytes=4,
                                                           num_tokens=2**62 + 512), "num_tokens"),
        tokens_case("num_tokens_zero", token_file(num_tokens=0), "num_tokens: 0 tokens"),
        tokens_case("header_only", token_file([]), "has 0 tokens: 0 sequences of seq_len 16 + 1"),
        tokens_case("too_few_tokens", token_file(good_tokens(20)), "fewer than one step of 2"),
        tokens_case("header_size_2_32_minus_1", token_file(header_size=2**32 - 1), "header_size"),
        tokens_case("header_size_odd", token_file(header_size=65), "header_size"),
        tokens_case("header_size_below_64", token_file(header_size=32), "header_size"),
        tokens_case("header_size_zero", token_file(header_size=0), "header_size"),
        tokens_case("header_size_past_file", token_file(header_size=4096), "header_size"),
        tokens_case("vocab_zero", token_file(vocab_size=0), "vocab_size: must be positive, got 0"),
        tokens_case("vocab_2_63_two_bytes", token_file(vocab_size=2**63),
                    "token_bytes: 2-byte tokens cannot hold vocab_size 9223372036854775808"),
        tokens_case("vocab_2_63_four_bytes", token_file(good_tokens(), token_bytes=4,
                                                        vocab_size=2**63),
                    "has vocab size 9223372036854775808 but the model's vocab_size is 64"),
        tokens_case("vocab_above_model", token_file(vocab_size=65),
                    "has vocab size 65 but the model's vocab_size is 64"),
        tokens_case("eos_at_vocab", token_file(eos_id=64), "eos_id: 64 is not below vocab_size 64"),
        tokens_case("eos_2_31", token_file(eos_id=2**31), "eos_id: 2147483648 is not below"),
        tokens_case("first_token_at_vocab", with_token(0, 64),
                    "token 0 (byte offset 64) is 64, not below vocab_size 64"),
        tokens_case("last_token_65535", with_token(511, 65535),
                    "token 511 (byte offset 1086) is 65535, not below vocab_size 64"),
        tokens_case("middle_token_above_model", with_token(300, 100, vocab=64),
                    "token 300 (byte offset 664) is 100, not below vocab_size 64"),
        tokens_case("four_byte_token_2_32_minus_1", with_token(17, 2**32 - 1, token_bytes=4),
                    "token 17 (byte offset 132) is 4294967295"),
        tokens_case("two_bad_tokens_first_named", token_file(
            [0] * 100 + [70] + [0] * 100 + [99] + [0] * 310), "token 100 (byte offset 264) is 70"),
    ]
    for v in (0, 3, 0xFFFFFFFF):
        out.append(tokens_case(f"version_{v}", token_file(version=v),
                               f"version: expected 1 or 2, got {v}"))
    out += v2_cases()
    for tb in (0, 1, 3, 8, 0xFFFFFFFF):
        out.append(tokens_case(f"token_bytes_{tb}", token_file(token_bytes=tb, num_tokens=512) +
                               b"\0" * 1024, f"token_bytes: expected 2 or 4, got {tb}"))
    return out
