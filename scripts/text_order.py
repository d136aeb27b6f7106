"""The uprobe side of scripts/text-order.sh (see there for why).

  text_order.py add TRACEFS BINARY SYMBOLS.tsv    a uprobe per function; writes their names
  text_order.py snapshot TRACEFS HITS.tsv         each probe's hits so far
  text_order.py collect SYMBOLS.tsv OUT HITS...    hit functions, grouped by run, into OUT
  text_order.py remove TRACEFS                     the uprobes gone
"""
import os
import subprocess
import sys

GROUP = "perfscope_text_order"


def load_segments(binary):
    """(vaddr, file offset, size) of each LOAD segment: a symbol's address to a file offset."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    segments = []
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            segments.append((int(fields[2], 16), int(fields[1], 16), int(fields[4], 16)))
    return segments


def functions(binary):
    """(file offset, mangled name) of every sized function, one per address."""
    segments = load_segments(binary)
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    seen = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) != 4 or fields[2] not in "tT" or int(fields[1], 16) == 0:
            continue
        addr = int(fields[0], 16)
        for vaddr, offset, size in segments:
            if vaddr <= addr < vaddr + size:
                seen.setdefault(addr - vaddr + offset, fields[3])
    return sorted(seen.items())


def write_events(tracefs, line):
    """One command to uprobe_events, appended (opening it for writing without O_APPEND
    would clear every uprobe on the machine)."""
    fd = os.open(os.path.join(tracefs, "uprobe_events"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def add(tracefs, binary, table):
    with open(table, "w") as out:
        for index, (offset, name) in enumerate(functions(binary)):
            try:
                write_events(tracefs, f"p:{GROUP}/f{index} {binary}:{offset:#x}\n")
            except OSError:
                continue  # an entry the kernel cannot probe: it stays out of the order
            out.write(f"f{index}\t{name}\n")
    with open(os.path.join(tracefs, "events", GROUP, "enable"), "w") as enable:
        enable.write("1\n")


def snapshot(tracefs, out_path):
    """Each probe's cumulative hit count, as uprobe_profile says it now."""
    with open(out_path, "w") as out:
        for line in open(os.path.join(tracefs, "uprobe_profile")):
            fields = line.split()
            if len(fields) == 3:
                out.write(f"{fields[1]}\t{fields[2]}\n")


def collect(table, out_path, *snapshots):
    """The functions any run hit: first those of the first run, then those of the second
    it did not hit, and so on (within a run, those the next runs also hit first, then
    the hottest), so each run's code sits in as few blocks as possible."""
    names = dict(line.rstrip("\n").split("\t") for line in open(table))
    runs = []  # per run, {function: hits during that run}
    before = {}
    for path in snapshots:
        now = {probe: int(hits) for probe, hits in (line.split() for line in open(path))}
        runs.append({names[p]: n - before.get(p, 0) for p, n in now.items() if p in names and n > before.get(p, 0)})
        before = now
    total = {}
    for run in runs:
        for name, hits in run.items():
            total[name] = total.get(name, 0) + hits
    if not total:
        sys.exit("no function was hit: were the runs probed?")
    ordered = sorted(total, key=lambda name: ([name not in run for run in runs], -total[name], name))
    os.makedirs(os.path.dirname(out_path) or ".", exist_ok=True)
    with open(out_path, "w") as out:
        out.write("".join(name + "\n" for name in ordered))


def remove(tracefs):
    """Every probe of the group deleted; the group's enable goes off first (the kernel
    refuses to delete an enabled probe). Reports what could not be deleted."""
    group = os.path.join(tracefs, "events", GROUP)
    if not os.path.isdir(group):
        return
    with open(os.path.join(group, "enable"), "w") as enable:
        enable.write("0\n")
    with open(os.path.join(tracefs, "uprobe_events")) as events:
        others = [line for line in events if not line.startswith(f"p:{GROUP}/")]
    if not others:
        # Ours are the machine's only uprobes: clearing the file deletes them all in
        # under a second, where one by one takes the kernel minutes.
        os.close(os.open(os.path.join(tracefs, "uprobe_events"), os.O_WRONLY | os.O_TRUNC))
        return
    failed = []
    probes = [entry for entry in os.listdir(group) if entry[:1] == "f" and entry[1:].isdigit()]
    for name in sorted(probes):
        try:
            write_events(tracefs, f"-:{GROUP}/{name}\n")
        except OSError as error:
            failed.append(f"{name}: {error}")
    if failed:
        sys.exit(f"{len(failed)} uprobes left in {GROUP}, e.g. {failed[0]}")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    {"add": add, "snapshot": snapshot, "collect": collect, "remove": remove}[command](*args)
