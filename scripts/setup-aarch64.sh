#!/usr/bin/env bash
# Installs what the aarch64 cross build (cmake/aarch64-linux-gnu.cmake, scripts/test-aarch64.sh) needs on a Debian 12
# host, when missing (the packages need root), and builds GoogleTest for aarch64 once:
#  - the project's own packages (scripts/setup.sh): cmake, Eigen, nlohmann-json, googletest's sources, zlib.h;
#  - g++-aarch64-linux-gnu (the cross compiler, with the target's libc and libstdc++ in /usr/aarch64-linux-gnu),
#    qemu-user (qemu-aarch64 runs the programs and tests), file;
#  - zlib1g:arm64, the aarch64 libz.so.1, as a Debian multiarch package (dpkg --add-architecture arm64) at exactly the
#    host's zlib1g version, which installs nothing else but libc6:arm64, libgcc-s1:arm64 and gcc-12-base:arm64 (at the
#    host's versions too) and changes no host package. A Multi-Arch: same package must have one version on every
#    architecture: unpinned, apt would upgrade the host's zlib1g along. Not zlib1g-dev:arm64: it needs
#    libc6-dev:arm64, whose linux-libc-dev:arm64 must match the host's linux-libc-dev, so apt upgrades host packages
#    (linux-libc-dev, libssl3, krb5, e2fsprogs, ...). The toolchain file points ZLIB_LIBRARY at libz.so.1; zlib.h and
#    zconf.h are the host's (the same on every architecture).
#  - GoogleTest built from the host's /usr/src/googletest with the toolchain, installed in build/aarch64-deps/googletest
#    (again when the googletest package's version changes). Not libgtest-dev:arm64: with two instances installed,
#    `dpkg -s libgtest-dev` (as scripts/setup.sh checks its packages) fails as ambiguous, and setup.sh would then
#    run apt-get on every call (and stop, as not root, for anyone else).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"

host_packages=(g++-aarch64-linux-gnu qemu-user file)
arm64_packages=(zlib1g)  # each at the version of the same package on the host

installed_version() {  # the installed version of package:arch, or nothing
  dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$1" 2>/dev/null | sed -n 's/^ii *//p'
}

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "bprop setup-aarch64: root is needed to $1" >&2
    exit 1
  fi
}

missing=()
for pkg in "${host_packages[@]}"; do
  [ -n "$(installed_version "$pkg")" ] || missing+=("$pkg")
done
host_arch=$(dpkg --print-architecture)
for pkg in "${arm64_packages[@]}"; do
  host_version=$(installed_version "$pkg:$host_arch")
  [ -n "$host_version" ] || { echo "bprop setup-aarch64: $pkg is not installed on the host" >&2; exit 1; }
  [ "$(installed_version "$pkg:arm64")" = "$host_version" ] || missing+=("$pkg:arm64=$host_version")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "bprop setup-aarch64: installing missing Debian packages: ${missing[*]}"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    need_root "add the arm64 architecture (run as root, or: sudo dpkg --add-architecture arm64)"
    echo "bprop setup-aarch64: adding the arm64 architecture to dpkg (multiarch)"
    dpkg --add-architecture arm64
  fi
  need_root "install them (run as root, or: sudo apt-get install -y --no-install-recommends ${missing[*]})"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-remove "${missing[@]}"
fi

# GoogleTest (gtest and gtest_main, as libgtest-dev has them) for aarch64.
gtest_version=$(installed_version "googletest")
gtest_prefix="$root/build/aarch64-deps/googletest"
gtest_build="$root/build/aarch64-deps/googletest-build"
if [ "$(cat "$gtest_prefix/VERSION" 2>/dev/null)" != "$gtest_version" ]; then
  echo "bprop setup-aarch64: building GoogleTest $gtest_version for aarch64 in $gtest_prefix"
  rm -rf "$gtest_prefix" "$gtest_build"
  cmake -S /usr/src/googletest -B "$gtest_build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$gtest_prefix" -DCMAKE_INSTALL_LIBDIR=lib \
    -DBUILD_GMOCK=OFF -DINSTALL_GTEST=ON >/dev/null
  cmake --build "$gtest_build" -j 2
  cmake --install "$gtest_build" >/dev/null
  echo "$gtest_version" >"$gtest_prefix/VERSION"
  rm -rf "$gtest_build"
fi
