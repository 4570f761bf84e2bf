//! The CLI reference cannot rot silently: `docs/reference/cli.md` names every subcommand of
//! `tailrank --help` and, in that subcommand's section, every long flag of `tailrank CMD --help`.
//! (Citations of documents and Markdown links: `crates/tailrank/tests/docs_links.rs`.)

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
