# Trains the CNN on the same Fashion-MNIST subset on the CPU and on the (fake) NPU and checks that the test loss
# agrees to 1e-3 relative and the test accuracy to one image (only summation orders differ).
# With -DAMP_DTYPE=bfloat16|float16 both runs use mixed precision O2 in that dtype: the NPU computes its half
# kernels in float and rounds once where the CPU computes in float32 and rounds once, so the runs may differ by a
# half ulp here and there, and the bounds are wider (2e-3 on the loss, two images).
#   cmake -DBPROP=<bprop> -DHOME=<fake CANN folder> [-DAMP_DTYPE=...] -P train_matches_cpu.cmake
set(args train --model cnn --limit 512 --test-limit 256 --epochs 2 --batch-size 64 --seed 3)
set(tag "")  # (the checkpoints' names: the tests run in parallel)
set(loss_units 2)
set(acc_units 39)
if(DEFINED AMP_DTYPE)
  list(APPEND args --amp O2 --amp-dtype ${AMP_DTYPE})
  set(tag "-${AMP_DTYPE}")
  set(loss_units 20)
  set(acc_units 79)
endif()
execute_process(COMMAND ${BPROP} ${args} --out ${CMAKE_CURRENT_BINARY_DIR}/cpu${tag}.safetensors
                OUTPUT_VARIABLE cpu_out ERROR_VARIABLE cpu_err RESULT_VARIABLE cpu_rc)
set(ENV{ASCEND_HOME_PATH} ${HOME})
execute_process(COMMAND ${BPROP} ${args} --device ascend --out ${CMAKE_CURRENT_BINARY_DIR}/npu${tag}.safetensors
                OUTPUT_VARIABLE npu_out ERROR_VARIABLE npu_err RESULT_VARIABLE npu_rc)
if(NOT cpu_rc EQUAL 0 OR NOT npu_rc EQUAL 0)
  message(FATAL_ERROR "train failed: cpu ${cpu_rc} ${cpu_err}\nnpu ${npu_rc} ${npu_err}\n${npu_out}")
endif()
foreach(run cpu npu)
  string(REGEX MATCHALL "test loss [0-9.]+ acc [0-9.]+%" lines "${${run}_out}")
  list(GET lines -1 last)
  string(REGEX REPLACE "test loss ([0-9.]+) acc ([0-9.]+)%" "\\1;\\2" values "${last}")
  list(GET values 0 ${run}_loss)
  list(GET values 1 ${run}_acc)
endforeach()
message(STATUS "cpu: test loss ${cpu_loss} acc ${cpu_acc}%; npu: test loss ${npu_loss} acc ${npu_acc}%")
# CMake has no floating point: the printed values have fixed decimals, so compare them as scaled integers.
function(expect_close what cpu npu max_units)
  string(REPLACE "." "" a "${cpu}")
  string(REPLACE "." "" b "${npu}")
  math(EXPR diff "${a} - ${b}")
  if(diff LESS 0)
    math(EXPR diff "0 - ${diff}")
  endif()
  if(diff GREATER ${max_units})
    message(FATAL_ERROR "the NPU run's ${what} ${npu} differs from the CPU run's ${cpu}")
  endif()
endfunction()
# a loss with four decimals: 2 in the last digit is about 1e-3 relative near 1; an accuracy with two decimals
# over 256 images: one image is 0.39%, 39 units
expect_close("test loss" ${cpu_loss} ${npu_loss} ${loss_units})
expect_close("test accuracy" ${cpu_acc} ${npu_acc} ${acc_units})
if(DEFINED AMP_DTYPE AND NOT npu_out MATCHES "mixed precision O2 in ${AMP_DTYPE}")
  message(FATAL_ERROR "the NPU run does not say it ran in mixed precision:\n${npu_out}")
endif()
if(NOT npu_out MATCHES "ascend:0")
  message(FATAL_ERROR "the NPU run does not say it ran on ascend:0:\n${npu_out}")
endif()
# bprop eval of the NPU run's checkpoint gives the same accuracy on the NPU as on the CPU.
foreach(dev cpu ascend)
  execute_process(COMMAND ${BPROP} eval --device ${dev} --checkpoint ${CMAKE_CURRENT_BINARY_DIR}/npu${tag}.safetensors
                          --limit 256
                  OUTPUT_VARIABLE eval_out ERROR_VARIABLE eval_err RESULT_VARIABLE eval_rc)
  if(NOT eval_rc EQUAL 0)
    message(FATAL_ERROR "eval on ${dev} failed: ${eval_err}")
  endif()
  string(REGEX MATCH "acc(uracy)? [0-9.]+%" eval_${dev} "${eval_out}")
endforeach()
message(STATUS "eval: cpu ${eval_cpu}, npu ${eval_ascend}")
if(NOT eval_cpu STREQUAL eval_ascend OR eval_cpu STREQUAL "")
  message(FATAL_ERROR "eval on the NPU (${eval_ascend}) differs from eval on the CPU (${eval_cpu})")
endif()
