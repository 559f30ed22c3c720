//! `Name`: the text a run repeats in every record and checkpoint (node and graph names, its
//! owner, its graph's fingerprint), shared rather than copied.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A name in a [`Checkpoint`](crate::checkpoint::Checkpoint) or
/// [`RunRecord`](crate::checkpoint::RunRecord): a node's, the graph's, the owner's.
///
/// A run writes the same few names into every checkpoint; as `String`s each checkpoint copied
/// each of them, over a quarter of the allocations of an interrupt-and-resume cycle in memory. A clone of a `Name` is a
/// reference count. It reads as a `&str` (through `Deref`), compares with `str`, `&str` and
/// `String`, looks up a map keyed by names with a `&str`, and is written as a JSON string.
///
/// ```
/// use trellis::checkpoint::Name;
///
/// let name = Name::from("review");
/// assert_eq!(name, "review");
/// assert!(name.starts_with("rev"));
/// let visits = std::collections::BTreeMap::from([(name.clone(), 2u32)]);
/// assert_eq!(visits.get("review"), Some(&2));
/// assert_eq!(serde_json::to_string(&name).unwrap(), r#""review""#);
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Name(Arc<str>);

impl Name {
    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Name {
    /// As a `String` prints: a checkpoint's `Debug` reads as it did when its names were text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Self {
        Name(text.into())
    }
}

impl From<String> for Name {
    fn from(text: String) -> Self {
        Name(text.into())
    }
}

impl From<Arc<str>> for Name {
    fn from(text: Arc<str>) -> Self {
        Name(text)
    }
}

impl From<&Arc<str>> for Name {
    /// Shares the text: a graph's node names become checkpoints' without a copy.
    fn from(text: &Arc<str>) -> Self {
        Name(Arc::clone(text))
    }
}

impl From<Name> for String {
    fn from(name: Name) -> Self {
        String::from(&*name.0)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl PartialOrd<str> for Name {
    fn partial_cmp(&self, other: &str) -> Option<Ordering> {
        Some((*self.0).cmp(other))
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // A visitor, not `String`: text read in place goes into the `Arc` in one copy.
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a name")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Name, E> {
                Ok(Name::from(text))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Name, E> {
                Ok(Name::from(text))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_the_text() {
        let name = Name::from("draft");
        let copy = name.clone();
        assert!(std::ptr::eq(name.as_str(), copy.as_str()));
    }

    #[test]
    fn it_compares_both_ways_with_text() {
        let name = Name::from("draft");
        let (text, owned): (&str, String) = ("draft", "draft".to_owned());
        assert_eq!(name, text);
        assert_eq!(text, name);
        assert_eq!(name, *text);
        assert_eq!(*text, name);
        assert_eq!(name, owned);
        assert_eq!(owned, name);
        assert_ne!(name, "review");
        assert_eq!(vec![name.clone()], ["draft"]);
        assert_eq!(format!("{name} {name:?}"), r#"draft "draft""#);
    }

    #[test]
    fn it_reads_back_what_it_wrote() {
        let names = vec![Name::from("a"), Name::from("b \"c\"")];
        let json = serde_json::to_string(&names).unwrap();
        assert_eq!(json, r#"["a","b \"c\""]"#);
        assert_eq!(serde_json::from_str::<Vec<Name>>(&json).unwrap(), names);
        let value = serde_json::to_value(&names).unwrap();
        assert_eq!(serde_json::from_value::<Vec<Name>>(value).unwrap(), names);
    }
}
