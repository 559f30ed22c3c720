//! Byte offsets to 1-based lines and columns, counting columns in characters as rustc does.

/// The start of every line of a text, for turning byte offsets into lines and columns.
///
/// Columns are found without counting the line's characters again: beside the line starts,
/// it keeps every character wider than one byte, so that a column is a subtraction and a
/// binary search however long the line (a line of 8,000 diagnostics stays linear).
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    table: LineTable,
}

/// A [`LineIndex`] without the text it indexes, for a holder that owns the text (the
/// language server's documents): each method takes that same text again.
#[derive(Debug, Clone, Default)]
pub struct LineTable {
    line_starts: Vec<usize>,
    /// Per character of more than one byte, in order: where it ends, and how many bytes more
    /// than characters, and than UTF-16 units, the text has up to there.
    wide: Vec<Wide>,
    /// Where a `\r` stands alone (not before `\n`): a line break to miette, not to the
    /// language (almost always none). Only reports need it.
    #[cfg(feature = "render")]
    lone_returns: Vec<usize>,
}

/// A 1-based line and column; the column counts characters, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineColumn {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

#[derive(Debug, Clone, Copy, Default)]
struct Wide {
    end: usize,
    extra_bytes: usize,
    extra_over_utf16: usize,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            table: LineTable::new(text),
        }
    }

    /// The text indexed.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The line and column of a byte offset (clamped to the text, and to a character boundary).
    pub fn line_column(&self, offset: usize) -> LineColumn {
        self.table.line_column(self.text, offset)
    }

    /// The byte offset where 0-based line `line` starts, if the text has it.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.table.line_start(line)
    }

    /// How many lone `\r` stand before `offset` (each a line break to miette).
    #[cfg(feature = "render")]
    pub(crate) fn lone_returns_before(&self, offset: usize) -> usize {
        self.table.lone_returns_before(offset)
    }
}

impl LineTable {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        let mut wide = Vec::new();
        let (mut extra_bytes, mut extra_over_utf16) = (0, 0);
        if !text.is_ascii() {
            for (at, c) in text.char_indices().filter(|(_, c)| !c.is_ascii()) {
                extra_bytes += c.len_utf8() - 1;
                extra_over_utf16 += c.len_utf8() - c.len_utf16();
                wide.push(Wide {
                    end: at + c.len_utf8(),
                    extra_bytes,
                    extra_over_utf16,
                });
            }
        }
        #[cfg(feature = "render")]
        let lone_returns = if text.contains('\r') {
            let bytes = text.as_bytes();
            (0..bytes.len())
                .filter(|&at| bytes[at] == b'\r' && bytes.get(at + 1) != Some(&b'\n'))
                .collect()
        } else {
            Vec::new()
        };
        LineTable {
            line_starts,
            wide,
            #[cfg(feature = "render")]
            lone_returns,
        }
    }

    /// How many lone `\r` stand before `offset` (each a line break to miette).
    #[cfg(feature = "render")]
    pub(crate) fn lone_returns_before(&self, offset: usize) -> usize {
        self.lone_returns.partition_point(|&at| at < offset)
    }

    /// The byte offset where 0-based line `line` starts, if the text has it.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.line_starts.get(line).copied()
    }

    /// `offset` clamped to `text` and back to a character boundary, and its 0-based line.
    fn locate(&self, text: &str, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        (offset, line)
    }

    /// The wide characters' surplus up to `offset` (a character boundary).
    fn surplus(&self, offset: usize) -> Wide {
        let before = self.wide.partition_point(|wide| wide.end <= offset);
        before
            .checked_sub(1)
            .map_or(Wide::default(), |at| self.wide[at])
    }

    /// The line and column of a byte offset of `text` (the text indexed), clamped to the text
    /// and to a character boundary.
    pub fn line_column(&self, text: &str, offset: usize) -> LineColumn {
        let (offset, line) = self.locate(text, offset);
        let start = self.line_starts[line];
        let (from, to) = (self.surplus(start), self.surplus(offset));
        let column = (offset - start) - (to.extra_bytes - from.extra_bytes) + 1;
        LineColumn {
            line: line + 1,
            column,
        }
    }

    /// The 0-based line of a byte offset of `text` and its column in UTF-16 code units, as the
    /// language server protocol counts them (clamped as [`line_column`](Self::line_column) is).
    pub fn line_utf16(&self, text: &str, offset: usize) -> (usize, usize) {
        let (offset, line) = self.locate(text, offset);
        let start = self.line_starts[line];
        let (from, to) = (self.surplus(start), self.surplus(offset));
        let units = (offset - start) - (to.extra_over_utf16 - from.extra_over_utf16);
        (line, units)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_not_bytes() {
        let index = LineIndex::new("ab\n/* é */ x\n");
        assert_eq!(index.line_column(0), LineColumn { line: 1, column: 1 });
        assert_eq!(index.line_column(3), LineColumn { line: 2, column: 1 });
        // `x` follows a two-byte `é`: byte 11, character column 9.
        assert_eq!(index.line_column(12), LineColumn { line: 2, column: 9 });
        assert_eq!(index.line_column(14), LineColumn { line: 3, column: 1 });
        assert_eq!(index.line_column(99), LineColumn { line: 3, column: 1 });
    }

    #[test]
    fn columns_agree_with_counting_at_every_offset_of_mixed_text() {
        let text = "a\u{e9}\u{1D11E}\nb\u{2014}c\u{1F600}\n\n\u{fc}";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() + 2 {
            let mut at = offset.min(text.len());
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let line = text[..at].matches('\n').count();
            let chars = text[start..at].chars().count();
            let units: usize = text[start..at].chars().map(char::len_utf16).sum();
            assert_eq!(
                index.line_column(offset),
                LineColumn {
                    line: line + 1,
                    column: chars + 1
                }
            );
            assert_eq!(
                LineTable::new(text).line_utf16(text, offset),
                (line, units),
                "at {offset}"
            );
        }
    }

    #[test]
    fn offsets_inside_a_character_clamp_to_its_start() {
        let index = LineIndex::new("é");
        assert_eq!(index.line_column(1), LineColumn { line: 1, column: 1 });
    }
}
