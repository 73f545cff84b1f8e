//! The container database (Ozone keeps a container's block metadata and delete
//! transactions in RocksDB) on [redb](https://docs.rs/redb): an embedded, pure-Rust
//! B-tree store whose write transactions are atomic and, committed with its default
//! `Durability::Immediate`, persistent once `commit` returns; a crash leaves the last
//! committed transaction. Chosen over fjall (an LSM tree, closer to RocksDB's model)
//! because one replica's metadata is small and read whole on open, a commit touches a few
//! keys, and redb adds one dependency (`libc`) to the build; its records are in
//! `disk/codec.rs`.
//!
//! A commit writes only the keys its batch changes, so its cost does not grow with the
//! container (`benches/disk_commit.rs`). redb locks its file for one open `Database` per
//! process; a [`DatabaseRegistry`] hands every store of one replica the same `Database`,
//! so that a datanode restarting while an old handle lives on reopens rather than fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use super::super::store::{Metadata, MetadataBatch, StoreError};
use super::codec::{
    corrupt, decode_block, decode_state, decode_transaction, decode_u64, encode_block,
    encode_transaction, state_code,
};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::ContainerId;
use crate::sync::{Arc, Mutex, Weak};

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const BLOCKS: TableDefinition<u64, &[u8]> = TableDefinition::new("blocks");
const TRANSACTIONS: TableDefinition<u64, &[u8]> = TableDefinition::new("transactions");
const DELETED: TableDefinition<u64, u64> = TableDefinition::new("deleted");
const STATE: &str = "state";
const LAST_DELETE_TX_ID: &str = "last_delete_tx_id";
const DATA_CHECKSUM: &str = "data_checksum";
const BCSID: &str = "bcsid";

/// A redb failure on the database at `path`: an I/O failure is [`StoreError::Io`], a
/// file redb cannot read (damaged, or not a database) [`StoreError::CorruptMetadata`].
fn failure(path: &Path, error: impl Into<redb::Error>) -> StoreError {
    match error.into() {
        // redb reports a file that is not a database (bad magic, short) as invalid data.
        redb::Error::Io(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
            ) =>
        {
            corrupt(format!("{}: {e}", path.display()))
        }
        redb::Error::Io(e) => StoreError::Io {
            what: path.display().to_string(),
            reason: e.to_string(),
        },
        redb::Error::DatabaseAlreadyOpen => StoreError::Io {
            what: path.display().to_string(),
            reason: "the database is open in another store".into(),
        },
        redb::Error::TableDoesNotExist(table) => {
            corrupt(format!("{}: no table {table}", path.display()))
        }
        other => corrupt(format!("{}: {other}", path.display())),
    }
}

/// Runs `open` on the database at `path`, turning a panic into
/// [`StoreError::CorruptMetadata`]: redb 4.6 can panic reading a damaged file (an
/// `unwrap` on its allocator state, found by `damaged_database_files_never_panic_the_loader`),
/// and a damaged file is input, not a bug of the caller. Whatever the panic left behind
/// is dropped with it.
fn survive_damage<T>(
    path: &Path,
    open: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(open)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        Err(corrupt(format!(
            "{}: the database failed reading it: {message}",
            path.display()
        )))
    })
}

/// A shared redb `Database`, dropped where a panic is caught: closing a database whose
/// file was damaged can panic in redb 4.6 too (an assertion on its allocator state,
/// found by the same proptest), and the last store of a replica closes it.
#[derive(Debug)]
struct Closing(Option<Arc<Database>>);

impl Closing {
    fn get(&self) -> &Database {
        match &self.0 {
            Some(db) => db,
            None => unreachable!("the database is taken only when it is dropped"),
        }
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        if let Some(db) = self.0.take() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(db)));
        }
    }
}

/// One replica's database.
#[derive(Debug)]
pub(super) struct ContainerDb {
    db: Closing,
    path: PathBuf,
    container: ContainerId,
}

impl ContainerDb {
    /// Creates the database at `path` (which must not exist) for a replica of `container`
    /// in `state`, its tables and first records in one durable transaction.
    pub(super) fn create(
        path: &Path,
        container: ContainerId,
        state: ContainerState,
        registry: Option<&DatabaseRegistry>,
    ) -> Result<(Self, Metadata), StoreError> {
        let create = || {
            Database::create(path)
                .map(Arc::new)
                .map_err(|e| failure(path, e))
        };
        let db = match registry {
            Some(registry) => registry.open_new(container, create)?,
            None => create()?,
        };
        let store = Self {
            db: Closing(Some(db)),
            path: path.to_owned(),
            container,
        };
        let initial = Metadata::new(state);
        store.write(|t| {
            t.meta.insert(STATE, [state_code(state)].as_slice())?;
            t.meta
                .insert(LAST_DELETE_TX_ID, 0u64.to_be_bytes().as_slice())?;
            Ok(())
        })?;
        Ok((store, initial))
    }

    /// Opens the existing database at `path` of a replica of `container` (through
    /// `registry` when given) and loads it.
    pub(super) fn open(
        path: &Path,
        container: ContainerId,
        registry: Option<&DatabaseRegistry>,
    ) -> Result<(Self, Metadata), StoreError> {
        let open = || {
            Database::open(path)
                .map(Arc::new)
                .map_err(|e| failure(path, e))
        };
        survive_damage(path, || {
            let db = match registry {
                Some(registry) => registry.get_or_open(container, open)?,
                None => open()?,
            };
            let store = Self {
                db: Closing(Some(db)),
                path: path.to_owned(),
                container,
            };
            let metadata = store.load()?;
            Ok((store, metadata))
        })
    }

    /// Maps a redb failure of this database ([`failure`]).
    fn fail<E: Into<redb::Error>>(&self) -> impl FnOnce(E) -> StoreError + '_ {
        move |error| failure(&self.path, error)
    }

    /// Every record, checked (`disk/codec.rs`).
    fn load(&self) -> Result<Metadata, StoreError> {
        let read = self.db.get().begin_read().map_err(self.fail())?;
        let meta = read.open_table(META).map_err(self.fail())?;
        let record = |key: &str| -> Result<Option<Vec<u8>>, StoreError> {
            Ok(meta
                .get(key)
                .map_err(self.fail())?
                .map(|v| v.value().to_vec()))
        };
        let state = record(STATE)?.ok_or_else(|| corrupt("no state record"))?;
        let mut metadata = Metadata::new(decode_state(&state)?);
        let last = record(LAST_DELETE_TX_ID)?.ok_or_else(|| corrupt("no last transaction id"))?;
        metadata.last_delete_tx_id = decode_u64(LAST_DELETE_TX_ID, &last)?;
        metadata.data_checksum = record(DATA_CHECKSUM)?
            .map(|bytes| decode_u64(DATA_CHECKSUM, &bytes))
            .transpose()?;
        // Absent in a replica that never committed a block.
        metadata.bcsid = record(BCSID)?
            .map(|bytes| decode_u64(BCSID, &bytes))
            .transpose()?
            .unwrap_or(0);
        for entry in read
            .open_table(BLOCKS)
            .map_err(self.fail())?
            .iter()
            .map_err(self.fail())?
        {
            let (id, bytes) = entry.map_err(self.fail())?;
            let block = decode_block(id.value(), bytes.value())?;
            metadata.blocks.insert(block.local_id, block);
        }
        for entry in read
            .open_table(TRANSACTIONS)
            .map_err(self.fail())?
            .iter()
            .map_err(self.fail())?
        {
            let (id, bytes) = entry.map_err(self.fail())?;
            let tx = decode_transaction(id.value(), bytes.value(), self.container)?;
            metadata.transactions.insert(tx.tx_id, tx);
        }
        for entry in read
            .open_table(DELETED)
            .map_err(self.fail())?
            .iter()
            .map_err(self.fail())?
        {
            let (id, checksum) = entry.map_err(self.fail())?;
            metadata.deleted.insert(id.value(), checksum.value());
        }
        Ok(metadata)
    }

    /// Applies `batch` in one durable transaction: only the keys it changes are written,
    /// with the block commit sequence id the batch raises the replica's to (`bcsid`).
    pub(super) fn commit(
        &self,
        batch: &MetadataBatch,
        bcsid: Option<u64>,
    ) -> Result<(), StoreError> {
        self.write(|t| {
            if let Some(bcsid) = bcsid {
                t.meta.insert(BCSID, bcsid.to_be_bytes().as_slice())?;
            }
            for block in &batch.put_blocks {
                t.blocks
                    .insert(block.local_id, encode_block(block).as_slice())?;
            }
            for id in &batch.delete_blocks {
                t.blocks.remove(*id)?;
            }
            for tx in &batch.put_transactions {
                t.transactions
                    .insert(tx.tx_id, encode_transaction(tx).as_slice())?;
            }
            for id in &batch.delete_transactions {
                t.transactions.remove(*id)?;
            }
            for (id, checksum) in &batch.put_deleted {
                t.deleted.insert(*id, *checksum)?;
            }
            if let Some(last) = batch.last_delete_tx_id {
                t.meta
                    .insert(LAST_DELETE_TX_ID, last.to_be_bytes().as_slice())?;
            }
            if let Some(checksum) = batch.data_checksum {
                t.meta
                    .insert(DATA_CHECKSUM, checksum.to_be_bytes().as_slice())?;
            }
            if let Some(state) = batch.state {
                t.meta.insert(STATE, [state_code(state)].as_slice())?;
            }
            Ok(())
        })
    }

    /// One write transaction over the tables, committed if `apply` succeeds.
    fn write(
        &self,
        apply: impl FnOnce(&mut Tables<'_>) -> Result<(), redb::StorageError>,
    ) -> Result<(), StoreError> {
        let txn = self.db.get().begin_write().map_err(self.fail())?;
        {
            let mut tables = Tables {
                meta: txn.open_table(META).map_err(self.fail())?,
                blocks: txn.open_table(BLOCKS).map_err(self.fail())?,
                transactions: txn.open_table(TRANSACTIONS).map_err(self.fail())?,
                deleted: txn.open_table(DELETED).map_err(self.fail())?,
            };
            apply(&mut tables).map_err(self.fail())?;
        }
        txn.commit().map_err(self.fail())
    }
}

/// The tables of one write transaction.
struct Tables<'txn> {
    meta: redb::Table<'txn, &'static str, &'static [u8]>,
    blocks: redb::Table<'txn, u64, &'static [u8]>,
    transactions: redb::Table<'txn, u64, &'static [u8]>,
    deleted: redb::Table<'txn, u64, u64>,
}

/// The open databases of one volume's replicas, by container: redb allows one open
/// `Database` per file in a process, so every store of a replica shares one.
#[derive(Debug, Clone, Default)]
pub struct DatabaseRegistry {
    open: Arc<Mutex<BTreeMap<ContainerId, Weak<Database>>>>,
}

impl DatabaseRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The database of `container` another store has open, or a new one from `open`.
    fn get_or_open(
        &self,
        container: ContainerId,
        open: impl FnOnce() -> Result<Arc<Database>, StoreError>,
    ) -> Result<Arc<Database>, StoreError> {
        let mut databases = self.open.lock();
        if let Some(db) = databases.get(&container).and_then(Weak::upgrade) {
            return Ok(db);
        }
        let db = open()?;
        databases.insert(container, Arc::downgrade(&db));
        Ok(db)
    }

    /// A new database for `container` from `create`, in place of any other.
    fn open_new(
        &self,
        container: ContainerId,
        create: impl FnOnce() -> Result<Arc<Database>, StoreError>,
    ) -> Result<Arc<Database>, StoreError> {
        let mut databases = self.open.lock();
        let db = create()?;
        databases.insert(container, Arc::downgrade(&db));
        Ok(db)
    }

    /// Forgets `container`'s database (its replica was removed): a replica made later
    /// under the same id opens its own.
    pub fn forget(&self, container: ContainerId) {
        self.open.lock().remove(&container);
    }
}
