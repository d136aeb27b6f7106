#!/usr/bin/env bash
# Regenerates build/text-order.txt: the functions runs of perfscope execute, grouped by
# run, which build.rs hands the linker (`--symbol-ordering-file`) so they sit together
# at the start of .text.
#
# Why: the kernel maps an executable's code 64 KiB at a time around each page fault
# (fault-around). Spread over 7 MB of text, the few hundred KiB a headless analyzer runs
# pulled ~3.5 MB of perfscope's code into its resident set; packed together they cost
# what they weigh. A stale list only loses that packing (the linker skips names it does
# not find), never correctness: rerun this after large changes.
#
# How: a uprobe on the entry of every function of the release binary (tracefs
# uprobe_events), the runs below, each probe's hit count from uprobe_profile after each
# run. Every function the first run (syscalls, the benchmark's) executes comes first, so
# that run's code is one contiguous block; then the second run's, and so on.
#
#   scripts/text-order.sh [SECONDS]      default 3 seconds per run; needs root and tracefs
#
# Deleting the ~8 000 probes at the end takes under a second when they are the only uprobes
# on the machine, several minutes (one by one) when others exist.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-3}
TRACEFS=/sys/kernel/tracing
mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS"
[ -w "$TRACEFS/uprobe_events" ] || { echo "needs root and $TRACEFS/uprobe_events" >&2; exit 2; }
cargo build --release -q
BIN=$(realpath target/release/perfscope)
# A private copy: uprobes sit on its inode, so a rebuild meanwhile cannot disturb them.
WORK=$(mktemp -d)
trap 'python3 scripts/text_order.py remove "$TRACEFS"; rm -rf "$WORK"' EXIT
cp "$BIN" "$WORK/perfscope"
python3 scripts/text_order.py add "$TRACEFS" "$WORK/perfscope" "$WORK/symbols.tsv"

run() { # run SECONDS COMMAND...: the command, stopped with SIGINT after SECONDS
    local seconds=$1
    shift
    echo "text-order: ${*:2:2}" >&2
    "$@" < /dev/null > /dev/null 2>&1 &
    local pid=$!
    sleep "$seconds"
    kill -INT "$pid" 2>/dev/null || true
    wait "$pid" || true
    snapshot
}
SNAPSHOTS=()
snapshot() { # the probes' cumulative hits after a run
    SNAPSHOTS+=("$WORK/hits-${#SNAPSHOTS[@]}.tsv")
    python3 scripts/text_order.py snapshot "$TRACEFS" "${SNAPSHOTS[-1]}"
}
busy() { sh -c 'while :; do :; done' > /dev/null & echo $!; }

P="$WORK/perfscope"
dd bs=1 if=/dev/zero of=/dev/null 2>/dev/null &
DD=$!
run "$SECONDS_" "$P" syscalls -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -i 1000 -m 64
run "$SECONDS_" "$P" syscalls -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -i 1000 -m 64 --perins
run "$SECONDS_" "$P" trace -e raw_syscalls:sys_enter -N 1000
kill "$DD"
B1=$(busy)
B2=$(busy)
run "$SECONDS_" "$P" profile -F 997 -g -i 1000
run "$SECONDS_" "$P" top -F 997 -g -i 1000 --no-tui
run "$SECONDS_" "$P" rundelay -e "sched:sched_wakeup*,sched:sched_switch" -e sched:sched_switch -i 1000
run "$SECONDS_" "$P" task-state -i 1000
kill "$B1" "$B2"
"$P" list > /dev/null
snapshot

python3 scripts/text_order.py collect "$WORK/symbols.tsv" build/text-order.txt "${SNAPSHOTS[@]}"
echo "build/text-order.txt: $(wc -l < build/text-order.txt) functions"
