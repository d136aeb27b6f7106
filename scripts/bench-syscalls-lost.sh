#!/usr/bin/env bash
# Lost events under a syscall storm: `perfscope syscalls --no-tui` with a fixed ring size
# (64 pages, perf-prof's default for syscalls) on all CPUs while
# `dd bs=1 if=/dev/zero of=/dev/null` runs, for SECONDS. Reports the events perfscope
# read, the events the kernel reported lost (per second), and perfscope's own CPU time
# (user + system, from the kernel's rusage of the child), so the figures can be put side
# by side with perf-prof's on the same machine (notes: 3,000–40,000 lost/s there).
#
#   scripts/bench-syscalls-lost.sh [SECONDS] [PAGES] [RUNS]    defaults: 10 64 3
#
# Needs root (perf_event + tracefs) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_=${1:-10}
PAGES=${2:-64}
RUNS=${3:-3}
cargo build --release -q
BIN=target/release/perfscope
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

printf '| run | events read | lost | lost/s | dd syscalls/s | perfscope CPU s | CPU %% of one core |\n'
printf '|---|---|---|---|---|---|---|\n'
for run in $(seq 1 "$RUNS"); do
    python3 - "$BIN" "$SECONDS_" "$PAGES" "$run" <<'PY'
import re, resource, subprocess, sys, time
binary, seconds, pages, run = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
dd = subprocess.Popen(["dd", "bs=1", "if=/dev/zero", "of=/dev/null"], stderr=subprocess.DEVNULL)
time.sleep(0.5)
before = resource.getrusage(resource.RUSAGE_CHILDREN)
p = subprocess.run(
    [binary, "syscalls", "-e", "raw_syscalls:sys_enter", "-e", "raw_syscalls:sys_exit",
     "-m", pages, "--no-tui", "--duration", str(seconds)],
    capture_output=True, text=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
dd.kill(); dd.wait()
if p.returncode != 0:
    sys.exit("perfscope failed (%d): %s" % (p.returncode, p.stderr))
# The closing line on stderr: "perfscope syscalls: read N events, lost M events in S s"
m = re.search(r"read (\d+) events, lost (\d+) events in ([\d.]+) s", p.stderr)
if not m:
    sys.exit("no summary line in perfscope's stderr:\n" + p.stderr)
read, lost, wall = int(m.group(1)), int(m.group(2)), float(m.group(3))
# read(0)/write(1) pairs of dd: its calls from the table (calls column of read(0)).
calls = 0
for line in p.stdout.splitlines():
    f = line.split()
    if f and f[0] in ("read(0)", "write(1)"):
        calls += int(f[1])
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
print("| %s | %d | %d | %.0f | %.0f | %.2f | %.1f %% |" % (
    run, read, lost, lost / wall, calls / wall, cpu, 100 * cpu / wall))
PY
done
echo "syscalls -m $PAGES for $SECONDS_ s under dd bs=1, $(nproc) CPUs, kernel $(uname -r)"
