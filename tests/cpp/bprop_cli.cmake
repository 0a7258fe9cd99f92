# Helpers of the command-line tests that run as cmake -DBPROP=<bprop> ... -P <test>.cmake.
include_guard(GLOBAL)

# bprop_run(arguments...): runs bprop; the test fails with its stderr unless it exits 0. Its output is left in
# `stdout` (a macro: in the caller's scope).
macro(bprop_run)
  execute_process(COMMAND ${BPROP} ${ARGN} OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bprop ${ARGN} failed (${rc}): ${stderr}")
  endif()
endmacro()

# expect_same_file(a b what): the two files hold the same bytes.
function(expect_same_file a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "${what}: ${a} and ${b} differ")
  endif()
endfunction()
