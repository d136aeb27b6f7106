//! The reference report's metrics of the run, field for field (notes/qperf-format.md §6.2):
//! the host's view of QEMU (`qemu.time.txt`, `qemu.perf.csv`), the workload's own numbers
//! from the guest console (`profile.stdout`), what they give per MB, and `summary.txt` as
//! pairs. Each reads the file the run wrote, so a report made later from the same
//! directory says the same.

use regex::Regex;
use serde_json::{Map, Value, json};

use super::categories::CategoryTotal;
use crate::model::text::shell_words;

/// `host_time_metrics` from `qemu.time.txt` (perfscope's lines, or GNU `time -v`'s).
pub fn host_time_metrics(time_txt: Option<&str>) -> Value {
    let mut raw = Map::new();
    for line in time_txt.unwrap_or_default().lines() {
        // The value follows the last ": " (GNU's elapsed key holds "h:mm:ss or m:ss").
        let Some((key, value)) = line.trim().rsplit_once(": ") else {
            continue;
        };
        raw.insert(snake_case(key), json!(value.trim()));
    }
    let text = |keys: &[&str]| keys.iter().find_map(|k| raw.get(*k).and_then(Value::as_str));
    let number = |keys: &[&str]| text(keys).and_then(|v| v.trim_end_matches('%').parse::<f64>().ok());
    let elapsed = text(&["elapsed_time", "elapsed_wall_clock_time_h_mm_ss_or_m_ss"]).and_then(clock_seconds);
    json!({
        "user_seconds": number(&["user_time", "user_time_seconds"]),
        "system_seconds": number(&["system_time", "system_time_seconds"]),
        "cpu_percent": number(&["percent_of_cpu_this_job_got"]),
        "major_page_faults": number(&["major_page_faults", "major_requiring_i_o_page_faults"]),
        "minor_page_faults": number(&["minor_page_faults", "minor_reclaiming_a_frame_page_faults"]),
        "voluntary_context_switches": number(&["voluntary_context_switches"]),
        "involuntary_context_switches": number(&["involuntary_context_switches"]),
        "exit_status": number(&["exit_status"]),
        "elapsed_seconds": elapsed,
        "raw": raw,
    })
}

/// `1:02.50` (m:ss), `1:00:02` (h:mm:ss) or plain seconds.
fn clock_seconds(text: &str) -> Option<f64> {
    text.split(':').try_fold(0.0, |acc, part| {
        part.trim().parse::<f64>().ok().map(|v| acc * 60.0 + v)
    })
}

/// Lower case, every run of other characters one `_`: `Major (requiring I/O) page faults`
/// → `major_requiring_i_o_page_faults`.
fn snake_case(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// `host_perf_metrics` from `qemu.perf.csv` (`perf stat -x ,` lines), when `--host-perf`.
pub fn host_perf_metrics(perf_csv: Option<&str>) -> Value {
    let Some(csv) = perf_csv else {
        // The reference's words, so a script matching them still does.
        return json!({"enabled": false, "note": "未启用 host perf", "events": {}, "errors": []});
    };
    let mut events = Map::new();
    let mut errors = Vec::new();
    for line in csv
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let fields: Vec<&str> = line.split(',').collect();
        let (Some(value), Some(unit), Some(name)) = (fields.first(), fields.get(1), fields.get(2)) else {
            errors.push(format!("unreadable line: {line}"));
            continue;
        };
        let number = value.trim().parse::<f64>().ok();
        if number.is_none() {
            let why = line.split_once("# ").map_or("", |(_, w)| w);
            errors.push(format!("{name}: {value} {why}").trim().to_string());
        }
        events.insert(
            name.trim().to_string(),
            json!({"value": number, "unit": unit.trim(), "raw": line}),
        );
    }
    json!({
        "enabled": true,
        "scope": "host_qemu_process",
        "note": "perf_event counters of the QEMU process and its threads, counted by perfscope",
        "events": events,
        "errors": errors,
    })
}

/// `workload_metrics` from the guest console (`profile.stdout`).
pub fn workload_metrics(stdout: Option<&str>) -> Value {
    let ansi = Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").expect("a valid pattern");
    let text = ansi
        .replace_all(stdout.unwrap_or_default(), "")
        .replace('\r', "\n");
    let dd_line = Regex::new(r"(\d+) bytes .*copied, ([0-9.]+) s(?:econds)?, ([0-9.]+) ?(\S+)")
        .expect("a valid pattern");
    let mut custom = Vec::new();
    let mut values = Map::new();
    let mut raw_metric_lines = Vec::new();
    let mut dd = Value::Null;
    let mut wget_lines = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.contains("QPERF_BEGIN") || line.contains("QPERF_END") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("QPERF_METRIC") {
            let mut labels = Vec::new();
            let mut fields = Map::new();
            for word in shell_words(rest) {
                match word.split_once('=') {
                    Some((key, value)) => {
                        fields.insert(snake_case(key), scalar(value));
                    }
                    None => labels.push(word),
                }
            }
            values.extend(fields.clone());
            custom.push(json!({"labels": labels, "fields": fields, "raw": line}));
            raw_metric_lines.push(line.to_string());
            continue;
        }
        if let Some(c) = dd_line.captures(line) {
            let bytes: u64 = c[1].parse().unwrap_or(0);
            let elapsed: f64 = c[2].parse().unwrap_or(0.0);
            dd = json!({
                "bytes": bytes,
                "elapsed_seconds": elapsed,
                "throughput_bytes_per_second": (elapsed > 0.0).then(|| round6(bytes as f64 / elapsed)),
                "reported_rate": c[3].parse::<f64>().ok(),
                "reported_rate_unit": &c[4],
                "raw": line,
            });
        }
        if line.contains("wget") || line.contains("saved") {
            wget_lines.push(line.to_string());
        }
    }
    json!({
        "custom": custom,
        "values": values,
        "dd": dd,
        "wget": wget(&wget_lines),
        "raw_metric_lines": raw_metric_lines,
    })
}

/// busybox wget's last progress / "saved" line: size and time when it says them.
fn wget(lines: &[String]) -> Value {
    if lines.is_empty() {
        return Value::Null;
    }
    let saved = lines.iter().any(|l| l.contains("saved"));
    let progress = Regex::new(r"(\d+)([kMG]?)\s+[0-9:]*\s*(?:ETA)?").expect("a valid pattern");
    let size = lines.iter().rev().find_map(|l| {
        let c = progress.captures(l)?;
        let n: u64 = c[1].parse().ok()?;
        Some(
            n * match &c[2] {
                "k" => 1 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                _ => 1,
            },
        )
    });
    json!({
        "raw_lines": lines,
        "bytes": size,
        "saved": saved,
        "saved_bytes": if saved { size } else { None },
        "progress_size": size,
        "elapsed_seconds": Value::Null,
        "reported_rate": Value::Null,
        "reported_rate_unit": Value::Null,
        "throughput_bytes_per_second": Value::Null,
        "elapsed_source": Value::Null,
    })
}

/// A number when it reads as one, else the text.
fn scalar(text: &str) -> Value {
    if let Ok(n) = text.parse::<i64>() {
        json!(n)
    } else if let Ok(x) = text.parse::<f64>() {
        json!(x)
    } else {
        json!(text)
    }
}

/// What the normalised metrics are made of.
pub struct RunFacts<'a> {
    pub workload: &'a Value,
    pub host_time: &'a Value,
    pub host_perf: &'a Value,
    pub total_samples: u64,
    pub categories: &'a [CategoryTotal],
    /// The plugin's executed-instruction and -block counts, when it kept them.
    pub guest_instructions: Option<f64>,
    pub guest_blocks: Option<f64>,
}

/// `normalized_metrics`: the run per MB of the workload's bytes (MB = 10^6 bytes) and per
/// sample. The reference leaves the guest counts null (its plugin's counters never reach
/// the report); perfscope's plugin summary has them.
pub fn normalized_metrics(f: &RunFacts<'_>) -> Value {
    let values = &f.workload["values"];
    let bytes = f.workload["dd"]["bytes"]
        .as_f64()
        .or_else(|| values["bytes"].as_f64())
        .or_else(|| values["workload_bytes"].as_f64());
    let elapsed = f.workload["dd"]["elapsed_seconds"]
        .as_f64()
        .or_else(|| values["elapsed_seconds"].as_f64())
        .or_else(|| values["workload_elapsed_seconds"].as_f64());
    let mb = bytes.filter(|&b| b > 0.0).map(|b| b / 1e6);
    let per_mb = |v: Option<f64>| Some(round6(v? / mb?));
    let samples = f.total_samples as f64;
    let counter = |name: &str| f.host_perf["events"][name]["value"].as_f64();
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(round6(a / b)),
        _ => None,
    };
    let categories: Map<String, Value> = f
        .categories
        .iter()
        .map(|c| (c.name.to_string(), json!(per_mb(Some(c.samples as f64)))))
        .collect();
    json!({
        "workload_bytes": bytes,
        "workload_elapsed_seconds": elapsed,
        "guest_instructions_per_MB": per_mb(f.guest_instructions),
        "guest_blocks_per_MB": per_mb(f.guest_blocks),
        "host_elapsed_sec_per_MB": per_mb(f.host_time["elapsed_seconds"].as_f64()),
        "samples_per_MB": per_mb(Some(samples)),
        "category_samples_per_MB": if mb.is_some() { Value::Object(categories) } else { json!({}) },
        "samples_per_second": ratio(Some(samples), elapsed),
        "host_ipc": ratio(counter("instructions"), counter("cycles")),
        "host_cycles_per_sample": ratio(counter("cycles"), Some(samples)),
        "host_instructions_per_sample": ratio(counter("instructions"), Some(samples)),
        "host_cache_miss_percent": ratio(counter("cache-misses").map(|m| m * 100.0), counter("cache-references")),
    })
}

/// `summary` from `summary.txt`'s `key = value` lines; the `[plugin_summary]` block's keys
/// win over earlier ones of the same name, as in the reference.
pub fn summary_pairs(summary_txt: &str) -> Value {
    let mut pairs = Map::new();
    for line in summary_txt.lines() {
        if let Some((key, value)) = line.split_once(" = ") {
            pairs.insert(key.trim().to_string(), json!(value.trim()));
        }
    }
    Value::Object(pairs)
}

/// `linux_alignment`: comparing against Linux needs a Linux baseline run.
pub fn linux_alignment() -> Value {
    json!({
        "status": "baseline_required",
        "note": "run the same workload on Linux (perfscope top/profile on the host, or a Linux guest) to compare",
    })
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_time_reads_perfscopes_lines_and_gnu_times() {
        let ours = "Elapsed time: 2.500000\nUser time: 1.250000\nSystem time: 0.250000\nPercent of CPU this job got: 60.00%\nMajor page faults: 0\nMinor page faults: 1234\nVoluntary context switches: unavailable\nInvoluntary context switches: 7\n";
        let m = host_time_metrics(Some(ours));
        assert_eq!(m["user_seconds"], 1.25);
        assert_eq!(m["cpu_percent"], 60.0);
        assert_eq!(m["minor_page_faults"], 1234.0);
        assert_eq!(m["voluntary_context_switches"], Value::Null);
        assert_eq!(m["elapsed_seconds"], 2.5);
        assert_eq!(m["raw"]["voluntary_context_switches"], "unavailable");
        let gnu = "\tUser time (seconds): 0.61\n\tPercent of CPU this job got: 99%\n\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02.50\n\tMajor (requiring I/O) page faults: 3\n\tExit status: 0\n";
        let m = host_time_metrics(Some(gnu));
        assert_eq!(m["user_seconds"], 0.61);
        assert_eq!(m["elapsed_seconds"], 62.5);
        assert_eq!(m["major_page_faults"], 3.0);
        assert_eq!(m["exit_status"], 0.0);
        assert_eq!(host_time_metrics(None)["user_seconds"], Value::Null);
    }

    #[test]
    fn host_perf_keeps_every_event_and_says_what_was_not_counted() {
        let csv = "1234.50,msec,task-clock,1000,100.00,,\n<not supported>,,cycles,0,0.00,,# no PMU\n";
        let m = host_perf_metrics(Some(csv));
        assert_eq!(m["enabled"], true);
        assert_eq!(m["events"]["task-clock"]["value"], 1234.5);
        assert_eq!(m["events"]["cycles"]["value"], Value::Null);
        assert_eq!(m["errors"][0], "cycles: <not supported> no PMU");
        assert_eq!(host_perf_metrics(None)["enabled"], false);
    }

    #[test]
    fn workload_lines_give_metrics_dd_and_the_per_mb_figures() {
        let stdout = "\x1b[32mstarry:~# \x1b[0mdd if=/dev/zero of=/tmp/x bs=1M count=8\r\n\
                      8+0 records in\r\n8388608 bytes (8.0MB) copied, 0.500000 s, 16.0MB/s\r\n\
                      QPERF_BEGIN run\n1000 bytes (1.0KB) copied, 0.5 seconds, 2.0KB/second\nQPERF_METRIC fs write \"bytes=4000000\" elapsed_seconds=2 Op-Name='big file'\n";
        let w = workload_metrics(Some(stdout));
        // The last dd line counts (busybox's wording here).
        assert_eq!(w["dd"]["bytes"], 1000);
        assert_eq!(w["dd"]["throughput_bytes_per_second"], 2000.0);
        assert_eq!(w["dd"]["reported_rate_unit"], "KB/second");
        let gnu = workload_metrics(Some("8388608 bytes (8.4 MB, 8.0 MiB) copied, 0.5 s, 16.8 MB/s\n"));
        assert_eq!(gnu["dd"]["bytes"], 8_388_608);
        assert_eq!(gnu["dd"]["reported_rate"], 16.8);
        assert_eq!(gnu["dd"]["reported_rate_unit"], "MB/s");
        assert_eq!(w["custom"][0]["labels"], json!(["fs", "write"]));
        assert_eq!(w["custom"][0]["fields"]["op_name"], "big file");
        assert_eq!(w["values"]["bytes"], 4_000_000);
        assert_eq!(w["raw_metric_lines"].as_array().unwrap().len(), 1);
        let time = host_time_metrics(Some("Elapsed time: 4.0\n"));
        let perf = host_perf_metrics(Some("200,,instructions,1,100.00,,\n100,,cycles,1,100.00,,\n"));
        let n = normalized_metrics(&RunFacts {
            workload: &w,
            host_time: &time,
            host_perf: &perf,
            total_samples: 500,
            categories: &[],
            guest_instructions: Some(8_388_608.0),
            guest_blocks: None,
        });
        // dd's bytes win over the metric line's: 0.001 MB.
        assert_eq!(n["workload_bytes"], 1000.0);
        assert_eq!(n["samples_per_MB"], 500_000.0);
        assert_eq!(n["guest_instructions_per_MB"], 8_388_608_000.0);
        assert_eq!(n["guest_blocks_per_MB"], Value::Null);
        assert_eq!(n["samples_per_second"], 1000.0, "dd's 0.5 s");
        assert_eq!(n["host_ipc"], 2.0);
        assert_eq!(n["host_cache_miss_percent"], Value::Null);
    }

    #[test]
    fn summary_pairs_let_the_plugin_block_win() {
        let s = summary_pairs(
            "arch = riscv64\ndropped_samples = unknown\n\n[plugin_summary]\ndropped_samples = 3\n",
        );
        assert_eq!(s["arch"], "riscv64");
        assert_eq!(s["dropped_samples"], "3");
    }
}
