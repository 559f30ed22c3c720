//! Decoding of literals and doc comments: integers, durations, strings (E0002).

use crate::ast::{DocLine, Literal};
use crate::diagnostic::{Code, Diagnostic, Span};
use trellis_graph::did_you_mean;

const UNITS: &[(&str, u64)] = &[("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)];

/// Splits `200ms` into `("200", "ms")`.
fn split_unit(text: &str) -> (&str, &str) {
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    text.split_at(digits)
}

fn parse_digits(digits: &str, span: Span) -> Result<u32, Diagnostic> {
    digits.parse::<u32>().map_err(|_| {
        Diagnostic::new(
            Code::E0002,
            span,
            format!("integer `{digits}` is too large"),
            "does not fit in 32 bits",
        )
        .with_help(format!("the largest value is {}", u32::MAX))
    })
}

/// A plain integer for `what` (e.g. "`max_steps`"). Zero is a valid literal: where a setting
/// needs at least 1, that is a graph rule (`trellis_graph::check`, E0002).
pub(crate) fn integer(literal: Literal<'_>, what: &str) -> Result<u32, Diagnostic> {
    let (digits, unit) = split_unit(literal.text);
    if !unit.is_empty() {
        return Err(Diagnostic::new(
            Code::E0002,
            literal.span,
            format!("`{}` is not an integer", literal.text),
            format!("unexpected suffix `{unit}`"),
        )
        .with_help(format!("{what} takes a plain number, such as `{digits}`")));
    }
    parse_digits(digits, literal.span)
}

/// A duration (`200ms`, `5s`, `2m`, `1h`) in milliseconds. Zero is a valid literal: a zero
/// `timeout` is refused by the graph rules.
pub(crate) fn duration_ms(literal: Literal<'_>) -> Result<u64, Diagnostic> {
    let (digits, unit) = split_unit(literal.text);
    let Some(&(_, factor)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        let diagnostic = if unit.is_empty() {
            Diagnostic::new(
                Code::E0002,
                literal.span,
                format!("the duration `{digits}` has no unit"),
                "no unit",
            )
            .with_help(format!(
                "add a unit: `{digits}ms`, `{digits}s`, `{digits}m` or `{digits}h`"
            ))
        } else {
            let help = match did_you_mean(unit, UNITS.iter().map(|(name, _)| *name)) {
                Some(unit) => format!("did you mean `{digits}{unit}`?"),
                None => "the units are `ms`, `s`, `m` and `h`".to_owned(),
            };
            Diagnostic::new(
                Code::E0002,
                literal.span,
                format!("unknown duration unit `{unit}`"),
                "unknown unit",
            )
            .with_help(help)
        };
        return Err(diagnostic);
    };
    let value = u64::from(parse_digits(digits, literal.span)?);
    Ok(value * factor)
}

/// The text of a string literal, escapes decoded; every bad escape is reported.
pub(crate) fn string(literal: Literal<'_>) -> Result<String, Vec<Diagnostic>> {
    let inner = &literal.text[1..literal.text.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut errors = Vec::new();
    let mut chars = inner.char_indices();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, escaped)) = chars.next() else {
            break;
        };
        match escaped {
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            other => {
                let start = literal.span.start + 1 + at;
                errors.push(
                    Diagnostic::new(
                        Code::E0002,
                        Span::new(start, start + 1 + other.len_utf8()),
                        format!("unknown escape `\\{}` in string", other.escape_default()),
                        "unknown escape",
                    )
                    .with_help("the escapes are `\\\"`, `\\\\`, `\\n` and `\\t`"),
                );
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The text of `///` or `//!` lines: prefix and one following space removed, lines joined.
pub(crate) fn doc_text(lines: &[DocLine<'_>]) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let text: Vec<&str> = lines
        .iter()
        .map(|line| {
            let body = &line.text[3..];
            body.strip_prefix(' ').unwrap_or(body).trim_end()
        })
        .collect();
    Some(text.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(text: &str) -> Literal<'_> {
        Literal {
            text,
            span: Span::new(10, 10 + text.len()),
        }
    }

    #[test]
    fn integers() {
        assert_eq!(integer(lit("25"), "`max_steps`"), Ok(25));
        assert_eq!(
            integer(lit("0"), "`x`"),
            Ok(0),
            "zero limits are a graph rule"
        );
        let big = integer(lit("4294967296"), "`x`").unwrap_err();
        assert_eq!(big.message, "integer `4294967296` is too large");
        let suffixed = integer(lit("25ms"), "`max_steps`").unwrap_err();
        assert_eq!(suffixed.label, "unexpected suffix `ms`");
    }

    #[test]
    fn durations() {
        assert_eq!(duration_ms(lit("200ms")), Ok(200));
        assert_eq!(duration_ms(lit("5s")), Ok(5_000));
        assert_eq!(duration_ms(lit("2m")), Ok(120_000));
        assert_eq!(
            duration_ms(lit("4294967295h")),
            Ok(4_294_967_295 * 3_600_000)
        );
        assert_eq!(duration_ms(lit("0ms")), Ok(0));
        let bare = duration_ms(lit("200")).unwrap_err();
        assert_eq!(bare.message, "the duration `200` has no unit");
        let unit = duration_ms(lit("200sec")).unwrap_err();
        assert_eq!(unit.message, "unknown duration unit `sec`");
        let close = duration_ms(lit("3hr")).unwrap_err();
        assert_eq!(close.help.as_deref(), Some("did you mean `3h`?"));
    }

    #[test]
    fn strings() {
        assert_eq!(
            string(lit(r#""a\"b\\c\nd\te""#)),
            Ok("a\"b\\c\nd\te".to_owned())
        );
        let errors = string(lit(r#""\q and \x""#)).unwrap_err();
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].span, Span::new(11, 13));
        assert_eq!(errors[1].message, "unknown escape `\\x` in string");
    }

    #[test]
    fn doc_lines() {
        let lines = [
            DocLine {
                text: "/// Answers one ticket.  ",
                span: Span::default(),
            },
            DocLine {
                text: "///",
                span: Span::default(),
            },
            DocLine {
                text: "///  indented",
                span: Span::default(),
            },
        ];
        assert_eq!(
            doc_text(&lines).as_deref(),
            Some("Answers one ticket.\n\n indented")
        );
        assert_eq!(doc_text(&[]), None);
    }
}
