//! Shell-style glob matching (`fnmatch` without flags): `*`, `?`, `[abc]`, `[a-z]`,
//! `[!x]` / `[^x]` and `\` escapes. Used by the `~` operator of expressions and filters and
//! by the wildcard expansion of event selectors (matched against `sys:name`).

/// Whether `text` matches the glob `pattern`, whole string. Never allocates; a malformed
/// class (`[` without `]`) matches a literal `[`, as fnmatch does.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    // Where to resume after the most recent `*`: (pattern index after it, text index).
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi + 1, ti));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = match_class(p, pi, t[ti]) {
                        if matched {
                            pi = next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == b'[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                b'\\' if pi + 1 < p.len() && p[pi + 1] == t[ti] => {
                    pi += 2;
                    ti += 1;
                    continue;
                }
                // An escaped byte that differs: a mismatch, not a literal backslash.
                b'\\' if pi + 1 < p.len() => {}
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        // Mismatch: let the last `*` swallow one more byte, or fail.
        match star {
            Some((after_star, star_text)) => {
                pi = after_star;
                ti = star_text + 1;
                star = Some((after_star, star_text + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Match `c` against the class starting at `p[start] == b'['`. Returns (matched, index after
/// the closing `]`), or `None` when the class is not closed.
fn match_class(p: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let lo = *p.get(i)?;
        if lo == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        let lo = if lo == b'\\' {
            i += 1;
            *p.get(i)?
        } else {
            lo
        };
        if p.get(i + 1) == Some(&b'-') && p.get(i + 2).is_some_and(|&h| h != b']') {
            let hi = p[i + 2];
            matched |= lo <= c && c <= hi;
            i += 3;
        } else {
            matched |= lo == c;
            i += 1;
        }
    }
}

/// Whether `text` contains glob metacharacters (and so names a pattern, not one event).
pub fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_questions_and_classes() {
        assert!(glob_match("sched:sched_wakeup*", "sched:sched_wakeup"));
        assert!(glob_match("sched:sched_wakeup*", "sched:sched_wakeup_new"));
        assert!(!glob_match("sched:sched_wakeup*", "sched:sched_waking"));
        assert!(glob_match("kworker*", "kworker/0:1"));
        assert!(glob_match("*worker*", "kworker/0:1"));
        assert!(!glob_match("*worker", "kworker/0:1"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("irq:softirq_[er]*", "irq:softirq_entry"));
        assert!(glob_match("irq:softirq_[er]*", "irq:softirq_raise"));
        assert!(!glob_match("irq:softirq_[!er]*", "irq:softirq_exit"));
        assert!(glob_match("cpu[0-3]", "cpu2"));
        assert!(!glob_match("cpu[0-3]", "cpu7"));
        assert!(glob_match("a\\*", "a*"));
        assert!(!glob_match("a\\*", "ab"));
        assert!(glob_match("[", "["), "an unclosed class is a literal '['");
        assert!(glob_match("", ""));
        assert!(glob_match("*", ""));
        assert!(!glob_match("", "x"));
        assert!(glob_match("*a*b*c", "xxaxxbxxc"));
        assert!(!glob_match("*a*b*c", "xxaxxcxxb"));
    }
}
