# `zerotrain` on hostile command lines and files (issue 17): each case must exit with its code
# (1 a refused input, 2 a bad command line) and print its one-line message, never a crash.
# Included by tests/CMakeLists.txt; the cases run the CLI through tests/mpi/run_and_match.cmake.
#   zt_cli_refusal(NAME RC EXPECT_REGEX ARG...)  ARG@@... are the CLI's arguments.
function(zt_cli_refusal name rc expect)
  string(REPLACE ";" "@@" args "${ARGN}")
  add_test(NAME cli_refuses_${name} COMMAND ${CMAKE_COMMAND}
    "-DCMD=$<TARGET_FILE:zerotrain_cli>@@${args}" -DEXPECT_RC=${rc} "-DEXPECT=${expect}"
    "-DNOT_EXPECT=unexpected error|terminate called|Aborted|Segmentation" -P ${zt_match})
  set_tests_properties(cli_refuses_${name} PROPERTIES TIMEOUT 60)
endfunction()

set(zt_hostile ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/hostile)

zt_cli_refusal(estimate_params_1e30 1
  "\\[estimate\\] --params: 1e\\+30 parameters is above the ceiling of 2\\^47"
  estimate --params 1e30 --largest-layer 1e6)
zt_cli_refusal(estimate_gpus_0 1 "\\[estimate\\] --gpus: must be > 0, got 0"
  estimate --model ${PROJECT_SOURCE_DIR}/assets/models/kjv-llama-4m/config.json --seq 64 --gpus 0)
zt_cli_refusal(estimate_largest_layer_above_model 1
  "\\[estimate\\] --largest-layer: 2e\\+09 parameters is more than the whole model's 1e\\+09"
  estimate --params 1e9 --largest-layer 2e9)
zt_cli_refusal(estimate_vocab_2_62 1
  "vocab_2_62\\.json: vocab_size: 4611686018427387904 is above the ceiling"
  estimate --model ${zt_hostile}/vocab_2_62.json)
zt_cli_refusal(estimate_layers_1e9 1
  "layers_1e9\\.json: num_hidden_layers: 1000000000 is above the ceiling"
  estimate --model ${zt_hostile}/layers_1e9.json --seq 128)
zt_cli_refusal(estimate_deep_config 1
  "deep_config\\.json: not valid JSON: nested deeper than 64 levels"
  estimate --model ${zt_hostile}/deep_config.json)

# A model directory without weights is not trained from a silent random init.
zt_cli_refusal(train_directory_without_weights 1
  "\\[model\\] [^\n]*kjv-llama-4m: no loadable weights [^\n]*it holds no weight files\\. For a random init from its config give --init random"
  train --model ${PROJECT_SOURCE_DIR}/assets/models/kjv-llama-4m
  --data ${PROJECT_SOURCE_DIR}/CMakeLists.txt --out ${CMAKE_CURRENT_BINARY_DIR}/cli_refuses_no_weights
  --device cpu)

# Command-line errors exit 2 (cli/main.cpp), in one line naming the flag or the command.
set(zt_kjv_config ${PROJECT_SOURCE_DIR}/assets/models/kjv-llama-4m/config.json)
zt_cli_refusal(unknown_command 2
  "\\[zerotrain\\] unknown command \"trian\" \\(did you mean train\\?\\)" trian --model x)
zt_cli_refusal(steps_past_64_bits 2
  "--steps: \"99999999999999999999\" does not fit in a 64-bit integer"
  train --model ${zt_kjv_config} --data ${PROJECT_SOURCE_DIR}/CMakeLists.txt
  --out ${CMAKE_CURRENT_BINARY_DIR}/cli_refuses_steps --steps 99999999999999999999)
zt_cli_refusal(negative_clip 2 "--clip: must be >= 0, got \"-1\""
  train --model ${zt_kjv_config} --data ${PROJECT_SOURCE_DIR}/CMakeLists.txt
  --out ${CMAKE_CURRENT_BINARY_DIR}/cli_refuses_clip --clip -1)
zt_cli_refusal(negative_plot_every 2 "--plot-every: must be >= 0, got \"-1\""
  train --model ${zt_kjv_config} --data ${PROJECT_SOURCE_DIR}/CMakeLists.txt
  --out ${CMAKE_CURRENT_BINARY_DIR}/cli_refuses_plot --plot-every -1)
zt_cli_refusal(missing_data_file 2 "--data: File does not exist"
  train --model ${zt_kjv_config} --data ${CMAKE_CURRENT_BINARY_DIR}/absent.bin
  --out ${CMAKE_CURRENT_BINARY_DIR}/cli_refuses_data)
