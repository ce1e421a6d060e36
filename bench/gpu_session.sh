#!/usr/bin/env bash
# GPU steps on a machine with an NVIDIA GPU: your workstation, or a GPU box you reach over ssh (no
# Qt needed there). Run from a checkout; steps reuse build/ when an earlier step left it.
#
# Usage: bash bench/gpu_session.sh [--out DIR] [--pack] STEP [ARGS...]
#
#   --out DIR   where logs and results go (default: ./out, created when missing). The OUT
#               environment variable is not read: name the folder with --out.
#   --pack      at the end of the step, pack what is under DIR (earlier archives aside) into
#               DIR/results-STEP.tar.gz and keep beside it only its summary files (environment.txt,
#               the step's log, the report's markdown): one file to copy back from an ssh box.
#
# Steps:
#   build                            build core + CLI (no GUI) against python3's torch (about 2 minutes)
#   check [CTEST_ARGS...]            build, then `ctest -L gpu -j 2 CTEST_ARGS` (about 7 minutes;
#                                    `-E gpu_builtin_families` skips the longest test, 5-6 minutes)
#   suite MODELS [ARGS...]           bench/suite.py on MODELS (comma-separated) until every stage is done,
#                                    then bench/report.py of every model done so far into DIR/report.
#                                    Resumable: with `--budget S` it stops after S seconds (exit 3) and
#                                    the same command continues where it stopped (build/suite is kept)
#   baselines MODELS --baselines-from RUN [ARGS...]
#                                    bench/suite.py --baselines-from: eager and torch.compile alone for
#                                    an earlier run's cards (RUN: its published results, e.g.
#                                    bench/results/DATE-suite-h200-run3) into DIR/baselines; resumable
#                                    like suite; needs build first
#   families [ARGS...]               tests/gpu/builtin_families_gpu.py --jobs 8 ARGS alone (e.g.
#                                    `--ops aten::cat` re-checks one family's fix in a minute or two,
#                                    `--lengths 7 1000`); needs build first
#   regions [ARGS...]                bench/region_bench.py ARGS: fused-region chains captured, searched and
#                                    timed against eager's chain and torch.compile (e.g. `--chains
#                                    gelu_tanh --iterations 8`); needs build first
#   problems [ARGS...]               bench/single_op_problems.py ARGS: the single-op problem set (activations, norms,
#                                    softmax, reductions, pooling, scans; 1 MiB to 6 GiB) against eager, torch.compile
#                                    and the copy floor (e.g. `--only softmax_f32_6gib`; about 10 s a problem);
#                                    needs build first
#   throughput [ARGS...]             bench/search_throughput.py ARGS: candidates per minute on a 256 MiB and a
#                                    6 GiB card, each candidate's phases and the evaluator's peak memory
#                                    (e.g. `--seconds 60 --only layer_norm_256mib_f32`); needs build first
#   dispatch                         bench/dispatch_overhead.py (the runtime's host cost per hooked call,
#                                    hit and fallback; about a minute); needs build first
#   full                             the whole test suite, the example and the older benchmarks (capture
#                                    overhead, evaluator cross-check, search targets): the longest step
#
# Steps chain: `bash bench/gpu_session.sh check -E gpu_builtin_families; bash bench/gpu_session.sh dispatch`.
#
# torch.compile's max-autotune benchmarks take minutes per model. suite and baselines start from
# inductor's autotune cache committed in bench/inductor-autotune/ (a small JSON keyed by inductor's
# system hash, so another torch, triton or GPU ignores it) and copy the machine's cache to
# DIR/inductor-autotune/ afterwards: copy that over bench/inductor-autotune/ and commit it, and a
# machine that has not run them yet skips the convolution and matmul benchmarks done before.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

out="./out"
pack=0
while [ $# -gt 0 ]; do
    case "$1" in
        --out)
            if [ $# -lt 2 ] || [ -z "$2" ]; then echo "gpu_session.sh: --out needs a folder" >&2; exit 2; fi
            out="$2"; shift 2 ;;
        --out=*) out="${1#--out=}"; shift ;;
        --pack) pack=1; shift ;;
        *) break ;;
    esac
done

# The start of every step: DIR made absolute (steps run commands in other folders) and the machine
# recorded in DIR/environment.txt.
record_environment() {
    mkdir -p "$out" || { echo "gpu_session.sh: cannot create $out" >&2; exit 2; }
    out="$(cd "$out" && pwd)"
    {
        date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
        python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
    } > "$out/environment.txt" 2>&1
}

build() {
    (KFORGE_GUI=OFF bash "$root/packaging/build.sh" > "$out/build.log" 2>&1; echo "build exit $?" >> "$out/build.log")
    tail -n 2 "$out/build.log"
}

check() {
    build
    (cd "$root/build" && ctest -L gpu -j 2 -V "$@" > "$out/ctest-gpu.log" 2>&1; echo "ctest -L gpu exit $?" >> "$out/ctest-gpu.log")
    grep -E "^ *[0-9]+/[0-9]+ Test|tests passed|tests failed|exit [0-9]" "$out/ctest-gpu.log"
}

# bench/suite.py stops at --budget seconds (its default: 540). Unless the caller's arguments name
# one, give it a week: in effect no deadline, so that the step runs until the suite is done.
default_budget() {
    case " $* " in *" --budget "* | *" --budget="*) ;; *) echo --budget 604800 ;; esac
}

# inductor's local autotune cache (torch/_inductor/codecache.py, LocalCache: cache/<system hash>)
# under the suite's TORCHINDUCTOR_CACHE_DIR: restored from the committed copy where the machine has
# none, and copied to $out/inductor-autotune after the run.
autotune_cache="$root/build/suite/inductor-cache/cache"
committed_autotune="$root/bench/inductor-autotune"
restore_autotune_cache() {
    mkdir -p "$autotune_cache"
    find "$committed_autotune" -maxdepth 1 -type f -regextype egrep -regex '.*/[0-9a-f]{64}' \
        -exec cp -n {} "$autotune_cache/" \; 2>/dev/null
    return 0
}
save_autotune_cache() {
    if [ -d "$autotune_cache" ]; then
        mkdir -p "$out/inductor-autotune" && cp "$autotune_cache/"* "$out/inductor-autotune/" 2>/dev/null
    fi
    return 0
}

# bench/suite.py on MODELS (then ARGS) between the autotune cache's restore and save. Its working
# folder is build/suite (kept between steps: the suite resumes from it); it publishes to $out/NAME
# and logs to $out/NAME.log; prints its exit status.
run_suite() {
    local name="$1" models="$2"; shift 2
    restore_autotune_cache
    python3 "$root/bench/suite.py" --kforge "$root/build/cli/kforge" --out "$root/build/suite" --models "$models" \
        $(default_budget "$@") --publish "$out/$name" "$@" > "$out/$name.log" 2>&1
    echo "bench/suite.py ($name) exit $?"
    save_autotune_cache
}

suite() {
    run_suite suite "$@"
    grep -v -E "^E[0-9]{4} |AUTOTUNE|triton_|^ +(mm|conv)" "$out/suite.log" | tail -n 20
    python3 "$root/bench/report.py" "$root/build/suite" --out-dir "$out/report" > /dev/null 2> "$out/report.err" \
        || tail -n 3 "$out/report.err"
}

baselines() {
    run_suite baselines "$@"
    grep -v -E "^E[0-9]{4} |AUTOTUNE|triton_|^ +(mm|conv)" "$out/baselines.log" | grep -E "^suite:|baselines\)" | tail -n 12
}

# --pack: packs everything under $out (but earlier steps' archives) into $out/results-STEP.tar.gz,
# then removes what is packed except KEEP (paths relative to $out).
pack_out() {
    local step="$1" archive keep path
    shift
    archive="$(mktemp "${TMPDIR:-/tmp}/kforge-results-XXXXXX.tar.gz")" || return 1
    (cd "$out" && tar czf "$archive" --exclude='./results-*.tar.gz' .) || { echo "cannot pack $out" >&2; rm -f "$archive"; return 1; }
    mv "$archive" "$out/results-$step.tar.gz"
    while IFS= read -r -d '' path; do
        path="${path#"$out"/}"
        case "$path" in results-*.tar.gz) continue ;; esac
        for keep in "$@"; do [ "$path" = "$keep" ] && continue 2; done
        rm -f "$out/$path"
    done < <(find "$out" -type f -print0)
    find "$out" -mindepth 1 -type d -empty -delete
    echo "results: $out/results-$step.tar.gz (beside it: $*)"
}

# The end of a step: with --pack, one archive; without, the folder as the step left it.
finish() {
    local step="$1"
    shift
    if [ "$pack" = 1 ]; then pack_out "$step" "$@"; else echo "results: $out"; fi
}

families() {
    python3 "$root/tests/gpu/builtin_families_gpu.py" --kforge "$root/build/cli/kforge" --jobs 8 "$@" \
        > "$out/families.log" 2>&1
    echo "builtin_families_gpu.py exit $?" >> "$out/families.log"
    grep -E "FAIL|cards searched in|^summary|passed|exit [0-9]" "$out/families.log" | tail -n 40
}

dispatch() {
    python3 "$root/bench/dispatch_overhead.py" --kforge "$root/build/cli/kforge" \
        --library "$root/build/runtime/libkforge_runtime.so" --out "$out/dispatch" > "$out/dispatch_overhead.md" 2>&1
    echo "dispatch_overhead exit $?" >> "$out/dispatch_overhead.md"
    cat "$out/dispatch_overhead.md"
}

regions() {
    python3 "$root/bench/region_bench.py" --kforge "$root/build/cli/kforge" --out "$out/regions" "$@" \
        > "$out/region_bench.log" 2>&1
    echo "region_bench exit $?" >> "$out/region_bench.log"
    tail -20 "$out/region_bench.log"
}

problems() {
    python3 "$root/bench/single_op_problems.py" --kforge "$root/build/cli/kforge" --out "$out/problems" "$@" \
        > "$out/single_op_problems.log" 2>&1
    echo "single_op_problems exit $?" >> "$out/single_op_problems.log"
    tail -60 "$out/single_op_problems.log"
}

throughput() {
    python3 "$root/bench/search_throughput.py" --kforge "$root/build/cli/kforge" --out "$out/throughput" "$@" \
        > "$out/search_throughput.log" 2>&1
    echo "search_throughput exit $?" >> "$out/search_throughput.log"
    tail -30 "$out/search_throughput.log"
}

# The older benchmarks keep their trees, reports and kernels; the models, samples and cubins they
# wrote (gigabytes) are deleted.
full() {
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
    tail -n 5 "$out/test.log" "$out/ctest-gpu.log"; head -n 12 "$out/example.log"
    cat "$out/capture_overhead.md" "$out/evaluator_crosscheck.md"; tail -n 3 "$out/evaluator_crosscheck.err"
    cat "$out/search_targets.md"; tail -n 3 "$out/search_targets.err"
}

usage="usage: gpu_session.sh [--out DIR] [--pack] build | check [ARGS...] | suite MODELS [ARGS...] | baselines MODELS ARGS... | families [ARGS...] | regions [ARGS...] | problems [ARGS...] | throughput [ARGS...] | dispatch | full"
case "${1:-}" in
    build) record_environment; build; finish build environment.txt build.log ;;
    check) shift; record_environment; check "$@"; finish check environment.txt ctest-gpu.log ;;
    suite)
        if [ $# -lt 2 ]; then echo "usage: gpu_session.sh [--out DIR] [--pack] suite MODELS [suite.py args]" >&2; exit 2; fi
        shift; record_environment; suite "$@"
        finish suite environment.txt suite.log "$(cd "$out" && ls report/*.md 2>/dev/null | head -n 1)" ;;
    baselines)
        if [ $# -lt 2 ]; then echo "usage: gpu_session.sh [--out DIR] [--pack] baselines MODELS --baselines-from RUN [suite.py args]" >&2; exit 2; fi
        shift; record_environment; baselines "$@"; finish baselines environment.txt baselines.log ;;
    families) shift; record_environment; families "$@"; finish families environment.txt families.log ;;
    regions) shift; record_environment; regions "$@"; finish regions environment.txt region_bench.log ;;
    problems) shift; record_environment; problems "$@"; finish problems environment.txt single_op_problems.log ;;
    throughput) shift; record_environment; throughput "$@"; finish throughput environment.txt search_throughput.log ;;
    dispatch) record_environment; dispatch; finish dispatch environment.txt dispatch_overhead.md ;;
    full) record_environment; full; finish full environment.txt test.log ctest-gpu.log ;;
    -h | --help | help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$usage" >&2; exit 2 ;;
esac
