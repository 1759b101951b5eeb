"""Bad tokenizer.json files, read by `zerotrain data prepare`: the JSON itself, the BPE model
(vocabulary ids, merges, unk token, options it does not implement), added tokens, and the pipeline
stages of the byte-level and SentencePiece-style families; plus --eos-token and inputs."""
import copy
import json

from case import Case
from fixtures import tokenizer_base

BYTE_LEVEL = tokenizer_base("small_bpe")
SENTENCEPIECE = tokenizer_base("sp_bpe")


def tok_case(name, tokenizer, expect, extra=(), rc=1, text_input="{text}", output="{d}/out.bin"):
    text = tokenizer if isinstance(tokenizer, (str, bytes)) else json.dumps(tokenizer)
    return Case(name=f"tok_{name}", family="tokenizer",
                argv=["data", "prepare", "--tokenizer", "{d}/tokenizer.json", "--input", text_input,
                      "--output", output, "--quiet"] + list(extra),
                files={"tokenizer.json": text}, expect=expect, rc=rc)


def changed(change, base=BYTE_LEVEL):
    t = copy.deepcopy(base)
    change(t)
    return t


def set_at(path, value, base=BYTE_LEVEL):
    def change(t):
        node = t
        for key in path[:-1]:
            node = node[key]
        if value is DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return changed(change, base)


DELETE = object()


def first_vocab_token(t):
    return next(iter(t["model"]["vocab"]))


def cases():
    bl, sp = BYTE_LEVEL, SENTENCEPIECE
    tok0 = first_vocab_token(bl)
    vocab_json = json.dumps(bl)
    out = [
        tok_case("empty", "", "not valid JSON"),
        tok_case("not_json", "tokenizer: bpe", "not valid JSON"),
        tok_case("binary", b"\x89PNG\r\n\x1a\n\x00\x00", "not valid JSON"),
        tok_case("array", "[]", "(top level): expected an object"),
        tok_case("deep", "[" * 70000 + "]" * 70000, "nested deeper than 64 levels"),
        tok_case("deep_inside", vocab_json[:-1] + ', "x": ' + "{\"a\":" * 100 + "1" + "}" * 101,
                 "nested deeper than 64 levels"),
        tok_case("duplicate_top_key", vocab_json[:-1] + ', "model": {}}',
                 'the key "model" appears more than once'),
        tok_case("duplicate_vocab_key", vocab_json.replace('"vocab": {', '"vocab": {"zz": 5, "zz": 6, ', 1),
                 'the key "zz" appears more than once'),
        tok_case("truncated", vocab_json[:len(vocab_json) // 2], "not valid JSON"),
        tok_case("invalid_utf8", vocab_json.encode().replace(b'"vocab": {', b'"vocab": {"\xff\xfe": 9999, ', 1),
                 "not valid JSON"),
        tok_case("no_model", set_at(["model"], DELETE), "model: missing"),
        tok_case("model_array", set_at(["model"], []), "model: expected an object"),
        tok_case("model_type_wordpiece", set_at(["model", "type"], "WordPiece"),
                 'model.type: expected "BPE", got "WordPiece"'),
        tok_case("model_type_number", set_at(["model", "type"], 1), "model.type: expected a string"),
        tok_case("model_type_raw_bytes", set_at(["model", "type"], "\x1b[2J\x07"),
                 "model.type: expected \"BPE\""),
        tok_case("no_vocab", set_at(["model", "vocab"], DELETE), "model.vocab: missing"),
        tok_case("vocab_array", set_at(["model", "vocab"], ["a"]), "model.vocab: expected an object"),
        tok_case("vocab_id_negative", set_at(["model", "vocab", tok0], -1),
                 "expected a token id (0 to 2^32-1)"),
        tok_case("vocab_id_string", set_at(["model", "vocab", tok0], "5"),
                 "expected a token id (0 to 2^32-1)"),
        tok_case("vocab_id_float", set_at(["model", "vocab", tok0], 5.5),
                 "expected a token id (0 to 2^32-1)"),
        tok_case("vocab_id_2_32", set_at(["model", "vocab", tok0], 2**32),
                 "expected a token id (0 to 2^32-1)"),
        tok_case("vocab_id_2_32_minus_1", set_at(["model", "vocab", tok0], 2**32 - 1),
                 "is far above the vocabulary's"),
        tok_case("vocab_id_2_21", set_at(["model", "vocab", tok0], 2**21),
                 "is far above the vocabulary's"),
        tok_case("vocab_id_repeated", changed(lambda t: t["model"]["vocab"].update({"zzq": 5})),
                 "id 5 is also the id of"),
        tok_case("vocab_id_repeated_raw_token", changed(
            lambda t: t["model"]["vocab"].update({"\x1b]0;x\x07": 5})), "id 5 is also the id of"),
        tok_case("vocab_long_token_repeated", changed(
            lambda t: t["model"]["vocab"].update({"q" * 100000: 5})), "id 5 is also the id of"),
        tok_case("no_merges", set_at(["model", "merges"], DELETE), "model.merges: missing"),
        tok_case("merges_object", set_at(["model", "merges"], {}), "model.merges: expected an array"),
        tok_case("merge_number", changed(lambda t: t["model"]["merges"].insert(0, 5)),
                 'model.merges[0]: expected "left right" or [left, right]'),
        tok_case("merge_no_space", changed(lambda t: t["model"]["merges"].insert(0, "ab")),
                 'model.merges[0]: expected "left right" (one space)'),
        tok_case("merge_two_spaces", changed(lambda t: t["model"]["merges"].insert(0, "a b c")),
                 'model.merges[0]: expected "left right" (one space)'),
        tok_case("merge_raw_bytes", changed(lambda t: t["model"]["merges"].insert(0, "\x1b[2J\x07")),
                 'model.merges[0]: expected "left right" (one space)'),
        tok_case("merge_long", changed(lambda t: t["model"]["merges"].insert(0, "x" * 200000)),
                 'model.merges[0]: expected "left right" (one space)'),
        tok_case("merge_three_parts", changed(lambda t: t["model"]["merges"].insert(0, ["a", "b", "c"])),
                 "model.merges[0]: expected"),
        tok_case("merge_pair_numbers", changed(lambda t: t["model"]["merges"].insert(0, [1, 2])),
                 "model.merges[0]: expected"),
        tok_case("merge_unknown_token", changed(lambda t: t["model"]["merges"].insert(0, "zqzq zqzq")),
                 "is not in model.vocab"),
        tok_case("merge_unknown_raw_token", changed(
            lambda t: t["model"]["merges"].insert(0, "\x01\x02 \x03")), "is not in model.vocab"),
        tok_case("dropout", set_at(["model", "dropout"], 0.1), "model.dropout: BPE dropout is not supported"),
        tok_case("subword_prefix", set_at(["model", "continuing_subword_prefix"], "##"),
                 "model.continuing_subword_prefix: not supported"),
        tok_case("word_suffix", set_at(["model", "end_of_word_suffix"], "</w>"),
                 "model.end_of_word_suffix: not supported"),
        tok_case("byte_fallback_byte_level", set_at(["model", "byte_fallback"], True),
                 "model.byte_fallback: byte fallback is not supported by byte-level BPE"),
        tok_case("fuse_unk_string", set_at(["model", "fuse_unk"], "yes"),
                 "model.fuse_unk: expected true or false"),
        tok_case("ignore_merges_number", set_at(["model", "ignore_merges"], 1),
                 "model.ignore_merges: expected true or false"),
        tok_case("unk_token_number", set_at(["model", "unk_token"], 0), "model.unk_token: expected a string"),
        tok_case("unk_token_unknown", set_at(["model", "unk_token"], "<nope>"),
                 "model.unk_token: \"<nope>\" is not in model.vocab"),
        tok_case("unk_token_raw_bytes", set_at(["model", "unk_token"], "\x1b[31m<unk>"),
                 "model.unk_token:"),
        tok_case("added_tokens_object", set_at(["added_tokens"], {}), "added_tokens: expected an array"),
        tok_case("added_token_string", changed(lambda t: t["added_tokens"].append("<x>")),
                 "added_tokens[6]: expected an object"),
        tok_case("added_token_no_id", changed(lambda t: t["added_tokens"].append({"content": "<x>"})),
                 "added_tokens[6].id: missing"),
        tok_case("added_token_no_content", changed(lambda t: t["added_tokens"].append({"id": 4005})),
                 "added_tokens[6].content: missing"),
        tok_case("added_token_id_negative", set_at(["added_tokens", 1, "id"], -4000),
                 "added_tokens[1].id: expected a token id"),
        tok_case("added_token_id_2_32_minus_1", set_at(["added_tokens", 1, "id"], 2**32 - 1),
                 "added_tokens[1].id: id 4294967295 is far above"),
        tok_case("added_token_id_repeated", set_at(["added_tokens", 2, "id"], 4000),
                 "added_tokens[2].id: id 4000 is also the id of added_tokens[1]"),
        tok_case("added_token_content_number", set_at(["added_tokens", 1, "content"], 5),
                 "added_tokens[1].content: expected a string"),
        tok_case("added_token_special_string", set_at(["added_tokens", 1, "special"], "true"),
                 "added_tokens[1].special: expected true or false"),
        tok_case("added_token_lstrip_number", set_at(["added_tokens", 1, "lstrip"], 1),
                 "added_tokens[1].lstrip: expected true or false"),
        tok_case("normalizer_with_byte_level", set_at(["normalizer"], {"type": "NFC"}),
                 "normalizer.type: normalizers are not supported with a ByteLevel pre-tokenizer"),
        tok_case("decoder_missing", set_at(["decoder"], None),
                 "decoder: missing: a byte-level BPE tokenizer needs a ByteLevel one"),
        tok_case("decoder_wordpiece", set_at(["decoder"], {"type": "WordPiece"}),
                 'decoder.type: expected "ByteLevel", got "WordPiece"'),
        tok_case("decoder_raw_type", set_at(["decoder"], {"type": "\x1b[2JByte"}),
                 'decoder.type: expected "ByteLevel"'),
        tok_case("decoder_no_type", set_at(["decoder"], {}), "decoder.type: missing"),
        tok_case("pre_tokenizer_prefix_string", set_at(["pre_tokenizer", "add_prefix_space"], "no"),
                 "pre_tokenizer.add_prefix_space: expected true or false"),
        tok_case("pre_tokenizer_bert", set_at(["pre_tokenizer"], {"type": "BertPreTokenizer"}),
                 "pre_tokenizer.type"),
        tok_case("pre_tokenizer_array", set_at(["pre_tokenizer"], [1]), "pre_tokenizer: expected an object"),
        tok_case("sp_normalizer_nfkc", set_at(["normalizer"], {"type": "NFKC"}, sp),
                 'normalizer.type: expected "Prepend", "Replace" or "Sequence", got "NFKC"'),
        tok_case("sp_normalizer_regex", set_at(["normalizer", "normalizers", 1, "pattern"],
                                               {"Regex": " +"}, sp),
                 "only {\"String\": ...} patterns are supported"),
        tok_case("sp_normalizer_empty_pattern", set_at(["normalizer", "normalizers", 1, "pattern"],
                                                       {"String": ""}, sp),
                 "pattern.String: expected a non-empty string"),
        tok_case("sp_normalizer_list_not_array", set_at(["normalizer", "normalizers"], {}, sp),
                 "normalizer.normalizers: expected an array"),
        tok_case("sp_prepend_number", set_at(["normalizer", "normalizers", 0, "prepend"], 5, sp),
                 "prepend: expected a string"),
        tok_case("sp_decoder_unknown", set_at(["decoder", "decoders", 0], {"type": "CTC"}, sp),
                 'decoders[0].type: expected "Replace", "ByteFallback"'),
        tok_case("sp_decoder_strip_negative", set_at(["decoder", "decoders", 3, "start"], -1, sp),
                 "start: expected a count (0 or more)"),
        tok_case("sp_decoder_not_object", set_at(["decoder"], "Fuse", sp), "decoder: expected an object"),
        tok_case("sp_pre_tokenizer_split", set_at(["pre_tokenizer"], {"type": "Split"}, sp),
                 "pre_tokenizer.type"),
        tok_case("sp_metaspace_bad_scheme", set_at(["pre_tokenizer"], {
            "type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "sometimes",
            "split": False}, sp), 'expected "always", "first" or "never", got "sometimes"'),
        tok_case("sp_metaspace_long_replacement", set_at(["pre_tokenizer"], {
            "type": "Metaspace", "replacement": "ab", "prepend_scheme": "always", "split": False},
            sp), 'replacement: expected one character, got "ab"'),
        tok_case("sp_vocab_id_repeated", changed(lambda t: t["model"]["vocab"].update({"zzq": 3}), sp),
                 "id 3 is also the id of"),
        tok_case("sp_unk_unknown", set_at(["model", "unk_token"], "<nope>", sp),
                 "model.unk_token: \"<nope>\" is not in model.vocab"),
        tok_case("eos_not_in_vocab", bl, 'the eos token "<nope>" is not in the vocabulary',
                 extra=["--append-eos", "--eos-token", "<nope>"]),
        tok_case("input_missing", bl, "absent.txt: no such file", text_input="{d}/absent.txt"),
        tok_case("output_dir_missing", bl, "absent/out.bin", output="{d}/absent/out.bin"),
        tok_case("threads_negative", bl, "--threads: Value -1 not in range", extra=["--threads", "-1"],
                 rc=2),
    ]
    out.append(Case(name="tok_tokenizer_missing", family="tokenizer",
                    argv=["data", "prepare", "--tokenizer", "{d}/absent.json", "--input", "{text}",
                          "--output", "{d}/out.bin", "--quiet"],
                    expect="absent.json: cannot open the tokenizer file"))
    return out
