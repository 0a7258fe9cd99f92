# Every `bprop` command reads its command line through the one parser (native/cli/command_line.*):
#   - `bprop COMMAND --help` prints the generated help, naming the command and its options, and exits 0;
#   - a bad integer, a bad choice, an unknown option and a missing value are refused with exit status 2 and the
#     same wording in every command;
#   - an option given twice takes the last value; --device comes from BPROP_DEVICE when not given.
#   cmake -DBPROP=<bprop> -P cli_command_lines.cmake
cmake_minimum_required(VERSION 3.20)

function(expect_help what)
  execute_process(COMMAND ${BPROP} ${ARGN} --help OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(FIND "${out}" "Usage: bprop ${what}" usage)
  if(NOT rc EQUAL 0 OR usage LESS 0)
    message(FATAL_ERROR "bprop ${ARGN} --help: exit ${rc}, no 'Usage: bprop ${what}': ${out}${err}")
  endif()
  foreach(option IN LISTS options)
    string(FIND "${out}" "${option}" at)
    if(at LESS 0)
      message(FATAL_ERROR "bprop ${ARGN} --help does not list ${option}: ${out}")
    endif()
  endforeach()
endfunction()

function(expect_refused why)
  execute_process(COMMAND ${BPROP} ${ARGN} OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(FIND "${err}" "${why}" at)
  if(NOT rc EQUAL 2 OR at LESS 0)
    message(FATAL_ERROR "bprop ${ARGN}: expected exit status 2 and \"${why}\", got ${rc}: ${err}")
  endif()
endfunction()

set(options --model --epochs --optimizer --schedule --amp --loss-scale --device --jit --data-parallel)
expect_help("train" train)
set(options --context --layers --heads --width --grad-accum --clip --warmup --stop-at --device)
expect_help("train --model gpt" train --model gpt)
set(options --checkpoint --prompt --tokens --temperature --top-k --seed)
expect_help("generate" generate)
set(options --checkpoint --model --data --batch-size --limit)
expect_help("eval" eval)
set(options --verbose --jit --outcomes FILE)
expect_help("check" check)
set(options --json --markdown)
expect_help("ops" ops)
set(options)
expect_help("devices" devices)

# The same messages in every command.
expect_refused("option '--epochs' needs an integer, got 'two'" train --epochs two)
expect_refused("option '--steps' needs an integer, got '1.5'" train --model gpt --steps 1.5)
expect_refused("option '--tokens' needs an integer, got '9x'" generate --checkpoint none --tokens 9x)
expect_refused("option '--limit' must be >= 1, got 0" eval --checkpoint none --limit 0)
expect_refused("option '--optimizer' must be adam or sgd, got 'rmsprop'" train --optimizer rmsprop)
expect_refused("option '--schedule' must be cosine or constant, got 'step'" train --schedule step)
expect_refused("option '--amp' must be O0, O1, O2 or O3, got 'O9'" train --model gpt --amp O9)
expect_refused("option '--model' must be mlp or cnn, got 'rnn'" eval --checkpoint none --model rnn)
expect_refused("unknown option '--epoch'" train --epoch 3)
expect_refused("unknown option '--shape'" generate --checkpoint none --shape 2)
expect_refused("unknown option '--xml'" ops --xml)
expect_refused("unknown option '--all'" devices --all)
expect_refused("--lr" train --lr)
expect_refused("Unknown device 'tpu'" check --device tpu none.json)

# The last of an option given twice counts: a good value after a bad one is accepted (the data directory is then
# what fails), a bad one after a good one is refused.
expect_refused("data directory '/nonexistent' does not exist" train --epochs x --epochs 1 --data /nonexistent)
expect_refused("option '--epochs' needs an integer, got 'x'" train --epochs 1 --epochs x)
# BPROP_DEVICE stands for --device.
set(ENV{BPROP_DEVICE} tpu)
expect_refused("Unknown device 'tpu'" check none.json)
unset(ENV{BPROP_DEVICE})
