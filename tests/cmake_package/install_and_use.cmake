# The installed package works for a project outside this tree: `cmake --install` of the build into a fresh prefix;
# the installed headers include neither Eigen nor nlohmann-json; only bprop's own files are installed; this folder's
# project finds the package through CMAKE_PREFIX_PATH (the prefix's, not another), builds with the build's compiler
# and prints the values main.cpp computes; the installed `bprop` program runs.
#   cmake -DBUILD_DIR=<build> -DCONFIG=<config> -DWORK_DIR=<scratch folder> -DCONSUMER_DIR=<this folder>
#         -DGENERATOR=<generator> -DCXX=<C++ compiler> -P install_and_use.cmake
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# Runs a command; stops with its output unless it succeeded. The output is left in ${out_var}.
function(run what out_var)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

run("cmake --install" out ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --config ${CONFIG})

# What is installed: the program, the two static libraries, the package files and headers; no test, demo or fake.
set(package_lib "lib[^/]*/(libbprop_(core|native)\\.a|cmake/bprop/bprop-[a-z-]+\\.cmake)")
set(package_file "^(bin/bprop|include/bprop/.+\\.h|${package_lib})$")
file(GLOB_RECURSE installed RELATIVE ${prefix} ${prefix}/*)
foreach(f ${installed})
  if(NOT f MATCHES "${package_file}")
    message(FATAL_ERROR "installed and not part of the package: ${f}")
  endif()
endforeach()
foreach(wanted bin/bprop include/bprop/bprop.h include/bprop/native/data/idx.h include/bprop/native/models/trainer.h)
  if(NOT EXISTS ${prefix}/${wanted})
    message(FATAL_ERROR "not installed: ${wanted}")
  endif()
endforeach()

# The installed headers must not make a user find the library's private dependencies, and what they include in
# quotes must be installed too (found next to them or on the targets' include path).
file(GLOB_RECURSE headers ${prefix}/include/*.h)
foreach(h ${headers})
  file(STRINGS ${h} private_includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](Eigen|unsupported/Eigen|nlohmann)/")
  if(private_includes)
    message(FATAL_ERROR "${h} includes a private dependency: ${private_includes}")
  endif()
  get_filename_component(h_dir ${h} DIRECTORY)
  file(STRINGS ${h} quoted_includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line ${quoted_includes})
    string(REGEX REPLACE "^[^\"]*\"([^\"]+)\".*" "\\1" name "${line}")
    if(NOT EXISTS ${h_dir}/${name} AND NOT EXISTS ${prefix}/include/${name}
       AND NOT EXISTS ${prefix}/include/bprop/native/${name})
      message(FATAL_ERROR "${h} includes \"${name}\", which is not installed")
    endif()
  endforeach()
endforeach()

run("configuring the outside project" configure_out ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${consumer_build}
    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${CONFIG} -DCMAKE_PREFIX_PATH=${prefix})
# The package found must be the one just installed (not one from elsewhere on the search path).
file(STRINGS ${consumer_build}/CMakeCache.txt found_dir REGEX "^bprop_DIR:")
string(FIND "${found_dir}" "=${prefix}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the outside project did not find the package installed in ${prefix}: ${found_dir}")
endif()
run("building the outside project" build_out ${CMAKE_COMMAND} --build ${consumer_build} --config ${CONFIG})

# (run in the build folder: it writes a small IDX file there)
execute_process(COMMAND ${consumer_build}/bprop_consumer WORKING_DIRECTORY ${consumer_build}
                OUTPUT_VARIABLE app_out ERROR_VARIABLE app_err RESULT_VARIABLE app_rc)
message(STATUS "the outside project's program printed:\n${app_out}")
if(NOT app_rc EQUAL 0)
  message(FATAL_ERROR "the outside project's program failed (${app_rc}):\n${app_out}\n${app_err}")
endif()
foreach(line "grad of x\\^3 at 2: 12\n" "idx round trip: ok\n" "mlp parameters: 235146\n" "dist: [^\n]*: ok\n")
  if(NOT app_out MATCHES "${line}")
    message(FATAL_ERROR "the outside project's program did not print '${line}'")
  endif()
endforeach()

run("${prefix}/bin/bprop --help" help_out ${prefix}/bin/bprop --help)
if(NOT help_out MATCHES "^usage: bprop <command>")
  message(FATAL_ERROR "${prefix}/bin/bprop --help printed:\n${help_out}")
endif()
message(STATUS "installed in ${prefix}: bprop::bprop builds and runs outside the tree; bin/bprop runs")
