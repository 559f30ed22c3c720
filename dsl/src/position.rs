//! Byte offsets to 1-based lines and columns, counting columns in characters as rustc does.

/// The start of every line of a text, for turning byte offsets into lines and columns.
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

/// A 1-based line and column; the column counts characters, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineColumn {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        Self { text, line_starts }
    }

    /// The line and column of a byte offset (clamped to the text, and to a character boundary).
    pub fn line_column(&self, offset: usize) -> LineColumn {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let column = self.text[self.line_starts[line]..offset].chars().count() + 1;
        LineColumn {
            line: line + 1,
            column,
        }
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
    fn offsets_inside_a_character_clamp_to_its_start() {
        let index = LineIndex::new("é");
        assert_eq!(index.line_column(1), LineColumn { line: 1, column: 1 });
    }
}
