#!/usr/bin/env bash
# Configures and builds Kernel Forge into build/ (Release) with the settings from bootstrap.sh.
# Usage: packaging/build.sh [extra cmake -D options]
# KFORGE_PRESET picks the CMake configure preset (CMakePresets.json): dev (default), ci (warnings
# are errors) or gpu (no GUI); bootstrap's KFORGE_PYTHON and KFORGE_GUI are passed on top of it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/packaging/bootstrap.sh"
. "$root/.deps/env.sh"

launcher=()
if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
generator=()
# A new build tree uses Ninja when present; an existing one keeps the generator it was made with.
if [ ! -f "$root/build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
    generator=(-G Ninja)
fi

(cd "$root" && cmake --preset "${KFORGE_PRESET:-dev}" "${generator[@]}" \
    -DKFORGE_PYTHON="$KFORGE_PYTHON" -DKFORGE_GUI="$KFORGE_GUI" "${launcher[@]}" "$@" >/dev/null)
cmake --build "$root/build" -j "$(nproc)"
