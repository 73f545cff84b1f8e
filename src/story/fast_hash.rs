//! A hasher for the small keys the recorder and the monitors look up at every event (a
//! call site's address, an event's name): a multiply-and-rotate over words, much cheaper
//! than the standard hasher, and good enough for keys no adversary picks.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map with [`FastHasher`]'s hash.
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The hasher (see the module's docs).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, value: usize) {
        // A usize is at most 64 bits on every target this crate builds for.
        self.add(value as u64);
    }
}
