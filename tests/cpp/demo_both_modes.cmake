# Runs the demo DEMO eagerly and with --mode graph: standard output must be identical, and the graph run must
# have been one (it says its mode on standard error).
foreach(mode pynative graph)
  execute_process(COMMAND ${DEMO} --mode ${mode} OUTPUT_VARIABLE out_${mode} ERROR_VARIABLE err_${mode}
                  RESULT_VARIABLE rc_${mode})
  if(NOT rc_${mode} EQUAL 0)
    message(FATAL_ERROR "${DEMO} --mode ${mode} failed (${rc_${mode}}): ${err_${mode}}")
  endif()
  if(NOT err_${mode} MATCHES "mode: ${mode}")
    message(FATAL_ERROR "${DEMO} --mode ${mode} did not run in ${mode} mode: ${err_${mode}}")
  endif()
endforeach()
if(out_pynative STREQUAL "")
  message(FATAL_ERROR "${DEMO} printed nothing")
endif()
if(NOT out_pynative STREQUAL out_graph)
  message(FATAL_ERROR "${DEMO}: graph mode printed\n${out_graph}\npynative mode printed\n${out_pynative}")
endif()
message(STATUS "${DEMO}: the same output in both modes")
