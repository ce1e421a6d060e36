#!/usr/bin/env bash
# Quick start command 1: installs dependencies, builds, exports the bundled example model to
# TorchScript and captures it into a new project, printing its operator cards.
# The project lands in build/example/project-<timestamp>; earlier ones are kept.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/build.sh"
. "$root/.deps/env.sh"

example="$root/build/example"
mkdir -p "$example"
"$KFORGE_PYTHON" -W ignore "$root/examples/make_example_model.py" "$example"
project="$example/project-$(date +%Y%m%d-%H%M%S)"
"$root/build/cli/kforge" capture "$example/example_model.pt" --inputs "$example/example_inputs.pt" -o "$project"
echo
echo "Project written to $project (open it with: build/cli/kforge cards $project)"
