# `zerotrain train --eval-data` (issue 19, [Note: evaluation] in src/zerotrain/train/evaluation.h).
# Included by tests/CMakeLists.txt after hostile_inputs.cmake (it uses zt_cli_refusal and
# zt_train_cli_test).

# Training on the asset model with a held-out file cut from the same text: the set is named, an
# evaluation follows steps 2 and 4, metrics.jsonl holds their records, the summary names the last;
# --eval-only on the saved model (no --data, no --out) prints the same loss as the evaluation after
# the last step.
zt_train_cli_test(train_eval_data_then_eval_only
  [=[rm -rf "$1" && mkdir -p "$1" && "$0" data prepare --tokenizer "$2" --input "$3" --output "$1/tok.bin" > /dev/null && head -c 20000 "$3" > "$1/eval.txt" && "$0" data prepare --tokenizer "$2" --input "$1/eval.txt" --output "$1/eval.bin" > /dev/null && "$0" train --model "$4" --data "$1/tok.bin" --out "$1/run" --device cpu --steps 4 --log-every 2 --seq-len 32 --micro-batch 2 --eval-data "$1/eval.bin" --eval-every 2 --eval-batches 2 > "$1/train.log" && cat "$1/train.log" && echo "eval records: $(grep -c '"type":"eval"' "$1/run/metrics.jsonl")" && last=$(grep "eval after step 4" "$1/train.log" | cut -d'|' -f2) && only=$("$0" train --model "$1/run/model" --eval-only --eval-data "$1/eval.bin" --eval-batches 2 --seq-len 32 --micro-batch 2 --device cpu | grep "eval at step 0" | cut -d'|' -f2) && [ "$last" = "$only" ] && echo "eval-only:$only"]=]
  "eval data: [^\n]*eval\\.bin, the first 2 micro-batches of 2 \\(4 of [0-9]+ sequences of 33 tokens\\), after every 2 steps and the last\n.*eval after step 2 \\| loss [0-9.]+ \\| perplexity [0-9.e+]+ \\| 128 tokens of 4 sequences \\| [0-9.]+ s\n.*eval after step 4 \\| loss.*eval loss +[0-9.]+ \\(perplexity [0-9.e+]+\\) after step 4; 2 evaluations.*eval records: 2\neval-only: loss [0-9]+\\.[0-9]+")

# One line each, exit non-zero: --eval-every 0, --eval-only without --eval-data, and without
# --eval-only still no training without --data.
set(zt_kjv_config ${PROJECT_SOURCE_DIR}/assets/models/kjv-llama-4m/config.json)
zt_cli_refusal(train_eval_every_zero 1 "\\[config\\] --eval-every: must be > 0, got 0"
  train --model ${zt_kjv_config} --data ${PROJECT_SOURCE_DIR}/CMakeLists.txt --out /tmp/zt-never
  --eval-data ${PROJECT_SOURCE_DIR}/CMakeLists.txt --eval-every 0)
zt_cli_refusal(train_eval_batches_negative 1 "\\[config\\] --eval-batches: must be > 0, got -2"
  train --model ${zt_kjv_config} --data ${PROJECT_SOURCE_DIR}/CMakeLists.txt --out /tmp/zt-never
  --eval-data ${PROJECT_SOURCE_DIR}/CMakeLists.txt --eval-batches -2)
zt_cli_refusal(train_eval_only_without_eval_data 1 "\\[config\\] --eval-only: there is no --eval-data"
  train --model ${zt_kjv_config} --eval-only)
zt_cli_refusal(train_eval_data_without_data 2 "--data is required"
  train --model ${zt_kjv_config} --out /tmp/zt-never --eval-data ${PROJECT_SOURCE_DIR}/CMakeLists.txt)

# Held-out files that cannot be evaluated: empty, or shorter than one sequence of --seq-len + 1.
set(zt_eval_files_script [=[rm -rf "$1" && mkdir -p "$1" && : > "$1/empty.txt" && printf 'And God' > "$1/short.txt" && "$0" data prepare --tokenizer "$2" --input "$1/empty.txt" --output "$1/empty.bin" > /dev/null && "$0" data prepare --tokenizer "$2" --input "$1/short.txt" --output "$1/short.bin" > /dev/null && "$0" train --model "$3" --eval-only --eval-data "$1/empty.bin" --device cpu 2>&1 || echo "rc=$?" && "$0" train --model "$3" --eval-only --eval-data "$1/short.bin" --seq-len 32 --device cpu 2>&1 || echo "rc=$?"]=])
add_test(NAME train_eval_bad_files COMMAND ${CMAKE_COMMAND}
  "-DCMD=sh@@-c@@${zt_eval_files_script}@@$<TARGET_FILE:zerotrain_cli>@@${CMAKE_CURRENT_BINARY_DIR}/train_eval_bad_files@@${PROJECT_SOURCE_DIR}/assets/tokenizers/kjv-bpe-4096/tokenizer.json@@${zt_kjv_config}"
  -DEXPECT_RC=0
  "-DEXPECT=\\[train\\] --eval-data [^\n]*empty\\.bin is empty \\(0 tokens\\)\nrc=1\n.*\\[train\\] --eval-data [^\n]*short\\.bin \\(2 tokens\\) holds no sequence of --seq-len 32 \\+ 1 tokens\nrc=1"
  "-DNOT_EXPECT=terminate called|Aborted|unexpected error" -P ${zt_match})
set_tests_properties(train_eval_bad_files PROPERTIES TIMEOUT 60)

# The README's "Fine-tune your own model" commands, read from README.md and run as written on a
# tiny llama (tiny HF directory -> data prepare -> train --deepspeed with the HF Trainer's ZeRO-3
# config and --eval-data -> checkpoint consolidate -> generate): tests/cli/readme_finetune.py.
add_test(NAME readme_finetune_example
  COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/cli/readme_finetune.py
    --zerotrain $<TARGET_FILE:zerotrain_cli> --root ${PROJECT_SOURCE_DIR}
    --work ${CMAKE_CURRENT_BINARY_DIR}/readme_finetune_example)
set_tests_properties(readme_finetune_example PROPERTIES TIMEOUT 300)
