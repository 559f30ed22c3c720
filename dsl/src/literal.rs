//! Decoding of literals and doc comments: integers, durations, strings (E0002).

use crate::ast::{DocLine, Literal};
use crate::diagnostic::{Code, Diagnostic, Span};
use crate::suggest::did_you_mean;

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

/// A plain integer for `what` (e.g. "`max_steps`"), at least `min`.
pub(crate) fn integer(literal: Literal<'_>, what: &str, min: u32) -> Result<u32, Diagnostic> {
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
    let value = parse_digits(digits, literal.span)?;
    if value < min {
        return Err(Diagnostic::new(
            Code::E0002,
            literal.span,
            format!("{what} must be at least {min}"),
            "too small",
        )
        .with_help(format!("write {min} or more")));
    }
    Ok(value)
}

/// A duration (`200ms`, `5s`, `2m`, `1h`) for `what`, in milliseconds; zero only if `allow_zero`.
pub(crate) fn duration_ms(
    literal: Literal<'_>,
    what: &str,
    allow_zero: bool,
) -> Result<u64, Diagnostic> {
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
    if value == 0 && !allow_zero {
        return Err(Diagnostic::new(
            Code::E0002,
            literal.span,
            format!("{what} must be longer than zero"),
            "zero duration",
        )
        .with_help(format!("give a positive duration, such as `1{unit}`")));
    }
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
        assert_eq!(integer(lit("25"), "`max_steps`", 1), Ok(25));
        assert_eq!(integer(lit("0"), "`x`", 0), Ok(0));
        let zero = integer(lit("0"), "`max_steps`", 1).unwrap_err();
        assert_eq!(zero.message, "`max_steps` must be at least 1");
        let big = integer(lit("4294967296"), "`x`", 0).unwrap_err();
        assert_eq!(big.message, "integer `4294967296` is too large");
        let suffixed = integer(lit("25ms"), "`max_steps`", 1).unwrap_err();
        assert_eq!(suffixed.label, "unexpected suffix `ms`");
    }

    #[test]
    fn durations() {
        assert_eq!(duration_ms(lit("200ms"), "t", false), Ok(200));
        assert_eq!(duration_ms(lit("5s"), "t", false), Ok(5_000));
        assert_eq!(duration_ms(lit("2m"), "t", false), Ok(120_000));
        assert_eq!(
            duration_ms(lit("4294967295h"), "t", false),
            Ok(4_294_967_295 * 3_600_000)
        );
        assert_eq!(duration_ms(lit("0ms"), "t", true), Ok(0));
        assert!(duration_ms(lit("0s"), "t", false).is_err());
        let bare = duration_ms(lit("200"), "t", false).unwrap_err();
        assert_eq!(bare.message, "the duration `200` has no unit");
        let unit = duration_ms(lit("200sec"), "t", false).unwrap_err();
        assert_eq!(unit.message, "unknown duration unit `sec`");
        let close = duration_ms(lit("3hr"), "t", false).unwrap_err();
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
