//! Byte offsets to LSP positions and back: lines split at `\n`, columns in UTF-16 code units,
//! as the protocol requires.

use lsp_types::{Position, Range};
use trellis_dsl::{LineTable, Span};

/// The start of every line of one text, and its wide characters: the language's own
/// [`LineTable`], so that a position is found without recounting its line (a line of 8,000
/// diagnostics stays linear).
#[derive(Debug)]
pub(crate) struct Lines {
    table: LineTable,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        Lines {
            table: LineTable::new(text),
        }
    }

    /// The position of a byte offset (clamped to the text, and back to a character boundary).
    pub(crate) fn position(&self, text: &str, offset: usize) -> Position {
        let (line, column) = self.table.line_utf16(text, offset);
        Position::new(to_u32(line), to_u32(column))
    }

    pub(crate) fn range(&self, text: &str, span: Span) -> Range {
        Range::new(
            self.position(text, span.start),
            self.position(text, span.end),
        )
    }

    /// The byte offset of a position: a column past the line's end is its end; a line past the
    /// text's end is the text's end; a column inside a surrogate pair is the character's start.
    pub(crate) fn offset(&self, text: &str, position: Position) -> usize {
        let Some(start) = self.table.line_start(position.line as usize) else {
            return text.len();
        };
        let line_end = self
            .table
            .line_start(position.line as usize + 1)
            .map_or(text.len(), |next| next - 1);
        let mut units = 0;
        for (at, c) in text[start..line_end].char_indices() {
            if units + c.len_utf16() > position.character as usize {
                return start + at;
            }
            units += c.len_utf16();
        }
        line_end
    }
}

/// The byte range of the word around `offset` whose characters are `is_word` (empty between two
/// non-word characters), at character boundaries whatever `offset` and the text: every byte
/// offset of any text is input.
pub(crate) fn word_at(
    text: &str,
    offset: usize,
    is_word: impl Fn(char) -> bool,
) -> std::ops::Range<usize> {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let start = text[..offset]
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_word(c))
        .map_or(0, |(at, c)| at + c.len_utf8());
    let end = text[offset..]
        .find(|c: char| !is_word(c))
        .map_or(text.len(), |at| offset + at);
    start..end
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_is_found_beside_any_character_at_any_offset() {
        let text = "üE0202—x";
        let word = |at| word_at(text, at, |c: char| c.is_ascii_alphanumeric());
        assert_eq!(word(2), 2..7, "after a two-byte letter");
        assert_eq!(word(1), 0..0, "inside it: its start");
        assert_eq!(
            word(8),
            2..7,
            "inside an em dash: its start, the end of the word"
        );
        assert_eq!(word(text.len() + 3), 10..11);
    }

    #[test]
    fn columns_count_utf16_units_and_round_trip() {
        // "é" is one unit, "𝄞" two (a surrogate pair), both several bytes.
        let text = "a\n// é𝄞 x\nnode b;";
        let lines = Lines::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(lines.position(text, x), Position::new(1, 7));
        assert_eq!(lines.offset(text, Position::new(1, 7)), x);
        let b = text.rfind('b').unwrap();
        assert_eq!(lines.position(text, b), Position::new(2, 5));
        assert_eq!(lines.offset(text, Position::new(2, 5)), b);
        // Inside the surrogate pair: the character's start.
        let clef = text.find('𝄞').unwrap();
        assert_eq!(lines.offset(text, Position::new(1, 5)), clef);
        // Past the end of a line, and past the last line.
        assert_eq!(lines.offset(text, Position::new(0, 40)), 1);
        assert_eq!(lines.offset(text, Position::new(9, 0)), text.len());
        assert_eq!(lines.position(text, text.len() + 5), Position::new(2, 7));
    }
}
