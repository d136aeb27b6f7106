//! Flamegraphs as SVG (inferno, its frame labels shortened by meaning: `svg_names`) and a
//! self-contained HTML page around the SVG.

use std::io;
use std::path::Path;

use inferno::flamegraph::{self, Direction, Options};

use super::{ExportError, write_file};

/// How a flamegraph is drawn.
#[derive(Clone, Debug)]
pub struct SvgOptions {
    pub title: String,
    pub subtitle: Option<String>,
    /// Frames narrower than this percentage of the total are pruned (0 keeps all).
    pub min_percent: f64,
    /// Icicle layout with the root on top.
    pub inverted: bool,
    pub count_name: String,
}

impl Default for SvgOptions {
    fn default() -> Self {
        Self {
            title: "perfscope Flame Graph".into(),
            subtitle: None,
            min_percent: 0.3,
            inverted: false,
            count_name: "samples".into(),
        }
    }
}

/// Render folded lines (one or two counts per line; two make a differential graph).
pub fn render(lines: &[String], options: &SvgOptions) -> std::io::Result<Vec<u8>> {
    let mut opt = Options::default();
    opt.title = options.title.clone();
    opt.subtitle = options.subtitle.clone();
    opt.count_name = options.count_name.clone();
    // Fluid width (1,200 px until the page's script fits it to the window): a fixed
    // 3,200 px graph hid its Search button off screen in a 1,600 px window.
    opt.image_width = None;
    opt.frame_height = 24;
    opt.font_size = 13;
    opt.min_width = options.min_percent.max(0.0);
    opt.hash = true;
    opt.deterministic = true;
    if options.inverted {
        opt.direction = Direction::Inverted;
    }
    let mut out = Vec::new();
    flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out)?;
    let svg = String::from_utf8(out).map_err(io::Error::other)?;
    Ok(super::svg_names::shorten_labels(&svg)?.into_bytes())
}

/// A flamegraph of a window without samples: the title and a line saying so. Every
/// window's SVG exists and is listed (scripts and the reference's report.json expect
/// `flamegraph_post` even when the guest stopped right after the workload).
pub fn empty(title: &str, message: &str) -> Vec<u8> {
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    format!(
        "<?xml version=\"1.0\" standalone=\"no\"?>\n\
         <svg version=\"1.1\" width=\"1200\" height=\"90\" viewBox=\"0 0 1200 90\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#eeeeee\"/>\n\
         <text x=\"600\" y=\"30\" text-anchor=\"middle\" font-family=\"Verdana\" font-size=\"17\">{}</text>\n\
         <text x=\"600\" y=\"65\" text-anchor=\"middle\" font-family=\"Verdana\" font-size=\"13\">{}</text>\n\
         </svg>\n",
        escape(title),
        escape(message)
    )
    .into_bytes()
}

/// Render and write an SVG.
pub fn write(lines: &[String], options: &SvgOptions, path: &Path) -> Result<Vec<u8>, ExportError> {
    let svg = render(lines, options).map_err(|e| ExportError::new(path, e))?;
    write_file(path, &svg)?;
    Ok(svg)
}

/// An HTML page with the SVG inline, so the file works alone (the reference's page only
/// points at a sibling SVG through `<object>`). The SVG's own script keeps search and zoom.
pub fn html_page(svg: &[u8], title: &str) -> Vec<u8> {
    let svg = String::from_utf8_lossy(svg);
    // Drop the XML prolog and doctype: they are not allowed inside an HTML body.
    let body = svg.find("<svg").map(|i| &svg[i..]).unwrap_or(&svg);
    let title = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
<style>html,body{{margin:0;padding:0;background:#fff}} svg{{width:100%;height:auto;display:block}}</style>\n\
</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_has_the_frames_as_titles() {
        let lines = vec![
            "kmain;run_bench;mix_leaf 30".to_string(),
            "kmain;idle 10".to_string(),
        ];
        let svg = render(&lines, &SvgOptions::default()).unwrap();
        let text = String::from_utf8(svg).unwrap();
        assert!(text.starts_with("<?xml"));
        assert!(
            text.contains("<title>mix_leaf (30 samples, 75.00%)</title>"),
            "{text}"
        );
        assert!(text.contains("<title>kmain (40 samples, 100.00%)</title>"));
        let page = String::from_utf8(html_page(text.as_bytes(), "a <b>")).unwrap();
        assert!(page.contains("<title>a &lt;b&gt;</title>"));
        assert!(page.contains("<svg"));
        assert!(!page.contains("<?xml"));
    }

    #[test]
    fn two_counts_make_a_differential_graph() {
        let lines = vec!["main;a 10 30".to_string(), "main;b 30 10".to_string()];
        let svg = String::from_utf8(render(&lines, &SvgOptions::default()).unwrap()).unwrap();
        // Differential titles carry the change in percent.
        assert!(
            svg.contains("<title>a (30 samples, 75.00%; +50.00%)</title>"),
            "{svg}"
        );
    }
}
