use super::*;

fn one(text: &str) -> EventSpec {
    let mut specs = parse_selectors(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(specs.len(), 1, "{text}");
    specs.remove(0)
}

fn expr_text(attr: &Option<AttrExpr>) -> Option<&str> {
    attr.as_ref().map(|a| a.expr.text())
}

#[test]
fn names_filters_and_attributes() {
    let specs =
        parse_selectors("sched:sched_wakeup*,sched:sched_switch/prev_state==0/key=next_pid/alias=sw/stack/")
            .expect("parses");
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[0].full_name(), "sched:sched_wakeup*");
    assert!(specs[0].is_wildcard());
    assert_eq!(specs[0].filter, None);
    assert_eq!(specs[1].full_name(), "sched:sched_switch");
    assert_eq!(specs[1].name_offset, 20);
    assert_eq!(specs[1].filter.as_deref(), Some("prev_state==0"));
    assert_eq!(expr_text(&specs[1].key), Some("next_pid"));
    assert_eq!(specs[1].alias.as_deref(), Some("sw"));
    assert_eq!(specs[1].display_name(), "sw");
    assert!(specs[1].stack && !specs[1].is_wildcard());
}

#[test]
fn every_attribute() {
    let spec = one(
        "sched:sched_stat_runtime//max-stack=300/printkey=printf(\"%d\", key)/role=3/untraced/\
         trigger/top-by=runtime/top-by=(runtime/1000)/top-add=pid/comm=comm/cpus=\"0-2,5\"/num=runtime/",
    );
    assert!(spec.stack, "max-stack implies stack");
    assert_eq!(spec.max_stack, Some(127), "capped");
    assert_eq!(expr_text(&spec.printkey), Some("printf(\"%d\", key)"));
    assert_eq!(expr_text(&spec.role), Some("3"));
    assert!(spec.untraced && spec.trigger);
    let tops: Vec<&str> = spec.top_by.iter().map(|a| a.expr.text()).collect();
    assert_eq!(
        tops,
        ["runtime", "(runtime/1000)"],
        "order kept, '/' inside () kept"
    );
    assert_eq!(spec.top_add[0].expr.text(), "pid");
    assert_eq!(expr_text(&spec.comm), Some("comm"));
    assert_eq!(spec.cpus, Some(vec![0, 1, 2, 5]));
    assert_eq!(expr_text(&spec.num), Some("runtime"));
    assert_eq!(spec.filter, None, "empty filter");
}

#[test]
fn quotes_are_stripped_and_protect_separators() {
    let spec = one("'sched:sched_switch'/\"prev_comm==\\\"a/b\\\"\"/key=\"next_pid/2\"/alias='a,b'/");
    assert_eq!(spec.full_name(), "sched:sched_switch");
    assert_eq!(spec.name_offset, 1);
    assert_eq!(spec.filter.as_deref(), Some("prev_comm==\\\"a/b\\\""));
    assert_eq!(expr_text(&spec.key), Some("next_pid/2"));
    assert_eq!(spec.alias.as_deref(), Some("a,b"));
    let spec = one("sched:sched_switch/prev_comm == \"x,y\" && (prev_pid > 0)/");
    assert_eq!(
        spec.filter.as_deref(),
        Some("prev_comm == \"x,y\" && (prev_pid > 0)")
    );
    let specs = parse_selectors(" sched:a , sched:b ").expect("spaces around events");
    assert_eq!((specs[0].name.as_str(), specs[1].name.as_str()), ("a", "b"));
    assert!(one("sched:a//").filter.is_none());
    assert!(one("sched:a///stack//").stack, "empty attributes are ignored");
}

fn err(text: &str) -> SelectorError {
    match parse_selectors(text) {
        Ok(specs) => panic!("{text} parsed: {specs:?}"),
        Err(e) => e,
    }
}

#[test]
fn errors_point_at_the_bad_character() {
    let e = err("sched:sched_wakeup//foo/");
    assert_eq!(e.message, "unknown attribute 'foo'");
    let shown = e.to_string();
    let mut lines = shown.lines();
    assert_eq!(lines.next(), Some("bad event selector: unknown attribute 'foo'"));
    assert_eq!(lines.next(), Some("  sched:sched_wakeup//foo/"));
    assert_eq!(lines.next(), Some("                      ^"));
    assert!(lines.next().expect("hint").contains("max-stack=N"));

    let cases: &[(&str, usize, &str)] = &[
        (
            "sched:sched_wakeup/pid>0",
            24,
            "missing closing '/' after the filter",
        ),
        (
            "sched:sched_wakeup//stack",
            25,
            "missing closing '/' after attribute 'stack'",
        ),
        (
            "sched:sched_wakeup//max-stack=12x/",
            30,
            "bad number '12x' for max-stack",
        ),
        ("sched:a//stack=1/", 14, "takes no value"),
        ("sched:a//key/", 12, "needs a value"),
        ("sched:a//key=1/key=2/", 15, "given twice"),
        ("sched:a//cpus=0-x/", 14, "bad CPU list entry"),
        ("", 0, "empty event"),
        ("sched:a,,sched:b", 8, "empty event"),
        ("/x/", 0, "empty event name"),
        ("sched_switch", 12, "missing ':'"),
        (":sched_switch", 0, "empty system name"),
        ("sched:", 6, "empty event name after ':'"),
        ("sched:a:b", 7, "second ':'"),
        ("sched:sched switch", 11, "unexpected character ' '"),
        ("sched:a/prev_comm==\"x/", 19, "unclosed quote"),
        ("sched:a//top-by=(runtime/1000/", 16, "'(' is never closed"),
        ("sched:a//top-by=runtime)/", 23, "')' without"),
        ("sched:a//key=next_pid+/", 22, "key=: expected a value"),
        ("sched:a//key=\"1 +\"/", 17, "key=: expected a value"),
        ("sched:a//alias=/", 15, "empty alias"),
        ("uprobe:/bin/x", 13, "expected uprobe:BINARY:FUNC"),
        ("uprobe:/bin/x:", 14, "missing function"),
        ("uprobe:/bin/x:f+z", 16, "bad offset 'z'"),
        ("uprobe:/bin/x:0xzz", 14, "bad file offset"),
        ("uprobe:/bin/x:f%", 15, "unexpected character '%'"),
        ("uretprobe:/bin/x:f+4", 17, "uretprobe goes on a function's entry"),
        (
            "uretprobe:/bin/x:0x10",
            17,
            "uretprobe goes on a function's entry",
        ),
        ("uprobe:f@/bin/x", 9, "empty path after '@'"),
        ("uprobe:\"/bin/x", 7, "unclosed quote"),
    ];
    for &(text, position, message) in cases {
        let e = err(text);
        assert!(e.message.contains(message), "{text}: {}", e.message);
        assert_eq!(e.position, position, "{text}: {e}");
    }
}

#[test]
fn no_selector_input_panics() {
    let seeds = [
        "'sched:sched_wakeup*'/prev_comm~\"k*\"/key=(a/b)/top-by=printf(\"%d\",x)/cpus=\"0-3\"/",
        "uprobe:\"/a b/c\":f+0x1é/arg1==1/,uretprobe:g@\"/x:y\"//key=ret/,uprobe:/p:0x10,kprobe:k",
    ];
    for seed in seeds {
        for (end, _) in seed.char_indices() {
            for text in [&seed[..end], &seed[end..]] {
                if let Err(e) = parse_selectors(text) {
                    let _ = e.to_string();
                }
            }
        }
    }
    for odd in [
        "é:ü",
        "a:b/\u{1F600}/",
        "(((((",
        "\"",
        "a:b//cpus=0-4000000000/",
        "a:b//max-stack=99999999999/",
    ] {
        let _ = parse_selectors(odd).map(|_| ()).map_err(|e| e.to_string());
    }
}

#[test]
fn probes_parse_with_paths_offsets_and_a_filter() {
    let user = |spec: &EventSpec| match &spec.probe {
        Some(ProbeSpec::User(u)) => u.clone(),
        other => panic!("{other:?}"),
    };
    let spec = one("uprobe:/tmp/a/bin:work/arg1==3/alias=w/");
    let u = user(&spec);
    assert_eq!((u.ret, u.binary.as_str()), (false, "/tmp/a/bin"));
    let at = ProbeAt::Symbol {
        name: "work".into(),
        offset: 0,
    };
    assert_eq!(u.at, at);
    assert_eq!((spec.system.as_str(), spec.name.as_str()), ("uprobe", "work"));
    assert_eq!(spec.filter.as_deref(), Some("arg1==3"));
    assert_eq!(spec.alias.as_deref(), Some("w"));
    assert!(!spec.is_wildcard());

    let spec = one("uprobe:./bin:work+0x8");
    assert_eq!(
        user(&spec).at,
        ProbeAt::Symbol {
            name: "work".into(),
            offset: 8
        }
    );
    assert_eq!(spec.name, "work_0x8");
    let spec = one("uprobe:./my-bin:0x1139");
    assert_eq!(user(&spec).at, ProbeAt::FileOffset(0x1139));
    assert_eq!(spec.name, "my_bin_0x1139");
    let spec = one("uretprobe:bin:work//key=ret/");
    assert!(user(&spec).ret);
    assert_eq!(
        (spec.system.as_str(), spec.name.as_str()),
        ("uretprobe", "work__return")
    );
    assert!(spec.key.is_some());
    // perf-prof's form, the path quoted.
    let spec = one("uprobe:malloc@\"/lib/libc.so.6\"//stack/");
    assert_eq!(user(&spec).binary, "/lib/libc.so.6");
    assert!(spec.stack);
    for text in [
        "uprobe:/b:f",
        "uprobe:/b:f+0xc",
        "uprobe:\"/a:b\":0x10",
        "uretprobe:x:g",
        "kprobe:k",
    ] {
        let probe = one(text).probe.expect("a probe");
        assert_eq!(probe.selector(), text, "written back as parsed");
    }
    let specs = parse_selectors("sched:sched_switch,uprobe:/b:f+12,kretprobe:do_sys_open").expect("parses");
    assert_eq!(specs.len(), 3);
    assert_eq!(specs[1].name, "f_0xc");
    assert_eq!(
        specs[2].probe,
        Some(ProbeSpec::Kernel {
            ret: true,
            func: "do_sys_open".into()
        })
    );
}

#[test]
fn probe_specs_name_their_defined_events_only() {
    let spec = one("uprobe:/b:work");
    assert!(spec.names_event("perfscope_12", "work"));
    assert!(spec.names_event("perfscope_12", "work_2"), "a duplicate's name");
    assert!(!spec.names_event("perfscope_12", "work_x"));
    assert!(!spec.names_event("uprobes", "work"), "another tool's group");
    let tracepoint = one("sched:sched_wakeup*");
    assert!(tracepoint.names_event("sched", "sched_wakeup_new"));
    assert!(!tracepoint.names_event("sched", "sched_switch"));
}

#[test]
fn exec_takes_an_expression_once() {
    let spec = one(r#"sched:sched_switch//exec=printf("%d\n", next_pid)/"#);
    assert_eq!(expr_text(&spec.exec), Some(r#"printf("%d\n", next_pid)"#));
    let twice = parse_selectors("sched:sched_switch//exec=1/exec=2/").unwrap_err();
    assert!(twice.to_string().contains("given twice"), "{twice}");
    let bad = parse_selectors("sched:sched_switch//exec=1+/").unwrap_err();
    assert!(bad.to_string().contains("exec"), "{bad}");
}
