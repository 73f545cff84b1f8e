//! The records of the container database, and the checks a record must pass to load.
//!
//! The database ([`super::db`]) holds three tables:
//!
//! | table | key | value |
//! |---|---|---|
//! | `meta` | `"state"`, `"last_delete_tx_id"`, `"data_checksum"`, `"bcsid"` | a state code (one byte), a big-endian `u64`, a big-endian `u64` (absent: no checksum), a big-endian `u64` (absent: no block committed) |
//! | `blocks` | the block's local id | its chunks: a count, then per chunk offset, length (`u64`), window size (`u32`), a count and the window checksums (`u32`) |
//! | `transactions` | the transaction id | the container id (`u64`), a count and the block ids (`u64`) |
//! | `deleted` | a deleted block's local id | its tree checksum (`u64`; the hardened `deletion_records_in_database`) |
//!
//! All integers are big-endian. A record that does not decode, or decodes to metadata no
//! committed batch produces (chunks out of offset order or past the addressable range, a
//! transaction of another container, trailing bytes), is
//! [`StoreError::CorruptMetadata`]: nothing loads a replica from it.

use super::super::store::{BlockData, ChunkInfo, StoreError};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, LocalId};

/// The state's code in the `meta` table.
pub(super) fn state_code(state: ContainerState) -> u8 {
    match state {
        ContainerState::Open => 1,
        ContainerState::Closing => 2,
        ContainerState::QuasiClosed => 3,
        ContainerState::Closed => 4,
        ContainerState::Unhealthy => 5,
        ContainerState::Invalid => 6,
        ContainerState::Deleted => 7,
        ContainerState::Recovering => 8,
    }
}

/// The state of a `meta` record.
pub(super) fn decode_state(bytes: &[u8]) -> Result<ContainerState, StoreError> {
    Ok(match bytes {
        [1] => ContainerState::Open,
        [2] => ContainerState::Closing,
        [3] => ContainerState::QuasiClosed,
        [4] => ContainerState::Closed,
        [5] => ContainerState::Unhealthy,
        [6] => ContainerState::Invalid,
        [7] => ContainerState::Deleted,
        [8] => ContainerState::Recovering,
        other => return Err(corrupt(format!("unknown state record {other:?}"))),
    })
}

/// A big-endian `u64` of a `meta` record.
pub(super) fn decode_u64(what: &str, bytes: &[u8]) -> Result<u64, StoreError> {
    <[u8; 8]>::try_from(bytes)
        .map(u64::from_be_bytes)
        .map_err(|_| corrupt(format!("{what}: {} byte(s), not 8", bytes.len())))
}

/// A block's record.
pub(super) fn encode_block(block: &BlockData) -> Vec<u8> {
    let mut out = Vec::new();
    put_u64(&mut out, block.chunks.len() as u64);
    for chunk in &block.chunks {
        put_u64(&mut out, chunk.offset);
        put_u64(&mut out, chunk.length);
        out.extend_from_slice(&chunk.bytes_per_checksum.to_be_bytes());
        put_u64(&mut out, chunk.checksums.len() as u64);
        for checksum in &chunk.checksums {
            out.extend_from_slice(&checksum.to_be_bytes());
        }
    }
    out
}

/// Block `id`'s metadata from its record: chunks in increasing offset order, none past
/// the addressable range.
pub(super) fn decode_block(id: LocalId, bytes: &[u8]) -> Result<BlockData, StoreError> {
    let what = format!("block {id}");
    let mut c = Cursor::new(bytes, &what);
    let mut chunks: Vec<ChunkInfo> = Vec::new();
    for _ in 0..c.count(28)? {
        let offset = c.u64()?;
        let length = c.u64()?;
        let bytes_per_checksum = c.u32()?;
        let checksums = (0..c.count(4)?)
            .map(|_| c.u32())
            .collect::<Result<Vec<_>, _>>()?;
        if offset.checked_add(length).is_none() {
            return Err(corrupt(format!(
                "{what}: chunk at {offset} of {length} bytes ends past the addressable range"
            )));
        }
        if chunks.last().is_some_and(|last| last.offset >= offset) {
            return Err(corrupt(format!(
                "{what}: chunk at {offset} listed twice or out of order"
            )));
        }
        chunks.push(ChunkInfo {
            offset,
            length,
            bytes_per_checksum,
            checksums,
        });
    }
    c.finish()?;
    Ok(BlockData::new(id, chunks))
}

/// A transaction's record.
pub(super) fn encode_transaction(tx: &DeletedBlocksTransaction) -> Vec<u8> {
    let mut out = Vec::new();
    put_u64(&mut out, tx.container.0);
    put_u64(&mut out, tx.local_ids.len() as u64);
    for id in &tx.local_ids {
        put_u64(&mut out, *id);
    }
    out
}

/// Transaction `tx_id` from its record, which must be `container`'s.
pub(super) fn decode_transaction(
    tx_id: u64,
    bytes: &[u8],
    container: ContainerId,
) -> Result<DeletedBlocksTransaction, StoreError> {
    let what = format!("transaction {tx_id}");
    let mut c = Cursor::new(bytes, &what);
    let owner = ContainerId(c.u64()?);
    let local_ids = (0..c.count(8)?)
        .map(|_| c.u64())
        .collect::<Result<Vec<_>, _>>()?;
    c.finish()?;
    if owner != container {
        return Err(corrupt(format!(
            "{what} belongs to container {owner}, not {container}"
        )));
    }
    Ok(DeletedBlocksTransaction {
        tx_id,
        container: owner,
        local_ids,
    })
}

fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_be_bytes());
}

/// Metadata that cannot be read back, and why.
pub(super) fn corrupt(reason: impl Into<String>) -> StoreError {
    StoreError::CorruptMetadata {
        reason: reason.into(),
    }
}

/// Reads one record, never past its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    what: &'a str,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8], what: &'a str) -> Self {
        Self { bytes, at: 0, what }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], StoreError> {
        let end = self
            .at
            .checked_add(N)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| corrupt(format!("{}: truncated at byte {}", self.what, self.at)))?;
        let mut buf = [0u8; N];
        buf.copy_from_slice(&self.bytes[self.at..end]);
        self.at = end;
        Ok(buf)
    }

    fn u64(&mut self) -> Result<u64, StoreError> {
        self.take::<8>().map(u64::from_be_bytes)
    }

    fn u32(&mut self) -> Result<u32, StoreError> {
        self.take::<4>().map(u32::from_be_bytes)
    }

    /// A count of items of at least `min_size` bytes that the rest of the record holds.
    fn count(&mut self, min_size: usize) -> Result<usize, StoreError> {
        let count = self.u64()?;
        let fits = (self.bytes.len() - self.at) / min_size.max(1);
        usize::try_from(count)
            .ok()
            .filter(|c| *c <= fits)
            .ok_or_else(|| corrupt(format!("{}: count {count} exceeds the record", self.what)))
    }

    /// The record must end here.
    fn finish(&self) -> Result<(), StoreError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(corrupt(format!("{}: trailing bytes", self.what)))
        }
    }
}
