#!/usr/bin/env bash
# Quick start command 2: installs dependencies, builds everything and runs the whole test suite.
# GPU tests (ctest label `gpu`) run where a CUDA device is usable and are reported as skipped elsewhere.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/build.sh" "$@"
cd "$root/build"
ctest --output-on-failure -j "$(nproc)"
