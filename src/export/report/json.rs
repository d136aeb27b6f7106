//! report.json: the reference harness's top-level keys, written with sorted keys as the
//! harness does; a host session's carries no QEMU/qperf notes.

use serde_json::{Map, Value, json};

use super::{DIFFERENCES, Report};
use crate::export::analysis::AnalysisSummary;
use crate::export::categories;
use crate::export::tables::round4;

impl Report<'_> {
    pub fn to_json(&self) -> Value {
        let i = &self.input;
        let mut window = i.window.to_json();
        window["boot_samples_excluded"] = json!(self.input.stats.excluded_before);
        window["post_window_samples_excluded"] = json!(self.input.stats.excluded_after);
        let mut warnings = i.window.warnings.clone();
        warnings.extend(i.warnings.iter().cloned());
        if let Some(w) = i.stats.warning() {
            warnings.push(w.to_string());
        }
        window["warnings"] = json!(warnings);
        let top_functions: Vec<Value> = self
            .functions
            .iter()
            .map(|f| {
                json!({
                    "function": f.name,
                    "samples": f.occurrences,
                    "percent": round4(f.occurrence_percent),
                    "occurrences": f.occurrences,
                    "self": f.self_weight,
                    "self_percent": round4(f.self_percent),
                    "total": f.total_weight,
                    "total_percent": round4(f.total_percent),
                })
            })
            .collect();
        let top_stacks: Vec<Value> = self
            .stacks
            .iter()
            .map(|s| json!({"stack": s.stack, "samples": s.weight, "percent": round4(s.percent)}))
            .collect();
        let plugin: Map<String, Value> = i
            .plugin_summary
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let artifacts: Map<String, Value> = i
            .artifacts
            .iter()
            .map(|(k, p)| (k.clone(), json!(p.display().to_string())))
            .collect();
        let variants: Map<String, Value> = i
            .variants
            .iter()
            .map(|v| {
                (
                    v.name.clone(),
                    json!({
                        "samples": v.samples,
                        "folded": v.folded.display().to_string(),
                        "flamegraph": v.svg.as_ref().map(|p| p.display().to_string()),
                    }),
                )
            })
            .collect();
        let mut report = json!({
            "arch": i.arch,
            "result": self.result(),
            "returncode": i.verdict.exit_code(),
            "verdict": i.verdict.to_json(),
            "parameters": i.parameters,
            "input": {
                "kind": i.input.kind,
                "path": i.input.path,
                "format": i.input.format,
                "records": i.input.records,
                "bytes_read": i.input.bytes_read,
                "end": i.input.end,
                "clean": i.verdict.input_clean(),
                "bytes_lost": i.input.bytes_lost,
            },
            "window": window,
            "resolve_stats": i.stats_json,
            "callchain": i.stats.callchain_json(),
            "callchain_choice": i.facts.callchain.as_ref().map(|c| c.to_json()),
            "hotspots": {
                "total_samples": self.total_samples(),
                "total_frames": i.main.hotspots.total_occurrences,
                "counting": "per_sample",
                "top_functions": top_functions,
                "top_stacks": top_stacks,
                "category_totals": categories::to_json(&self.categories),
            },
            "variants": variants,
            "analysis": i.analysis.as_ref().map(AnalysisSummary::to_json),
            "artifacts": artifacts,
        });
        if self.guest_notes() {
            report["plugin_summary"] = json!(plugin);
            report["differences_from_reference"] = json!(DIFFERENCES);
            for (key, value) in &self.metrics {
                report[*key] = value.clone();
            }
        }
        sorted(report)
    }
}

/// Sort object keys recursively (the harness writes `sort_keys=True`).
pub fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{Case, with_report};

    #[test]
    fn the_verdict_is_the_result_and_the_return_code() {
        let json = with_report(Case::host(), |r| r.to_json());
        assert_eq!(
            (json["result"].as_str(), json["returncode"].as_i64()),
            (Some("ok"), Some(0))
        );
        let lossy = Case::lossy();
        let json = with_report(lossy, |r| r.to_json());
        assert_eq!(json["result"], "incomplete");
        assert_eq!(json["returncode"], 3);
        assert_eq!(json["verdict"]["findings"][0]["gap"], "lost");
    }

    #[test]
    fn a_host_report_carries_no_guest_notes() {
        let host = with_report(Case::host(), |r| r.to_json());
        let guest = with_report(Case::guest(), |r| r.to_json());
        for key in [
            "plugin_summary",
            "differences_from_reference",
            "host_time_metrics",
            "fix_candidates",
        ] {
            assert!(host.get(key).is_none(), "{key} in a host report");
            assert!(guest.get(key).is_some(), "{key} missing from a guest report");
        }
    }

    #[test]
    fn functions_count_once_per_sample_and_keys_are_sorted() {
        let json = with_report(Case::host(), |r| r.to_json());
        let hotspots = &json["hotspots"];
        assert_eq!(hotspots["total_samples"], 4);
        let top = hotspots["top_functions"].as_array().unwrap();
        let main = top.iter().find(|f| f["function"] == "main").unwrap();
        assert_eq!(
            (main["self"].as_u64(), main["total"].as_u64()),
            (Some(0), Some(4))
        );
        let leaf = top.iter().find(|f| f["function"] == "leaf").unwrap();
        assert_eq!(
            (leaf["self"].as_u64(), leaf["self_percent"].as_f64()),
            (Some(3), Some(75.0))
        );
        // Every object's keys in order, as the harness's sort_keys=True writes them.
        fn check(v: &serde_json::Value) {
            if let Some(map) = v.as_object() {
                let keys: Vec<&String> = map.keys().collect();
                assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{keys:?}");
                map.values().for_each(check);
            }
            v.as_array().into_iter().flatten().for_each(check);
        }
        check(&json);
    }

    #[test]
    fn an_analysis_without_samples_reports_its_series() {
        let json = with_report(Case::analysis(), |r| r.to_json());
        assert_eq!(json["analysis"]["analyzer"], "syscalls");
        assert_eq!(json["analysis"]["latency"][0]["series"], "read(0)");
        assert_eq!(json["analysis"]["latency"][0]["p99_ns"], 2_500);
        assert_eq!(json["hotspots"]["total_samples"], 0);
        assert!(
            json["analysis"].get("offenders").is_none(),
            "no --than: no offenders"
        );
        assert!(json["analysis"].get("heatmap").is_none());
    }

    #[test]
    fn the_offenders_and_heatmap_written_are_in_the_analysis() {
        let json = with_report(Case::analysis_with_offenders(), |r| r.to_json());
        let offenders = &json["analysis"]["offenders"];
        assert_eq!(
            (offenders["pairs"].as_u64(), offenders["dropped"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(offenders["text"], "out/offenders.txt");
        assert_eq!(offenders["json"], "out/offenders.json");
        let heatmap = &json["analysis"]["heatmap"];
        assert_eq!(
            (heatmap["columns"].as_u64(), heatmap["total"].as_u64()),
            (Some(2), Some(4))
        );
        assert_eq!(heatmap["csv"], "out/heatmap.csv");
    }
}
