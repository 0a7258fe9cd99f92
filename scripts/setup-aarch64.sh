#!/usr/bin/env bash
# Installs what the aarch64 cross build needs (cmake/aarch64-linux-gnu.cmake, scripts/test-aarch64.sh) on a Debian 12
# host, when missing, and prepares the aarch64 libraries it links in build/aarch64-deps/sysroot, once:
#  - the project's own packages (scripts/setup.sh): cmake, Eigen and nlohmann-json (header-only, used as they are),
#    googletest (its sources, /usr/src/googletest);
#  - g++-aarch64-linux-gnu: the cross compiler, with the target's glibc and libstdc++ in /usr/aarch64-linux-gnu;
#    qemu-user: qemu-aarch64 runs the programs and tests (-L /usr/aarch64-linux-gnu); file;
#  - zlib for aarch64: the Debian packages zlib1g:arm64 and zlib1g-dev:arm64, downloaded (the arm64 architecture is
#    added to dpkg for apt's package lists) and unpacked into the sysroot, not installed;
#  - GoogleTest for aarch64: built from /usr/src/googletest with the toolchain, installed into the sysroot.
# Why not multiarch packages (apt-get install zlib1g-dev:arm64 libgtest-dev:arm64): zlib1g-dev:arm64 pulls
# libc6-dev:arm64 and with it upgrades of host packages (linux-libc-dev, libssl3, krb5, e2fsprogs); even the runtime
# zlib1g:arm64 alone brings libc6:arm64, whose libc.so.6 (2.36-9) in /usr/lib/aarch64-linux-gnu is then preferred to
# the cross toolchain's (2.36-8cross1) by the loader of -L /usr/aarch64-linux-gnu, and that mix of two glibc builds
# hangs in pthread_create under qemu; and a second installed instance of libgtest-dev (or libc6) makes
# `dpkg -s libgtest-dev`, as scripts/setup.sh checks its packages, fail as ambiguous.
# Packages need root; the rest runs as anyone (BPROP_AARCH64_DEPS: another folder than build/aarch64-deps).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"

deps=${BPROP_AARCH64_DEPS:-$root/build/aarch64-deps}
sysroot="$deps/sysroot"

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "bprop setup-aarch64: root is needed to $1" >&2
    exit 1
  fi
}

missing=()
for pkg in g++-aarch64-linux-gnu qemu-user file; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
need_zlib=0
[ -f "$sysroot/.zlib-version" ] || need_zlib=1
update=0
if [ $need_zlib -eq 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  need_root "add the arm64 architecture for apt's package lists (or: sudo dpkg --add-architecture arm64)"
  echo "bprop setup-aarch64: adding the arm64 architecture to dpkg (for the zlib1g:arm64 package lists)"
  dpkg --add-architecture arm64
  update=1
fi
candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}'; }
if [ $need_zlib -eq 1 ] && { [ -z "$(candidate zlib1g-dev:arm64)" ] || [ "$(candidate zlib1g-dev:arm64)" = "(none)" ]; }; then
  update=1
fi
if [ ${#missing[@]} -gt 0 ] || [ $update -eq 1 ]; then
  need_root "install ${missing[*]:-nothing} and update apt's package lists (or: sudo apt-get update; sudo apt-get install -y --no-install-recommends ${missing[*]:-})"
  apt-get update -q
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "bprop setup-aarch64: installing missing Debian packages: ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-remove "${missing[@]}"
fi

# zlib for aarch64: zlib.h, libz.a, libz.so in $sysroot/usr/{include,lib/aarch64-linux-gnu} (the build links libz.a).
if [ $need_zlib -eq 1 ]; then
  version=$(candidate zlib1g-dev:arm64)
  echo "bprop setup-aarch64: unpacking zlib1g:arm64 and zlib1g-dev:arm64 $version into $sysroot"
  tmp=$(mktemp -d)
  sandbox=()  # as root, apt downloads as its _apt user, who cannot write to a folder of mktemp's
  [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
  (cd "$tmp" && apt-get download -q "${sandbox[@]}" "zlib1g:arm64=$version" "zlib1g-dev:arm64=$version" >/dev/null)
  mkdir -p "$sysroot"
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  rm -rf "$tmp"
  # libz.so points at /lib/aarch64-linux-gnu/libz.so.1.2.13: make it point inside the sysroot.
  ln -sfn "../../../lib/aarch64-linux-gnu/$(basename "$(readlink "$sysroot/usr/lib/aarch64-linux-gnu/libz.so")")" \
    "$sysroot/usr/lib/aarch64-linux-gnu/libz.so"
  echo "$version" >"$sysroot/.zlib-version"
fi

# GoogleTest (gtest and gtest_main, as libgtest-dev has them) for aarch64, again when googletest's version changes.
gtest_version=$(dpkg-query -W -f='${Version}' googletest)
if [ "$(cat "$sysroot/.googletest-version" 2>/dev/null)" != "$gtest_version" ]; then
  echo "bprop setup-aarch64: building GoogleTest $gtest_version for aarch64 into $sysroot"
  gtest_build="$deps/googletest-build"
  rm -rf "$gtest_build"
  cmake -S /usr/src/googletest -B "$gtest_build" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$sysroot/usr" -DCMAKE_INSTALL_LIBDIR=lib \
    -DBUILD_GMOCK=OFF -DINSTALL_GTEST=ON >/dev/null
  cmake --build "$gtest_build" -j 2
  cmake --install "$gtest_build" >/dev/null
  rm -rf "$gtest_build"
  echo "$gtest_version" >"$sysroot/.googletest-version"
fi
