//! The tree-file decoder on arbitrary bytes: a typed error or a tree that encodes back to
//! the same bytes, never a panic. (The fast suite's proptest runs the same property for a
//! bounded count.)
#![no_main]

use hadoop_ref::datanode::container::merkle;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(info) = merkle::decode(bytes) {
        assert_eq!(merkle::encode(&info), bytes, "a decoded tree encodes back");
    }
});
