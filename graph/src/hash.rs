//! FNV-1a (64 bit): a hash that is fast on short names and the same in every process, on every
//! machine and in every build, unlike `std`'s randomly keyed default.
//!
//! The rules index names with it (one insert and a few probes per node and edge, where `std`'s
//! DoS-resistant hasher cost more than the checks themselves), the language's own name checks
//! too, and the runtime's topology fingerprint is this hash of the topology's text.

use std::hash::{BuildHasherDefault, Hasher};

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

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

/// A `HashMap`'s hasher builder for [`Fnv`]: `HashMap<&str, usize, FnvBuildHasher>`.
pub type FnvBuildHasher = BuildHasherDefault<Fnv>;
