//! Helpers that make configuration errors say where and what: a byte offset turned into
//! `line:column`, and the known names closest to a misspelt one. Shared by the keymap and
//! theme loaders.

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// `origin:line:column` for a span start.
pub(crate) fn location(origin: &str, text: &str, offset: usize) -> String {
    let (line, column) = line_column(text, offset);
    format!("{origin}:{line}:{column}")
}

/// Up to three of `known` within a small edit distance of `word` (or containing it),
/// nearest first.
pub(crate) fn close_names<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let word_lower = word.to_ascii_lowercase();
    let limit = (word.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = known
        .into_iter()
        .filter_map(|name| {
            let distance = edit_distance(&word_lower, name);
            let related = word_lower.len() >= 3 && (name.contains(&word_lower) || word_lower.contains(name));
            (distance <= limit || related).then_some((distance, name))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, n)| n.to_string()).collect()
}

/// `" (did you mean a or b?)"`, or nothing when there is no close name.
pub(crate) fn did_you_mean(close: &[String]) -> String {
    match close {
        [] => String::new(),
        [one] => format!(" (did you mean {one}?)"),
        [rest @ .., last] => format!(" (did you mean {} or {last}?)", rest.join(", ")),
    }
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        let text = "a = 1\n[x]\nbé = 2";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, text.len()), (3, 7));
        assert_eq!(location("f.toml", text, 8), "f.toml:2:3");
    }

    #[test]
    fn suggestions_are_nearest_first() {
        let known = ["zoom_in", "zoom_out", "zoom_reset", "quit"];
        assert_eq!(close_names("zoom_inn", known), vec!["zoom_in"]);
        assert_eq!(
            close_names("zoom", known),
            vec!["zoom_in", "zoom_out", "zoom_reset"]
        );
        assert!(close_names("xyzzy_plugh", known).is_empty());
        assert_eq!(did_you_mean(&["a".into(), "b".into()]), " (did you mean a or b?)");
        assert_eq!(did_you_mean(&[]), "");
    }
}
