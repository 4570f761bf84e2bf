//! The one table model of the reports: a header of [`Column`]s (title, alignment, width) and
//! rows of cells (strings, already formatted), rendered as aligned plain text
//! ([`Table::text`]) or as a GitHub-flavoured markdown table ([`Table::markdown`]). A report
//! that prints the same table both ways builds its rows once and renders them twice; the JSON
//! of a report is its serde type, never a table.
//!
//! Text layout: every line is `indent`, then the cells joined by `gap` (or by a column's own
//! separator, [`Column::after`]), each padded with spaces to its column's width on the side its
//! alignment leaves free, as `format!("{:<w$}")` and `format!("{:>w$}")` pad (by characters,
//! never cutting a longer cell). The width is the title's length unless set
//! ([`Column::width`]) or fitted to the widest cell ([`Column::fit`]). Markdown layout: `| title | … |`, the alignment row (`---` left,
//! `---:` right), then `| cell | … |` per row, with `|` in a cell escaped as `\|`.

/// Which side of a column its cells keep to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// How wide a column's text cells are padded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// At least this many characters.
    AtLeast(usize),
    /// As wide as the title or the widest cell, whichever is wider.
    Fit,
}

/// One column of a [`Table`]: its title, alignment and text width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    title: String,
    align: Align,
    width: Width,
    /// The text separator before this column; None: the table's gap.
    after: Option<&'static str>,
}

impl Column {
    /// A left-aligned column, as wide as its title.
    pub fn left(title: impl Into<String>) -> Self {
        Self::new(title.into(), Align::Left)
    }

    /// A right-aligned column, as wide as its title.
    pub fn right(title: impl Into<String>) -> Self {
        Self::new(title.into(), Align::Right)
    }

    fn new(title: String, align: Align) -> Self {
        let width = Width::AtLeast(title.chars().count());
        Column {
            title,
            align,
            width,
            after: None,
        }
    }

    /// Pad the text cells (and the title) to `chars` characters; a longer cell is kept whole.
    pub fn width(self, chars: usize) -> Self {
        Column {
            width: Width::AtLeast(chars),
            ..self
        }
    }

    /// Pad the text cells to the widest of the title and the cells.
    pub fn fit(self) -> Self {
        Column {
            width: Width::Fit,
            ..self
        }
    }

    /// In text, separate this column from the one before by `separator` instead of the
    /// table's gap (a wider space before a group of columns).
    pub fn after(self, separator: &'static str) -> Self {
        Column {
            after: Some(separator),
            ..self
        }
    }
}

/// A table: columns and rows of formatted cells, one per column from the first; a row with
/// fewer cells than columns ends after its last cell (the columns it lacks stay empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(columns: Vec<Column>) -> Self {
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// The same table with these rows appended (see [`Table::push`]).
    pub fn with_rows(mut self, rows: impl IntoIterator<Item = Vec<String>>) -> Self {
        for r in rows {
            self.push(r);
        }
        self
    }

    /// Append one row: its cells fill the columns from the first.
    ///
    /// # Panics
    /// If the row has more cells than the table has columns (a bug of the report that builds
    /// it).
    pub fn push(&mut self, row: Vec<String>) {
        assert!(
            row.len() <= self.columns.len(),
            "a table row has at most one cell per column"
        );
        self.rows.push(row);
    }

    /// The text lines, header first, without line ends (for a report that appends a note to
    /// some of them); see the module docs for the layout.
    pub fn text_lines(&self, indent: &str, gap: &str) -> Vec<String> {
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|i| self.text_width(i))
            .collect();
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut s = indent.to_string();
            for (i, (cell, c)) in cells.zip(&self.columns).enumerate() {
                if i > 0 {
                    s.push_str(c.after.unwrap_or(gap));
                }
                let w = widths[i];
                s.push_str(&match c.align {
                    Align::Left => format!("{cell:<w$}"),
                    Align::Right => format!("{cell:>w$}"),
                });
            }
            s
        };
        let mut out = vec![line(&mut self.columns.iter().map(|c| c.title.as_str()))];
        out.extend(
            self.rows
                .iter()
                .map(|r| line(&mut r.iter().map(String::as_str))),
        );
        out
    }

    /// The table as plain text, one line per row after the header, every line ended by `\n`.
    pub fn text(&self, indent: &str, gap: &str) -> String {
        self.text_lines(indent, gap)
            .into_iter()
            .map(|l| l + "\n")
            .collect()
    }

    /// The table as markdown, every line ended by `\n`.
    pub fn markdown(&self) -> String {
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut s = String::from("|");
            for cell in cells {
                s.push(' ');
                s.push_str(&cell.replace('|', "\\|"));
                s.push_str(" |");
            }
            s.push('\n');
            s
        };
        let mut out = line(&mut self.columns.iter().map(|c| c.title.as_str()));
        out.push('|');
        for c in &self.columns {
            out.push_str(match c.align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(&mut r.iter().map(String::as_str)));
        }
        out
    }

    /// The text width of column `i`.
    fn text_width(&self, i: usize) -> usize {
        let c = &self.columns[i];
        match c.width {
            Width::AtLeast(w) => w,
            Width::Fit => self
                .rows
                .iter()
                .filter_map(|r| r.get(i).map(|c| c.chars().count()))
                .fold(c.title.chars().count(), usize::max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table::new(vec![
            Column::left("name").width(6),
            Column::right("value"),
            Column::left("note").fit().after(" | "),
        ])
        .with_rows([
            vec!["a".into(), "+1.50".into(), "x|y".into()],
            vec!["longer!".into(), "123456".into(), "".into()],
        ])
    }

    #[test]
    fn text_pads_like_format_and_keeps_long_cells_whole() {
        assert_eq!(
            sample().text("  ", " "),
            "  name   value | note\n  \
             a      +1.50 | x|y \n  \
             longer! 123456 |     \n"
        );
        assert_eq!(
            sample().text_lines("", "  ")[1],
            format!("{:<6}  {:>5} | {:<4}", "a", "+1.50", "x|y")
        );
    }

    #[test]
    fn markdown_has_the_alignment_row_and_escapes_bars() {
        assert_eq!(
            sample().markdown(),
            "| name | value | note |\n|---|---:|---|\n| a | +1.50 | x\\|y |\n\
             | longer! | 123456 |  |\n"
        );
    }

    #[test]
    fn width_counts_characters() {
        let t = Table::new(vec![Column::right("–").fit(), Column::left("b")])
            .with_rows([vec!["ab".into(), "é".into()]]);
        assert_eq!(t.text("", " "), " – b\nab é\n");
    }

    #[test]
    fn a_short_row_ends_after_its_last_cell() {
        let t = Table::new(vec![Column::left("a").width(3), Column::right("b").fit()])
            .with_rows([vec!["x".into()], vec!["y".into(), "long".into()]]);
        assert_eq!(t.text("", " "), "a      b\nx  \ny   long\n");
        assert_eq!(t.markdown(), "| a | b |\n|---|---:|\n| x |\n| y | long |\n");
    }

    #[test]
    #[should_panic(expected = "at most one cell per column")]
    fn a_long_row_is_a_bug() {
        Table::new(vec![Column::left("a")]).push(vec!["x".into(), "y".into()]);
    }
}
