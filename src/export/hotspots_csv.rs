//! `hotspots.csv`: function rows, then stack rows.
//!
//! The first four columns are the reference harness's — `kind,name,samples,percent`, names
//! quoted as JSON strings, function `samples`/`percent` counting frame occurrences over all
//! frame occurrences — so scripts that read them keep working. The per-sample numbers a
//! profiler user wants follow as `self,self_percent,total,total_percent`. Rows are ranked
//! as the reference ranks them (frame occurrences, then name), so a script reading row 1
//! gets the reference's function; report.json and the views rank by self.
//!
//! Which functions: the reference's `--top` by occurrences, and every function whose self
//! share reaches `--min-percent`. In a deep-stack profile occurrences are the frames every
//! stack passes through (the callers at the root), so the top rows by occurrences alone
//! left out the functions where the time is spent.

use super::ExportView;
use super::tables::{FunctionRow, function_rows, round4, stack_rows};

pub const HEADER: &str = "kind,name,samples,percent,self,self_percent,total,total_percent";

/// The CSV of `view`: the function rows `--top` and `--min-percent` select, then the `top`
/// stacks.
pub fn render(view: &ExportView<'_>, top: usize, min_percent: f64) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for f in selected_functions(function_rows(view, usize::MAX), top, min_percent) {
        out.push_str(&format!(
            "function,{},{},{},{},{},{},{}\n",
            json_quote(&f.name),
            f.occurrences,
            round4(f.occurrence_percent),
            f.self_weight,
            round4(f.self_percent),
            f.total_weight,
            round4(f.total_percent),
        ));
    }
    for s in stack_rows(view, top) {
        let p = round4(s.percent);
        out.push_str(&format!(
            "stack,{},{},{p},{},{p},{},{p}\n",
            json_quote(&s.stack),
            s.weight,
            s.weight,
            s.weight,
        ));
    }
    out
}

/// The `top` functions by occurrences plus every function with self time whose self %
/// is at least `min_percent`, in the reference's order (occurrences, then name).
fn selected_functions(mut functions: Vec<FunctionRow>, top: usize, min_percent: f64) -> Vec<FunctionRow> {
    functions.sort_by(|a, b| {
        b.occurrences
            .cmp(&a.occurrences)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut rank = 0;
    functions.retain(|f| {
        rank += 1;
        rank <= top || (f.self_weight > 0 && f.self_percent >= min_percent)
    });
    functions
}

/// Quote as a JSON string, as the reference harness does with `json.dumps`.
pub fn json_quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Selection;
    use crate::model::sample_list::test_support::profile_from;

    #[test]
    fn compatibility_columns_count_occurrences() {
        let p = profile_from(&[(&["main", "fib", "fib"], 3, None), (&["main", "x\"y"], 1, None)]);
        let view = ExportView::new(&p, Selection::all());
        let csv = render(&view, 10, 0.3);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], HEADER);
        // fib: 6 of 3×3 + 1×2 = 11 frame occurrences; self 3 of 4 samples, total 3.
        // The reference's order: occurrences, then name.
        assert_eq!(lines[1], "function,\"fib\",6,54.5455,3,75,3,75");
        assert_eq!(lines[2], "function,\"main\",4,36.3636,0,0,4,100");
        assert_eq!(lines[3], "function,\"x\\\"y\",1,9.0909,1,25,1,25");
        assert_eq!(lines[4], "stack,\"main;fib;fib\",3,75,3,75,3,75");
    }

    /// A deep-stack profile: 40 callers on every stack outnumber, by occurrences, the five
    /// leaves holding nearly all the self time — and the one-sample leaves below the line.
    #[test]
    fn every_function_above_the_min_percent_line_by_self_is_listed() {
        let callers: Vec<String> = (0..40).map(|i| format!("caller{i:02}")).collect();
        let stack = |leaf: &'static str| -> Vec<&str> {
            let mut s: Vec<&str> = callers.iter().map(String::as_str).collect();
            s.push(leaf);
            s
        };
        let hot = ["hot_a", "hot_b", "hot_c", "hot_d", "hot_e"];
        let mut stacks: Vec<(Vec<&str>, u64)> = hot
            .iter()
            .zip([300, 250, 200, 150, 95])
            .map(|(l, n)| (stack(l), n))
            .collect();
        // Five cold leaves at 0.1 % each (1 sample of 1,000), under the 0.3 % line.
        let cold = ["cold_a", "cold_b", "cold_c", "cold_d", "cold_e"];
        stacks.extend(cold.iter().map(|l| (stack(l), 1)));
        let refs: Vec<(&[&str], u64, Option<u64>)> =
            stacks.iter().map(|(s, n)| (s.as_slice(), *n, None)).collect();
        let p = profile_from(&refs);
        let view = ExportView::new(&p, Selection::all());
        let names = |csv: &str| -> Vec<String> {
            csv.lines()
                .filter(|l| l.starts_with("function,"))
                .map(|l| l.split(',').nth(1).unwrap().trim_matches('"').to_string())
                .collect()
        };
        // --top 40: by occurrences only the callers; the hot leaves come after them, in the
        // reference's order (occurrences, then name), and no cold leaf.
        let listed = names(&render(&view, 40, 0.3));
        assert_eq!(listed.len(), 45, "{listed:?}");
        assert_eq!(&listed[..40], callers.as_slice());
        assert_eq!(listed[40..], hot);
        // --top 3: three callers, the hot leaves still all there.
        let listed = names(&render(&view, 3, 0.3));
        assert_eq!(
            listed,
            [
                "caller00", "caller01", "caller02", "hot_a", "hot_b", "hot_c", "hot_d", "hot_e"
            ]
        );
        // A line at 10 %: hot_e (9.5 %) falls below it.
        let listed = names(&render(&view, 0, 10.0));
        assert_eq!(listed, ["hot_a", "hot_b", "hot_c", "hot_d"]);
        // At 0 every function with self time is listed, the callers (no self) only by --top.
        assert_eq!(names(&render(&view, 0, 0.0)).len(), 10);
    }
}
