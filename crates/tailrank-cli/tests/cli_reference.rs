//! The docs cannot rot silently: `docs/reference/cli.md` names every subcommand of `tailrank
//! --help` and, in that subcommand's section, every long flag of `tailrank CMD --help`; and every
//! `docs/…` path cited in the repository's code, scripts and docs, and every relative Markdown
//! link in its docs, names a file or folder that exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tailrank_test_support::cli;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn help(args: &[&str]) -> String {
    let out = cli::output(args);
    assert!(out.status.success(), "tailrank {args:?} failed");
    String::from_utf8(out.stdout).expect("help is UTF-8")
}

/// The subcommands listed under `Commands:` of the top-level help, `help` excepted.
fn subcommands(top: &str) -> Vec<String> {
    top.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags that start an option line of a subcommand's help (`--help` excepted).
fn long_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = match l.strip_prefix('-') {
                Some(rest) if !rest.starts_with('-') => rest.split_once(", ")?.1,
                _ => l,
            };
            let name = l.strip_prefix("--")?;
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (!name.is_empty() && name != "help").then(|| format!("--{name}"))
        })
        .collect()
}

/// The text of the section `## \`tailrank CMD\`` of the reference, up to the next `## `.
fn section<'a>(doc: &'a str, cmd: &str) -> Option<&'a str> {
    let start = doc.find(&format!("\n## `tailrank {cmd}`\n"))? + 1;
    let rest = &doc[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    Some(&rest[..end])
}

#[test]
fn every_subcommand_and_long_flag_is_in_the_cli_reference() {
    let path = repo_root().join("docs/reference/cli.md");
    let doc = std::fs::read_to_string(&path).expect("docs/reference/cli.md");
    let cmds = subcommands(&help(&["--help"]));
    assert!(
        cmds.len() >= 10,
        "subcommands parsed from the help: {cmds:?}"
    );
    let mut missing = Vec::new();
    for cmd in &cmds {
        let Some(text) = section(&doc, cmd) else {
            missing.push(format!("section ## `tailrank {cmd}`"));
            continue;
        };
        let flags = long_flags(&help(&[cmd, "--help"]));
        assert!(
            cmd == "merge" || cmd == "grow" || flags.len() >= 3,
            "{cmd}: flags parsed from the help: {flags:?}"
        );
        for flag in flags {
            // A row names the flag in backticks, alone or with its value: `--k K`, `--json`.
            if !text.contains(&format!("`{flag} ")) && !text.contains(&format!("`{flag}`")) {
                missing.push(format!("{cmd} {flag}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/reference/cli.md lacks (add a row per flag, as `tailrank CMD --help` says): \
         {missing:?}"
    );
}

/// Files whose text is searched for citations: code, scripts and docs, outside build outputs
/// and hidden folders.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("dir entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                text_files(&path, out);
            }
        } else if [".md", ".rs", ".py", ".sh", ".toml"]
            .iter()
            .any(|e| name.ends_with(e))
        {
            out.push(path);
        }
    }
}

/// The `docs/…` paths cited in `text` that end in `.md` or `/` (trailing full stops dropped):
/// a citation starts where `docs/` follows a character that cannot be part of a path.
fn cited_docs_paths(text: &str) -> Vec<String> {
    let in_path = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for (i, _) in text.match_indices("docs/") {
        if text[..i].chars().next_back().is_some_and(in_path) {
            continue;
        }
        let cited: String = text[i..].chars().take_while(|&c| in_path(c)).collect();
        let cited = cited.trim_end_matches('.');
        if cited.ends_with(".md") || cited.ends_with('/') {
            out.push(cited.to_string());
        }
    }
    out
}

/// The relative targets of the Markdown links `](target)` in `text`, anchors dropped.
fn relative_links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &text[i + 2..];
            let target = &rest[..rest.find(')')?];
            let file = target.split('#').next().unwrap_or("");
            let external = file.contains("://") || file.starts_with("mailto:");
            (!file.is_empty() && !external && !file.contains(char::is_whitespace))
                .then(|| file.to_string())
        })
        .collect()
}

#[test]
fn every_cited_docs_path_and_link_exists() {
    let root = repo_root();
    let mut files = Vec::new();
    for top in ["crates", "docs", "scripts"] {
        text_files(&root.join(top), &mut files);
    }
    files.extend(["README.md", "CHANGELOG.md"].map(|f| root.join(f)));
    assert!(files.len() > 50, "{} files found", files.len());
    let mut broken = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let shown = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        for cited in cited_docs_paths(&text) {
            if !root.join(&cited).exists() {
                broken.push(format!("{shown}: {cited}"));
            }
        }
        if shown.ends_with(".md") {
            let dir = file.parent().unwrap();
            for link in relative_links(&text) {
                if !dir.join(&link).exists() {
                    broken.push(format!("{shown}: link ({link})"));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "cited docs paths or links that do not exist: {broken:?}"
    );
}
