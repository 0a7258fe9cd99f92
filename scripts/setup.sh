#!/usr/bin/env bash
# Installs the Debian packages bprop builds with (and any named as arguments), when missing (needs root).
set -euo pipefail
# libopenblas0-pthread: large GEMMs run on OpenBLAS, loaded at run time (bprop works without it, on Eigen alone)
# libdnnl2: bfloat16 GEMMs run on oneDNN, loaded at run time (without it they run on float32 copies)
# fortunes: the plain-text corpus of the GPT (scripts/make-text-corpus.mjs)
# openmpi-bin, libopenmpi-dev: the MPI implementation of bprop::dist (data parallel training, mpirun)
needed=(cmake g++ make libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev zlib1g-dev libopenblas0-pthread libdnnl2 dataset-fashion-mnist fortunes openmpi-bin libopenmpi-dev "$@")  # callers may name extra packages
missing=()
for pkg in "${needed[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bprop setup: installing missing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "bprop setup: root is needed to install them (run as root, or: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
