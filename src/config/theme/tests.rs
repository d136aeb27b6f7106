use ratatui::style::{Color, Modifier, Style};

use super::*;

fn load(name: &str, depth: ColorDepth) -> Theme {
    Theme::load(name, depth).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn error_of(text: &str) -> String {
    match Theme::from_toml(text, "t") {
        Ok(_) => panic!("{text:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_builtin_theme_parses() {
    for name in BUILTIN_THEMES {
        let theme = Theme::builtin(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(theme.name, name);
        assert_eq!(theme.depth, ColorDepth::TrueColor);
    }
    assert_eq!(Theme::builtin_dark().name, "dark");
    assert_eq!(Theme::default(), Theme::builtin_dark());
}

/// dark.toml is the former hard-coded theme, value for value.
#[test]
fn dark_file_reproduces_the_builtin_dark_styles() {
    let t = Theme::builtin_dark();
    let rgb = |hex: u32| Color::Rgb((hex >> 16) as u8, (hex >> 8) as u8, hex as u8);
    assert_eq!(t.text, Style::new().fg(rgb(0xd8dee9)));
    assert_eq!(t.dim, Style::new().fg(rgb(0x7a8496)));
    assert_eq!(t.border, Style::new().fg(rgb(0x4c566a)));
    assert_eq!(t.border_focused, Style::new().fg(rgb(0x88c0d0)));
    assert_eq!(
        t.title,
        Style::new().fg(rgb(0x88c0d0)).add_modifier(Modifier::BOLD)
    );
    assert_eq!(
        t.header,
        Style::new().fg(rgb(0xebcb8b)).add_modifier(Modifier::BOLD)
    );
    assert_eq!(
        t.selected,
        Style::new()
            .fg(rgb(0x2e3440))
            .bg(rgb(0x88c0d0))
            .add_modifier(Modifier::BOLD)
    );
    assert_eq!(
        t.search_match,
        Style::new()
            .fg(rgb(0x2e3440))
            .bg(rgb(0xb48ead))
            .add_modifier(Modifier::BOLD)
    );
    assert_eq!(t.status, Style::new().fg(rgb(0xd8dee9)).bg(rgb(0x3b4252)));
    assert_eq!(
        t.status_accent,
        Style::new()
            .fg(rgb(0xa3be8c))
            .bg(rgb(0x3b4252))
            .add_modifier(Modifier::BOLD)
    );
    assert_eq!(t.warning, Style::new().fg(rgb(0xebcb8b)));
    assert_eq!(
        t.error,
        Style::new().fg(rgb(0xbf616a)).add_modifier(Modifier::BOLD)
    );
    assert_eq!(t.bar, Style::new().fg(rgb(0x81a1c1)));
    assert_eq!(
        t.marker,
        Style::new().fg(rgb(0xd08770)).add_modifier(Modifier::BOLD)
    );
    assert_eq!(t.window, Style::new().bg(rgb(0x434c5e)));
    assert_eq!(t.flame, FlamePalette::Hot);
}

#[test]
fn mono_has_no_colours_at_all() {
    for theme in [
        Theme::builtin("mono").unwrap_or_else(|e| panic!("{e}")),
        load("dark", ColorDepth::Mono),
        load("light", ColorDepth::Mono),
    ] {
        assert_eq!(theme.name, "mono");
        for (role, style) in theme.roles() {
            assert_eq!((style.fg, style.bg), (None, None), "{role}");
        }
        for hash in [0u64, 1, 0xdead_beef] {
            for parity in [false, true] {
                let s = theme.frame_style(hash, parity);
                assert_eq!((s.fg, s.bg), (None, None));
            }
        }
        assert_eq!(theme.frame_style(7, true).add_modifier, Modifier::REVERSED);
        assert_eq!(theme.frame_style(7, false).add_modifier, Modifier::empty());
    }
    let mono = Theme::builtin("mono").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(mono.selected.add_modifier, Modifier::REVERSED | Modifier::BOLD);
    assert_eq!(
        mono.search_match.add_modifier,
        Modifier::UNDERLINED | Modifier::BOLD
    );
    assert_eq!(mono.window.add_modifier, Modifier::DIM);
    assert_eq!(mono.flame, FlamePalette::Mono);
}

#[test]
fn every_role_of_every_builtin_differs_from_plain_where_it_must() {
    // Selection and search hits must stand out from ordinary text in every theme.
    for name in BUILTIN_THEMES {
        let t = Theme::builtin(name).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(t.selected, t.text, "{name}");
        assert_ne!(t.search_match, t.text, "{name}");
        assert_ne!(t.selected, t.search_match, "{name}");
    }
}

#[test]
fn depth_fits_every_role() {
    let t256 = load("dark", ColorDepth::Ansi256);
    assert_eq!(t256.depth, ColorDepth::Ansi256);
    assert_eq!(t256.border_focused.fg, Some(Color::Indexed(110)));
    assert_eq!(t256.selected.bg, Some(Color::Indexed(110)));
    assert_eq!(t256.selected.add_modifier, Modifier::BOLD);
    let t16 = load("dark", ColorDepth::Ansi16);
    assert_eq!(t16.error.fg, Some(Color::Red));
    assert_eq!(t16.selected.fg, Some(Color::Black));
    assert_eq!(t16.selected.bg, Some(Color::LightCyan));
    assert_eq!(t16.search_match.bg, Some(Color::LightMagenta));
    for (depth, theme) in [(ColorDepth::Ansi256, &t256), (ColorDepth::Ansi16, &t16)] {
        for (role, style) in theme.roles() {
            for color in [style.fg, style.bg].into_iter().flatten() {
                let fits = !matches!(
                    (depth, color),
                    (_, Color::Rgb(..)) | (ColorDepth::Ansi16, Color::Indexed(_))
                );
                assert!(fits, "{role}: {color:?} at {depth:?}");
            }
        }
    }
}

#[test]
fn flame_cells_follow_the_depth() {
    let hash = 0x00ab_cdefu64;
    let t = load("dark", ColorDepth::TrueColor);
    // r = 205 + 50·0xab/255, g = 230·0xef/255, b = 55·0xcd/255
    assert_eq!(t.frame_style(hash, false).bg, Some(Color::Rgb(238, 215, 44)));
    let t = load("dark", ColorDepth::Ansi256);
    assert_eq!(t.frame_style(hash, false).bg, Some(Color::Indexed(220)));
    assert_eq!(t.frame_style(hash, false).fg, Some(Color::Indexed(233)));
    let t = load("dark", ColorDepth::Ansi16);
    let allowed = [Color::Red, Color::Yellow, Color::LightRed, Color::LightYellow];
    for h in 0..64u64 {
        let a = t.frame_style(h, false).bg;
        let b = t.frame_style(h ^ 0x55, true).bg;
        assert!(a.is_some_and(|c| allowed.contains(&c)), "{a:?}");
        assert!(b.is_some_and(|c| allowed.contains(&c)), "{b:?}");
        assert_ne!(a, b, "neighbours must differ");
    }
}

#[test]
fn user_theme_overrides_roles_of_its_base() {
    let text = "name = \"mine\"\nbase = \"light\"\n[selected]\nfg = \"black\"\nbg = \"bright cyan\"\nmodifiers = [\"italic\"]\n[bar]\nfg = 208\n";
    let t = Theme::from_toml(text, "x").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.name, "mine");
    assert_eq!(
        t.selected,
        Style::new()
            .fg(Color::Black)
            .bg(Color::LightCyan)
            .add_modifier(Modifier::ITALIC)
    );
    assert_eq!(t.bar.fg, Some(Color::Indexed(208)));
    let light = Theme::builtin("light").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.text, light.text);
    let t = Theme::from_toml("palette = \"mono\"\n[text]\nfg = \"default\"", "x")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.name, "x");
    assert_eq!(t.text.fg, Some(Color::Reset));
    assert_eq!(t.flame, FlamePalette::Mono);
    assert_eq!(t.selected, Theme::builtin_dark().selected);
}

#[test]
fn errors_are_precise() {
    assert_eq!(
        error_of("[selcted]\nfg = \"red\""),
        "theme:1:2: unknown role \"selcted\" (did you mean selected?) — roles are text, dim, \
         border, border_focused, title, header, selected, search_match, status, status_accent, \
         warning, error, bar, marker, window"
    );
    assert_eq!(
        error_of("[text]\nfg = \"#12345\""),
        "theme:2:6: [text] fg = \"#12345\": not a colour — use \"#rrggbb\", a name like \"red\" \
         or \"bright blue\", an index 0-255, or \"default\""
    );
    assert_eq!(
        error_of("[bar]\nbg = 300"),
        "theme:2:6: [bar] bg = 300: not a colour — use \"#rrggbb\", a name like \"red\" \
         or \"bright blue\", an index 0-255, or \"default\""
    );
    assert_eq!(
        error_of("[text]\nmodifiers = [\"bold\", \"blink\"]"),
        "theme:2:22: [text] unknown modifier \"blink\" — use bold, dim, italic, underlined, \
         reversed, crossed_out"
    );
    assert_eq!(
        error_of("[text]\nfgg = \"red\""),
        "theme:2:1: [text] unknown field \"fgg\" (did you mean fg or bg?) — a role has fg, bg and modifiers"
    );
    assert_eq!(
        error_of("palette = \"cold\""),
        "theme:1:11: palette = \"cold\": use \"hot\" or \"mono\""
    );
    assert_eq!(
        error_of("base = \"solarized\""),
        "theme:1:1: base = \"solarized\": use \"dark\", \"light\" or \"mono\""
    );
    let syntax = error_of("[text]\nfg = \"red");
    assert!(
        syntax.starts_with("theme:2:10: TOML syntax error: invalid basic string"),
        "{syntax}"
    );
}

#[test]
fn loading_and_resolution() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let missing = Theme::load("solarized", ColorDepth::TrueColor)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        missing.as_deref(),
        Some("no theme \"solarized\": use dark, light, mono or a path to a .toml theme file")
    );
    // No file: dark.
    let t = resolve_theme(None, Some(dir.path()), ColorDepth::TrueColor).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t, Theme::builtin_dark());
    // theme.toml in the config dir, named after the file.
    let path = dir.path().join("theme.toml");
    std::fs::write(&path, "[error]\nfg = \"#ff0000\"\n").unwrap_or_else(|e| panic!("{e}"));
    let t = resolve_theme(None, Some(dir.path()), ColorDepth::Ansi256).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.name, "theme");
    assert_eq!(t.error.fg, Some(Color::Indexed(196)));
    // An explicit name wins.
    let t = resolve_theme(Some("light"), Some(dir.path()), ColorDepth::TrueColor)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.name, "light");
    // Mono depth forces mono, but a broken file is still reported.
    let t = resolve_theme(None, Some(dir.path()), ColorDepth::Mono).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(t.name, "mono");
    std::fs::write(&path, "[error]\nfg = \"pink\"\n").unwrap_or_else(|e| panic!("{e}"));
    let message = resolve_theme(None, Some(dir.path()), ColorDepth::Mono)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.starts_with(&format!("{}:2:6: [error] fg = \"pink\"", path.display())),
        "{message}"
    );
    let path_str = path.to_string_lossy().into_owned();
    assert!(Theme::load(&path_str, ColorDepth::TrueColor).is_err());
}
