#!/usr/bin/env bash
# Guest slowdown caused by the perfscope QEMU plugin: host wall time from BENCH_START to
# BENCH_END of a fixed `bench N` on the riscv64 test kernel, without the plugin and with
# tb+leaf, tb+fp and insn+leaf sampling (kernel-text filter on, as perfscope runs it),
# plus tb+leaf without the inline executed-instruction/block counters (counters=0).
# Each configuration runs RUNS times; the median is compared with the no-plugin median.
#
#   scripts/bench-plugin-overhead.sh [N] [RUNS] [FREQ]     defaults: 300 3 99
#
# Needs qemu-system-riscv64, riscv64-unknown-elf-gcc and python3
# (scripts/install-test-deps.sh). Wall times on a shared 2-core VM vary by about ±10 %.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-300}
RUNS=${2:-3}
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
# Prints the seconds.
run_once() {
    python3 - "$N" "$@" <<'PY'
import os, select, subprocess, sys, time
n, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
buf, deadline = b"", time.monotonic() + 600
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
t0 = wait(b"BENCH_START")
t1 = wait(b"BENCH_END")
wait(b"starry:~# ", 2)
p.stdin.write(b"exit\n"); p.stdin.flush()
p.wait(timeout=60)
print("%.3f" % (t1 - t0))
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
declare -A MEDIAN

printf '| config | %s | median s | vs none |\n' "$(seq -s ' | ' -f 'run %g' 1 "$RUNS")"
printf '|---|%s---|---|\n' "$(printf '%.0s---|' $(seq 1 "$RUNS"))"
for name in "${ORDER[@]}"; do
    times=()
    for _ in $(seq 1 "$RUNS"); do
        if [[ -z "${CONFIG[$name]}" ]]; then
            times+=("$(run_once "${QEMU[@]}")")
        else
            plugin="$SO,out=$OUT/$name.bin,freq=$FREQ,${CONFIG[$name]},$FILTER"
            times+=("$(run_once "${QEMU[@]}" -plugin "$plugin")")
        fi
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    MEDIAN[$name]=$median
    ratio=$(awk -v m="$median" -v b="${MEDIAN[none]}" 'BEGIN {printf "%.2f×", m / b}')
    printf '| %s | %s | %s | %s |\n' "$name" "$(IFS='|'; echo "${times[*]}" | sed 's/|/ | /g')" "$median" "$ratio"
done
echo "bench $N, freq $FREQ Hz, $RUNS runs each; summaries in $OUT/*.summary.txt"
