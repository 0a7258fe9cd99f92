# bprop train --model gpt on the CPU and on the (fake) NPU, a small model on the demo's fortunes slice: the
# validation losses printed (four decimals) agree at every evaluation up to 2 in the last digit (only summation
# orders differ).
#   cmake -DBPROP=<bprop> -DHOME=<fake CANN folder> -DTEXT=<train.txt> -DDIR=<scratch> -P gpt_matches_cpu.cmake
cmake_minimum_required(VERSION 3.20)
set(args train --model gpt --data text:${TEXT} --context 32 --layers 1 --heads 2 --width 32 --batch-size 8 --steps 40
         --warmup 5 --eval-interval 20 --eval-batches 2 --sample-tokens 20 --threads 1)
execute_process(COMMAND ${BPROP} ${args} --out ${DIR}/gpt-cpu.safetensors
                OUTPUT_VARIABLE cpu_out ERROR_VARIABLE cpu_err RESULT_VARIABLE cpu_rc)
set(ENV{ASCEND_HOME_PATH} ${HOME})
execute_process(COMMAND ${BPROP} ${args} --device ascend --out ${DIR}/gpt-npu.safetensors
                OUTPUT_VARIABLE npu_out ERROR_VARIABLE npu_err RESULT_VARIABLE npu_rc)
if(NOT cpu_rc EQUAL 0 OR NOT npu_rc EQUAL 0)
  message(FATAL_ERROR "train failed: cpu ${cpu_rc} ${cpu_err}\nnpu ${npu_rc} ${npu_err}\n${npu_out}")
endif()
if(NOT npu_out MATCHES "on ascend")
  message(FATAL_ERROR "the NPU run does not say it ran on the NPU:\n${npu_out}")
endif()
string(REGEX MATCHALL "val loss [0-9.]+" cpu_vals "${cpu_out}")
string(REGEX MATCHALL "val loss [0-9.]+" npu_vals "${npu_out}")
list(LENGTH cpu_vals n)
if(NOT n EQUAL 3)  # steps 20 and 40, and the saved line
  message(FATAL_ERROR "expected 2 validations and the saved line, got: ${cpu_out}")
endif()
foreach(i RANGE 0 1)
  list(GET cpu_vals ${i} a)
  list(GET npu_vals ${i} b)
  string(REGEX REPLACE "val loss ([0-9])\\.([0-9]+)" "\\1\\2" a "${a}")
  string(REGEX REPLACE "val loss ([0-9])\\.([0-9]+)" "\\1\\2" b "${b}")
  math(EXPR diff "${a} - ${b}")
  if(diff LESS -2 OR diff GREATER 2)
    message(FATAL_ERROR "validation ${i}: the NPU's loss differs from the CPU's:\n${cpu_out}\n${npu_out}")
  endif()
endforeach()
message(STATUS "cpu and npu validation losses: ${cpu_vals} / ${npu_vals}")
