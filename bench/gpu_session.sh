#!/usr/bin/env bash
# One GPU-machine session: build core + CLI (no GUI) against python3's torch, run the whole test
# suite (GPU tests included), then the benchmarks. Logs and results go to $OUT (default ./out).
# Usage on the device machine: bash bench/gpu_session.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/out}"
mkdir -p "$out"
{
    date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
} > "$out/environment.txt" 2>&1

KFORGE_GUI=OFF bash "$root/packaging/test.sh" > "$out/test.log" 2>&1
echo "test.sh exit $?" >> "$out/test.log"
( cd "$root/build" && ctest -L gpu --output-on-failure > "$out/ctest-gpu.log" 2>&1; echo "ctest -L gpu exit $?" >> "$out/ctest-gpu.log" )

KFORGE_GUI=OFF bash "$root/packaging/example.sh" > "$out/example.log" 2>&1
echo "example.sh exit $?" >> "$out/example.log"

python3 "$root/bench/capture_overhead.py" --kforge "$root/build/cli/kforge" --out "$out/capture_overhead" --runs 5 \
    > "$out/capture_overhead.md" 2> "$out/capture_overhead.err"
echo "capture_overhead exit $?" >> "$out/capture_overhead.md"
python3 "$root/bench/evaluator_crosscheck.py" --kforge "$root/build/cli/kforge" --out "$out/evaluator" \
    > "$out/evaluator_crosscheck.md" 2> "$out/evaluator_crosscheck.err"
echo "evaluator_crosscheck exit $?" >> "$out/evaluator_crosscheck.md"
rm -f "$out"/evaluator/*.pt "$out"/evaluator/*.cubin; rm -rf "$out"/evaluator/project/samples
python3 "$root/bench/search_targets.py" --kforge "$root/build/cli/kforge" --out "$out/search_targets" \
    > "$out/search_targets.md" 2> "$out/search_targets.err"
echo "search_targets exit $?" >> "$out/search_targets.md"
rm -f "$out"/search_targets/*/*.pt "$out"/search_targets/*/*.cubin; rm -rf "$out"/search_targets/*/project/samples

rm -f "$out"/capture_overhead/*.pt
rm -rf "$out"/capture_overhead/project-*/samples
tail -n 5 "$out/test.log" "$out/ctest-gpu.log"; head -n 12 "$out/example.log"; cat "$out/capture_overhead.md" "$out/evaluator_crosscheck.md"; tail -n 3 "$out/evaluator_crosscheck.err"
cat "$out/search_targets.md"; tail -n 3 "$out/search_targets.err"
