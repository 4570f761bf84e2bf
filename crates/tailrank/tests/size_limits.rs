//! The size limits of `docs/architecture.md` ("Size limits"): no library source file over
//! [`MAX_FILE_LINES`] lines, no function over [`MAX_FN_LINES`] lines and no CLI over
//! [`MAX_CLI_LINES`] lines, counted over every `crates/*/src` file of the workspace, the CLI,
//! the test-support crate and `tailrank-py` included; functions in a `#[cfg(test)]` module do
//! not count.
//!
//! A function's length runs from its `fn` line to the line of its closing brace. The lexer
//! below skips comments, string, raw-string and character literals, so that a `{` in a format
//! string never counts as a brace (a guard, not a parser: macros that expand to functions are
//! not seen).

use std::path::{Path, PathBuf};

/// Longest library source file allowed, in lines.
const MAX_FILE_LINES: usize = 700;
/// Longest function allowed, in lines, from the `fn` line to its closing brace.
const MAX_FN_LINES: usize = 150;

/// Longest the CLI may be, in lines over `crates/tailrank-cli/src` (its flags translate into
/// the library's requests; no rule lives there).
const MAX_CLI_LINES: usize = 1200;

/// Every `.rs` file under `crates/*/src`.
fn source_files() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stack: Vec<PathBuf> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The text with every comment and literal blanked to spaces (newlines kept), so that line
/// numbers and braces of the code stay where they were.
fn blank_comments_and_literals(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[char]| {
        for &ch in s {
            out.push(if ch == '\n' { '\n' } else { ' ' });
        }
    };
    while i < c.len() {
        let rest = &c[i..];
        let end = if rest.starts_with(&['/', '/']) {
            rest.iter().position(|&x| x == '\n').unwrap_or(rest.len())
        } else if rest.starts_with(&['/', '*']) {
            let mut depth = 0usize;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with(&['/', '*']) {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(&['*', '/']) {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            j
        } else if let Some(len) = raw_string_len(rest) {
            len
        } else if rest[0] == '"' || (rest[0] == 'b' && rest.get(1) == Some(&'"')) {
            let start = if rest[0] == 'b' { 2 } else { 1 };
            let mut j = start;
            while j < rest.len() && rest[j] != '"' {
                j += if rest[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else if rest[0] == '\'' {
            // A character literal ('x', '\n', '\u{7b}'), not a lifetime ('a).
            if rest.get(1) == Some(&'\\') {
                rest.iter()
                    .skip(2)
                    .position(|&x| x == '\'')
                    .map_or(1, |p| p + 3)
            } else if rest.get(2) == Some(&'\'') {
                3
            } else {
                1
            }
        } else {
            out.push(c[i]);
            i += 1;
            continue;
        };
        blank(&mut out, &rest[..end]);
        i += end;
    }
    out
}

/// Length of a raw string literal (`r"…"`, `r#"…"#`, `br#"…"#`) at the start of `s`.
fn raw_string_len(s: &[char]) -> Option<usize> {
    let mut j = usize::from(s.first() == Some(&'b'));
    if s.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = s[j..].iter().take_while(|&&x| x == '#').count();
    j += hashes;
    if s.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < s.len() {
        if s[j] == '"'
            && s[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&x| x == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(s.len())
}

/// Whether a (blanked) line declares a function: `fn name`, after any of `pub`, `pub(crate)`,
/// `const`, `async`, `unsafe`, `extern "…"` (the ABI string is blanked).
fn declares_fn(line: &str) -> bool {
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.next() {
        match w {
            "fn" => return words.peek().is_some(),
            "pub" | "const" | "async" | "unsafe" | "extern" | "default" => {}
            w if w.starts_with("pub(") => {}
            _ => return false,
        }
    }
    false
}

/// `(name, first line, length)` of every function with a body outside `#[cfg(test)]` modules.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let code = blank_comments_and_literals(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    let mut skip_to_depth: Option<i64> = None;
    let mut depth: i64 = 0;
    // Open functions: (name, first line, depth at their opening brace).
    let mut open: Vec<(String, usize, i64)> = Vec::new();
    let mut pending: Option<(String, usize)> = None;
    let mut cfg_test = false;
    // Brackets open since the pending `fn` line (a `;` inside `[u8; 4]` ends nothing).
    let mut nest: i64 = 0;
    for (n, line) in lines.iter().enumerate() {
        let t = line.trim();
        if skip_to_depth.is_none() && declares_fn(t) {
            let name = t.split("fn ").nth(1).unwrap_or("");
            let name: String = name
                .chars()
                .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
                .collect();
            pending = Some((name, n + 1));
            nest = 0;
        }
        if t == "#[cfg(test)]" {
            cfg_test = true;
            continue;
        }
        for ch in line.chars() {
            match ch {
                '{' => {
                    depth += 1;
                    if cfg_test && skip_to_depth.is_none() {
                        skip_to_depth = Some(depth - 1);
                        pending = None;
                    } else if let Some((name, first)) = pending.take() {
                        open.push((name, first, depth));
                    }
                    cfg_test = false;
                }
                '}' => {
                    if let Some(&(_, _, d)) = open.last() {
                        if d == depth {
                            let (name, first, _) = open.pop().unwrap();
                            out.push((name, first, n + 1 - first + 1));
                        }
                    }
                    depth -= 1;
                    if skip_to_depth == Some(depth) {
                        skip_to_depth = None;
                    }
                }
                '(' | '[' => nest += 1,
                ')' | ']' => nest -= 1,
                // A declaration without a body (a trait's method, an extern fn).
                ';' if pending.is_some() && nest == 0 => {
                    pending = None;
                    cfg_test = false;
                }
                ';' => cfg_test = false,
                _ => {}
            }
        }
    }
    out
}

#[test]
fn no_library_source_file_is_over_the_limit() {
    let files = source_files();
    assert!(files.len() > 100, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).unwrap().lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_FILE_LINES} lines: {long:#?}");
}

#[test]
fn the_cli_is_within_its_limit() {
    let cli: usize = source_files()
        .iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "tailrank-cli"))
        .map(|p| std::fs::read_to_string(p).unwrap().lines().count())
        .sum();
    assert!(cli > 500, "the CLI has only {cli} lines: not found?");
    println!("CLI: {cli} lines");
    assert!(
        cli <= MAX_CLI_LINES,
        "the CLI has {cli} lines, over {MAX_CLI_LINES}"
    );
}

#[test]
fn no_function_is_over_the_limit() {
    let mut all = Vec::new();
    for p in source_files() {
        for (name, first, len) in functions(&std::fs::read_to_string(&p).unwrap()) {
            all.push((len, format!("{}:{first} {name}", p.display())));
        }
    }
    // The counter sees the functions it is meant to see.
    assert!(all.len() > 1000, "found only {} functions", all.len());
    all.sort();
    // The longest, for docs/architecture.md (`--nocapture` shows them).
    for f in all.iter().rev().take(6) {
        println!("{} lines: {}", f.0, f.1);
    }
    let long: Vec<&(usize, String)> = all.iter().filter(|f| f.0 > MAX_FN_LINES).collect();
    assert!(long.is_empty(), "over {MAX_FN_LINES} lines: {long:#?}");
}

#[test]
fn the_counter_measures_a_function_and_skips_literals_and_tests() {
    let text = r####"
pub(crate) fn outer(x: u32, _a: [u8; 4]) -> String {
    let s = "{ not a brace";
    let c = '{';
    let r = r#"} nor "this" {"#;
    // a comment {
    /* a block { comment */
    format!("{s}{c}{r}{x}")
}

trait T {
    fn declared(&self);
    fn with_default(&self) -> u8 {
        1
    }
}

#[cfg(test)]
mod tests {
    fn not_counted() {}
}
"####;
    let f = functions(text);
    let names: Vec<(&str, usize, usize)> = f.iter().map(|(n, a, b)| (n.as_str(), *a, *b)).collect();
    assert_eq!(names, vec![("outer", 2, 8), ("with_default", 13, 3)]);
}
