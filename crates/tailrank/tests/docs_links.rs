//! Every citation of a document in the repository points at something that exists: a
//! `docs/….md` path (or a `docs/…/` folder) names a file (folder), and a quoted title after it (`docs/method.md, "Title"` or
//! `docs/method.md section "Title"`, the form the code and the docs use) names one of that
//! file's headings or bold paragraph labels (`**Title.**`), compared case-insensitively as a
//! substring, and a section number (`docs/method.md §N`) names a heading `N. …`. A title may
//! run over lines of a doc comment (`//!`, `///`, `#`). Relative markdown links
//! (`[text](path)`) must lead to an existing file.
//!
//! Scanned: every `.md`, `.rs`, `.py`, `.pyi`, `.sh` and `.toml` file of the repository outside
//! build outputs and hidden folders, except this file, whose examples are not citations. The
//! dated lab notes (`docs/notes/`) and `CHANGELOG.md` record what was true when they were
//! written: their cited files must exist, their quoted titles are not checked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files whose citations are checked.
fn citing_files(root: &Path) -> Vec<PathBuf> {
    let skip_dir = |name: &str| {
        name.starts_with('.')
            || name.starts_with("target")
            || name.starts_with("pyenv")
            || name == "node_modules"
    };
    let mut stack = vec![root.to_path_buf()];
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if !skip_dir(&name) {
                    stack.push(p);
                }
            } else if name != "docs_links.rs"
                && ["md", "rs", "py", "pyi", "sh", "toml"]
                    .iter()
                    .any(|x| p.extension().is_some_and(|e| e == *x))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Whether `file` is a dated record (a lab note or the CHANGELOG), whose section titles may
/// have changed since it was written.
fn is_record(file: &Path) -> bool {
    file.ends_with("CHANGELOG.md") || file.parent().is_some_and(|d| d.ends_with("docs/notes"))
}

/// A citation found in a file: the cited path, the quoted title or the section number
/// (`§N`) if any, the line.
#[derive(Debug, PartialEq)]
struct Citation {
    path: String,
    title: Option<String>,
    section: Option<u32>,
    line: usize,
}

/// The citations of `text`: each `docs/NAME.md` (path characters `[A-Za-z0-9_./-]`), and the
/// title when the path is followed by `,` or ` section`, then blanks and comment markers, then
/// `"…"`. Comment markers and runs of blanks inside the title become one space.
fn citations(text: &str) -> Vec<Citation> {
    let b = text.as_bytes();
    let is_path = |c: u8| c.is_ascii_alphanumeric() || b"_./-".contains(&c);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(off) = text[from..].find("docs/") {
        let start = from + off;
        from = start + 5;
        if start > 0 && is_path(b[start - 1]) {
            continue; // part of a longer path, e.g. `research/docs/`
        }
        let mut end = start;
        while end < b.len() && is_path(b[end]) {
            end += 1;
        }
        let mut path = &text[start..end];
        path = path.trim_end_matches('.');
        if !path.ends_with(".md") && !path.ends_with('/') {
            continue;
        }
        let line = text[..start].matches('\n').count() + 1;
        let mut rest = &text[start + path.len()..];
        rest = rest.strip_prefix('`').unwrap_or(rest);
        let section = rest.strip_prefix(" §").and_then(|r| {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        });
        let after_sep = rest
            .strip_prefix(',')
            .or_else(|| rest.strip_prefix(" section"));
        let title = after_sep.and_then(|r| {
            let r = skip_blanks_and_markers(r);
            let r = r.strip_prefix('"')?;
            let close = r.find('"')?;
            let raw = &r[..close];
            let words: Vec<&str> = raw
                .split_whitespace()
                .filter(|w| !matches!(*w, "//!" | "///" | "//" | "#"))
                .collect();
            Some(words.join(" "))
        });
        out.push(Citation {
            path: path.to_string(),
            title,
            section,
            line,
        });
    }
    out
}

fn skip_blanks_and_markers(mut r: &str) -> &str {
    loop {
        let t = r.trim_start();
        let t = ["//!", "///", "//", "#"]
            .iter()
            .find_map(|m| t.strip_prefix(m))
            .unwrap_or(t);
        if t.len() == r.len() {
            return r;
        }
        r = t;
    }
}

/// The headings and bold labels of a markdown text, lower-cased, without backticks and
/// without a trailing `.` or `:`.
fn anchors(text: &str) -> Vec<String> {
    let clean = |s: &str| {
        s.replace(['`', '*'], "")
            .trim()
            .trim_end_matches(['.', ':'])
            .to_lowercase()
    };
    let mut out: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| clean(l.trim_start_matches('#')))
        .collect();
    let mut rest = text;
    while let Some(i) = rest.find("**") {
        let after = &rest[i + 2..];
        let Some(j) = after.find("**") else { break };
        out.push(clean(&after[..j]));
        rest = &after[j + 2..];
    }
    out
}

/// Whether a cited title is part of a heading or label, both read without their code and
/// emphasis marks (a citation may quote a heading's backticks or leave them out).
fn title_found(title: &str, anchors: &[String]) -> bool {
    let t = title.replace(['`', '*'], "").to_lowercase();
    anchors.iter().any(|a| a.contains(&t))
}

#[test]
fn every_cited_document_and_section_exists() {
    let root = repo_root();
    let mut cache: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in citing_files(&root) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let record = is_record(&file);
        for c in citations(&text) {
            checked += 1;
            if c.path.ends_with('/') {
                if !root.join(&c.path).is_dir() {
                    let shown = file.strip_prefix(&root).unwrap_or(&file).display();
                    broken.push(format!("{shown}:{}: no folder {}", c.line, c.path));
                }
                continue;
            }
            let anchors = cache.entry(c.path.clone()).or_insert_with(|| {
                std::fs::read_to_string(root.join(&c.path))
                    .ok()
                    .map(|t| anchors(&t))
            });
            let shown = file.strip_prefix(&root).unwrap_or(&file).display();
            match (anchors, &c.title) {
                (None, _) => broken.push(format!("{shown}:{}: no file {}", c.line, c.path)),
                _ if record => {}
                (Some(a), Some(t)) if !title_found(t, a) => broken.push(format!(
                    "{shown}:{}: {} has no heading or label {t:?}",
                    c.line, c.path
                )),
                (Some(a), None)
                    if c.section
                        .is_some_and(|n| !a.iter().any(|h| h.starts_with(&format!("{n}. ")))) =>
                {
                    broken.push(format!(
                        "{shown}:{}: {} has no section {}",
                        c.line,
                        c.path,
                        c.section.unwrap()
                    ))
                }
                _ => {}
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} citations found: the scan is broken"
    );
    assert!(
        broken.is_empty(),
        "broken citations:\n{}",
        broken.join("\n")
    );
}

/// The targets of the relative links `[text](target)` of a markdown text, without `#anchor`
/// (web, mail and in-page links skipped).
fn relative_links(text: &str) -> Vec<&str> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')')?];
            let target = target.split('#').next().unwrap_or("");
            let web = ["http:", "https:", "mailto:"]
                .iter()
                .any(|p| target.starts_with(p));
            (!target.is_empty() && !web && !target.contains(char::is_whitespace)).then_some(target)
        })
        .collect()
}

#[test]
fn every_relative_markdown_link_exists() {
    let root = repo_root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in citing_files(&root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in relative_links(&text) {
            checked += 1;
            if !file.parent().unwrap().join(target).exists() {
                let shown = file.strip_prefix(&root).unwrap_or(&file).display();
                broken.push(format!("{shown}: link to {target} leads nowhere"));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: the scan is broken"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn citations_are_read_with_their_titles_across_comment_lines() {
    let text = "see `docs/method.md`, \"Sufficient\n/// budget\" and docs/reference/cli.md.\n\
                # docs/reference/predict.md section \"Diagnostics\"\nresearch/docs/x.md\n\
                docs/method.md §12";
    assert_eq!(
        citations(text),
        vec![
            Citation {
                path: "docs/method.md".into(),
                title: Some("Sufficient budget".into()),
                section: None,
                line: 1
            },
            Citation {
                path: "docs/reference/cli.md".into(),
                title: None,
                section: None,
                line: 2
            },
            Citation {
                path: "docs/reference/predict.md".into(),
                title: Some("Diagnostics".into()),
                section: None,
                line: 3
            },
            Citation {
                path: "docs/method.md".into(),
                title: None,
                section: Some(12),
                line: 5
            },
        ]
    );
    assert_eq!(citations("in docs/guide/, and")[0].path, "docs/guide/");
    assert!(
        is_record(Path::new("docs/notes/2026-12-05-x.md")) && !is_record(Path::new("README.md"))
    );
    let a = anchors("# Top\n## The `next` step\ntext **Which factors.** more\n");
    assert_eq!(a, vec!["top", "the next step", "which factors"]);
    assert!(title_found("Which factors", &a));
    assert!(title_found("The `next` step", &a) && title_found("the next step", &a));
    assert!(!title_found("Crates", &a));
    assert_eq!(
        relative_links("[a](guide/x.md#top) [b](https://x.org) [c](#here) [d](../LICENSE)"),
        vec!["guide/x.md", "../LICENSE"]
    );
}
