//! `qemu.toml`: the machine and command a run used, in the reference's `PerfQemuConfig`
//! keys (notes/qperf-format.md §5.2), so a script reading xtask's file reads ours; the
//! QEMU binary and the kernel image are added beside them.

use std::path::Path;

use toml::{Table, Value};

use super::session_options::SessionOptions;
use crate::symbols::guest_space::Boot;

/// The reference's panic pattern (which its runner never evaluates; nor does perfscope,
/// whose run ends on markers, timeouts and QEMU's exit).
const FAIL_REGEX: &str = r"(?i)\bpanic(?:ked)?\b";

/// How the run that wrote `qperf_bin` booted its kernel, from the `qemu.toml` beside it
/// (ours or xtask's, which has the same `uefi` key): a saved or followed UEFI run must not
/// get the ELF's load-address alias. No file, or no `uefi = true` in it: a direct boot.
pub fn recorded_boot(qperf_bin: &Path) -> Boot {
    let Some(toml) = qperf_bin.parent().map(|dir| dir.join("qemu.toml")) else {
        return Boot::Direct;
    };
    // Within the TOML caps: a `qemu.toml` that is not one (a FIFO, a huge file) is no
    // evidence of a UEFI boot.
    let uefi = crate::input::read_text(&toml, crate::input::InputKind::Config)
        .ok()
        .and_then(|text| text.parse::<Table>().ok())
        .and_then(|t| t.get("uefi").and_then(Value::as_bool))
        .unwrap_or(false);
    if uefi { Boot::Uefi } else { Boot::Direct }
}

/// The file's text.
pub fn qemu_toml(options: &SessionOptions) -> String {
    let launch = &options.launch;
    // Everything after the binary but the kernel image, as the reference keeps `args`.
    let mut args = launch.args();
    if let Some(at) = args.iter().rposition(|a| a == "-kernel") {
        args.drain(at..(at + 2).min(args.len()));
    }
    let mut t = Table::new();
    t.insert(
        "args".into(),
        Value::Array(args.into_iter().map(Value::String).collect()),
    );
    t.insert("uefi".into(), Value::Boolean(launch.firmware.is_some()));
    t.insert("to_bin".into(), Value::Boolean(true));
    t.insert("success_regex".into(), Value::Array(Vec::new()));
    t.insert(
        "fail_regex".into(),
        Value::Array(vec![Value::String(FAIL_REGEX.into())]),
    );
    let text = |v: &str| Value::String(v.to_string());
    if let Some(cmd) = &options.init_cmd {
        if let Some(prompt) = options.shell_prompts.first() {
            t.insert("shell_prefix".into(), text(prompt));
        }
        t.insert("shell_init_cmd".into(), text(cmd));
    }
    if let Some(timeout) = options.timeout.filter(|t| !t.is_zero()) {
        t.insert("timeout".into(), Value::Integer(timeout.as_secs() as i64));
    }
    if let Some(m) = &options.start_marker {
        t.insert("start_marker".into(), text(m));
    }
    if let Some(m) = &options.stop_marker {
        t.insert("stop_marker".into(), text(m));
    }
    if let Some(w) = options.workload_timeout {
        t.insert("workload_timeout".into(), Value::Integer(w.as_secs() as i64));
    }
    t.insert("qemu".into(), text(&launch.qemu.display().to_string()));
    t.insert("kernel".into(), text(&launch.kernel.display().to_string()));
    toml::to_string(&t).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::sources::qemu::arch::Arch;
    use crate::sources::qemu::machine::QemuLaunch;
    use crate::sources::qemu::uefi::UefiBoot;

    fn args_of(t: &Table) -> Vec<&str> {
        t["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect()
    }

    #[test]
    fn the_reference_keys_with_the_command_but_its_kernel() {
        let options = SessionOptions {
            launch: QemuLaunch {
                arch: Arch::Riscv64,
                qemu: "/usr/bin/qemu-system-riscv64".into(),
                kernel: "/k/kernel.bin".into(),
                smp: None,
                firmware: None,
                plugin: Some("/p/lib.so,freq=997".into()),
                qmp_socket: "/t/q.sock".into(),
                extra: Vec::new(),
            },
            epoch_ns: 0,
            shell_prompts: vec!["starry:~# ".into()],
            init_cmd: Some("bench 300".into()),
            start_marker: Some("BENCH_START".into()),
            stop_marker: None,
            workload_timeout: Some(Duration::from_secs(30)),
            timeout: Some(Duration::ZERO),
            host_perf_events: None,
        };
        let text = qemu_toml(&options);
        let t: Table = text.parse().unwrap();
        let args = args_of(&t);
        assert_eq!(args[..2], ["-plugin", "/p/lib.so,freq=997"]);
        assert!(
            !args.contains(&"-kernel") && !args.contains(&"/k/kernel.bin"),
            "{args:?}"
        );
        assert_eq!(t["uefi"].as_bool(), Some(false));
        assert_eq!(t["fail_regex"][0].as_str(), Some(FAIL_REGEX));
        assert_eq!(t["shell_prefix"].as_str(), Some("starry:~# "));
        assert_eq!(t["start_marker"].as_str(), Some("BENCH_START"));
        assert_eq!(t["workload_timeout"].as_integer(), Some(30));
        assert!(t.get("timeout").is_none(), "a zero timeout is absent");
        assert!(t.get("stop_marker").is_none());
        assert_eq!(t["kernel"].as_str(), Some("/k/kernel.bin"));
    }

    #[test]
    fn a_uefi_run_says_so_and_keeps_its_drives() {
        let options = SessionOptions {
            launch: QemuLaunch {
                arch: Arch::X86_64,
                qemu: "qemu-system-x86_64".into(),
                kernel: "/k/kernel.efi".into(),
                smp: None,
                firmware: Some(UefiBoot {
                    code: "/fw/code.fd".into(),
                    vars: "/q/starryos.vars.fd".into(),
                    esp: "/q/starryos.esp".into(),
                }),
                plugin: None,
                qmp_socket: "/t/q.sock".into(),
                extra: Vec::new(),
            },
            epoch_ns: 0,
            shell_prompts: vec!["starry:~# ".into()],
            init_cmd: None,
            start_marker: None,
            stop_marker: None,
            workload_timeout: None,
            timeout: None,
            host_perf_events: None,
        };
        let t: Table = qemu_toml(&options).parse().unwrap();
        assert_eq!(t["uefi"].as_bool(), Some(true));
        let args = args_of(&t);
        assert_eq!(args.iter().filter(|a| **a == "-drive").count(), 3, "{args:?}");
        assert!(
            args.contains(&"format=raw,file=fat:rw:/q/starryos.esp"),
            "{args:?}"
        );
        assert_eq!(t["kernel"].as_str(), Some("/k/kernel.efi"));
    }

    #[test]
    fn a_recorded_uefi_run_is_read_back_from_its_qemu_toml() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("qperf.bin");
        assert_eq!(recorded_boot(&bin), Boot::Direct, "no qemu.toml");
        std::fs::write(dir.path().join("qemu.toml"), "uefi = true\nto_bin = true\n").unwrap();
        assert_eq!(recorded_boot(&bin), Boot::Uefi);
        std::fs::write(dir.path().join("qemu.toml"), "uefi = false\n").unwrap();
        assert_eq!(recorded_boot(&bin), Boot::Direct);
        std::fs::write(dir.path().join("qemu.toml"), "not toml [").unwrap();
        assert_eq!(recorded_boot(&bin), Boot::Direct, "unreadable: the default");
    }
}
