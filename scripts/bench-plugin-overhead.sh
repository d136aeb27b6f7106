#!/usr/bin/env bash
# Guest slowdown caused by the perfscope QEMU plugin: the host time QEMU takes from
# BENCH_START to BENCH_END of a fixed `bench N` on the riscv64 test kernel, without the
# plugin and with it: the plugin alone (tb+leaf, tb+fp, insn+leaf, tb+fp with the opt-in
# executed-block counters; kernel-text filter on) and the whole default pipeline
# (`perfscope qemu --no-tui` without --callchain, so fp on this kernel with frame pointers;
# no filter, the live stream read by perfscope: its window.json gives the marker-to-marker
# time). The configurations run in alternating
# rounds (each round runs every configuration once, in a rotated order), so the shared
# machine's noise falls on all of them; medians are compared with the no-plugin medians.
#
# Two clocks: wall time (what the ratio is defined on) and the
# CPU time QEMU's process used over the same window (utime+stime from /proc/PID/stat). On
# a shared 2-core machine wall time swings by ±20 % when anything else runs; CPU time
# barely moves, so its ratio is the one to trust there. The pipeline runs have both too:
# the window's wall time from perfscope's window.json, QEMU's CPU time read when perfscope
# echoes the markers (perfscope's own threads share the machine with QEMU's, as they do for
# a user).
# The dwarf callchain runs on the kernel built without frame pointers (FRAME_POINTERS=no,
# unwound with its .debug_frame): its rows (`…/nofp`) compare with that kernel's own
# no-plugin time (`none/nofp`), since the two builds differ in speed. On that kernel the
# default pipeline (`perfscope-qemu-default/nofp`, no --callchain) chooses dwarf itself;
# `perfscope-qemu-dwarf/nofp` asks for it.
#
#   scripts/bench-plugin-overhead.sh [N] [ROUNDS] [FREQ]     defaults: 3000 3 997
#
# Needs qemu-system-riscv64, riscv64-unknown-elf-gcc and python3
# (scripts/install-test-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-3000}
RUNS=${2:-3}
FREQ=${3:-997}
OUT=target/bench-plugin-overhead
mkdir -p "$OUT"

command -v qemu-system-riscv64 >/dev/null || { echo "qemu-system-riscv64 missing: run scripts/install-test-deps.sh" >&2; exit 1; }
make -s -C tests/guest O="$PWD/target/test-guest"
make -s -C tests/guest FRAME_POINTERS=no O="$PWD/target/test-guest-riscv64-nofp"
cargo build --release -q -p perfscope-qemu-plugin
cargo build --release -q --bin perfscope
KERNEL=target/test-guest/kernel.bin
ELF=target/test-guest/kernel.elf
KERNEL_NOFP=target/test-guest-riscv64-nofp/kernel.bin
ELF_NOFP=target/test-guest-riscv64-nofp/kernel.elf
SO=target/release/libperfscope_qemu_plugin.so
# The kernel-text filter of the plugin-alone runs, from an ELF's _stext/_etext.
text_filter() {
    local stext etext
    stext=$(riscv64-unknown-elf-nm "$1" | awk '$3=="_stext"{print $1}')
    etext=$(riscv64-unknown-elf-nm "$1" | awk '$3=="_etext"{print $1}')
    echo "filter_start=0x$stext,filter_end=0x$etext"
}

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

QEMU=(qemu-system-riscv64 -machine virt -bios default -display none -monitor none -serial stdio -kernel)
declare -A CONFIG=(
    [none]=""
    [tb+leaf]="mode=tb,callchain=leaf"
    [tb+fp]="mode=tb,callchain=fp"
    [insn+leaf]="mode=insn,callchain=leaf"
    [tb+fp,counters=on]="mode=tb,callchain=fp,counters=on"
    [perfscope-qemu]="pipeline"
    [none/nofp]=""
    [tb+dwarf/nofp]="mode=tb,callchain=dwarf,cfi=$ELF_NOFP"
    [perfscope-qemu-dwarf/nofp]="pipeline"
    [perfscope-qemu-default/nofp]="pipeline"
)
ORDER=(none tb+leaf tb+fp insn+leaf tb+fp,counters=on perfscope-qemu none/nofp tb+dwarf/nofp perfscope-qemu-dwarf/nofp perfscope-qemu-default/nofp)

# The whole pipeline: perfscope starts QEMU, reads the stream, stops at BENCH_END.
# Prints "wall_seconds cpu_seconds": window.json's marker-to-marker time, and the CPU time
# QEMU's process (perfscope's child) used between the markers as perfscope echoes them.
# CALLCHAIN "default" passes no --callchain (perfscope picks from the kernel).
run_pipeline() {
    local out="$OUT/pipeline" kernel=$1 callchain=$2
    local flag=(--callchain "$callchain")
    [[ $callchain == default ]] && flag=()
    rm -rf "$out"
    local cpu
    cpu=$(python3 - target/release/perfscope qemu --kernel "$kernel" --no-tui --freq "$FREQ" "${flag[@]}" \
        --workload "bench $N" --start-marker BENCH_START --stop-marker BENCH_END --out "$out" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
tick = os.sysconf("SC_CLK_TCK")
def qemu_cpu():
    children = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
    for pid in children:
        if open("/proc/%s/comm" % pid).read().startswith("qemu-system"):
            fields = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick
    sys.exit("perfscope has no QEMU child")
start = end = None
for line in p.stdout:
    if start is None and b"BENCH_START" in line:
        start = qemu_cpu()
    elif start is not None and end is None and b"BENCH_END" in line:
        end = qemu_cpu()
p.wait()
print("%.2f" % (end - start) if start is not None and end is not None else "-")
PY
)
    python3 -c 'import json,sys; print("%.3f %s" % (json.load(open(sys.argv[1]))["duration_sec"], sys.argv[2]))' \
        "$out/perf/riscv64/latest/qperf/window.json" "$cpu"
}

run_config() {
    local name=$1 kernel=$KERNEL elf=$ELF callchain=default
    if [[ $name == */nofp ]]; then kernel=$KERNEL_NOFP elf=$ELF_NOFP callchain=dwarf; fi
    [[ $name == *-default/* ]] && callchain=default
    local filter
    filter=$(text_filter "$elf")
    case "${CONFIG[$name]}" in
        "") run_once "${QEMU[@]}" "$kernel" ;;
        pipeline) run_pipeline "$elf" "$callchain" ;;
        *) run_once "${QEMU[@]}" "$kernel" -plugin "$SO,out=$OUT/${name//\//-}.bin,freq=$FREQ,${CONFIG[$name]},$filter" ;;
    esac
}

declare -A WALLS CPUS
for round in $(seq 1 "$RUNS"); do
    # Rotate the order each round so no configuration always runs first or last.
    k=$(( (round - 1) % ${#ORDER[@]} ))
    for name in "${ORDER[@]:k}" "${ORDER[@]:0:k}"; do
        read -r wall cpu < <(run_config "$name")
        WALLS[$name]+="$wall " CPUS[$name]+="$cpu "
    done
done

median() { tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }
ratio() { awk -v m="$1" -v b="$2" 'BEGIN {if (m == "-" || b == "-") print "-"; else printf "%.2f×", m / b}'; }
printf '| config | wall s per round | median wall s | vs none | median CPU s | vs none |\n'
printf '|---|---|---|---|---|---|\n'
for name in "${ORDER[@]}"; do
    base=none
    [[ $name == */nofp ]] && base=none/nofp
    wall=$(echo "${WALLS[$name]}" | median)
    cpu=$(echo "${CPUS[$name]}" | median)
    printf '| %s | %s| %s | %s | %s | %s |\n' "$name" "${WALLS[$name]}" "$wall" \
        "$(ratio "$wall" "$(echo "${WALLS[$base]}" | median)")" "$cpu" \
        "$(ratio "$cpu" "$(echo "${CPUS[$base]}" | median)")"
done
echo "bench $N, freq $FREQ Hz, $RUNS alternating rounds; summaries in $OUT/*.summary.txt"
