#!/usr/bin/env bash
# Criterion benches of this checkout side by side with an earlier revision, in one run,
# alternating (old, new, old, new, ...) so the shared machine's noise falls on both:
# prints each bench's median per round and the new/old ratio of the medians.
#
#   scripts/bench-vs-main.sh OLD_REV BENCH_TARGET [FILTER] [ROUNDS]
#   e.g. scripts/bench-vs-main.sh 4b128ae snapshot_build '' 3
#        scripts/bench-vs-main.sh 4b128ae live_update accumulate_10k_batch_1M_distinct 3
#
# The old revision is checked out in a temporary worktree; the bench file and
# benches/support are copied into it when it lacks them (a bench written for the
# comparison uses public API both revisions share).
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${1:?old revision}
BENCH=${2:?bench target}
FILTER=${3:-}
ROUNDS=${4:-3}
WT=$(mktemp -d /tmp/perfscope-old.XXXXXX)
cleanup() { git worktree remove --force "$WT" >/dev/null 2>&1 || rm -rf "$WT"; }
trap cleanup EXIT
git worktree add --detach -q "$WT" "$OLD"
if [ ! -f "$WT/benches/$BENCH.rs" ]; then
    cp "benches/$BENCH.rs" "$WT/benches/"
    cp -r benches/support "$WT/benches/"
    printf '\n[[bench]]\nname = "%s"\nharness = false\n' "$BENCH" >>"$WT/Cargo.toml"
fi
build() { (cd "$1" && cargo bench --locked --no-run --bench "$BENCH" 2>&1 | sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -1); }
NEW_BIN=$(build .)
OLD_BIN=$(cd "$WT" && realpath "$(build "$WT")")
NEW_BIN=$(realpath "$NEW_BIN")
python3 - "$OLD_BIN" "$NEW_BIN" "$ROUNDS" "$FILTER" <<'PY'
import re, statistics, subprocess, sys
old, new, rounds, filt = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
unit = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
def run(binary):
    args = [binary, "--bench", "--noplot", "--warm-up-time", "1", "--measurement-time", "5"]
    if filt:
        args.append(filt)
    out = subprocess.run(args, capture_output=True, text=True).stdout
    times, name = {}, None
    for line in out.splitlines():
        m = re.match(r"^(\S.*?)\s+time:\s+\[\S+ \S+ (\S+) (\S+)", line)
        if m:
            times[m.group(1).strip()] = float(m.group(2)) * unit[m.group(3)]
            continue
        m2 = re.match(r"^\s+time:\s+\[\S+ \S+ (\S+) (\S+)", line)
        if m2 and name:
            times[name] = float(m2.group(1)) * unit[m2.group(2)]
        elif line and not line.startswith(" ") and "time:" not in line and not line.startswith(("Benchmarking", "Found", "Gnuplot", "change", "Performance", "No change", "  ")):
            name = line.strip()
    return times
results = {"old": {}, "new": {}}
for r in range(rounds):
    for label, binary in (("old", old), ("new", new)):
        for k, v in run(binary).items():
            results[label].setdefault(k, []).append(v)
print("| bench | old median (s) | new median (s) | new/old |")
print("|---|---|---|---|")
for k in results["new"]:
    o, n = results["old"].get(k), results["new"][k]
    if not o:
        print(f"| {k} | – | {statistics.median(n):.6f} | – |")
        continue
    mo, mn = statistics.median(o), statistics.median(n)
    print(f"| {k} | {mo:.6f} | {mn:.6f} | {mn / mo:.2f} |")
PY
