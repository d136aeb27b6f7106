#!/usr/bin/env bash
# A longer fuzz run than the test command's smoke run.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 300 s, every target)
#   FUZZ_TIME_LIMIT=S scripts/fuzz.sh ...                 (one execution's limit, default 10 s)
#
# With a nightly toolchain and cargo-fuzz (installed here from crates.io when missing),
# each target runs under libFuzzer, coverage-guided, its corpus growing in fuzz/corpus/
# from the seeds in fuzz/seeds/. Without nightly it runs the stable smoke runner, blind
# mutation, for the same time. Findings land in fuzz/artifacts/<target>/; exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-300}"
# One execution may take this long (libFuzzer's -timeout, the smoke runner's --time-limit);
# past it the input is saved (timeout-… / slow-…) and the run fails.
time_limit="${FUZZ_TIME_LIMIT:-10}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo run -q -p perfscope-fuzz --bin fuzz_smoke -- --help | sed -n 's/^targets: //p' | tr ' ' '\n')
fi

# hostile_args runs whole command lines of the real binary.
cargo build --bin perfscope
export PERFSCOPE_BIN="$PWD/target/debug/perfscope"

if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    status=0
    for target in "${targets[@]}"; do
        mkdir -p "fuzz/corpus/$target"
        echo "== libFuzzer: $target for ${seconds}s"
        cargo +nightly fuzz run --fuzz-dir fuzz --features libfuzzer "$target" \
            "fuzz/corpus/$target" "fuzz/seeds/$target" -- -max_total_time="$seconds" \
            -timeout="$time_limit" || status=1
    done
    exit "$status"
fi

echo "no nightly toolchain: running the stable smoke runner for ${seconds}s per target"
exec cargo run --release -p perfscope-fuzz --bin fuzz_smoke -- --seconds "$seconds" --time-limit "$time_limit" "${targets[@]}"
