#!/usr/bin/env bash
# Runs every check and test perfscope has, on a fresh Debian 12 machine as on CI:
# installs what the tests need (scripts/install-test-deps.sh), then formatting, clippy,
# the whole cargo test suite and a build of the fuzz targets.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-test-deps.sh

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy --all-targets -- -D warnings"
cargo clippy --all-targets -- -D warnings
echo "== cargo clippy -p perfscope-qemu-plugin --all-targets -- -D warnings"
cargo clippy -p perfscope-qemu-plugin --all-targets -- -D warnings
echo "== cargo test"
cargo test --all-targets
echo "== fuzz targets build"
cargo check --manifest-path fuzz/Cargo.toml --bins
echo "== all tests passed"
