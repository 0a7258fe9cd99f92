# `bprop train --resume` goes on exactly: 2 epochs in one run, and 1 epoch then a resume to --epochs 2, write the
# same checkpoint byte for byte (weights, Adam's moments and step counts, metadata with the last test accuracy),
# eagerly and with the resumed half under --jit. A resume that cannot go on exactly is refused with exit status 2.
#   cmake -DBPROP=<bprop> -DDIR=<scratch folder> -P train_resume_exact.cmake
cmake_minimum_required(VERSION 3.20)
set(args train --model mlp --limit 320 --test-limit 64 --batch-size 64 --threads 1 --lr 0.003)
include(${CMAKE_CURRENT_LIST_DIR}/bprop_cli.cmake)
macro(train out)
  bprop_run(${args} ${ARGN} --out ${out})
endmacro()
function(expect_refused why)
  execute_process(COMMAND ${BPROP} ${args} ${ARGN} --out ${DIR}/refused.safetensors OUTPUT_QUIET
                  ERROR_VARIABLE stderr RESULT_VARIABLE rc)
  string(FIND "${stderr}" "${why}" at)
  if(NOT rc EQUAL 2 OR at LESS 0)
    message(FATAL_ERROR "bprop ${ARGN}: expected exit status 2 and '${why}', got ${rc}: ${stderr}")
  endif()
endfunction()

train(${DIR}/whole.safetensors --epochs 2)
train(${DIR}/half.safetensors --epochs 1)
train(${DIR}/resumed.safetensors --epochs 2 --resume ${DIR}/half.safetensors)
string(FIND "${stdout}" "resumed from ${DIR}/half.safetensors after epoch 1" said)
string(FIND "${stdout}" "epoch 1/2" first_epoch_again)
if(said LESS 0 OR NOT first_epoch_again LESS 0)
  message(FATAL_ERROR "the resumed run did not start at epoch 2: ${stdout}")
endif()
expect_same_file(${DIR}/whole.safetensors ${DIR}/resumed.safetensors "2 epochs against 1 + resume + 1")
train(${DIR}/resumed-jit.safetensors --epochs 2 --resume ${DIR}/half.safetensors --jit)
expect_same_file(${DIR}/whole.safetensors ${DIR}/resumed-jit.safetensors "a resume under --jit")
# The halves differ from the whole (the test can fail): one epoch less is another checkpoint.
file(SHA256 ${DIR}/half.safetensors h1)
file(SHA256 ${DIR}/whole.safetensors h2)
if(h1 STREQUAL h2)
  message(FATAL_ERROR "one epoch and two wrote the same checkpoint")
endif()

expect_refused("has trained 2 epochs already, and this run has 2" --epochs 2 --resume ${DIR}/whole.safetensors)
expect_refused("was trained with --optimizer adam, not sgd" --epochs 3 --optimizer sgd --resume ${DIR}/whole.safetensors)
