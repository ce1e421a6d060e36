#!/usr/bin/env bash
# The fuzz tests of the file readers (.cast packages, project files, search trees): libFuzzer
# harnesses built with clang under AddressSanitizer and UndefinedBehaviorSanitizer, independently of
# the GCC build, from the torch-free core libraries' sources (tests/fuzz/README.md).
#
# Usage: fuzz.sh build OUT                        compile the harnesses into OUT
#        fuzz.sh seed OUT KFORGE_BIN MODELS_DIR     seed corpora from a project and package made there
#        fuzz.sh prepare OUT KFORGE_BIN MODELS_DIR  build, then seed
#        fuzz.sh run OUT HARNESS SECONDS            replay tests/fuzz/regressions/HARNESS, then fuzz
#        fuzz.sh all OUT KFORGE_BIN MODELS_DIR SECONDS   prepare, then run every harness
# HARNESS: cast_reader, project_json or search_tree. KFORGE_FUZZ_SEED (default 1; 0: a new seed
# each run) seeds the mutations. Every run is bounded: no input may make the
# process hold more than 512 MB or ask for more than 256 MB in one allocation, or take 10 s.
# Exit status 77 (ctest: skipped) when clang++ cannot build a libFuzzer executable.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
harnesses=(cast_reader project_json search_tree)
rss_limit_mb=512
malloc_limit_mb=256

say() { echo "fuzz: $*" >&2; }

# The .cpp files of a library's kforge_add_library(NAME ...) in a CMakeLists.txt, relative to core/.
library_sources() { # CMAKE_FILE NAME PREFIX
    awk -v name="$2" '
        $0 ~ "add_library\\(" name "( |$)" { inside = 1 }
        inside { for (i = 1; i <= NF; ++i) if ($i ~ /\.cpp\)?$/) { s = $i; sub(/\)$/, "", s); print s } }
        inside && /\)/ { inside = 0 }' "$1" | sed "s|^|$3|"
}

check_clang() {
    local probe
    probe="$(mktemp -d)"
    printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
        > "$probe/probe.cpp"
    if ! command -v clang++ >/dev/null ||
        ! clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" 2>/dev/null; then
        rm -rf "$probe"
        echo "SKIPPED: clang++ with libFuzzer is not installed (Debian: clang, libclang-rt-14-dev)"
        exit 77
    fi
    rm -rf "$probe"
}

build() { # OUT
    local out="$1"
    check_clang
    mkdir -p "$out/generated/util"
    local version
    version="$(sed -n 's/^project(KernelForge VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
    local header="#pragma once
namespace kforge::core {
inline constexpr const char* kKforgeVersion = \"$version\";
}"
    [ "$(cat "$out/generated/util/Version.h" 2>/dev/null)" = "$header" ] ||
        echo "$header" > "$out/generated/util/Version.h"
    local sources="" library
    for library in util model project cast search; do
        sources+="$(library_sources "$root/core/$library/CMakeLists.txt" "kforge_$library" "$library/" | tr '\n' ' ')"
    done
    make -s -f "$here/Makefile" -j "${FUZZ_JOBS:-$(nproc)}" ROOT="$root" OUT="$out" SOURCES="$sources"
    say "built ${harnesses[*]} in $out"
}

seed() { # OUT KFORGE_BIN MODELS_DIR
    local out="$1"
    rm -rf "$out/corpus"
    "${KFORGE_PYTHON:-python3}" "$here/make_seeds.py" "$2" "$3" "$out"
}

run() { # OUT HARNESS SECONDS
    local out="$1" harness="$2" seconds="$3"
    check_clang
    local binary="$out/fuzz_$harness"
    [ -x "$binary" ] || { say "$binary is missing: run '$0 build $out' first"; exit 1; }
    local limits=(-rss_limit_mb=$rss_limit_mb -malloc_limit_mb=$malloc_limit_mb -timeout=10
                  -error_exitcode=1 -timeout_exitcode=1)
    # Inputs that once failed stay failing-free: each is run once.
    local regressions="$here/regressions/$harness"
    if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
        "$binary" "${limits[@]}" "$regressions"/* > "$out/$harness-regressions.log" 2>&1 || {
            tail -n 40 "$out/$harness-regressions.log"
            say "$harness: a regression input fails (log: $out/$harness-regressions.log)"
            exit 1
        }
        say "$harness: $(ls "$regressions" | wc -l) regression input(s) pass"
    fi
    local seeds="$out/corpus/$harness"
    local work="$out/work/$harness"
    local artifacts="$out/artifacts/$harness"
    rm -rf "$work"
    mkdir -p "$work" "$artifacts" "$seeds"
    local dict=()
    [ -s "$out/$harness.dict" ] && dict=(-dict="$out/$harness.dict")
    local log="$out/$harness.log"
    local status=0
    # A fixed seed by default, so that a failure in a test run replays with the same command;
    # KFORGE_FUZZ_SEED=0 draws a new one each run.
    "$binary" "${limits[@]}" "${dict[@]}" -seed="${KFORGE_FUZZ_SEED:-1}" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "$work" "$seeds" > "$log" 2>&1 || status=$?
    local done_line execs
    done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)"
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    if [ "$status" -ne 0 ]; then
        grep -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==' "$log" | head -n 20 || true
        tail -n 30 "$log"
        say "$harness: FAILED after ${execs:-?} runs (log: $log; inputs: $artifacts)"
        exit 1
    fi
    say "$harness: ${execs:-?} runs in $seconds s, no crash, no allocation over $malloc_limit_mb MB," \
        "rss under $rss_limit_mb MB; ${done_line#* DONE   }"
}

case "${1:-}" in
    build) build "$2" ;;
    seed) seed "$2" "$3" "$4" ;;
    prepare) build "$2"; seed "$2" "$3" "$4" ;;
    run) run "$2" "$3" "$4" ;;
    all)
        build "$2"; seed "$2" "$3" "$4"
        for h in "${harnesses[@]}"; do run "$2" "$h" "$5"; done ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
esac
