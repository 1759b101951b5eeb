# `zerotrain generate` and the sample at the end of `zerotrain train` (issue 19). Included by
# tests/CMakeLists.txt after hostile_inputs.cmake (it uses zt_cli_refusal and zt_train_cli_test).

# Bad command lines exit 2 in one line naming the flag; a directory without weights exits 1.
set(zt_kjv_dir ${PROJECT_SOURCE_DIR}/assets/models/kjv-llama-4m)
zt_cli_refusal(generate_top_p_zero 2 "--top-p: must be in \\(0, 1\\], got 0"
  generate --model ${zt_kjv_dir} --prompt x --top-p 0)
zt_cli_refusal(generate_negative_temperature 2 "--temperature: must be >= 0, got \"-0\\.5\""
  generate --model ${zt_kjv_dir} --prompt x --temperature -0.5)
zt_cli_refusal(generate_max_new_tokens_past_64_bits 2
  "--max-new-tokens: \"99999999999999999999\" does not fit in a 64-bit integer"
  generate --model ${zt_kjv_dir} --prompt x --max-new-tokens 99999999999999999999)
zt_cli_refusal(generate_bad_dtype 2 "--dtype: f64 not in"
  generate --model ${zt_kjv_dir} --prompt x --dtype f64)
zt_cli_refusal(generate_without_prompt 2 "--prompt is required" generate --model ${zt_kjv_dir})
zt_cli_refusal(generate_directory_without_weights 1
  "\\[model\\] [^\n]*kjv-llama-4m: no loadable weights"
  generate --model ${zt_kjv_dir} --prompt x --device cpu)

# The default job's shape end to end: train prints a greedy sample of the saved model and copies
# the tokenizer beside it, so `zerotrain generate --model <out>/model` runs on its own (greedy
# twice: the same text; sampled with a seed: a summary line).
zt_train_cli_test(train_prints_sample_then_generate
  [=[rm -rf "$1" && mkdir -p "$1" && "$0" data prepare --tokenizer "$2" --input "$3" --output "$1/tok.bin" > /dev/null && "$0" train --model "$4" --data "$1/tok.bin" --out "$1/run" --device cpu --steps 2 --log-every 1 --seq-len 32 --micro-batch 2 --sample-tokenizer "$2" --sample-tokens 8 && a=$("$0" generate --model "$1/run/model" --prompt "And God said" --max-new-tokens 8 --device cpu --quiet) && b=$("$0" generate --model "$1/run/model" --prompt "And God said" --max-new-tokens 8 --device cpu --quiet) && [ "$a" = "$b" ] && echo "greedy twice: same text" && exec "$0" generate --model "$1/run/model" --prompt "And God said" --max-new-tokens 8 --device cpu --temperature 0.8 --top-p 0.9 --seed 3]=]
  "sample \\(greedy\\) +And God said[^\n]*\n.*greedy twice: same text\n.*\\[generate\\] 8 tokens \\(max-new-tokens\\) on cpu f32")

# Greedy text equal to transformers' generate (tools/parity/check_generate.py), when the parity
# venv of scripts/parity_cpu.sh exists in the build directory; skipped otherwise.
add_test(NAME generate_parity_transformers COMMAND sh -c
  [=[[ -x "$1/parity-venv/bin/python" ] || { echo "no $1/parity-venv: skipped"; exit 77; }; OMP_NUM_THREADS=1 exec "$1/parity-venv/bin/python" "$2/tools/parity/check_generate.py" --zerotrain "$3"]=]
  sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR} $<TARGET_FILE:zerotrain_cli>)
set_tests_properties(generate_parity_transformers PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
