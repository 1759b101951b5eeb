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

set(zt_hostile ${CMAKE_CURRENT_SOURCE_DIR}/data/hostile)

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
