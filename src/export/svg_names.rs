//! Frame labels of the SVG flamegraph shortened by meaning, as the TUI shortens them.
//!
//! inferno cuts a label that does not fit its frame by characters (`..` and the start in
//! the SVG text, `..` and the end in the page's script), which keeps a generic argument
//! of a long Rust name and loses its method. Here every frame's text is refitted with
//! [`fit_name`] to the characters inferno allowed it, and the script gets each long
//! name's shorter forms ([`name_forms`], then `…::method`, then the method) to try,
//! longest first, before its own cut when the page is resized or zoomed. The `<title>` keeps the full name (the
//! tooltip and the details line show it).

use std::io;

use serde_json::{Map, Value};

use crate::model::fit::{display_width, fit_name};
use crate::model::name_forms::name_forms;

/// Where inferno's monospace branch cuts a label, and its measuring branch.
const CUT_BY_WIDTH: &str = "        var substringLength = Math.floor(w / known_font_width) - 2;\n";
const CUT_BY_MEASURE: &str = "    if (t.getComputedTextLength() < w)\n        return;\n";
/// The start of inferno's script, where the forms and the picker go.
const SCRIPT_START: &str = "<![CDATA[\"use strict\";\n";

/// Tried before the monospace cut: the first form narrower than the frame.
const PICK_BY_WIDTH: &str = "        var shorter = perfscope_shorter(txt, function(s) { return s.length * known_font_width < w; });\n        if (shorter !== null) {\n            textElemNewAttributes.push([newX, shorter]);\n            continue;\n        }\n";
/// Tried before the measured cut, which measures `txt` in the element again after.
const PICK_BY_MEASURE: &str = "    if (perfscope_shorter(txt, function(s) { t.textContent = s; return t.getComputedTextLength() < w; }) !== null)\n        return;\n    t.textContent = txt;\n";
const PICKER: &str = "function perfscope_shorter(txt, fits) {\n    var forms = perfscope_forms[txt.trim()];\n    if (!forms) return null;\n    for (var i = 0; i < forms.length; i++) {\n        if (fits(forms[i])) return forms[i];\n    }\n    return null;\n}\n";

/// `svg` (inferno's output) with its frame labels shortened by meaning. Fails when
/// inferno's script is not the one this was written against (a new inferno version):
/// labels would silently be cut by characters again.
pub fn shorten_labels(svg: &str) -> io::Result<String> {
    let mut forms = Map::new();
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(start) = rest.find("<title>") {
        let Some(title_len) = rest[start..].find("</title>") else {
            break;
        };
        let title = unescape(&rest[start + "<title>".len()..start + title_len]);
        let name = frame_name(&title);
        let after_title = start + title_len;
        let Some((text_start, text_end)) = text_content(&rest[after_title..]) else {
            break;
        };
        let (text_start, text_end) = (after_title + text_start, after_title + text_end);
        out.push_str(&rest[..text_start]);
        out.push_str(&escape(&label(name, &unescape(&rest[text_start..text_end]))));
        rest = &rest[text_end..];
        if let Some(shorter) = shorter_forms(name) {
            forms.insert(name.to_string(), shorter);
        }
    }
    out.push_str(rest);
    patch_script(&out, &Value::Object(forms))
}

/// The frame's name: the title without inferno's ` (N samples, P%)`.
fn frame_name(title: &str) -> &str {
    match title.rfind(" (") {
        Some(at) if title.ends_with(')') => &title[..at],
        _ => title,
    }
}

/// Byte range of the content of the first `<text …>…</text>` in `s`.
fn text_content(s: &str) -> Option<(usize, usize)> {
    let open = s.find("<text")?;
    let content = open + s[open..].find('>')? + 1;
    let close = content + s[content..].find("</text>")?;
    Some((content, close))
}

/// The label for `name` where inferno wrote `written`: unchanged when inferno did not cut
/// it (it fits, or the frame is too narrow for any); else the name fitted to the room
/// inferno's cut measured — its characters, less one (inferno keeps a name whole only
/// when it is shorter than the room).
fn label(name: &str, written: &str) -> String {
    if written.is_empty() || written == name || !written.ends_with("..") {
        return written.to_string();
    }
    fit_name(name, display_width(written).saturating_sub(1)).into_owned()
}

/// What the script may try for `name` before cutting it: its shorter forms, then its
/// method after `…`, then the method alone; nothing for a name without them.
fn shorter_forms(name: &str) -> Option<Value> {
    let f = name_forms(name);
    let mut list: Vec<Value> = f.forms.iter().map(|s| Value::from(s.as_str())).collect();
    if let Some(tail) = f.tail(name) {
        list.push(Value::from(format!("…{tail}")));
        list.push(Value::from(&tail[2..]));
    }
    (!list.is_empty()).then(|| Value::Array(list))
}

/// inferno's script with the forms, the picker and the two calls to it.
fn patch_script(svg: &str, forms: &Value) -> io::Result<String> {
    let changed = |what: &str| {
        io::Error::other(format!(
            "the flamegraph script of this inferno version has no {what}: labels cannot be shortened by meaning"
        ))
    };
    for (anchor, what) in [
        (SCRIPT_START, "start"),
        (CUT_BY_WIDTH, "monospace cut"),
        (CUT_BY_MEASURE, "measured cut"),
    ] {
        if svg.matches(anchor).count() != 1 {
            return Err(changed(what));
        }
    }
    // `<`, `>` and `&` as JSON escapes: no `]]>` or `</script>` can end the script early.
    let json = forms
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026");
    Ok(svg
        .replacen(
            SCRIPT_START,
            &format!("{SCRIPT_START}var perfscope_forms = {json};\n{PICKER}"),
            1,
        )
        .replacen(CUT_BY_WIDTH, &format!("{PICK_BY_WIDTH}{CUT_BY_WIDTH}"), 1)
        .replacen(CUT_BY_MEASURE, &format!("{CUT_BY_MEASURE}{PICK_BY_MEASURE}"), 1))
}

/// XML text as inferno (quick-xml) escapes it.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::svg::{SvgOptions, render};

    const WRITE_AT: &str = "<ax_fs_ng::file::handle::FileHandle<ax_sync::mutex::RawMutex> as ax_io::Write>::write_at::<&mut dyn starry_kernel::file::ReadBuf>";

    fn svg_of(lines: &[String]) -> String {
        String::from_utf8(render(lines, &SvgOptions::default()).unwrap()).unwrap()
    }

    #[test]
    fn a_cut_label_keeps_the_method_and_the_title_the_full_name() {
        let svg = svg_of(&[format!("kmain;{WRITE_AT} 30"), "kmain;idle 70".into()]);
        // 30 % of 1,200 px in 13 px monospace: inferno allowed 46 characters.
        assert!(
            svg.contains(">&lt;FileHandle&lt;…&gt; as Write&gt;::write_at::&lt;…&gt;</text>"),
            "{svg}"
        );
        assert!(svg.contains(&format!(
            "<title>{} (30 samples, 30.00%)</title>",
            escape(WRITE_AT)
        )));
        assert!(!svg.contains("..</text>"), "no label cut by characters");
        // Labels that fit are inferno's own.
        assert!(svg.contains(">idle</text>") && svg.contains(">kmain</text>"));
    }

    #[test]
    fn the_script_tries_the_forms_before_cutting() {
        let svg = svg_of(&[format!("kmain;{WRITE_AT} 30"), "kmain;idle 70".into()]);
        let forms = "var perfscope_forms = {\"\\u003cax_fs_ng::file::handle::FileHandle\\u003cax_sync::mutex::RawMutex\\u003e as ax_io::Write\\u003e::write_at::\\u003c\\u0026mut dyn starry_kernel::file::ReadBuf\\u003e\":[\"\\u003cax_fs_ng::file::handle::FileHandle\\u003c…\\u003e as ax_io::Write\\u003e::write_at::\\u003c…\\u003e\",\"\\u003cFileHandle\\u003c…\\u003e as Write\\u003e::write_at::\\u003c…\\u003e\",\"\\u003cFileHandle as Write\\u003e::write_at\",\"…::write_at\",\"write_at\"]};";
        assert!(svg.contains(forms), "{svg}");
        assert_eq!(svg.matches("perfscope_shorter(txt, function").count(), 2);
        // C names get no entry; the script ends nowhere but where inferno ends it.
        assert!(!svg.contains("\"idle\""));
        assert_eq!(
            svg.matches("]]>").count(),
            svg_of(&["a 1".into()]).matches("]]>").count()
        );
    }

    #[test]
    fn titles_without_counts_and_odd_text_are_left_alone() {
        assert_eq!(frame_name("f (3 samples, 1.00%)"), "f");
        assert_eq!(frame_name("g(int) (3 samples, 1.00%)"), "g(int)");
        assert_eq!(frame_name("plain"), "plain");
        assert_eq!(label("a::b::c", ""), "");
        assert_eq!(label("a::b::c", "a::b::c"), "a::b::c");
        assert_eq!(unescape(&escape("<a & 'b' \"c\">")), "<a & 'b' \"c\">");
        assert!(
            patch_script("<svg/>", &Value::Null).is_err(),
            "a foreign script is refused"
        );
    }
}
