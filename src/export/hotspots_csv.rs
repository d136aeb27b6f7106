//! `hotspots.csv`: function rows, then stack rows.
//!
//! The first four columns are the reference harness's — `kind,name,samples,percent`, names
//! quoted as JSON strings, function `samples`/`percent` counting frame occurrences over all
//! frame occurrences — so scripts that read them keep working. The per-sample numbers a
//! profiler user wants follow as `self,self_percent,total,total_percent`. Rows are ranked
//! as the reference ranks them (frame occurrences, then name), so a script reading row 1
//! gets the reference's function; report.json and the views rank by self.

use super::ExportView;
use super::tables::{function_rows, round4, stack_rows};

pub const HEADER: &str = "kind,name,samples,percent,self,self_percent,total,total_percent";

pub fn render(view: &ExportView<'_>, top: usize) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    let mut functions = function_rows(view, usize::MAX);
    functions.sort_by(|a, b| {
        b.occurrences
            .cmp(&a.occurrences)
            .then_with(|| a.name.cmp(&b.name))
    });
    functions.truncate(top);
    for f in functions {
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
        let csv = render(&view, 10);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], HEADER);
        // fib: 6 of 3×3 + 1×2 = 11 frame occurrences; self 3 of 4 samples, total 3.
        // The reference's order: occurrences, then name.
        assert_eq!(lines[1], "function,\"fib\",6,54.5455,3,75,3,75");
        assert_eq!(lines[2], "function,\"main\",4,36.3636,0,0,4,100");
        assert_eq!(lines[3], "function,\"x\\\"y\",1,9.0909,1,25,1,25");
        assert_eq!(lines[4], "stack,\"main;fib;fib\",3,75,3,75,3,75");
    }
}
