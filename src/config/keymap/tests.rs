use std::collections::HashSet;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::*;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn default_map() -> Keymap {
    Keymap::builtin("default").unwrap_or_else(|e| panic!("{e}"))
}

fn vim_map() -> Keymap {
    Keymap::builtin("vim").unwrap_or_else(|e| panic!("{e}"))
}

fn bound_actions(map: &Keymap) -> HashSet<Action> {
    map.sections()
        .into_iter()
        .flat_map(|(_, actions)| actions.into_iter().map(|(a, _)| a))
        .collect()
}

#[test]
fn every_action_is_bound_in_both_builtin_maps() {
    for map in [default_map(), vim_map()] {
        let bound = bound_actions(&map);
        let missing: Vec<&str> = Action::ALL
            .iter()
            .filter(|a| !bound.contains(a))
            .map(|a| a.name())
            .collect();
        assert!(missing.is_empty(), "unbound actions: {missing:?}");
    }
}

/// A view section may only shadow a global key where that is the point (Enter zooms,
/// Left/Right collapse and expand); anything else would hide a global action by accident.
#[test]
fn view_sections_shadow_global_keys_only_on_purpose() {
    let intended: &[(KeyContext, &str)] = &[
        (KeyContext::Flamegraph, "Enter"),
        (KeyContext::CallTree, "Left"),
        (KeyContext::CallTree, "Right"),
        (KeyContext::CallTree, "h"),
        (KeyContext::CallTree, "l"),
    ];
    for map in [default_map(), vim_map()] {
        let sections = map.sections();
        let global: HashMap<String, Action> = sections[0]
            .1
            .iter()
            .flat_map(|(a, keys)| keys.iter().map(move |k| (k.clone(), *a)))
            .collect();
        for (context, actions) in &sections[1..] {
            for (action, keys) in actions {
                for k in keys {
                    if let Some(global_action) = global.get(k)
                        && global_action != action
                    {
                        assert!(
                            intended.contains(&(*context, k.as_str())),
                            "[{}] {k} ({}) shadows global {}",
                            context.name(),
                            action.name(),
                            global_action.name()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn lookup_prefers_the_context_then_global() {
    let map = default_map();
    let enter = key(KeyCode::Enter);
    assert_eq!(map.lookup(KeyContext::Flamegraph, &enter), Some(Action::ZoomIn));
    assert_eq!(map.lookup(KeyContext::Hotspots, &enter), Some(Action::Activate));
    assert_eq!(map.lookup(KeyContext::Console, &enter), Some(Action::Activate));
    assert_eq!(
        map.lookup(KeyContext::Flamegraph, &key(KeyCode::Char('q'))),
        Some(Action::Quit)
    );
    assert_eq!(
        map.lookup(
            KeyContext::Console,
            &KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
        ),
        Some(Action::Quit)
    );
    assert_eq!(
        map.lookup(KeyContext::CallTree, &key(KeyCode::Right)),
        Some(Action::Expand)
    );
    assert_eq!(
        map.lookup(KeyContext::Timeline, &key(KeyCode::Right)),
        Some(Action::Right)
    );
    assert_eq!(
        map.lookup(KeyContext::Timeline, &key(KeyCode::Char('s'))),
        Some(Action::MarkStart)
    );
    assert_eq!(
        map.lookup(KeyContext::Hotspots, &key(KeyCode::Char('s'))),
        Some(Action::SortNext)
    );
    assert_eq!(map.lookup(KeyContext::Global, &key(KeyCode::Char('s'))), None);
    // Terminals differ on whether Shift comes with capitals.
    for modifiers in [KeyModifiers::NONE, KeyModifiers::SHIFT] {
        assert_eq!(
            map.lookup(
                KeyContext::Hotspots,
                &KeyEvent::new(KeyCode::Char('N'), modifiers)
            ),
            Some(Action::PrevMatch)
        );
        assert_eq!(
            map.lookup(KeyContext::Hotspots, &KeyEvent::new(KeyCode::BackTab, modifiers)),
            Some(Action::PrevView)
        );
    }
    let release = KeyEvent::new_with_kind(KeyCode::Char('q'), KeyModifiers::NONE, KeyEventKind::Release);
    assert_eq!(map.lookup(KeyContext::Global, &release), None);
}

#[test]
fn vim_map_moves_with_hjkl() {
    let map = vim_map();
    let cases = [
        ('j', KeyContext::Hotspots, Action::Down),
        ('k', KeyContext::Flamegraph, Action::Up),
        ('h', KeyContext::Flamegraph, Action::Left),
        ('l', KeyContext::CallTree, Action::Expand),
        ('h', KeyContext::CallTree, Action::Collapse),
        ('G', KeyContext::Console, Action::Bottom),
        ('g', KeyContext::Console, Action::Top),
    ];
    for (c, context, action) in cases {
        assert_eq!(
            map.lookup(context, &key(KeyCode::Char(c))),
            Some(action),
            "{c} in {}",
            context.name()
        );
    }
    assert_eq!(map.keys_for(KeyContext::Hotspots, Action::Down), ["j", "Down"]);
}

#[test]
fn keys_for_lists_effective_keys_for_display() {
    let map = default_map();
    assert_eq!(map.keys_for(KeyContext::Global, Action::Quit), ["q", "Ctrl-c"]);
    assert_eq!(
        map.keys_for(KeyContext::Flamegraph, Action::Quit),
        ["q", "Ctrl-c"]
    );
    assert_eq!(map.keys_for(KeyContext::Flamegraph, Action::Search), ["/"]);
    assert_eq!(map.keys_for(KeyContext::Flamegraph, Action::ZoomIn), ["Enter"]);
    // Enter is zoom_in here, so activate has no key in the flamegraph.
    assert!(map.keys_for(KeyContext::Flamegraph, Action::Activate).is_empty());
    assert_eq!(map.keys_for(KeyContext::Global, Action::ToggleFreeze), ["Space"]);
    assert_eq!(map.keys_for(KeyContext::Global, Action::PrevView), ["Shift-Tab"]);
}

#[test]
fn sections_are_in_a_stable_order() {
    let sections = default_map().sections();
    let names: Vec<&str> = sections.iter().map(|(c, _)| c.name()).collect();
    assert_eq!(
        names,
        [
            "global",
            "hotspots",
            "flamegraph",
            "call_tree",
            "histogram",
            "table",
            "timeline",
            "console",
            "instances"
        ]
    );
    let (_, global) = &sections[0];
    assert_eq!(global[0], (Action::Quit, vec!["q".into(), "Ctrl-c".into()]));
    assert_eq!(global[1], (Action::Help, vec!["?".into(), "F1".into()]));
    assert_eq!(
        sections[5].1,
        [
            (Action::SortNext, vec!["s".into()]),
            (Action::SortReverse, vec!["S".into()]),
            (Action::ToggleOffenders, vec!["o".into()])
        ],
        "the table sorts by column and lists the --than offenders"
    );
    assert!(sections[7].1.is_empty(), "console has no own keys");

    let help = default_map().help_sections(KeyContext::Flamegraph);
    let order: Vec<&str> = help.iter().map(|(c, _)| c.name()).collect();
    assert_eq!(
        order,
        [
            "flamegraph",
            "global",
            "hotspots",
            "call_tree",
            "histogram",
            "table",
            "timeline",
            "instances"
        ]
    );
    // The shadowed Enter is not listed under global for the flamegraph.
    assert!(!help[1].1.iter().any(|(a, _)| *a == Action::Activate));
}

#[test]
fn a_user_file_overrides_only_what_it_names() {
    let base = default_map();
    let text = "[global]\nquit = [\"ctrl-q\"]\n[flamegraph]\nzoom_in = [\"l\", \"enter\"]\n";
    let map = Keymap::from_toml(text, Some(&base)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(map.keys_for(KeyContext::Global, Action::Quit), ["Ctrl-q"]);
    assert_eq!(map.lookup(KeyContext::Global, &key(KeyCode::Char('q'))), None);
    assert_eq!(
        map.lookup(KeyContext::Flamegraph, &key(KeyCode::Char('l'))),
        Some(Action::ZoomIn)
    );
    // Untouched bindings survive.
    assert_eq!(map.keys_for(KeyContext::Global, Action::Help), ["?", "F1"]);
    assert_eq!(
        map.keys_for(KeyContext::Flamegraph, Action::ZoomOut),
        ["Backspace"]
    );
    // [] unbinds.
    let map = Keymap::from_toml("[global]\nexport = []", Some(&base)).unwrap_or_else(|e| panic!("{e}"));
    assert!(map.keys_for(KeyContext::Global, Action::Export).is_empty());
    assert_eq!(map.lookup(KeyContext::Global, &key(KeyCode::Char('e'))), None);
}

#[test]
fn a_file_can_start_from_the_vim_map() {
    let text = "base = \"vim\"\n[global]\nhelp = [\"h\"]\nleft = [\"left\"]\n";
    let map = Keymap::from_toml(text, Some(&default_map())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        map.lookup(KeyContext::Hotspots, &key(KeyCode::Char('j'))),
        Some(Action::Down)
    );
    assert_eq!(
        map.lookup(KeyContext::Hotspots, &key(KeyCode::Char('h'))),
        Some(Action::Help)
    );
    let bad = Keymap::from_toml("base = \"emacs\"", None).map(|_| ());
    let message = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(message, "keymap: base = \"emacs\": use \"default\" or \"vim\"");
}

fn error_of(text: &str) -> String {
    match Keymap::from_toml(text, Some(&default_map())) {
        Ok(_) => panic!("{text:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_say_what_and_where() {
    assert_eq!(
        error_of("[global]\nzoom_inn = [\"z\"]"),
        "keymap:2:1: unknown action \"zoom_inn\" in [global] (did you mean zoom_in?)"
    );
    assert_eq!(
        error_of("[flamegraf]\nzoom_in = [\"z\"]"),
        "keymap:1:2: unknown section [flamegraf] (did you mean flamegraph?) — sections are \
         global, hotspots, flamegraph, call_tree, histogram, timeline, console, instances"
    );
    let bad_key = error_of("[global]\nquit = [\"q\", \"ctrl-esq\"]");
    assert!(
        bad_key.starts_with("keymap:2:14: [global] quit: unknown key name \"esq\""),
        "{bad_key}"
    );
    assert_eq!(
        error_of("[global]\nquit = 3"),
        "keymap:2:8: [global] quit: expected a list of keys like [\"q\", \"ctrl-c\"], not integer"
    );
    assert_eq!(
        error_of("quit = [\"q\"]"),
        "keymap:1:1: quit is outside any section: put it under [global] or a view's section"
    );
    let syntax = error_of("[global]\nquit = [\"q\"\nhelp = 1");
    assert!(syntax.starts_with("keymap:3:1: TOML syntax error: "), "{syntax}");
}

#[test]
fn conflicts_name_both_actions() {
    // "e" is export in the default [global]; binding it to help too is ambiguous.
    assert_eq!(
        error_of("[global]\nhelp = [\"e\"]"),
        "keymap:2:1: key e in [global] is bound to both help and export: remove it from one of them"
    );
    assert_eq!(
        error_of("[hotspots]\nsort_next = [\"x\"]\nsort_reverse = [\"x\"]"),
        "keymap:3:1: key x in [hotspots] is bound to both sort_next and sort_reverse: remove it from one of them"
    );
    // Shadowing a global key from a view section is allowed.
    let map = Keymap::from_toml(
        "[hotspots]\nexport = []\nsort_next = [\"e\"]",
        Some(&default_map()),
    );
    assert!(map.is_ok());
}

#[test]
fn builtin_names_and_resolution() {
    assert!(matches!(
        Keymap::builtin("emacs"),
        Err(KeymapError::UnknownBuiltin { .. })
    ));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // No file: the default map.
    let map = resolve_keymap(None, Some(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(map, default_map());
    // keymap.toml in the config dir overrides the default.
    let user = dir.path().join("keymap.toml");
    std::fs::write(&user, "[global]\nexport = [\"x\"]\n").unwrap_or_else(|e| panic!("{e}"));
    let map = resolve_keymap(None, Some(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(map.keys_for(KeyContext::Global, Action::Export), ["x"]);
    assert_eq!(map.keys_for(KeyContext::Global, Action::Quit), ["q", "Ctrl-c"]);
    // --keymap vim wins over the config file.
    let map = resolve_keymap(Some(Path::new("vim")), Some(dir.path())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(map, vim_map());
    // --keymap path with base = "vim".
    let explicit = dir.path().join("mine.toml");
    std::fs::write(&explicit, "base = \"vim\"\n[flamegraph]\nzoom_in = [\"o\"]\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let map = resolve_keymap(Some(&explicit), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(map.keys_for(KeyContext::Flamegraph, Action::ZoomIn), ["o"]);
    assert_eq!(map.keys_for(KeyContext::Flamegraph, Action::Down), ["j", "Down"]);
    // Errors in a file name the file.
    std::fs::write(&user, "[global]\nquit = [\"qq\"]\n").unwrap_or_else(|e| panic!("{e}"));
    let message = resolve_keymap(None, Some(dir.path()))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.starts_with(&format!(
            "{}:2:9: [global] quit: unknown key name \"qq\"",
            user.display()
        )),
        "{message}"
    );
    let missing = resolve_keymap(Some(Path::new("/nonexistent/k.toml")), None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        missing.starts_with("cannot read keymap /nonexistent/k.toml: "),
        "{missing}"
    );
}

#[test]
fn config_dir_follows_xdg() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    };
    assert_eq!(
        config_dir_from(env(&[("XDG_CONFIG_HOME", "/x/cfg"), ("HOME", "/home/u")])),
        Some(PathBuf::from("/x/cfg/perfscope"))
    );
    assert_eq!(
        config_dir_from(env(&[("XDG_CONFIG_HOME", "relative"), ("HOME", "/home/u")])),
        Some(PathBuf::from("/home/u/.config/perfscope"))
    );
    assert_eq!(config_dir_from(env(&[])), None);
}
