#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian 12 (bookworm) machine, as root:
#   - the riscv64 bare-metal cross gcc and the x86_64 gcc/binutils (build tests/guest, the test kernel)
#   - zig's clang from PyPI (`ziglang`): the loongarch64 test kernel (Debian 12 has no loongarch64 gcc)
#   - QEMU 10 from bookworm-backports (TCG plugin API v4; qemu-system-misc has loongarch64), without touching /etc/apt:
#     a private sources list reuses the machine's own mirror with the backports suite added
#   - tmux (end-to-end tests drive the real binary in a terminal)
#   - OVMF (Debian's ovmf: the UEFI firmware `perfscope qemu --uefi` boots x86_64 guests with)
#   - tracefs mounted at /sys/kernel/tracing (the host tracepoint tests read it)
# Each step is skipped when its tool is already present, so re-running is cheap.
set -euo pipefail

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-test-deps: installing Debian packages needs root (run as root or via sudo)" >&2
        exit 1
    fi
}

APT_LOCK="-o DPkg::Lock::Timeout=600"
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v riscv64-unknown-elf-gcc >/dev/null || missing+=(gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf)
command -v x86_64-linux-gnu-gcc >/dev/null || missing+=(gcc binutils)
command -v tmux >/dev/null || missing+=(tmux)
test -f /usr/share/OVMF/OVMF_CODE_4M.fd || missing+=(ovmf)
if [ ${#missing[@]} -gt 0 ]; then
    need_root
    apt-get $APT_LOCK update -qq
    apt-get $APT_LOCK install -y -qq --no-install-recommends "${missing[@]}"
fi

# The version this suite was written against; the Makefile runs it as `python3 -m ziglang`.
ZIGLANG=ziglang==0.17.1
if ! python3 -m ziglang version >/dev/null 2>&1; then
    python3 -m pip install --quiet "$ZIGLANG" 2>/dev/null ||
        python3 -m pip install --quiet --break-system-packages "$ZIGLANG" ||
        { echo "install-test-deps: cannot pip-install $ZIGLANG (the loongarch64 test kernel's compiler)" >&2; exit 1; }
fi

qemu_ok() {
    command -v qemu-system-riscv64 >/dev/null && command -v qemu-system-x86_64 >/dev/null &&
        command -v qemu-system-loongarch64 >/dev/null &&
        qemu-system-riscv64 --version | grep -Eq 'version (1[0-9]|[2-9][0-9])\.'
}
if ! qemu_ok; then
    need_root
    D=${PERFSCOPE_APT_DIR:-/tmp/perfscope-apt-backports}
    mkdir -p "$D/lists/partial" "$D/archives/partial"
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    [ -n "$uri" ] || uri=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
    [ -n "$uri" ] || uri=http://deb.debian.org/debian
    {
        echo "deb $uri bookworm main"
        echo "deb $uri bookworm-updates main"
        echo "deb $uri bookworm-backports main"
    } >"$D/sources.list"
    APTO="-o Dir::Etc::sourcelist=$D/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::lists=$D/lists -o Dir::Cache::archives=$D/archives $APT_LOCK"
    # shellcheck disable=SC2086
    apt-get $APTO update -qq
    # shellcheck disable=SC2086
    apt-get $APTO install -y -qq -t bookworm-backports --no-install-recommends qemu-system-x86 qemu-system-riscv qemu-system-misc
    qemu_ok || { echo "install-test-deps: QEMU 10 did not install" >&2; exit 1; }
fi
if ! mountpoint -q /sys/kernel/tracing; then
    need_root
    mount -t tracefs nodev /sys/kernel/tracing ||
        { echo "install-test-deps: cannot mount tracefs at /sys/kernel/tracing (the kernel needs CONFIG_TRACING)" >&2; exit 1; }
fi
echo "install-test-deps: riscv64 gcc $(riscv64-unknown-elf-gcc -dumpversion), x86_64 gcc $(x86_64-linux-gnu-gcc -dumpversion), zig $(python3 -m ziglang version), $(qemu-system-riscv64 --version | head -n1), tmux $(tmux -V), tracefs at /sys/kernel/tracing"
