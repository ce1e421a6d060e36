#!/usr/bin/env bash
# Steps for a GPU machine (a workstation, or a GPU box reached over ssh), each sized to finish
# within 10 minutes; logs and results go to $OUT (default ./out). Steps reuse build/ when a previous
# step left it.
#
#   bash bench/gpu_session.sh check [CTEST_ARGS...]
#                                              build core + CLI (no GUI) against python3's torch,
#                                              then `ctest -L gpu -j 2 CTEST_ARGS` (about 7 minutes;
#                                              `-E gpu_builtin_families` skips the 5-6 minute one)
#   bash bench/gpu_session.sh suite MODELS [ARGS...]
#                                              bench/suite.py on MODELS (comma-separated) for the
#                                              rest of the call (resumable: repeat the same command
#                                              while the machine is warm), then bench/report.py of
#                                              every model done so far into $OUT/report
#   bash bench/gpu_session.sh build             build core + CLI (no GUI) against python3's torch (about 2 minutes)
#   bash bench/gpu_session.sh baselines MODELS --baselines-from DIR [ARGS...]
#                                              bench/suite.py --baselines-from: eager and torch.compile
#                                              alone for an earlier run's cards (DIR: its published
#                                              results, e.g. bench/results/DATE-suite-h200-run3) into
#                                              $OUT/baselines; resumable like suite; needs build first
#   bash bench/gpu_session.sh families [ARGS...]
#                                              tests/gpu/builtin_families_gpu.py --jobs 8 ARGS alone
#                                              (e.g. `--ops aten::cat` to re-check one family's fix in
#                                              a minute or two, `--lengths 7 1000`); needs build first
#   bash bench/gpu_session.sh dispatch         bench/dispatch_overhead.py (the runtime's host cost per
#                                              hooked call, hit and fallback; about a minute); needs build first
#   bash bench/gpu_session.sh full             the whole test suite, the example and the older
#                                              benchmarks (capture overhead, evaluator cross-check,
#                                              search targets); longer than 10 minutes
#
# suite and baselines stop at --budget seconds (default: what is left of 560 s since this script
# started). torch.compile's max-autotune results survive a fresh machine: the suite starts from
# inductor's autotune cache kept in bench/inductor-autotune/ (committed, a small JSON keyed by
# inductor's system hash, so another torch or GPU ignores it), and each suite step writes the
# machine's cache into results-STEP.tar.gz (inductor-autotune/): copy it over bench/inductor-autotune/
# and commit it, and a fresh machine skips the convolution and matmul benchmarks done before
# (ResNet-50 fp32 needs more than one step without it).
#
# Each step ends by packing everything it wrote into $OUT/results-STEP.tar.gz and leaves beside it
# only the few files worth reading at once (environment.txt, the step's log, the report's markdown).
# Steps can be chained (`gpu_session.sh check -E gpu_builtin_families; gpu_session.sh dispatch`).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$root/out}"

record_environment() {
    mkdir -p "$out"
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

# --budget with what is left of the step's 10 minutes, unless the caller's arguments name one.
default_budget() {
    case " $* " in *" --budget "*) ;; *) echo --budget $((560 - SECONDS)) ;; esac
}

# inductor's local autotune cache (torch/_inductor/codecache.py, LocalCache: cache/<system hash>)
# under the suite's TORCHINDUCTOR_CACHE_DIR: restored from the committed copy where the machine has
# none, and written to $OUT after the run.
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

# bench/suite.py on MODELS (then ARGS) within the autotune cache's restore and hand-back, publishing
# to $out/NAME and logging to $out/NAME.log; prints its exit status.
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

# Packs everything under $out (but earlier steps' archives) into $out/results-STEP.tar.gz, then
# removes what is packed except KEEP (paths relative to $out), so that $out holds one archive and a
# few readable files per step; chained steps each leave their own archive.
bundle_out() {
    local step="$1" archive="/tmp/kforge-results-$$.tar.gz" keep path
    shift
    (cd "$out" && tar czf "$archive" --exclude='./results-*.tar.gz' .) || { echo "cannot pack $out" >&2; return 1; }
    mv "$archive" "$out/results-$step.tar.gz"
    while IFS= read -r -d '' path; do
        path="${path#"$out"/}"
        case "$path" in results-*.tar.gz) continue ;; esac
        for keep in "$@"; do [ "$path" = "$keep" ] && continue 2; done
        rm -f "$out/$path"
    done < <(find "$out" -type f -print0)
    find "$out" -mindepth 1 -type d -empty -delete
    echo "results: \$OUT/results-$step.tar.gz (beside it: $*)"
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

case "${1:-}" in
    build) record_environment; build; bundle_out build environment.txt build.log ;;
    check) shift; record_environment; check "$@"; bundle_out check environment.txt ctest-gpu.log ;;
    suite)
        if [ $# -lt 2 ]; then echo "usage: gpu_session.sh suite MODELS [suite.py args]" >&2; exit 2; fi
        shift; record_environment; suite "$@"
        bundle_out suite environment.txt suite.log "$(cd "$out" && ls report/*.md 2>/dev/null | head -n 1)" ;;
    baselines)
        if [ $# -lt 2 ]; then echo "usage: gpu_session.sh baselines MODELS --baselines-from DIR [suite.py args]" >&2; exit 2; fi
        shift; record_environment; baselines "$@"; bundle_out baselines environment.txt baselines.log ;;
    families) shift; record_environment; families "$@"; bundle_out families environment.txt families.log ;;
    dispatch) record_environment; dispatch; bundle_out dispatch environment.txt dispatch_overhead.md ;;
    full) record_environment; full; bundle_out full environment.txt test.log ctest-gpu.log ;;
    *) echo "usage: gpu_session.sh build | check [ARGS...] | suite MODELS [ARGS...] | baselines MODELS ARGS... | families [ARGS...] | dispatch | full" >&2; exit 2 ;;
esac
