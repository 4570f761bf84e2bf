//! The fields of one CSV line (RFC 4180 quotes: a field may be quoted, `""` inside quotes is a
//! quote), as the ground-truth id files ([`super::gt`]) and the hardness CSV
//! (`formats::hardness_csv`, tailrank-scan) read them.

/// What white space around a field means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// Dropped: every field is trimmed, and a quote may open after white space and be
    /// followed by white space (hand-written id files).
    Trim,
    /// Kept: white space belongs to an unquoted field; a quote opens only a field's first
    /// character and must be followed by `,` or the line's end (the files tailrank writes).
    Keep,
}

/// The fields of `line`, or what is malformed in it: `unterminated quote` or `text after a
/// closing quote`.
pub fn split_fields(line: &str, padding: Padding) -> Result<Vec<String>, &'static str> {
    let trim = padding == Padding::Trim;
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut in_quotes = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        if in_quotes {
            if c != '"' {
                cur.push(c);
            } else if chars.next_if_eq(&'"').is_some() {
                cur.push('"');
            } else {
                in_quotes = false;
            }
        } else if c == ',' {
            fields.push(std::mem::take(&mut cur));
            was_quoted = false;
        } else if c == '"' && !was_quoted && (cur.is_empty() || trim && cur.trim().is_empty()) {
            cur.clear();
            in_quotes = true;
            was_quoted = true;
        } else if was_quoted && !(trim && c.is_whitespace()) {
            return Err("text after a closing quote");
        } else {
            cur.push(c);
        }
    }
    if in_quotes {
        return Err("unterminated quote");
    }
    fields.push(cur);
    if trim {
        for f in &mut fields {
            *f = f.trim().to_string();
        }
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str, padding: Padding) -> Result<Vec<String>, &'static str> {
        split_fields(line, padding)
    }

    #[test]
    fn quotes_and_padding() {
        use Padding::{Keep, Trim};
        assert_eq!(split(r#" "a,b/c" , 1"#, Trim).unwrap(), ["a,b/c", "1"]);
        assert_eq!(split(r#""a""b""#, Trim).unwrap(), ["a\"b"]);
        assert_eq!(split(r#""a""b",,x"#, Keep).unwrap(), ["a\"b", "", "x"]);
        assert_eq!(split(" a , b", Keep).unwrap(), [" a ", " b"]);
        assert_eq!(split(r#" "a""#, Keep).unwrap(), [r#" "a""#]);
        assert_eq!(split(r#"a"b,"",c"#, Keep).unwrap(), ["a\"b", "", "c"]);
        for padding in [Trim, Keep] {
            assert_eq!(split(r#""abc"#, padding), Err("unterminated quote"));
            assert_eq!(
                split(r#""ab"c,1"#, padding),
                Err("text after a closing quote")
            );
            assert_eq!(split("", padding).unwrap(), [""]);
        }
        assert_eq!(split(r#""ab" ,1"#, Keep), Err("text after a closing quote"));
        assert_eq!(split(r#""ab" ,1"#, Trim).unwrap(), ["ab", "1"]);
    }
}
