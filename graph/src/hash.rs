//! FNV-1a (64 bit): a hash that is the same in every process, on every machine and in every
//! build — a specified algorithm, which no dependency's update can change.
//!
//! The runtime's topology fingerprint is this hash of the topology's text (checkpoints record
//! it), and a retry's jitter is drawn from it (a replay waits the same). Hash maps use
//! `rustc-hash`'s FxHash instead: faster, and nothing they hash is kept.

use std::hash::Hasher;

/// The FNV-1a hasher. `write` the bytes once to hash a text:
///
/// ```
/// use std::hash::Hasher;
/// let mut hasher = trellis_graph::Fnv::default();
/// hasher.write(b"a");
/// assert_eq!(hasher.finish(), 0xaf63_dc4c_8601_ec8c);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Fnv(Option<u64>);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0.unwrap_or(OFFSET_BASIS)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = self.finish();
        for &byte in bytes {
            hash = (hash ^ u64::from(byte)).wrapping_mul(PRIME);
        }
        self.0 = Some(hash);
    }
}

impl Fnv {
    /// FNV-1a of `text` as 16 hex digits: what checkpoints record as a graph's fingerprint.
    ///
    /// ```
    /// assert_eq!(trellis_graph::Fnv::hex("a"), "af63dc4c8601ec8c");
    /// ```
    pub fn hex(text: &str) -> String {
        let mut hasher = Fnv::default();
        hasher.write(text.as_bytes());
        format!("{:016x}", hasher.finish())
    }
}

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

#[cfg(test)]
mod tests {
    use super::Fnv;

    #[test]
    fn fnv1a_matches_the_reference_values() {
        // From the FNV reference (http://www.isthe.com/chongo/tech/comp/fnv/): fixed forever,
        // so checkpoints written by one build are recognised by the next.
        assert_eq!(Fnv::hex(""), "cbf29ce484222325");
        assert_eq!(Fnv::hex("a"), "af63dc4c8601ec8c");
        assert_eq!(Fnv::hex("foobar"), "85944171f73967e8");
    }
}
