//! The layering rules of `docs/architecture.md`, for the library crates and their source
//! files: a crate depends only on crates below it (its Cargo.toml), a top-level module imports
//! only modules of its own layer or below, and no import circle joins source files.
//!
//! A file imports another when its code (not its comments, not its `#[cfg(test)]` module)
//! names a path into it (`use crate::a::b`, `super::b::f`, `crate::a::b::T`). Every crate
//! re-exports the modules of the crates below it at its root, so `crate::a` in a file of one
//! crate names module `a` of that crate or, when it has none, of the crate below that has it.
//! The circles are the strongly connected components of that graph with more than one file.
//!
//! What it does not see (a guard, not a compiler): a path through a parent's re-export
//! (`crate::formats::open_descriptors`) counts as an import of the parent `mod.rs`, not of
//! the file behind the `pub use`, and the parent's own relative `pub use child::…` lines add
//! no edge; `use` groups are expanded one level; `super` inside an inline module (`mod avx2 {`)
//! is read from the file's module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`scan::pass`, `""` for `lib.rs`) of every source file under `src`.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p: PathBuf = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).unwrap().with_extension("");
                let mut m = rel.to_string_lossy().replace('/', "::");
                if m == "lib" {
                    m.clear();
                } else if let Some(parent) = m.strip_suffix("::mod") {
                    m = parent.to_string();
                }
                out.insert(m, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    out
}

/// The code of a file without comments and without its inline test module.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let next = lines.peek().map_or("", |l| l.trim_start());
        if line.trim_start() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// The longest known module that `path` (`crate::…`, `super::…`, `self::…`) names from `cur`.
fn resolve<V>(path: &[&str], cur: &str, mods: &BTreeMap<String, V>) -> Option<String> {
    let mut base: Vec<&str> = if cur.is_empty() {
        vec![]
    } else {
        cur.split("::").collect()
    };
    let rest: Vec<&str> = match path.first() {
        Some(&"crate") => path[1..].to_vec(),
        Some(&"self") => {
            base.extend(&path[1..]);
            base
        }
        Some(&"super") => {
            let mut p = path;
            while p.first() == Some(&"super") {
                base.pop();
                p = &p[1..];
            }
            base.extend(p);
            base
        }
        _ => return None,
    };
    (1..=rest.len())
        .rev()
        .map(|i| rest[..i].join("::"))
        .find(|m| mods.contains_key(m))
}

/// Every path the code names, with `use` groups `a::{b, c::d}` expanded one level.
fn paths(code: &str) -> Vec<Vec<String>> {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|s| code_at(&bytes, i, s))
            && (i == 0 || !word(bytes[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && word(bytes[j]) {
            j += 1;
        }
        let head: String = bytes[i..j].iter().collect();
        let head: Vec<String> = head
            .trim_end_matches(':')
            .split("::")
            .map(str::to_string)
            .collect();
        if j < bytes.len() && bytes[j] == '{' {
            let end = bytes[j..]
                .iter()
                .position(|&c| c == '}')
                .map_or(j, |e| j + e);
            let inner: String = bytes[j + 1..end].iter().collect();
            for item in inner.split(',') {
                let mut p = head.clone();
                p.extend(
                    item.trim()
                        .split("::")
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                );
                out.push(p);
            }
        }
        out.push(head);
        i = j.max(i + 1);
    }
    out
}

fn code_at(s: &[char], i: usize, pat: &str) -> bool {
    pat.chars()
        .enumerate()
        .all(|(k, c)| s.get(i + k) == Some(&c))
}

/// Tarjan's strongly connected components of size > 1.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        e: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.e.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[v].min(t.low[w]);
                t.low.insert(v, l);
            } else if t.on.contains(w) {
                let l = t.low[v].min(t.index[w]);
                t.low.insert(v, l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        e: edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        out: vec![],
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The directory that holds the workspace's crates.
fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The import graph between the source files of the library crates ([`CRATES`]), each file
/// named `crate/module` (`tailrank-scan/scan::pass`; `crate/` alone for a `lib.rs`).
fn import_graph(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let per_crate: Vec<BTreeMap<String, String>> = CRATES
        .iter()
        .map(|c| modules(&dir.join(c).join("src")))
        .collect();
    let mut edges = BTreeMap::new();
    for (i, krate) in CRATES.iter().enumerate() {
        // The modules `crate::…` can name here: this crate's, else the highest crate below.
        let mut owner: BTreeMap<String, String> = BTreeMap::new();
        for (c, mods) in CRATES.iter().zip(&per_crate).take(i + 1) {
            for m in mods.keys() {
                owner.insert(m.clone(), c.to_string());
            }
        }
        for (m, text) in &per_crate[i] {
            let deps: BTreeSet<String> = paths(&code(text))
                .iter()
                .filter_map(|p| {
                    let p: Vec<&str> = p.iter().map(String::as_str).collect();
                    resolve(&p, m, &owner).map(|d| format!("{}/{d}", owner[&d]))
                })
                .filter(|d| *d != format!("{krate}/{m}"))
                .collect();
            edges.insert(format!("{krate}/{m}"), deps);
        }
    }
    edges
}

#[test]
fn no_import_circle_between_source_files() {
    let edges = import_graph(&crates_dir());
    // The graph is not empty: the parser sees the imports it is meant to see, within a crate
    // and through the re-exports of the crates below.
    assert!(edges["tailrank-scan/scan::pass"].contains("tailrank-scan/scan::block"));
    assert!(edges["tailrank-io/formats::open"].contains("tailrank-io/formats::npy"));
    assert!(edges["tailrank-scan/formats::hardness_csv"].contains("tailrank-io/atomic"));
    assert!(edges["tailrank/report::prediction"].contains("tailrank-predict/predict"));
    let found = circles(&edges);
    assert!(
        found.is_empty(),
        "import circles between source files (each line one circle): {found:?}"
    );
}

#[test]
fn the_checker_finds_a_circle() {
    let mut e = BTreeMap::new();
    e.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    e.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    e.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    e.insert("d".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&e), vec![vec!["a", "b", "c"]]);
    let mods: BTreeMap<String, String> = ["", "scan", "scan::pass", "scan::block"]
        .iter()
        .map(|m| (m.to_string(), String::new()))
        .collect();
    let from = |p: &str, cur: &str| {
        let parts: Vec<&str> = p.split("::").collect();
        resolve(&parts, cur, &mods)
    };
    assert_eq!(
        from("super::block::Block", "scan::pass").as_deref(),
        Some("scan::block")
    );
    assert_eq!(
        from("crate::scan::pass::f", "").as_deref(),
        Some("scan::pass")
    );
    assert_eq!(from("self::pass", "scan").as_deref(), Some("scan::pass"));
    let ps = paths("use super::{block::Block, pass};\n let x = crate::scan::f();");
    assert!(ps.contains(&vec!["super".into(), "block".into(), "Block".into()]));
    assert!(ps.contains(&vec!["crate".into(), "scan".into(), "f".into()]));
}

/// The library crates, lowest first (the table that opens `docs/architecture.md`): each depends only on
/// crates before it. The CLI and the Python crate sit on top of `tailrank`, the facade.
const CRATES: &[&str] = &[
    "tailrank-io",
    "tailrank-scan",
    "tailrank-eval",
    "tailrank-predict",
    "tailrank-sim",
    "tailrank",
];

/// The layers, lowest first, with the crate that holds each and its top-level modules
/// (`docs/architecture.md`, "Dependencies"): a module may import modules of its own layer or
/// below, never above. `lib.rs` (module `""`) is the crate's root.
const LAYERS: &[(&str, &str, &[&str])] = &[
    (
        "tailrank-io",
        "foundation",
        &["", "error", "numerics", "table"],
    ),
    (
        "tailrank-io",
        "formats and I/O",
        &["atomic", "outputs", "formats", "sample", "selected"],
    ),
    (
        "tailrank-scan",
        "scan, summary and hardness",
        &["", "summary", "scan", "evt", "hardness", "formats"],
    ),
    (
        "tailrank-eval",
        "evaluation",
        &["", "metric", "protocols", "tables"],
    ),
    ("tailrank-predict", "prediction", &["", "maps", "predict"]),
    (
        "tailrank-sim",
        "simulation and validation",
        &["", "simulate", "validation_report"],
    ),
    ("tailrank", "applications", &["", "ilias"]),
    ("tailrank", "presentation", &["report", "plot"]),
    ("tailrank", "jobs", &["jobs"]),
];

/// The layer of a file named `crate/module`.
fn layer_of(file: &str) -> usize {
    let (krate, module) = file.split_once('/').unwrap_or(("", file));
    let top = module.split("::").next().unwrap_or("");
    LAYERS
        .iter()
        .position(|(c, _, mods)| *c == krate && mods.contains(&top))
        .unwrap_or_else(|| panic!("top-level module {top:?} of {krate} has no layer in LAYERS"))
}

/// Every import between files of different top-level modules that points to a higher
/// layer, as `(from, to)` top-level modules (`crate/module`).
fn upward_imports(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<(String, String)> {
    let top = |m: &str| m.split("::").next().unwrap_or("").to_string();
    edges
        .iter()
        .flat_map(|(from, deps)| deps.iter().map(move |to| (from, to)))
        .filter(|(from, to)| top(from) != top(to) && layer_of(to) > layer_of(from))
        .map(|(from, to)| (top(from), top(to)))
        .collect()
}

#[test]
fn top_level_modules_follow_the_layer_order() {
    let edges = import_graph(&crates_dir());
    let up = upward_imports(&edges);
    assert!(
        up.is_empty(),
        "imports up the layer order (from, to): {up:?}; layers: {LAYERS:?}"
    );
}

/// The workspace crates (`tailrank-…`) that `crate`'s Cargo.toml lists as dependencies (its
/// `[dependencies]` tables, target-specific ones included; not its dev-dependencies).
fn tailrank_dependencies(krate: &str) -> BTreeSet<String> {
    let toml = std::fs::read_to_string(crates_dir().join(krate).join("Cargo.toml")).unwrap();
    let mut deps = BTreeSet::new();
    let mut in_deps = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]" || line.ends_with(".dependencies]");
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or("");
        if in_deps && (name == "tailrank" || name.starts_with("tailrank-")) {
            deps.insert(name.to_string());
        }
    }
    deps
}

#[test]
fn crates_depend_only_on_crates_below() {
    // The layers run through the crates in their order.
    let crate_of_layer: Vec<usize> = LAYERS
        .iter()
        .map(|(c, _, _)| CRATES.iter().position(|k| k == c).unwrap())
        .collect();
    assert!(crate_of_layer.windows(2).all(|w| w[0] <= w[1]));
    for (i, krate) in CRATES.iter().enumerate() {
        let deps = tailrank_dependencies(krate);
        for d in &deps {
            let at = CRATES.iter().position(|c| c == d);
            assert!(
                at.is_some_and(|j| j < i),
                "{krate} depends on {d}, which is not a crate below it in {CRATES:?}"
            );
        }
        if i > 0 {
            // Each crate stands on the one below it: the order is the real one.
            assert!(deps.contains(CRATES[i - 1]), "{krate}: {deps:?}");
        }
    }
    // Every library crate of the workspace has its place.
    for e in std::fs::read_dir(crates_dir()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let front_end = ["tailrank-cli", "tailrank-py", "tailrank-test-support"];
        if p.join("src/lib.rs").exists() && !front_end.contains(&name.as_str()) {
            assert!(CRATES.contains(&name.as_str()), "{name} is not in CRATES");
        }
    }
}

#[test]
fn the_layer_check_finds_an_upward_import() {
    let mut e = BTreeMap::new();
    e.insert(
        "tailrank-scan/scan::pass".to_string(),
        BTreeSet::from(["tailrank-predict/predict::trust".to_string()]),
    );
    e.insert(
        "tailrank-predict/predict".to_string(),
        BTreeSet::from(["tailrank-scan/scan::pass".to_string()]),
    );
    let up = upward_imports(&e);
    assert_eq!(
        up,
        BTreeSet::from([(
            "tailrank-scan/scan".to_string(),
            "tailrank-predict/predict".to_string()
        )])
    );
}
