#!/usr/bin/env bash
# Quick start command 1: the main job on the bundled example model. Installs dependencies, builds,
# exports the example to TorchScript and captures it into a new project, then searches kernels for
# its cards. With an NVIDIA GPU (and a build with LibTorch's CUDA backend) the search validates and
# times every candidate, the proven ones are exported to a .cast package and `kforge run` compares
# the model with and without it; without one, the candidates are generated and compiled only.
# The project lands in build/example/project-<timestamp>; earlier ones are kept.
#
# Usage: packaging/example.sh [--iterations N]   (search iterations per card; default 20)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
iterations=20
case "${1:-}" in
    "") ;;
    --iterations)
        [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "example.sh: --iterations needs a whole number >= 1" >&2; exit 2; }
        iterations="$2" ;;
    *) echo "usage: packaging/example.sh [--iterations N]" >&2; exit 2 ;;
esac
bash "$root/packaging/build.sh"
. "$root/.deps/env.sh"
kforge="$root/build/cli/kforge"
step() { printf '\n== %s\n' "$*"; }

example="$root/build/example"
mkdir -p "$example"
"$KFORGE_PYTHON" -W ignore "$root/examples/make_example_model.py" "$example"
project="$example/project-$(date +%Y%m%d-%H%M%S)"

step "capture: run the model once, record its operators as cards"
"$kforge" capture "$example/example_model.pt" --inputs "$example/example_inputs.pt" -o "$project"

# A GPU the build can use: a driver that lists one, and the CUDA runtime library (CUDA builds only).
gpu=0
if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU ' &&
    [ -e "$root/build/runtime/libkforge_runtime.so" ]; then
    gpu=1
fi

step "optimize: search kernels for every card the built-in proposer covers ($iterations iterations each)"
# A card whose search failed is named in optimize's last line; the others still count.
"$kforge" optimize "$project" --iterations "$iterations" ||
    echo "example.sh: optimize exited $?: the cards above without a failure are searched; going on"

if [ "$gpu" -eq 1 ]; then
    package="$project/example.cast"
    step "export: package the kernels proven correct and faster"
    "$kforge" export "$project" -o "$package"
    step "run: the model end to end, eager and with the package"
    "$kforge" run "$package" --inputs "$example/example_inputs.pt"
    echo
    echo "Package: $package"
else
    echo
    echo "No usable NVIDIA GPU here: the candidates were generated and compiled, not validated, timed" \
        "or exported. On a machine with one, the same command also validates and times them, exports" \
        "a .cast package and runs the model with it."
fi

echo
echo "Project: $project"
if [ -x "$root/build/app/kernelforge" ]; then
    echo "Open it in the desktop app:  $root/build/app/kernelforge $project"
fi
echo "Your own model (docs/exporting-models.md):"
echo "  $kforge capture MODEL.pt --inputs INPUTS.pt -o PROJECT"
echo "  $kforge optimize PROJECT"
echo "  $kforge export PROJECT -o MODEL.cast"
echo "  $kforge run MODEL.cast --inputs INPUTS.pt"
