//! "Did you mean" suggestions: the nearest candidate by edit distance, as rustc picks them.

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
        let distance = edit_distance(word, candidate);
        // Replacing every character is no typo (`b` is not a misspelled `a`).
        let plausible = distance <= limit && distance < word.chars().count();
        if plausible && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance between two strings, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut before_previous = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before_previous[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before_previous, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("draft", "draft"), 0);
        assert_eq!(edit_distance("draft", "drfat"), 1);
        assert_eq!(edit_distance("lookup_invoce", "lookup_invoice"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

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
