#!/usr/bin/env bash
# Builds the AFL++ harness and fuzzes every target (or the ones named) for SECONDS each (default
# 20), starting from fuzz/corpus/<target>. Fails, printing the inputs, when a target crashes or
# hangs; a finding goes into fuzz/regressions/<target>/ so the workspace tests replay it.
# Needs cargo-afl (`cargo install cargo-afl`; `cargo afl config --build` once).
#   fuzz/run.sh                 # every target, 20 s each
#   SECONDS_PER_TARGET=600 fuzz/run.sh tls_server pkcs8_key
set -euo pipefail
cd "$(dirname "$0")"
seconds=${SECONDS_PER_TARGET:-20}
cargo afl build --release --locked -q
bin=target/release/pqkit-fuzz
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <("$bin" --list)
out=${PQKIT_FUZZ_OUT:-target/afl-out}
mkdir -p "$out"
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 \
       AFL_NO_AFFINITY=1 AFL_SKIP_CRASHES=1 AFL_QUIET=1
failed=0
for t in "${targets[@]}"; do
    rm -rf "${out:?}/$t"
    start=$(date +%s)
    # -t: a target call over 2 s is a hang (the slowest honest input, an SLH-DSA key, takes ms).
    cargo afl fuzz -V "$seconds" -t 2000 -i "corpus/$t" -o "$out/$t" -- "$bin" "$t" \
        > "$out/$t.log" 2>&1 || true
    stats="$out/$t/default/fuzzer_stats"
    execs=$(awk -F': *' '/^execs_done/ {print $2}' "$stats" 2>/dev/null || echo "?")
    paths=$(awk -F': *' '/^corpus_count/ {print $2}' "$stats" 2>/dev/null || echo "?")
    crashes=$(find "$out/$t/default/crashes" -type f -name 'id:*' 2>/dev/null | wc -l)
    hangs=$(find "$out/$t/default/hangs" -type f -name 'id:*' 2>/dev/null | wc -l)
    echo "fuzz $t: $(( $(date +%s) - start )) s, $execs executions, $paths corpus entries, $crashes crashes, $hangs hangs"
    if [ ! -f "$stats" ]; then
        echo "fuzz $t: afl-fuzz did not run:"; tail -20 "$out/$t.log"; failed=1
    fi
    if [ "$crashes" -gt 0 ] || [ "$hangs" -gt 0 ]; then
        failed=1
        for f in "$out/$t"/default/crashes/id:* "$out/$t"/default/hangs/id:*; do
            [ -f "$f" ] && { echo "  $f:"; xxd "$f" | head -8; }
        done
    fi
done
exit $failed
