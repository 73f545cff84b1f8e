//! A replica's database file damaged by arbitrary bytes: opening the replica loads it or
//! is a typed error, never a panic. The input is an offset (4 bytes), then the bytes
//! written over a valid database file there.
//!
//! redb panics on some damaged files; the store catches that and returns a typed error.
//! libFuzzer's panic hook would abort on a caught panic too, so this target installs a
//! silent hook: a panic that escapes the store still unwinds out of the target, which
//! libfuzzer-sys turns into an abort, a crash.
#![no_main]

use std::fs;

use hadoop_ref::datanode::container::disk::DiskStore;
use hadoop_ref::datanode::container::store::{BlockData, ChunkInfo, ContainerStore, MetadataBatch};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::ContainerId;
use libfuzzer_sys::fuzz_target;

const CONTAINER: ContainerId = ContainerId(1);

/// A closed replica with two blocks, closed again so that its database file is whole.
fn valid_database(dir: &std::path::Path) -> Vec<u8> {
    let store = DiskStore::open(dir, CONTAINER, ContainerState::Closed).expect("create");
    let path = store.database_path();
    let blocks = (1..3u64)
        .map(|id| BlockData::new(id, [ChunkInfo::for_data(0, &[id as u8; 8], 4)]))
        .collect();
    store
        .commit(MetadataBatch {
            put_blocks: blocks,
            ..MetadataBatch::default()
        })
        .expect("commit");
    drop(store);
    fs::read(path).expect("read back")
}

fuzz_target!(|input: &[u8]| {
    std::panic::set_hook(Box::new(|_| {}));
    let Some((offset, with)) = input.split_first_chunk::<4>() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut bytes = valid_database(dir.path());
    let at = u32::from_le_bytes(*offset) as usize % bytes.len().max(1);
    for (slot, byte) in bytes.iter_mut().skip(at).zip(with) {
        *slot = *byte;
    }
    let path = dir.path().join("metadata").join("container.db");
    fs::write(&path, &bytes).expect("damage");
    let _ = DiskStore::open_existing(dir.path(), CONTAINER);
});
