# CMake toolchain file: cross-builds bprop for aarch64 Linux (the Ascend hosts: Atlas 800 9000, 800T A2) on an x86-64
# Debian 12 host with Debian's cross compiler (g++-aarch64-linux-gnu); programs and tests run under qemu-user.
# scripts/setup-aarch64.sh installs what it needs, scripts/test-aarch64.sh builds and tests with it:
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DBPROP_MPI=OFF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(BPROP_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${BPROP_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${BPROP_CROSS_TRIPLE}-g++)

# The aarch64 libraries bprop links besides glibc and libstdc++ (zlib, GoogleTest): unpacked and built there by
# scripts/setup-aarch64.sh (the environment variable BPROP_AARCH64_DEPS names another folder than build/aarch64-deps).
if(DEFINED ENV{BPROP_AARCH64_DEPS})
  set(BPROP_AARCH64_SYSROOT $ENV{BPROP_AARCH64_DEPS}/sysroot)
else()
  get_filename_component(BPROP_AARCH64_SYSROOT ${CMAKE_CURRENT_LIST_DIR}/../build/aarch64-deps/sysroot ABSOLUTE)
endif()

# The target's roots: the cross toolchain's glibc and libstdc++ (libc6-dev-arm64-cross, libstdc++-12-dev-arm64-cross)
# and that sysroot.
set(CMAKE_FIND_ROOT_PATH /usr/${BPROP_CROSS_TRIPLE} ${BPROP_AARCH64_SYSROOT})
# Programs (node, sh, ...) are the host's; libraries only the target's. Headers and CMake packages are looked for
# in the target's roots first, then on the host: Eigen and nlohmann-json are header-only and the same on every
# architecture (their CMake files are in /usr/share); a host package with libraries is not found, as its CMake
# files lie in /usr/lib/x86_64-linux-gnu/cmake, which is not on the aarch64 search path (lib/aarch64-linux-gnu).
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# zlib from libz.a (CMake 3.24+): at run time the programs need only the cross toolchain's glibc, libstdc++, libgcc_s.
set(ZLIB_USE_STATIC_LIBS ON)

# try_run, gtest_discover_tests and add_test run the aarch64 programs under qemu-user, with the dynamic loader,
# glibc and libstdc++ of /usr/aarch64-linux-gnu.
find_program(BPROP_QEMU_AARCH64 qemu-aarch64)
if(BPROP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${BPROP_QEMU_AARCH64} -L /usr/${BPROP_CROSS_TRIPLE})
endif()
