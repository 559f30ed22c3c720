//! "Did you mean" suggestions: the nearest candidate by edit distance, as rustc picks them.
//! The one place that decides, for the language's names and `#[derive(GraphState)]`'s options;
//! the distance is `strsim`'s (a kept crate, already in the tree through clap).

/// The longest word that gets a suggestion.
const LONGEST_WORD: usize = 64;

/// The candidate nearest to `word`, if one is near enough to be a plausible typo.
///
/// A candidate that differs only in case wins outright; otherwise the smallest optimal string
/// alignment distance (Levenshtein plus transpositions) wins, if it is at most a third of the
/// word's length (at least one edit). Ties go to the earlier candidate. Words longer than
/// 64 characters get no suggestion: the distance is quadratic and nobody mistypes such names.
pub fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    if word.len() > LONGEST_WORD {
        return None;
    }
    let limit = word.chars().count().max(3) / 3;
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        if candidate.eq_ignore_ascii_case(word) {
            return Some(candidate);
        }
        // Cheap reject before the quadratic distance: lengths alone already differ too much.
        if candidate.chars().count().abs_diff(word.chars().count()) > limit {
            continue;
        }
        let distance = strsim::osa_distance(word, candidate);
        // Replacing every character is no typo (`b` is not a misspelled `a`).
        let plausible = distance <= limit && distance < word.chars().count();
        if plausible && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_plausible_name() {
        let nodes = ["classify", "lookup_invoice", "draft", "review", "send"];
        assert_eq!(did_you_mean("lookup_invoce", nodes), Some("lookup_invoice"));
        assert_eq!(did_you_mean("drfat", nodes), Some("draft"));
        assert_eq!(did_you_mean("Review", nodes), Some("review"));
        assert_eq!(did_you_mean("archive", nodes), None);
        assert_eq!(did_you_mean("send", nodes), None);
        assert_eq!(did_you_mean("b", ["a"]), None);
        assert_eq!(did_you_mean("ab", ["ac"]), Some("ac"));
        assert_eq!(
            did_you_mean("backof", ["backoff", "timeout"]),
            Some("backoff")
        );
        assert_eq!(did_you_mean("reviewer", ["review", "send"]), Some("review"));
    }
}
