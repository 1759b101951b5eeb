# Runs CMD and checks its exit status and output; ctest's own regex properties ignore the exit code.
#   cmake "-DCMD=mpirun@@-n@@2@@prog" -DEXPECT_RC=nonzero|<code> "-DEXPECT=regex" [-DNOT_EXPECT=regex]
#         -P run_and_match.cmake
# CMD separates arguments with @@ (a ; would be split by add_test).
string(REPLACE "@@" ";" cmd "${CMD}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 90)
message("${out}${err}")
if(EXPECT_RC STREQUAL "nonzero" AND rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit, got 0")
elseif(NOT EXPECT_RC STREQUAL "nonzero" AND NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "expected exit ${EXPECT_RC}, got ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "exit ${rc}, but the output does not match: ${EXPECT}")
endif()
if(DEFINED NOT_EXPECT AND "${out}${err}" MATCHES "${NOT_EXPECT}")
  message(FATAL_ERROR "the output matches what must not appear: ${NOT_EXPECT}")
endif()
message("ok: exit ${rc}, output as expected")
