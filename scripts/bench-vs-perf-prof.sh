#!/usr/bin/env bash
# perfscope against perf-prof, side by side in one run: the same command line shapes, the
# same workload, the same ring pages, alternating (perf-prof first on odd pairs, perfscope
# first on even ones) so the machine's noise falls on both. Prints each run and the
# ratios perfscope / perf-prof (median over the pairs):
#
#   syscalls  `syscalls -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -i 1000 -m PAGES`
#             under `dd bs=1 if=/dev/zero of=/dev/null`: CPU per event handled (events =
#             2 × the calls the tables count), events lost (the kernel's count each prints),
#             peak RSS;
#   profile   `profile -F 997 -g -i 1000`, all CPUs, under two busy shell loops, both
#             printing perf-prof's line per sample with its stack: CPU and peak RSS;
#   top       perfscope's own aggregation (`top -F 997 -g -i 1000 --no-tui`: hotspots per
#             interval) against the same perf-prof profile run: CPU and peak RSS.
#
#   scripts/bench-vs-perf-prof.sh PERF_PROF [SECONDS] [PAIRS] [PAGES]   defaults: 10 3 64
#
# SCENARIOS="syscalls top" runs only those (default: all three).
#
# PERF_PROF is a perf-prof binary built by you (OpenCloudOS/perf-prof; this project does
# not build or ship it). Needs root (perf_event + tracefs), GNU time and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
PERF_PROF=${1:?usage: scripts/bench-vs-perf-prof.sh PERF_PROF [SECONDS] [PAIRS] [PAGES]}
SECONDS_=${2:-10}
PAIRS=${3:-3}
PAGES=${4:-64}
[ -x "$PERF_PROF" ] || { echo "not an executable: $PERF_PROF" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time; Debian package time)" >&2; exit 2; }
cargo build --release -q
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing

exec python3 - "$PERF_PROF" target/release/perfscope "$SECONDS_" "$PAIRS" "$PAGES" "${SCENARIOS:-}" <<'PY'
import re, statistics, subprocess, sys, tempfile, time

perf_prof, perfscope, seconds, pairs, pages = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
only = sys.argv[6].split()

SYSCALLS = ["syscalls", "-e", "raw_syscalls:sys_enter", "-e", "raw_syscalls:sys_exit", "-i", "1000", "-m", pages]
COMMANDS = {
    "syscalls": {
        "perf-prof": [perf_prof] + SYSCALLS,
        "perfscope": [perfscope] + SYSCALLS + ["--no-tui"],
        "load": [["dd", "bs=1", "if=/dev/zero", "of=/dev/null"]],
    },
    "profile": {
        "perf-prof": [perf_prof, "profile", "-F", "997", "-g", "-i", "1000"],
        "perfscope": [perfscope, "profile", "-F", "997", "-g", "-i", "1000"],
        "load": [["sh", "-c", "while :; do :; done"]] * 2,
    },
    "top": {
        "perf-prof": [perf_prof, "profile", "-F", "997", "-g", "-i", "1000"],
        "perfscope": [perfscope, "top", "-F", "997", "-g", "-i", "1000", "--no-tui"],
        "load": [["sh", "-c", "while :; do :; done"]] * 2,
    },
}


def run(tool, scenario):
    """One run under its load: CPU s, peak RSS MiB, events handled, events lost."""
    spec = COMMANDS[scenario]
    loads = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in spec["load"]]
    time.sleep(0.5)
    with tempfile.NamedTemporaryFile("r") as usage, tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # stdin /dev/null for both: perf-prof reads stdin (its tty mode) and, given this
        # script's spent heredoc, spins on its end of file — a whole CPU of its own.
        p = subprocess.Popen(["/usr/bin/time", "-o", usage.name, "-f", "%U %S %M"] + spec[tool],
                             stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        time.sleep(seconds)
        # SIGINT to the tool itself (time passes its child's status on).
        subprocess.run(["pkill", "-INT", "-P", str(p.pid)])
        p.wait(timeout=60)
        for l in loads:
            l.kill()
            l.wait()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
        user, system, rss_kb = usage.read().split()[-3:]
    events = 0
    for line in stdout.splitlines():
        f = line.split()
        if len(f) > 2 and re.fullmatch(r"[\w]+\(\d+\)", f[0]) and f[1].isdigit():
            events += 2 * int(f[1])
    # perf-prof: "lost N events (total)", the count since its previous such line (it resets
    # the count when it prints: monitor.c print_lost_events) — summed; perfscope:
    # "lost N events (T total)", T cumulative — the last.
    lost = sum(int(n) for n in re.findall(r"lost (\d+) events \(total\)", stderr)) + max(
        [int(n) for n in re.findall(r"\((\d+) total\)", stderr)] + [0])
    return float(user) + float(system), int(rss_kb) / 1024, events, lost


def ratio(a, b):
    return a / b if b else float("inf") if a else 1.0


unknown = [s for s in only if s not in COMMANDS]
if unknown:
    sys.exit(f"SCENARIOS: unknown {' '.join(unknown)} (known: {' '.join(COMMANDS)})")
for scenario in only or COMMANDS:
    print(f"\n## {scenario}, {seconds:g} s a run, {pairs} alternating pairs, {pages} pages")
    print("| pair | tool | CPU s | peak RSS MiB | events | lost | CPU µs/event |")
    print("|---|---|---|---|---|---|---|")
    ratios = {"CPU": [], "CPU per event": [], "RSS": [], "lost": []}
    for pair in range(1, pairs + 1):
        order = ["perf-prof", "perfscope"] if pair % 2 else ["perfscope", "perf-prof"]
        got = {}
        for tool in order:
            cpu, rss, events, lost = got[tool] = run(tool, scenario)
            per = f"{cpu * 1e6 / events:.3f}" if events else "-"
            print(f"| {pair} | {tool} | {cpu:.2f} | {rss:.1f} | {events} | {lost} | {per} |", flush=True)
        (cs, rs, es, ls), (cp, rp, ep, lp) = got["perfscope"], got["perf-prof"]
        ratios["CPU"].append(ratio(cs, cp))
        ratios["RSS"].append(ratio(rs, rp))
        if es and ep:
            ratios["CPU per event"].append(ratio(cs / es, cp / ep))
            ratios["lost"].append(ratio(ls, lp))
    print(f"\nperfscope / perf-prof ({scenario}), median [min–max] over {pairs} pairs:")
    for name, values in ratios.items():
        if values:
            print(f"  {name:<14} {statistics.median(values):.2f}× [{min(values):.2f}–{max(values):.2f}]")
PY
