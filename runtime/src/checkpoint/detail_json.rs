//! A checkpoint's detail written as JSON by hand, byte for byte what `serde_json` writes.
//!
//! Every checkpoint a durable store writes carries its detail; most of it is a few short
//! strings (node names, the fingerprint, the state's type name), which `serde_json` escapes
//! byte by byte through a table: ~2,900 instructions of a `loop_ckpt` step's ~37,000. Here a
//! string with nothing to escape (the usual case) is copied whole, and anything else, or any
//! field that is not a plain list or count, is left to `serde_json`. A test holds the output
//! to `serde_json`'s for details with every field filled and every character that needs it.

use super::{Detail, Name};

impl Detail<'_> {
    /// The detail as JSON, as `serde_json::to_string` writes it (and `Deserialize` reads it).
    ///
    /// # Errors
    /// A field `serde_json` fails to write (a send's input is a JSON value already, so none in
    /// practice).
    pub(crate) fn to_json(&self) -> Result<String, serde_json::Error> {
        let mut out = String::with_capacity(256);
        out.push_str("{\"nodes\":");
        strings(&mut out, &self.nodes)?;
        out.push_str(",\"frontier\":");
        strings(&mut out, &self.frontier)?;
        out.push_str(",\"visits\":{");
        for (at, (node, count)) in self.visits.iter().enumerate() {
            if at > 0 {
                out.push(',');
            }
            string(&mut out, node)?;
            out.push(':');
            count_into(&mut out, *count);
        }
        out.push_str("},\"approved\":");
        strings(&mut out, &self.approved)?;
        out.push_str(",\"failures\":");
        if self.failures.is_empty() {
            out.push_str("[]");
        } else {
            out.push_str(&serde_json::to_string(&*self.failures)?);
        }
        // As `skip_serializing_if` on the derive: left out when empty.
        optional(
            &mut out,
            "interrupts",
            self.interrupts.is_empty(),
            &*self.interrupts,
        )?;
        optional(&mut out, "joins", self.joins.is_empty(), &*self.joins)?;
        optional(&mut out, "sends", self.sends.is_empty(), &*self.sends)?;
        optional(
            &mut out,
            "children",
            self.children.is_empty(),
            &*self.children,
        )?;
        optional(&mut out, "pending", self.pending.is_empty(), &*self.pending)?;
        out.push_str(",\"graph_fingerprint\":");
        string(&mut out, &self.graph_fingerprint)?;
        out.push_str(",\"state_type\":");
        string(&mut out, &self.state_type)?;
        out.push('}');
        Ok(out)
    }
}

/// `,"name":value` by `serde_json`, unless the field is `empty`.
fn optional(
    out: &mut String,
    name: &str,
    empty: bool,
    value: &(impl serde::Serialize + ?Sized),
) -> Result<(), serde_json::Error> {
    if !empty {
        out.push_str(",\"");
        out.push_str(name);
        out.push_str("\":");
        out.push_str(&serde_json::to_string(value)?);
    }
    Ok(())
}

/// `["a","b"]`.
fn strings(out: &mut String, list: &[Name]) -> Result<(), serde_json::Error> {
    out.push('[');
    for (at, item) in list.iter().enumerate() {
        if at > 0 {
            out.push(',');
        }
        string(out, item)?;
    }
    out.push(']');
    Ok(())
}

/// `"text"`, escaped by `serde_json` only when it has a byte that needs it (the ones its
/// table escapes: control characters, `"` and `\`).
fn string(out: &mut String, text: &str) -> Result<(), serde_json::Error> {
    // Without branches, so that it is checked many bytes at a time.
    let needs_escape = text.bytes().fold(false, |any, byte| {
        any | (byte < 0x20) | (byte == b'"') | (byte == b'\\')
    });
    if needs_escape {
        out.push_str(&serde_json::to_string(text)?);
    } else {
        out.push('"');
        out.push_str(text);
        out.push('"');
    }
    Ok(())
}

/// A count in decimal, as `serde_json` writes an unsigned number.
fn count_into(out: &mut String, mut count: u32) {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    loop {
        start -= 1;
        // The remainder is below 10: the cast cannot truncate.
        digits[start] = b'0' + (count % 10) as u8;
        count /= 10;
        if count == 0 {
            break;
        }
    }
    // ASCII digits: always UTF-8.
    if let Ok(text) = std::str::from_utf8(&digits[start..]) {
        out.push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::BTreeMap;

    use super::*;
    use crate::checkpoint::conformance::sample_checkpoint;
    use crate::id::RunId;

    fn same_as_serde(detail: &Detail<'_>) {
        let ours = detail.to_json().unwrap();
        assert_eq!(ours, serde_json::to_string(detail).unwrap());
        // And read back as the store reads it.
        let read: Detail<'static> = serde_json::from_str(&ours).unwrap();
        assert_eq!(serde_json::to_string(&read).unwrap(), ours);
    }

    #[test]
    fn a_plain_step_s_detail_is_written_as_serde_json_writes_it() {
        let nodes = vec![Name::from("model")];
        let frontier = vec![Name::from("tools")];
        let visits = BTreeMap::from([
            (Name::from("model"), 100),
            (Name::from("tools"), 4_294_967_295),
        ]);
        same_as_serde(&Detail {
            nodes: Cow::Borrowed(&nodes),
            frontier: Cow::Borrowed(&frontier),
            visits: Cow::Borrowed(&visits),
            approved: Cow::Borrowed(&[]),
            failures: Cow::Borrowed(&[]),
            interrupts: Cow::Borrowed(&[]),
            joins: Cow::Owned(BTreeMap::new()),
            sends: Cow::Borrowed(&[]),
            children: Cow::Owned(BTreeMap::new()),
            pending: Cow::Borrowed(&[]),
            graph_fingerprint: Cow::Owned(Name::from("9f2c4e1a7b3d5c60")),
            state_type: Cow::Owned(Name::from("bench::Counter")),
        });
    }

    #[test]
    fn every_field_and_every_character_to_escape_is_written_as_serde_json_writes_it() {
        // The conformance suite's: every field of the detail filled.
        let mut checkpoint = sample_checkpoint(&RunId::from("r".to_owned()), 1);
        let awkward = "quote \" backslash \\ tab \t newline \n bell \u{7} del \u{7f} ü😀";
        checkpoint.nodes.push(awkward.into());
        checkpoint.frontier.push(Name::default());
        checkpoint.visits.insert(awkward.into(), 0);
        checkpoint.visits.insert("9".into(), 9);
        checkpoint.visits.insert("10".into(), 10);
        checkpoint.approved.push(awkward.into());
        checkpoint.graph_fingerprint = awkward.into();
        checkpoint.state_type = "a::B<\"c\">".into();
        same_as_serde(&Detail::of(&checkpoint));
    }
}
