# `cmake --install` of a native build: the static libraries, the public headers, the `bprop` program and a CMake
# package, so that another project can do
#   find_package(bprop CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE bprop::bprop)
# Included by the top-level CMakeLists.txt (native builds only) once bprop_core, bprop_native and bprop exist.
# Exported targets: bprop::core (bprop_core: tensors, ops, autodiff, nn, jit), bprop::native (bprop_native: IDX data
# loading, the models and trainer of `bprop train`, the implementation of bprop::dist) and bprop::bprop (both).
# tests/cmake_package/ checks the result from a project outside this tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BPROP_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bprop)
# The native library's public headers go under <include>/bprop/native, which is on bprop::native's include path:
# they are included as in the source tree ("data/idx.h", "models/trainer.h"; trainer.h itself includes "data/idx.h").
set(BPROP_NATIVE_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/bprop/native)

target_include_directories(bprop_core INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_include_directories(bprop_native INTERFACE $<INSTALL_INTERFACE:${BPROP_NATIVE_INCLUDE_DIR}>)
# A sanitized build's static libraries call into the sanitizer runtimes: a program linking the installed ones needs
# them too (here the directory-wide link options give them to every program).
if(BPROP_SANITIZE)
  target_link_options(bprop_core INTERFACE $<INSTALL_INTERFACE:-fsanitize=${BPROP_SANITIZERS}>)
endif()

# bprop::bprop: the whole library. `bprop` is the program's target name, hence the other name here.
add_library(bprop_libraries INTERFACE)
target_link_libraries(bprop_libraries INTERFACE bprop_core bprop_native)
set_target_properties(bprop_core PROPERTIES EXPORT_NAME core)
set_target_properties(bprop_native PROPERTIES EXPORT_NAME native)
set_target_properties(bprop_libraries PROPERTIES EXPORT_NAME bprop)

install(TARGETS bprop_core bprop_native bprop_libraries EXPORT bprop-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET bprop)
  install(TARGETS bprop RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(DIRECTORY ${CMAKE_SOURCE_DIR}/core/include/bprop ${CMAKE_SOURCE_DIR}/native/include/bprop
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
# (native/dist/*.h and native/ascend/*.h are the implementation's own)
install(FILES ${CMAKE_SOURCE_DIR}/native/data/idx.h DESTINATION ${BPROP_NATIVE_INCLUDE_DIR}/data)
install(FILES ${CMAKE_SOURCE_DIR}/native/models/models.h ${CMAKE_SOURCE_DIR}/native/models/trainer.h
        DESTINATION ${BPROP_NATIVE_INCLUDE_DIR}/models)

install(EXPORT bprop-targets NAMESPACE bprop:: DESTINATION ${BPROP_CMAKE_INSTALL_DIR})
# bprop-config.cmake looks for MPI only when bprop_native was built with it (its link interface then names MPI).
if(BPROP_MPI AND MPI_CXX_FOUND)
  set(BPROP_PACKAGE_WITH_MPI TRUE)
else()
  set(BPROP_PACKAGE_WITH_MPI FALSE)
endif()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/bprop-config.cmake.in
                              ${CMAKE_BINARY_DIR}/package/bprop-config.cmake
                              INSTALL_DESTINATION ${BPROP_CMAKE_INSTALL_DIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/bprop-config-version.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/package/bprop-config.cmake ${CMAKE_BINARY_DIR}/package/bprop-config-version.cmake
        DESTINATION ${BPROP_CMAKE_INSTALL_DIR})
