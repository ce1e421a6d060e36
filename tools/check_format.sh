#!/usr/bin/env bash
# Checks that every tracked C++ source and header follows the tree's .clang-format; `--fix` rewrites
# the ones that do not. CUDA sources (*.cu) are left as written: tests quote their lines.
#
# Usage: tools/check_format.sh [--fix]
# Exit status: 0 all formatted (or fixed), 1 some files differ (listed), 2 bad usage,
# 77 (ctest: skipped) when clang-format 14 or git is missing or this is not a git checkout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fix=0
case "${1:-}" in
    "") ;;
    --fix) fix=1 ;;
    *) echo "usage: tools/check_format.sh [--fix]" >&2; exit 2 ;;
esac

# One version: another clang-format may lay the same code out differently.
formatter=""
for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null && "$candidate" --version | grep -q 'version 14\.'; then
        formatter="$candidate"
        break
    fi
done
if [ -z "$formatter" ]; then
    echo "SKIPPED: clang-format 14 is not installed (Debian 12: clang-format)"
    exit 77
fi
if ! command -v git >/dev/null || ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "SKIPPED: not a git checkout: the files to check are the tracked ones"
    exit 77
fi

cd "$root"
mapfile -t files < <(git ls-files -- '*.cpp' '*.h')
if [ "$fix" -eq 1 ]; then
    printf '%s\0' "${files[@]}" | xargs -0 -n 50 "$formatter" -i --style=file
    echo "format: ${#files[@]} files formatted"
    exit 0
fi
differ=()
for file in "${files[@]}"; do
    if ! "$formatter" --style=file --dry-run --Werror "$file" >/dev/null 2>&1; then
        differ+=("$file")
    fi
done
if [ ${#differ[@]} -gt 0 ]; then
    printf '  %s\n' "${differ[@]}"
    echo "format: ${#differ[@]} of ${#files[@]} files differ from .clang-format (tools/check_format.sh --fix)"
    exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
