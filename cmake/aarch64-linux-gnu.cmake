# CMake toolchain file: cross-builds bprop for aarch64 Linux (the Ascend hosts: Atlas 800 9000, 800T A2) on an x86-64
# Debian 12 host with Debian's cross compiler (g++-aarch64-linux-gnu). Programs and tests run under qemu-user.
# scripts/setup-aarch64.sh installs what it needs; scripts/test-aarch64.sh builds and tests with it:
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DBPROP_MPI=OFF \
#         -DCMAKE_PREFIX_PATH=$PWD/build/aarch64-deps/googletest
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(BPROP_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${BPROP_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${BPROP_CROSS_TRIPLE}-g++)

# The target's C library and libstdc++ (libc6-dev-arm64-cross, libstdc++-12-dev-arm64-cross).
set(CMAKE_FIND_ROOT_PATH /usr/${BPROP_CROSS_TRIPLE})
# Programs (node, sh, ...) are the host's; libraries only the target's. Headers and CMake packages are looked for
# in the target's root first, then on the host: Eigen and nlohmann-json are header-only and the same on every
# architecture (their config files are in /usr/share), zlib.h and zconf.h too; a package with libraries must be
# built for aarch64 (GoogleTest: build/aarch64-deps/googletest via CMAKE_PREFIX_PATH; its config files are found in
# <prefix>/lib/cmake, and a host one in /usr/lib/x86_64-linux-gnu/cmake is not on the aarch64 search path).
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# zlib: the multiarch runtime zlib1g:arm64 (no zlib1g-dev:arm64: see scripts/setup-aarch64.sh); FindZLIB takes
# the library from here and zlib.h from the host's zlib1g-dev.
set(BPROP_CROSS_LIBZ /usr/lib/${BPROP_CROSS_TRIPLE}/libz.so.1)
if(NOT DEFINED ZLIB_LIBRARY AND EXISTS ${BPROP_CROSS_LIBZ})
  set(ZLIB_LIBRARY ${BPROP_CROSS_LIBZ} CACHE FILEPATH "zlib for ${BPROP_CROSS_TRIPLE}")
endif()

# try_run, gtest_discover_tests and add_test run the aarch64 programs under qemu-user (the dynamic loader and the
# shared libraries from /usr/aarch64-linux-gnu; multiarch ones, libz.so.1, are found in /usr/lib/aarch64-linux-gnu).
find_program(BPROP_QEMU_AARCH64 qemu-aarch64)
if(BPROP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${BPROP_QEMU_AARCH64} -L /usr/${BPROP_CROSS_TRIPLE})
endif()
