//! What each diagnostic code means, read from the language reference (docs/language.md), so
//! that the editor and the book say the same thing.

use trellis_dsl::Code;

/// The language reference, compiled in (`lsp/language.md` links to `docs/language.md`, so that
/// the packaged crate holds it too): its `### E0202 — …` sections explain the codes.
const REFERENCE: &str = include_str!("../language.md");

/// The reference's section on `code` (title, example and fix), as Markdown.
pub(crate) fn explain(code: Code) -> Option<String> {
    let heading = format!("### {code} ");
    let start = REFERENCE.find(&heading)?;
    let body = &REFERENCE[start + 4..];
    let end = body
        .find("\n## ")
        .into_iter()
        .chain(body.find("\n### "))
        .min();
    let section = body[..end.unwrap_or(body.len())].trim_end();
    // The reference marks failing examples `graph,E0202`; an editor highlights `graph`.
    Some(format!("**{}", section.replacen('\n', "**\n", 1)).replace("```graph,", "```graph "))
}

/// The code spelled at `offset` in `text` (`E0202` in a comment, say), if any.
pub(crate) fn code_at(text: &str, offset: usize) -> Option<Code> {
    let word = crate::text::word_at(text, offset, |c: char| c.is_ascii_alphanumeric());
    Code::parse(&text[word])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_section_in_the_reference() {
        for code in Code::ALL {
            let text = explain(*code).unwrap_or_else(|| panic!("no section for {code}"));
            assert!(text.starts_with(&format!("**{code} — ")), "{text}");
            assert!(!text.contains("\n### "), "one section only: {text}");
        }
    }

    #[test]
    fn a_code_is_found_under_the_cursor() {
        let text = "// see E0202 here";
        assert_eq!(code_at(text, 9), Some(Code::E0202));
        assert_eq!(code_at(text, 3), None);
        let accented = "// ü E0202 — é";
        for offset in 0..=accented.len() + 1 {
            code_at(accented, offset);
        }
        assert_eq!(code_at("// üE0202", 6), Some(Code::E0202));
    }
}
