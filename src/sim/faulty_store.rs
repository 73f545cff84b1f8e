//! The one fault-injecting storage of the simulation: [`FaultyStore`] wraps any
//! [`ContainerStore`] and, at named operations ([`StoreOp`]), fails a call or runs a hook
//! once after it succeeded: a failed unlink, a failed tree write, a deletion that lands
//! right after a repair finished its writes.
//!
//! Crash points of a replica on disk are below the store, in its file system
//! ([`CrashFs`](super::crash_fs::CrashFs)).
//!
//! Its rules sit behind a facade lock, taken up to twice per call: under loom or shuttle
//! each call adds scheduling points. It serves deterministic tests; a checker scenario that
//! needs a fault at a point of its schedule uses a [`ScriptedPeer`](super::peers::ScriptedPeer)
//! hook instead.
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::datanode::container::store::{ContainerStore, MemoryStore};
//! use hadoop_ref::hdds::container::ContainerState;
//! use hadoop_ref::sim::faulty_store::{FaultyStore, StoreOp};
//!
//! let faulty = FaultyStore::new(MemoryStore::new(ContainerState::Closed).shared());
//! faulty.fail(StoreOp::WriteTreeFile);
//! assert!(faulty.write_tree_file(b"tree").is_err());
//! faulty.clear();
//! assert!(faulty.write_tree_file(b"tree").is_ok());
//! # Ok::<(), std::convert::Infallible>(())
//! # });
//! ```

use std::collections::BTreeMap;
use std::fmt;

use crate::datanode::container::store::{
    BlockData, ContainerStore, MetadataBatch, MetadataSummary, Recovery, StoreError,
};
use crate::hdds::command::DeletedBlocksTransaction;
use crate::hdds::ids::LocalId;
use crate::sync::{Arc, Mutex, arc_from_box};

/// The operations of a [`ContainerStore`], by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreOp {
    /// [`ContainerStore::write_chunk`].
    WriteChunk,
    /// [`ContainerStore::finish_write`].
    FinishWrite,
    /// [`ContainerStore::read_block`].
    ReadBlock,
    /// [`ContainerStore::block_file_len`].
    BlockFileLen,
    /// [`ContainerStore::delete_block_file`].
    DeleteBlockFile,
    /// [`ContainerStore::truncate_block_file`].
    TruncateBlockFile,
    /// [`ContainerStore::block_files`].
    BlockFiles,
    /// [`ContainerStore::get_block`].
    GetBlock,
    /// [`ContainerStore::blocks`].
    Blocks,
    /// [`ContainerStore::deleted_blocks`] and [`ContainerStore::deletion_recorded`].
    DeletedBlocks,
    /// [`ContainerStore::pending_transactions`].
    PendingTransactions,
    /// [`ContainerStore::transaction`].
    Transaction,
    /// [`ContainerStore::summary`].
    Summary,
    /// [`ContainerStore::commit`].
    Commit,
    /// [`ContainerStore::read_tree_file`].
    ReadTreeFile,
    /// [`ContainerStore::write_tree_file`].
    WriteTreeFile,
}

/// One call as the rules see it: the operation and, for a block file or block metadata
/// operation, the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreCall {
    /// The operation.
    pub op: StoreOp,
    /// The block it touches, if it touches one.
    pub block: Option<LocalId>,
}

type Predicate = Box<dyn Fn(&StoreCall) -> bool + Send>;
type Hook = Box<dyn FnOnce() + Send>;

enum Rule {
    /// Fail the call while the predicate holds.
    FailWhen(StoreOp, Predicate),
    /// Run the hook once, after the next successful call.
    AfterOnce(StoreOp, Hook),
}

/// A [`ContainerStore`] with injected failures and hooks. Clones share their rules: hand
/// one to the replica and steer it through another.
#[derive(Clone)]
pub struct FaultyStore {
    inner: Arc<dyn ContainerStore>,
    rules: Arc<Mutex<Vec<Rule>>>,
}

impl fmt::Debug for FaultyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultyStore")
            .field("inner", &self.inner)
            .field("rules", &self.rules.lock().len())
            .finish()
    }
}

impl FaultyStore {
    /// `inner` with no rule: every call passes through.
    pub fn new(inner: Arc<dyn ContainerStore>) -> Self {
        Self {
            inner,
            rules: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// A clone as the `Arc<dyn ContainerStore>` a replica takes.
    pub fn shared(&self) -> Arc<dyn ContainerStore> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ContainerStore>)
    }

    /// Fails every call of `op` with an injected I/O error, until [`clear`](Self::clear).
    pub fn fail(&self, op: StoreOp) {
        self.fail_when(op, |_| true);
    }

    /// Fails a call of `op` while `when` holds for it. `when` runs with the rules locked:
    /// it may read the inner store, not this one.
    pub fn fail_when(&self, op: StoreOp, when: impl Fn(&StoreCall) -> bool + Send + 'static) {
        self.rules.lock().push(Rule::FailWhen(op, Box::new(when)));
    }

    /// Runs `hook` once, right after the next call of `op` that succeeded. The hook runs
    /// with no lock of this store held, so it may call the store again.
    pub fn after_once(&self, op: StoreOp, hook: impl FnOnce() + Send + 'static) {
        self.rules.lock().push(Rule::AfterOnce(op, Box::new(hook)));
    }

    /// Removes every rule.
    pub fn clear(&self) {
        self.rules.lock().clear();
    }

    fn call<T>(
        &self,
        op: StoreOp,
        block: Option<LocalId>,
        run: impl FnOnce(&dyn ContainerStore) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let call = StoreCall { op, block };
        let fails = self
            .rules
            .lock()
            .iter()
            .any(|rule| matches!(rule, Rule::FailWhen(on, when) if *on == op && when(&call)));
        if fails {
            return Err(StoreError::Io {
                what: format!(
                    "{op:?}{}",
                    block.map_or(String::new(), |b| format!(" of block {b}"))
                ),
                reason: "injected failure".into(),
            });
        }
        let result = run(&*self.inner)?;
        if let Some(hook) = self.take_hook(op) {
            hook();
        }
        Ok(result)
    }

    fn take_hook(&self, op: StoreOp) -> Option<Hook> {
        let mut rules = self.rules.lock();
        let index = rules
            .iter()
            .position(|rule| matches!(rule, Rule::AfterOnce(on, _) if *on == op))?;
        match rules.remove(index) {
            Rule::AfterOnce(_, hook) => Some(hook),
            Rule::FailWhen(..) => None,
        }
    }
}

impl ContainerStore for FaultyStore {
    fn recover_on_open(&self) -> Result<Recovery, StoreError> {
        self.inner.recover_on_open()
    }
    fn write_chunk(&self, block: LocalId, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        self.call(StoreOp::WriteChunk, Some(block), |s| {
            s.write_chunk(block, offset, data)
        })
    }
    fn finish_write(&self, block: LocalId) -> Result<(), StoreError> {
        self.call(StoreOp::FinishWrite, Some(block), |s| s.finish_write(block))
    }
    fn read_block(
        &self,
        block: LocalId,
        offset: u64,
        len: u64,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.call(StoreOp::ReadBlock, Some(block), |s| {
            s.read_block(block, offset, len)
        })
    }
    fn block_file_len(&self, block: LocalId) -> Result<Option<u64>, StoreError> {
        self.call(StoreOp::BlockFileLen, Some(block), |s| {
            s.block_file_len(block)
        })
    }
    fn delete_block_file(&self, block: LocalId) -> Result<bool, StoreError> {
        self.call(StoreOp::DeleteBlockFile, Some(block), |s| {
            s.delete_block_file(block)
        })
    }
    fn truncate_block_file(&self, block: LocalId, len: u64) -> Result<(), StoreError> {
        self.call(StoreOp::TruncateBlockFile, Some(block), |s| {
            s.truncate_block_file(block, len)
        })
    }
    fn block_files(&self) -> Result<Vec<LocalId>, StoreError> {
        self.call(StoreOp::BlockFiles, None, |s| s.block_files())
    }
    fn get_block(&self, block: LocalId) -> Result<Option<BlockData>, StoreError> {
        self.call(StoreOp::GetBlock, Some(block), |s| s.get_block(block))
    }
    fn blocks(&self) -> Result<Vec<BlockData>, StoreError> {
        self.call(StoreOp::Blocks, None, |s| s.blocks())
    }
    fn deleted_blocks(&self) -> Result<BTreeMap<LocalId, u64>, StoreError> {
        self.call(StoreOp::DeletedBlocks, None, |s| s.deleted_blocks())
    }
    fn deletion_recorded(&self, block: LocalId) -> Result<bool, StoreError> {
        self.call(StoreOp::DeletedBlocks, Some(block), |s| {
            s.deletion_recorded(block)
        })
    }
    fn pending_transactions(
        &self,
        block_budget: usize,
    ) -> Result<Vec<DeletedBlocksTransaction>, StoreError> {
        self.call(StoreOp::PendingTransactions, None, |s| {
            s.pending_transactions(block_budget)
        })
    }
    fn transaction(&self, tx_id: u64) -> Result<Option<DeletedBlocksTransaction>, StoreError> {
        self.call(StoreOp::Transaction, None, |s| s.transaction(tx_id))
    }
    fn summary(&self) -> Result<MetadataSummary, StoreError> {
        self.call(StoreOp::Summary, None, |s| s.summary())
    }
    fn commit(&self, batch: MetadataBatch) -> Result<(), StoreError> {
        self.call(StoreOp::Commit, None, |s| s.commit(batch))
    }
    fn read_tree_file(&self) -> Result<Option<Vec<u8>>, StoreError> {
        self.call(StoreOp::ReadTreeFile, None, |s| s.read_tree_file())
    }
    fn write_tree_file(&self, bytes: &[u8]) -> Result<(), StoreError> {
        self.call(StoreOp::WriteTreeFile, None, |s| s.write_tree_file(bytes))
    }
}
