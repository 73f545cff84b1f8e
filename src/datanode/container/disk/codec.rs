//! The container database file: its encoding, and the checks a file must pass to load.
//!
//! One file holds the container state, the last delete transaction id, the data checksum,
//! every block's metadata and every pending delete transaction, followed by a CRC32C of
//! all of it. A file that does not decode, or decodes to metadata no committed batch can
//! produce (a block or transaction listed twice or out of id order, a transaction of
//! another container, a chunk past the end of a block file's addressable range), is
//! [`StoreError::CorruptMetadata`]: nothing loads a replica from it.

use super::super::store::{BlockData, ChunkInfo, Metadata, StoreError};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::container::ContainerState;
use crate::hdds::ids::ContainerId;

const DB_MAGIC: &[u8; 8] = b"HRMETA01";

fn state_code(state: ContainerState) -> u8 {
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

fn state_of(code: u8) -> Option<ContainerState> {
    Some(match code {
        1 => ContainerState::Open,
        2 => ContainerState::Closing,
        3 => ContainerState::QuasiClosed,
        4 => ContainerState::Closed,
        5 => ContainerState::Unhealthy,
        6 => ContainerState::Invalid,
        7 => ContainerState::Deleted,
        8 => ContainerState::Recovering,
        _ => return None,
    })
}

pub(super) fn encode_metadata(m: &Metadata) -> Vec<u8> {
    let mut out = DB_MAGIC.to_vec();
    let u64s = |out: &mut Vec<u8>, v: u64| out.extend_from_slice(&v.to_be_bytes());
    out.push(state_code(m.state));
    u64s(&mut out, m.last_delete_tx_id);
    match m.data_checksum {
        Some(c) => {
            out.push(1);
            u64s(&mut out, c);
        }
        None => out.push(0),
    }
    u64s(&mut out, m.blocks.len() as u64);
    for block in m.blocks.values() {
        u64s(&mut out, block.local_id);
        u64s(&mut out, block.chunks.len() as u64);
        for chunk in &block.chunks {
            u64s(&mut out, chunk.offset);
            u64s(&mut out, chunk.length);
            out.extend_from_slice(&chunk.bytes_per_checksum.to_be_bytes());
            u64s(&mut out, chunk.checksums.len() as u64);
            for c in &chunk.checksums {
                out.extend_from_slice(&c.to_be_bytes());
            }
        }
    }
    u64s(&mut out, m.transactions.len() as u64);
    for tx in m.transactions.values() {
        u64s(&mut out, tx.tx_id);
        u64s(&mut out, tx.container.0);
        u64s(&mut out, tx.local_ids.len() as u64);
        for id in &tx.local_ids {
            u64s(&mut out, *id);
        }
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

fn corrupt(reason: impl Into<String>) -> StoreError {
    StoreError::CorruptMetadata {
        reason: reason.into(),
    }
}

impl Cursor<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], StoreError> {
        let end = self
            .at
            .checked_add(N)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| corrupt(format!("truncated at byte {}", self.at)))?;
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

    fn u8(&mut self) -> Result<u8, StoreError> {
        self.take::<1>().map(|b| b[0])
    }

    /// A count of items of at least `min_size` bytes that the rest of the file can hold.
    fn count(&mut self, min_size: usize) -> Result<usize, StoreError> {
        let count = self.u64()?;
        let fits = (self.bytes.len() - self.at) / min_size.max(1);
        usize::try_from(count)
            .ok()
            .filter(|c| *c <= fits)
            .ok_or_else(|| corrupt(format!("count {count} exceeds the file")))
    }
}

pub(super) fn decode_metadata(
    bytes: &[u8],
    container: ContainerId,
) -> Result<Metadata, StoreError> {
    if bytes.len() < DB_MAGIC.len() + 4 || &bytes[..DB_MAGIC.len()] != DB_MAGIC {
        return Err(corrupt("not a container database file"));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    if stored != crc32c::crc32c(content) {
        return Err(corrupt("file checksum mismatch"));
    }
    let mut c = Cursor {
        bytes: content,
        at: DB_MAGIC.len(),
    };
    let state = state_of(c.u8()?).ok_or_else(|| corrupt("unknown state"))?;
    let mut m = Metadata::new(state);
    m.last_delete_tx_id = c.u64()?;
    m.data_checksum = match c.u8()? {
        0 => None,
        1 => Some(c.u64()?),
        other => return Err(corrupt(format!("flag byte {other}"))),
    };
    for _ in 0..c.count(16)? {
        let block = decode_block(&mut c)?;
        if m.blocks
            .keys()
            .next_back()
            .is_some_and(|last| *last >= block.local_id)
        {
            return Err(corrupt(format!(
                "block {} listed twice or out of order",
                block.local_id
            )));
        }
        m.blocks.insert(block.local_id, block);
    }
    for _ in 0..c.count(24)? {
        let tx = decode_transaction(&mut c, container)?;
        if m.transactions
            .keys()
            .next_back()
            .is_some_and(|last| *last >= tx.tx_id)
        {
            return Err(corrupt(format!(
                "transaction {} listed twice or out of order",
                tx.tx_id
            )));
        }
        m.transactions.insert(tx.tx_id, tx);
    }
    if c.at != content.len() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(m)
}

/// One block's metadata: its chunks in increasing offset order, none past `u64::MAX`.
fn decode_block(c: &mut Cursor<'_>) -> Result<BlockData, StoreError> {
    let id = c.u64()?;
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
                "block {id}: chunk at {offset} of {length} bytes ends past the addressable range"
            )));
        }
        if chunks.last().is_some_and(|last| last.offset >= offset) {
            return Err(corrupt(format!(
                "block {id}: chunk at {offset} listed twice or out of order"
            )));
        }
        chunks.push(ChunkInfo {
            offset,
            length,
            bytes_per_checksum,
            checksums,
        });
    }
    Ok(BlockData::new(id, chunks))
}

/// One pending delete transaction, which must be `container`'s.
fn decode_transaction(
    c: &mut Cursor<'_>,
    container: ContainerId,
) -> Result<DeletedBlocksTransaction, StoreError> {
    let tx_id = c.u64()?;
    let owner = ContainerId(c.u64()?);
    let local_ids = (0..c.count(8)?)
        .map(|_| c.u64())
        .collect::<Result<Vec<_>, _>>()?;
    if owner != container {
        return Err(corrupt(format!(
            "transaction {tx_id} belongs to container {owner}, not {container}"
        )));
    }
    Ok(DeletedBlocksTransaction {
        tx_id,
        container: owner,
        local_ids,
    })
}
