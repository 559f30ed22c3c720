//! Naming rules: which names may be declared, their case, and the Rust identifiers they become.

/// Words Rust does not accept even as raw identifiers, so generated code could not use them.
const RESERVED_IN_RUST: &[&str] = &["self", "super", "crate", "Self"];

/// Why the language or Rust cannot use a declared name (E0103), if it cannot. START and END are
/// refused by the graph rules (`trellis_graph::reserved_name_reason`), for every front door.
pub(crate) fn unusable_reason(name: &str) -> Option<String> {
    if crate::words::is_reserved(name) {
        Some(format!("`{name}` is a keyword of the language"))
    } else if RESERVED_IN_RUST.contains(&name) {
        Some(format!("`{name}` is reserved in Rust"))
    } else {
        None
    }
}

/// `[a-z][a-z0-9_]*`.
pub(crate) fn is_snake_case(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `[A-Z][A-Za-z0-9]*`.
pub(crate) fn is_pascal_case(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

/// Splits a name into words at `_` and at lower→upper case changes (`lookupInvoice_2` →
/// `lookup`, `Invoice`, `2`).
fn words(name: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut previous_lower = false;
    for (at, c) in name.char_indices() {
        if c == '_' {
            if start < at {
                words.push(&name[start..at]);
            }
            start = at + 1;
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower && start < at {
            words.push(&name[start..at]);
            start = at;
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    if start < name.len() {
        words.push(&name[start..]);
    }
    words
}

/// `LookupInvoice` → `lookup_invoice`.
pub(crate) fn to_snake_case(name: &str) -> String {
    words(name)
        .iter()
        .map(|word| word.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("_")
}

/// `lookup_invoice` → `LookupInvoice`: the node enum's variant for a node.
pub(crate) fn to_pascal_case(name: &str) -> String {
    let mut pascal = String::with_capacity(name.len());
    for word in words(name) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            pascal.push(first.to_ascii_uppercase());
            pascal.extend(chars.map(|c| c.to_ascii_lowercase()));
        }
    }
    pascal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases() {
        assert!(is_snake_case("lookup_invoice2"));
        assert!(!is_snake_case("LookupInvoice"));
        assert!(!is_snake_case("_x"));
        assert!(is_pascal_case("Support"));
        assert!(!is_pascal_case("support_flow"));
        assert!(!is_pascal_case("Support_Flow"));
    }

    #[test]
    fn conversions() {
        assert_eq!(to_snake_case("LookupInvoice"), "lookup_invoice");
        assert_eq!(to_snake_case("lookupInvoice"), "lookup_invoice");
        assert_eq!(to_snake_case("HTTP_call"), "http_call");
        assert_eq!(to_pascal_case("lookup_invoice"), "LookupInvoice");
        assert_eq!(to_pascal_case("support_flow"), "SupportFlow");
        assert_eq!(to_pascal_case("a_b"), to_pascal_case("a__b"));
        assert_eq!(to_pascal_case("step_1"), to_pascal_case("step1"));
    }

    #[test]
    fn unusable_names() {
        assert!(unusable_reason("retry").is_some());
        assert!(unusable_reason("crate").is_some());
        assert!(
            unusable_reason("type").is_none(),
            "raw identifiers cover Rust keywords"
        );
    }
}
