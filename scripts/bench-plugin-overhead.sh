#!/usr/bin/env bash
# Guest slowdown caused by the perfscope QEMU plugin: the host time QEMU takes from
# BENCH_START to BENCH_END of a fixed `bench N` on the riscv64 test kernel, without the
# plugin and with tb+leaf, tb+fp and insn+leaf sampling (kernel-text filter on, as perfscope
# runs it), plus tb+leaf without the inline executed-instruction/block counters (counters=0).
# Each configuration runs RUNS times; medians are compared with the no-plugin medians.
#
# Two clocks: wall time (what the issue's ratio is defined on) and the CPU time QEMU's
# process used over the same window (utime+stime from /proc/PID/stat). On a shared 2-core
# machine wall time swings by ±20 % when anything else runs; CPU time barely moves, so its
# ratio is the one to trust there.
#
#   scripts/bench-plugin-overhead.sh [N] [RUNS] [FREQ]     defaults: 3000 5 99
#
# Needs qemu-system-riscv64, riscv64-unknown-elf-gcc and python3
# (scripts/install-test-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3000}
RUNS=${2:-5}
FREQ=${3:-99}
OUT=target/bench-plugin-overhead
mkdir -p "$OUT"

command -v qemu-system-riscv64 >/dev/null || { echo "qemu-system-riscv64 missing: run scripts/install-test-deps.sh" >&2; exit 1; }
make -s -C tests/guest O="$PWD/target/test-guest"
cargo build --release -q -p perfscope-qemu-plugin
KERNEL=target/test-guest/kernel.bin
ELF=target/test-guest/kernel.elf
SO=target/release/libperfscope_qemu_plugin.so
STEXT=$(riscv64-unknown-elf-nm "$ELF" | awk '$3=="_stext"{print $1}')
ETEXT=$(riscv64-unknown-elf-nm "$ELF" | awk '$3=="_etext"{print $1}')
FILTER="filter_start=0x$STEXT,filter_end=0x$ETEXT"

# One run: boot, wait for the prompt, `bench N`, time BENCH_START→BENCH_END, `exit`.
# Prints "wall_seconds cpu_seconds".
run_once() {
    python3 - "$N" "$@" <<'PY'
import os, select, subprocess, sys, time
n, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
buf, deadline = b"", time.monotonic() + 600
tick = os.sysconf("SC_CLK_TCK")
def cpu_seconds():
    fields = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick
def wait(token, count=1):
    global buf
    while buf.count(token) < count:
        if time.monotonic() > deadline:
            p.kill(); sys.exit("timed out waiting for %r" % token)
        r, _, _ = select.select([p.stdout], [], [], 1.0)
        if r:
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                sys.exit("QEMU exited before %r" % token)
            buf += chunk
    return time.monotonic()
wait(b"starry:~# ")
p.stdin.write(b"bench %s\n" % n.encode()); p.stdin.flush()
t0 = wait(b"BENCH_START"); c0 = cpu_seconds()
t1 = wait(b"BENCH_END"); c1 = cpu_seconds()
wait(b"starry:~# ", 2)
p.stdin.write(b"exit\n"); p.stdin.flush()
p.wait(timeout=60)
print("%.3f %.2f" % (t1 - t0, c1 - c0))
PY
}

QEMU=(qemu-system-riscv64 -machine virt -bios default -display none -monitor none -serial stdio -kernel "$KERNEL")
declare -A CONFIG=(
    [none]=""
    [tb+leaf]="mode=tb,callchain=leaf"
    [tb+fp]="mode=tb,callchain=fp"
    [insn+leaf]="mode=insn,callchain=leaf"
    [tb+leaf,counters=0]="mode=tb,callchain=leaf,counters=0"
)
ORDER=(none tb+leaf tb+fp insn+leaf tb+leaf,counters=0)
declare -A WALL CPU
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '| config | wall s per run | median wall s | vs none | median CPU s | vs none |\n'
printf '|---|---|---|---|---|---|\n'
for name in "${ORDER[@]}"; do
    walls=() cpus=()
    for _ in $(seq 1 "$RUNS"); do
        if [[ -z "${CONFIG[$name]}" ]]; then
            read -r wall cpu < <(run_once "${QEMU[@]}")
        else
            plugin="$SO,out=$OUT/$name.bin,freq=$FREQ,${CONFIG[$name]},$FILTER"
            read -r wall cpu < <(run_once "${QEMU[@]}" -plugin "$plugin")
        fi
        walls+=("$wall") cpus+=("$cpu")
    done
    WALL[$name]=$(printf '%s\n' "${walls[@]}" | median)
    CPU[$name]=$(printf '%s\n' "${cpus[@]}" | median)
    ratio() { awk -v m="$1" -v b="$2" 'BEGIN {printf "%.2f×", m / b}'; }
    printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "${walls[*]}" "${WALL[$name]}" \
        "$(ratio "${WALL[$name]}" "${WALL[none]}")" "${CPU[$name]}" "$(ratio "${CPU[$name]}" "${CPU[none]}")"
done
echo "bench $N, freq $FREQ Hz, $RUNS runs each; summaries in $OUT/*.summary.txt"
