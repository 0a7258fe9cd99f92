# `bprop train --amp O2 --amp-dtype float16` saves the dynamic loss scaler's state in the checkpoint's metadata and
# `--resume` goes on from it: one epoch of 4 finite steps writes loss_scale_finite_steps 4, the resumed second epoch 8.
#   cmake -DBPROP=<bprop> -DDIR=<scratch folder> -P train_resume_loss_scale.cmake
cmake_minimum_required(VERSION 3.20)
set(args train --model mlp --limit 256 --test-limit 64 --epochs 1 --batch-size 64 --threads 1 --amp O2
         --amp-dtype float16)
include(${CMAKE_CURRENT_LIST_DIR}/bprop_cli.cmake)
macro(train out)
  bprop_run(${args} ${ARGN} --out ${out})
endmacro()
# The metadata of a checkpoint: its JSON header (after the 8-byte length) holds it first, keys sorted (the first
# 600 bytes stay inside this model's header of about 800).
function(expect_metadata file key value)
  file(READ ${file} header OFFSET 8 LIMIT 600)
  string(FIND "${header}" "\"${key}\":\"${value}\"" at)
  if(at LESS 0)
    message(FATAL_ERROR "${file}: no \"${key}\":\"${value}\" in the metadata: ${header}")
  endif()
endfunction()
train(${DIR}/first.safetensors)
expect_metadata(${DIR}/first.safetensors loss_scale 65536)
expect_metadata(${DIR}/first.safetensors loss_scale_finite_steps 4)
train(${DIR}/resumed.safetensors --resume ${DIR}/first.safetensors --epochs 2)
expect_metadata(${DIR}/resumed.safetensors loss_scale_finite_steps 8)
