//! The tree file (`ContainerChecksumTreeManager` writes and reads it): the encoding of a
//! [`ContainerChecksumInfo`], with a trailing CRC32C, and its decoding.
//!
//! **Why it matters (HDDS-16811).** The tree file is the only record of executed
//! deletions, and a peer's tree file decides what reconciliation pulls: a file that
//! decodes wrongly would restore deleted blocks. **So** every malformation (bad magic,
//! truncation, CRC mismatch, unordered ids, an impossible count or checksum) is a
//! [`TreeDecodeError`], never a panic nor a silently different tree.

use super::tree::{BlockMerkle, ChunkMerkle, ContainerChecksumInfo, ContainerMerkleTree};
use crate::hdds::ids::{ContainerId, LocalId};

/// Why bytes are not a tree file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeDecodeError {
    /// The file does not start with the tree file's magic.
    #[error("not a checksum tree file (bad magic)")]
    BadMagic,
    /// The file ends before a field it announces.
    #[error("truncated at byte {at}: {what} expected")]
    Truncated {
        /// Where the bytes ran out.
        at: usize,
        /// What was being read.
        what: &'static str,
    },
    /// The trailing CRC32C does not match the content.
    #[error("file checksum {stored:#010x} does not match content {computed:#010x}")]
    FileChecksumMismatch {
        /// What the file says.
        stored: u32,
        /// What its content hashes to.
        computed: u32,
    },
    /// A field has a value no writer produces.
    #[error("invalid {field}: {reason}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// Why.
        reason: String,
    },
    /// Bytes follow the end of the tree.
    #[error("{extra} byte(s) after the end of the tree")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
}

const MAGIC: &[u8; 8] = b"HRTREE01";

/// Encodes a tree file: magic, container id, optional root, blocks with their chunks, and
/// a trailing CRC32C of everything before it. Integers are big-endian.
pub fn encode(info: &ContainerChecksumInfo) -> Vec<u8> {
    let tree = &info.tree;
    let mut out = Vec::with_capacity(32 + tree.blocks.len() * 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&info.container.0.to_be_bytes());
    match tree.data_checksum {
        Some(root) => {
            out.push(1);
            out.extend_from_slice(&root.to_be_bytes());
        }
        None => out.push(0),
    }
    out.extend_from_slice(&(tree.blocks.len() as u64).to_be_bytes());
    for block in tree.blocks.values() {
        out.extend_from_slice(&block.local_id.to_be_bytes());
        out.extend_from_slice(&block.data_checksum.to_be_bytes());
        out.push(u8::from(block.deleted));
        out.extend_from_slice(&(block.chunks.len() as u64).to_be_bytes());
        for chunk in block.chunks.values() {
            out.extend_from_slice(&chunk.offset.to_be_bytes());
            out.extend_from_slice(&chunk.length.to_be_bytes());
            out.extend_from_slice(&chunk.data_checksum.to_be_bytes());
            out.push(u8::from(chunk.checksum_matches));
        }
    }
    let file_crc = crc32c::crc32c(&out);
    out.extend_from_slice(&file_crc.to_be_bytes());
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], TreeDecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(TreeDecodeError::Truncated { at: self.at, what })?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, TreeDecodeError> {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_be_bytes(buf))
    }

    fn flag(&mut self, what: &'static str) -> Result<bool, TreeDecodeError> {
        match self.take(1, what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(TreeDecodeError::Invalid {
                field: what,
                reason: format!("flag byte {other}"),
            }),
        }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// A count of items of at least `min_size` bytes each, refused if the rest of the
    /// file cannot hold that many (so a corrupt count cannot make us allocate).
    fn count(&mut self, what: &'static str, min_size: usize) -> Result<usize, TreeDecodeError> {
        let count = self.u64(what)?;
        let fits = self.remaining() / min_size;
        usize::try_from(count)
            .ok()
            .filter(|c| *c <= fits)
            .ok_or_else(|| TreeDecodeError::Invalid {
                field: what,
                reason: format!("{count} items cannot fit in {} bytes", self.remaining()),
            })
    }
}

/// Block ids and chunk offsets are stored strictly ascending: checks that `value` follows
/// `previous` and records it. `block` names the block of a chunk offset.
fn ascend(
    previous: &mut Option<u64>,
    value: u64,
    field: &'static str,
    block: Option<LocalId>,
) -> Result<(), TreeDecodeError> {
    if previous.is_some_and(|p| p >= value) {
        let within = block.map_or_else(|| "the container".to_owned(), |id| format!("block {id}"));
        return Err(TreeDecodeError::Invalid {
            field,
            reason: format!("{value} after {previous:?} in {within}: must ascend"),
        });
    }
    *previous = Some(value);
    Ok(())
}

fn checksum32(value: u64, field: &'static str) -> Result<u64, TreeDecodeError> {
    if value > u64::from(u32::MAX) {
        return Err(TreeDecodeError::Invalid {
            field,
            reason: format!("{value:#x} is not a zero-extended CRC32C"),
        });
    }
    Ok(value)
}

/// Decodes a tree file written by [`encode`]. Live block checksums are recomputed from
/// their chunks, as Ozone does on load; deleted entries keep their stored checksum and
/// must have no chunks. Any malformation is a [`TreeDecodeError`], never a panic.
pub fn decode(bytes: &[u8]) -> Result<ContainerChecksumInfo, TreeDecodeError> {
    let content = checked_content(bytes)?;
    let mut r = Reader {
        bytes: content,
        at: MAGIC.len(),
    };
    let container = ContainerId(r.u64("container id")?);
    let root = if r.flag("root present")? {
        Some(checksum32(r.u64("root")?, "root")?)
    } else {
        None
    };
    let block_count = r.count("block count", BLOCK_MIN_SIZE)?;
    let mut tree = ContainerMerkleTree::new();
    let mut previous: Option<LocalId> = None;
    for _ in 0..block_count {
        let block = decode_block(&mut r, &mut previous)?;
        tree.blocks.insert(block.local_id, block);
    }
    if r.remaining() > 0 {
        return Err(TreeDecodeError::TrailingBytes {
            extra: r.remaining(),
        });
    }
    tree.data_checksum = root;
    Ok(ContainerChecksumInfo { container, tree })
}

/// Bytes of a block entry without chunks: id, checksum, deleted flag, chunk count.
const BLOCK_MIN_SIZE: usize = 8 + 8 + 1 + 8;
/// Bytes of a chunk entry: offset, length, checksum, health flag.
const CHUNK_SIZE: usize = 8 + 8 + 8 + 1;

/// The content of a tree file (without its trailer, magic included), once the magic and
/// the trailing CRC32C are checked.
fn checked_content(bytes: &[u8]) -> Result<&[u8], TreeDecodeError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(TreeDecodeError::BadMagic);
    }
    if bytes.len() < MAGIC.len() + 4 {
        return Err(TreeDecodeError::Truncated {
            at: bytes.len(),
            what: "file checksum",
        });
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 4);
    let stored = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let computed = crc32c::crc32c(content);
    if stored != computed {
        return Err(TreeDecodeError::FileChecksumMismatch { stored, computed });
    }
    Ok(content)
}

/// One block entry with its chunks; its id must follow `previous`, which it becomes.
fn decode_block(
    r: &mut Reader<'_>,
    previous: &mut Option<LocalId>,
) -> Result<BlockMerkle, TreeDecodeError> {
    let id = r.u64("block id")?;
    ascend(previous, id, "block id", None)?;
    let stored = checksum32(r.u64("block checksum")?, "block checksum")?;
    let deleted = r.flag("deleted")?;
    let chunk_count = r.count("chunk count", CHUNK_SIZE)?;
    if deleted && chunk_count > 0 {
        return Err(TreeDecodeError::Invalid {
            field: "chunk count",
            reason: format!("deleted block {id} lists {chunk_count} chunk(s)"),
        });
    }
    let mut block = if deleted {
        BlockMerkle::deleted(id, stored)
    } else {
        BlockMerkle::live(id)
    };
    let mut previous_offset: Option<u64> = None;
    for _ in 0..chunk_count {
        let chunk = decode_chunk(r, id, &mut previous_offset)?;
        block.chunks.insert(chunk.offset, chunk);
    }
    if !deleted {
        block.recompute();
    }
    Ok(block)
}

/// One chunk entry of `block`; its offset must follow `previous`, which it becomes.
fn decode_chunk(
    r: &mut Reader<'_>,
    block: LocalId,
    previous: &mut Option<u64>,
) -> Result<ChunkMerkle, TreeDecodeError> {
    let offset = r.u64("chunk offset")?;
    ascend(previous, offset, "chunk offset", Some(block))?;
    let length = r.u64("chunk length")?;
    let data_checksum = checksum32(r.u64("chunk checksum")?, "chunk checksum")?;
    let checksum_matches = r.flag("chunk health")?;
    Ok(ChunkMerkle {
        offset,
        length,
        data_checksum,
        checksum_matches,
    })
}
