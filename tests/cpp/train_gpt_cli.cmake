# `bprop train --model gpt` and `bprop generate` on the demo's fortunes slice, a small model:
#   - 200 steps in one run = 100 steps (--stop-at 100) + --resume + 100 steps: the same checkpoint, byte for byte
#     (weights, optimizer state, metadata);
#   - --jit gives the bytes of the eager run, in float32 and in float16 mixed precision (whose 60 steps also resume
#     exactly, loss scale included);
#   - generate is seeded (the same text twice, another for another seed) and refuses a classifier checkpoint.
#   cmake -DBPROP=<bprop> -DDIR=<scratch folder> -DTEXT=<train.txt> -DGOLDEN=<a classifier checkpoint> -P train_gpt_cli.cmake
cmake_minimum_required(VERSION 3.20)
set(args train --model gpt --data text:${TEXT} --context 32 --layers 2 --heads 2 --width 32 --batch-size 8
         --grad-accum 2 --steps 200 --warmup 20 --eval-interval 100 --eval-batches 2 --sample-tokens 0 --threads 1)
include(${CMAKE_CURRENT_LIST_DIR}/bprop_cli.cmake)

bprop_run(${args} --out ${DIR}/gpt_whole.safetensors)
string(REGEX MATCH "step 200/200  val loss ([0-9.]+)" _ "${stdout}")
if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 GREATER_EQUAL 3.2)
  message(FATAL_ERROR "200 steps did not learn (validation loss '${CMAKE_MATCH_1}', a uniform guess is 4.56): ${stdout}")
endif()
bprop_run(${args} --stop-at 100 --out ${DIR}/gpt_first.safetensors)
bprop_run(train --model gpt --data text:${TEXT} --resume ${DIR}/gpt_first.safetensors --sample-tokens 0 --threads 1
    --out ${DIR}/gpt_resumed.safetensors)
if(NOT stdout MATCHES "from step 100")
  message(FATAL_ERROR "the resumed run did not start at step 100: ${stdout}")
endif()
expect_same_file(${DIR}/gpt_whole.safetensors ${DIR}/gpt_resumed.safetensors "200 steps against 100 + resume + 100")
bprop_run(${args} --jit --out ${DIR}/gpt_jit.safetensors)
expect_same_file(${DIR}/gpt_whole.safetensors ${DIR}/gpt_jit.safetensors "--jit against eager")
# float16 mixed precision with its dynamic loss scale: the same with --jit (gated steps included), and resumable.
bprop_run(${args} --steps 60 --amp O2 --amp-dtype float16 --out ${DIR}/gpt_f16.safetensors)
if(NOT stdout MATCHES "mixed precision O2 in float16")
  message(FATAL_ERROR "the float16 run does not say it ran in mixed precision: ${stdout}")
endif()
bprop_run(${args} --steps 60 --amp O2 --amp-dtype float16 --jit --out ${DIR}/gpt_f16_jit.safetensors)
expect_same_file(${DIR}/gpt_f16.safetensors ${DIR}/gpt_f16_jit.safetensors "float16 --jit against eager")
bprop_run(${args} --steps 60 --amp O2 --amp-dtype float16 --stop-at 30 --out ${DIR}/gpt_f16_first.safetensors)
bprop_run(train --model gpt --data text:${TEXT} --resume ${DIR}/gpt_f16_first.safetensors --sample-tokens 0 --threads 1
    --out ${DIR}/gpt_f16_resumed.safetensors)
expect_same_file(${DIR}/gpt_f16.safetensors ${DIR}/gpt_f16_resumed.safetensors "float16: 60 steps against 30 + resume + 30")

bprop_run(generate --checkpoint ${DIR}/gpt_whole.safetensors --prompt "The " --tokens 60 --seed 4)
set(first "${stdout}")
bprop_run(generate --checkpoint ${DIR}/gpt_whole.safetensors --prompt "The " --tokens 60 --seed 4)
if(NOT first STREQUAL stdout)
  message(FATAL_ERROR "generate with one seed printed two texts:\n${first}\n${stdout}")
endif()
string(LENGTH "${first}" n)
if(NOT first MATCHES "^The " OR n LESS 64)
  message(FATAL_ERROR "generate did not print the prompt and 60 characters: '${first}'")
endif()
bprop_run(generate --checkpoint ${DIR}/gpt_whole.safetensors --prompt "The " --tokens 60 --seed 5)
if(first STREQUAL stdout)
  message(FATAL_ERROR "seeds 4 and 5 generated the same text")
endif()
execute_process(COMMAND ${BPROP} generate --checkpoint ${GOLDEN} ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 2 OR NOT err MATCHES "is not a GPT checkpoint")
  message(FATAL_ERROR "generate on a classifier checkpoint: exit ${rc}, ${err}")
endif()
execute_process(COMMAND ${BPROP} generate --checkpoint ${DIR}/gpt_whole.safetensors --prompt "a\tb"
                ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 2 OR NOT err MATCHES "not in the vocabulary")
  message(FATAL_ERROR "generate with a prompt outside the vocabulary: exit ${rc}, ${err}")
endif()
execute_process(COMMAND ${BPROP} train --model gpt --data text:${TEXT} --width 30 --heads 4 ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--width")
  message(FATAL_ERROR "train --model gpt --width 30 --heads 4: exit ${rc}, ${err}")
endif()
