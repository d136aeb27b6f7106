//! Host CPU time of the QEMU process, read from /proc while it is a zombie (exited, not yet
//! reaped: its accounting is final and still readable), written as `qemu.time.txt` with
//! the reference harness's line names.

use std::time::Duration;

/// What /proc says about a process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProcTimes {
    pub user_s: f64,
    pub system_s: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: Option<u64>,
    pub involuntary_switches: Option<u64>,
}

/// Parse `/proc/<pid>/stat` (fields after the `(comm)` that may contain spaces).
pub fn parse_stat(stat: &str, ticks_per_second: f64) -> Option<ProcTimes> {
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(ProcTimes {
        minor_faults: num(7)?,
        major_faults: num(9)?,
        user_s: num(11)? as f64 / ticks_per_second,
        system_s: num(12)? as f64 / ticks_per_second,
        voluntary_switches: None,
        involuntary_switches: None,
    })
}

/// Read the process's times now.
pub fn read(pid: u32) -> Option<ProcTimes> {
    // SAFETY: sysconf has no memory effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let stat = crate::input::read_system_text(format!("/proc/{pid}/stat")).ok()?;
    let mut t = parse_stat(&stat, if ticks > 0 { ticks as f64 } else { 100.0 })?;
    if let Ok(status) = crate::input::read_system_text(format!("/proc/{pid}/status")) {
        for line in status.lines() {
            let value = |l: &str| l.split_whitespace().nth(1).and_then(|v| v.parse().ok());
            if line.starts_with("voluntary_ctxt_switches:") {
                t.voluntary_switches = value(line);
            } else if line.starts_with("nonvoluntary_ctxt_switches:") {
                t.involuntary_switches = value(line);
            }
        }
    }
    Some(t)
}

/// `qemu.time.txt`.
pub fn time_txt(wall: Duration, times: Option<&ProcTimes>, exit_status: i32) -> String {
    let wall_s = wall.as_secs_f64();
    let mut out = format!("Elapsed time: {wall_s:.6}\n");
    match times {
        Some(t) => {
            out.push_str(&format!(
                "User time: {:.6}\nSystem time: {:.6}\n",
                t.user_s, t.system_s
            ));
            if wall_s > 0.0 {
                out.push_str(&format!(
                    "Percent of CPU this job got: {:.2}%\n",
                    (t.user_s + t.system_s) / wall_s * 100.0
                ));
            }
            out.push_str(&format!(
                "Major page faults: {}\nMinor page faults: {}\n",
                t.major_faults, t.minor_faults
            ));
            let n = |v: Option<u64>| v.map_or("unavailable".to_string(), |v| v.to_string());
            out.push_str(&format!(
                "Voluntary context switches: {}\nInvoluntary context switches: {}\n",
                n(t.voluntary_switches),
                n(t.involuntary_switches)
            ));
        }
        None => out.push_str("User time: unavailable\nSystem time: unavailable\n"),
    }
    out.push_str(&format!(
        "Exit status: {exit_status}\nSource: /proc/<qemu pid>/stat at exit\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_spaces_in_the_name_and_reads_ourselves() {
        let stat = "1234 (qemu system x) S 1 1234 1234 0 -1 4194560 5000 0 7 0 250 50 0 0 20 0 3 0";
        let t = parse_stat(stat, 100.0).unwrap();
        assert_eq!((t.minor_faults, t.major_faults), (5000, 7));
        assert_eq!((t.user_s, t.system_s), (2.5, 0.5));
        let me = read(std::process::id()).unwrap();
        assert!(me.voluntary_switches.is_some());
        let txt = time_txt(Duration::from_secs(2), Some(&t), 0);
        assert!(txt.starts_with("Elapsed time: 2.000000\nUser time: 2.500000\nSystem time: 0.500000\n"));
        assert!(txt.contains("Percent of CPU this job got: 150.00%"));
        assert!(time_txt(Duration::ZERO, None, 1).contains("User time: unavailable"));
    }
}
