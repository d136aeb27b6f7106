#!/usr/bin/env bash
# Runs every check and test perfscope has, on a fresh Debian 12 machine as on CI:
# installs what the tests need (scripts/install-test-deps.sh), then formatting, clippy,
# the whole cargo test suite and a short run of every fuzz target (a longer one: scripts/fuzz.sh).
# It leaves `git status` as it found it: it fails if a step rewrote a tracked file.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-test-deps.sh

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings
echo "== cargo clippy -p perfscope-qemu-plugin -p perfscope-frame-ops --all-targets -- -D warnings"
cargo clippy -p perfscope-qemu-plugin -p perfscope-frame-ops --all-targets -- -D warnings
echo "== cargo clippy -p perfscope-fuzz --all-targets --features libfuzzer -- -D warnings"
cargo clippy --locked -p perfscope-fuzz --all-targets --features libfuzzer -- -D warnings
echo "== cargo test"
cargo test --all-targets --no-fail-fast
echo "== cargo test -p perfscope-qemu-plugin -p perfscope-frame-ops"
cargo test -p perfscope-qemu-plugin -p perfscope-frame-ops
echo "== cargo test -p perfscope-fuzz"
cargo test --locked -p perfscope-fuzz
echo "== fuzz smoke: every target, ${FUZZ_SECONDS:=20} s each"
# hostile_args runs whole command lines of the real binary.
cargo build --locked --bin perfscope
PERFSCOPE_BIN="$PWD/target/debug/perfscope" \
    cargo run --locked -p perfscope-fuzz --bin fuzz_smoke -- --seconds "$FUZZ_SECONDS"
echo "== the tree is as the test command found it"
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
    git status --short
    echo "a step of the test command changed tracked files (above)" >&2
    exit 1
fi
echo "== all tests passed"
