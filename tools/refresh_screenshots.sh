#!/usr/bin/env bash
# Refreshes docs/screenshots/*.png from real search results, on request only: no test and no
# packaging step runs it, so a normal test run never rewrites a tracked file.
#
# The pipeline is the CPU-only one of the tests: the transformer test model (made by
# tests/models/make_test_models.py with the build's torch) captured on this machine's CPU, its
# softmax card searched by the built-in proposer for 12 iterations (NVRTC compiles every candidate;
# without a GPU each node is compile-only), then `kernelforge --screenshot` over that project,
# which waits until the summaries and the card's tree are loaded (docs/gui.md, "Screenshots").
#
# Usage: bash tools/refresh_screenshots.sh [BUILD_DIR]   (default: build; needs a GUI build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
kforge="$build/cli/kforge"
kernelforge="$build/app/kernelforge"
for exe in "$kforge" "$kernelforge"; do
  [[ -x "$exe" ]] || { echo "refresh_screenshots: $exe is missing: build first (a build with the GUI)" >&2; exit 1; }
done
python="$(sed -n 's/^KFORGE_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt")"
[[ -n "$python" ]] || python=python3

work="$(mktemp -d "${TMPDIR:-/tmp}/kernelforge-screenshots.XXXXXX")"
trap 'rm -rf "$work"' EXIT
project="$work/transformer_block"
"$python" "$root/tests/models/make_test_models.py" "$work/models" >/dev/null
# One torch thread: on a shared machine, intra-op threads that wait for busy cores turn the CPU
# capture's eager timings (and so the shares in the picture) into noise.
OMP_NUM_THREADS=1 "$kforge" capture "$work/models/transformer_block.pt" --inputs 4x64x32 --device cpu -o "$project" \
  --quiet >/dev/null
softmax="$("$kforge" cards "$project" --json | "$python" -c '
import json, sys
cards = json.load(sys.stdin)["cards"]
print(next(c["id"] for c in cards if c["op"] == "aten::softmax" and c["overload"] == "int"))')"
"$kforge" optimize "$project" --cards "$softmax" --iterations 12 --seed 1 >/dev/null

shots="$root/docs/screenshots"
QT_QPA_PLATFORM=offscreen "$kernelforge" "$project" --screenshot "$shots/main-window.png" --card "$softmax"
echo "refreshed $shots/main-window.png (card $softmax)"
