//! Peers of a datanode, in process: another datanode's replicas answered directly
//! ([`InProcessPeer`]), the directory that routes a peer id to them ([`PeerNetwork`], with
//! links that can be cut), and a peer that runs a script at a chosen chunk read
//! ([`ScriptedPeer`]): the seeds' way to interleave a deletion with a repair, and to fail a
//! read half-way.

use std::collections::{BTreeMap, BTreeSet};

use crate::datanode::container::error::{ContainerError, PeerError};
use crate::datanode::container::handler::KeyValueHandler;
use crate::datanode::container::reconcile::{PeerDatanode, PeerDirectory};
use crate::datanode::container::store::{BlockData, ChunkInfo};
use crate::hdds::container::ContainerState;
use crate::hdds::ids::{ContainerId, DatanodeId, LocalId};
use crate::sync::{Arc, Mutex, RwLock, arc_from_box};

/// A peer datanode answered in process by its [`KeyValueHandler`] (no network).
#[derive(Debug, Clone)]
pub struct InProcessPeer {
    handler: Arc<KeyValueHandler>,
}

impl InProcessPeer {
    /// The peer served by `handler`.
    pub fn new(handler: Arc<KeyValueHandler>) -> Self {
        Self { handler }
    }

    /// The peer as reconciliation takes it.
    pub fn shared(handler: &Arc<KeyValueHandler>) -> Arc<dyn PeerDatanode> {
        arc_from_box(Box::new(Self::new(Arc::clone(handler))) as Box<dyn PeerDatanode>)
    }

    fn refused(&self, error: ContainerError) -> PeerError {
        PeerError::Refused {
            peer: self.handler.datanode(),
            source: Box::new(error),
        }
    }
}

impl PeerDatanode for InProcessPeer {
    fn id(&self) -> DatanodeId {
        self.handler.datanode()
    }

    fn container_state(&self, container: ContainerId) -> Result<ContainerState, PeerError> {
        self.handler
            .container(container)
            .map(|replica| replica.state())
            .map_err(|e| self.refused(e))
    }

    fn checksum_info(&self, container: ContainerId) -> Result<Option<Vec<u8>>, PeerError> {
        self.handler
            .checksum_info_bytes(container)
            .map(Some)
            .map_err(|e| self.refused(e))
    }

    fn block(&self, container: ContainerId, block: LocalId) -> Result<BlockData, PeerError> {
        self.handler
            .block(container, block)
            .map_err(|e| self.refused(e))
    }

    fn read_chunk(
        &self,
        container: ContainerId,
        block: LocalId,
        chunk: &ChunkInfo,
    ) -> Result<Vec<u8>, PeerError> {
        self.handler
            .read_chunk(container, block, chunk)
            .map_err(|e| self.refused(e))
    }
}

/// The datanodes of a cluster as each other's peers: a peer id resolves to that
/// datanode's [`KeyValueHandler`] unless the link between the two is cut. Clones are
/// handles to the same network.
#[derive(Debug, Clone, Default)]
pub struct PeerNetwork {
    state: Arc<RwLock<NetworkState>>,
}

#[derive(Debug, Default)]
struct NetworkState {
    handlers: BTreeMap<DatanodeId, Arc<KeyValueHandler>>,
    /// Cut links, each as (lower id, higher id).
    cut: BTreeSet<(DatanodeId, DatanodeId)>,
}

fn link(a: DatanodeId, b: DatanodeId) -> (DatanodeId, DatanodeId) {
    (a.min(b), a.max(b))
}

impl PeerNetwork {
    /// Feeds `state` the cut links between datanodes.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.state.read().cut.hash(state);
    }

    /// A network without datanodes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `handler`'s replicas reachable as the peer `handler.datanode()`.
    pub fn register(&self, handler: &Arc<KeyValueHandler>) {
        self.state
            .write()
            .handlers
            .insert(handler.datanode(), Arc::clone(handler));
    }

    /// Takes `datanode` out of the network. A registered handler holds the network (its
    /// peer directory) and the network holds the handler, so a datanode that goes away for
    /// good is unregistered, or both live as long as the network.
    pub fn unregister(&self, datanode: DatanodeId) {
        self.state.write().handlers.remove(&datanode);
    }

    /// Cuts the link between `a` and `b` (both ways).
    pub fn cut(&self, a: DatanodeId, b: DatanodeId) {
        self.state.write().cut.insert(link(a, b));
    }

    /// Heals the link between `a` and `b`.
    pub fn heal_link(&self, a: DatanodeId, b: DatanodeId) {
        self.state.write().cut.remove(&link(a, b));
    }

    /// Heals every cut link of `datanode`.
    pub fn heal(&self, datanode: DatanodeId) {
        self.state
            .write()
            .cut
            .retain(|(a, b)| *a != datanode && *b != datanode);
    }

    /// The directory as `from` sees the network.
    pub fn directory_for(&self, from: DatanodeId) -> Arc<dyn PeerDirectory> {
        arc_from_box(Box::new(NetworkView {
            network: self.clone(),
            from,
        }) as Box<dyn PeerDirectory>)
    }
}

/// One datanode's view of a [`PeerNetwork`].
#[derive(Debug)]
struct NetworkView {
    network: PeerNetwork,
    from: DatanodeId,
}

impl PeerDirectory for NetworkView {
    fn peer(&self, datanode: DatanodeId) -> Option<Arc<dyn PeerDatanode>> {
        let state = self.network.state.read();
        if state.cut.contains(&link(self.from, datanode)) {
            return None;
        }
        state.handlers.get(&datanode).map(InProcessPeer::shared)
    }
}

/// How a [`ScriptedPeer`]'s chunk reads fail from read number `at` on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerFailure {
    /// They do not: every read is answered.
    None,
    /// Read `at` fails, the later ones are answered.
    Once,
    /// The connection drops: read `at` and every later one fail.
    FromThenOn,
}

/// A one-shot step run inside a peer read.
type PeerHook = Box<dyn FnOnce() + Send>;

/// A peer answering from `inner` with a script at chunk read number `at` (counting from
/// 0, over all blocks): a hook runs first, once — the seed's way to run the deleting pass
/// inside the reconciliation thread at the moment the peer is asked for a chunk — then
/// the read fails as [`PeerFailure`] says or is answered.
pub struct ScriptedPeer {
    inner: Arc<dyn PeerDatanode>,
    at: usize,
    failure: PeerFailure,
    reads: Mutex<usize>,
    hook: Mutex<Option<PeerHook>>,
}

impl std::fmt::Debug for ScriptedPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedPeer")
            .field("inner", &self.inner)
            .field("at", &self.at)
            .field("failure", &self.failure)
            .finish_non_exhaustive()
    }
}

impl ScriptedPeer {
    /// `inner` with reads failing from read `at` as `failure` says.
    pub fn failing(
        inner: Arc<dyn PeerDatanode>,
        at: usize,
        failure: PeerFailure,
    ) -> Arc<dyn PeerDatanode> {
        Self::shared(inner, at, failure, None)
    }

    /// `inner`, running `hook` before read `at`, then failing as `failure` says.
    pub fn hooked(
        inner: Arc<dyn PeerDatanode>,
        at: usize,
        failure: PeerFailure,
        hook: impl FnOnce() + Send + 'static,
    ) -> Arc<dyn PeerDatanode> {
        Self::shared(inner, at, failure, Some(Box::new(hook)))
    }

    fn shared(
        inner: Arc<dyn PeerDatanode>,
        at: usize,
        failure: PeerFailure,
        hook: Option<PeerHook>,
    ) -> Arc<dyn PeerDatanode> {
        arc_from_box(Box::new(ScriptedPeer {
            inner,
            at,
            failure,
            reads: Mutex::new(0),
            hook: Mutex::new(hook),
        }) as Box<dyn PeerDatanode>)
    }
}

impl PeerDatanode for ScriptedPeer {
    fn id(&self) -> DatanodeId {
        self.inner.id()
    }

    fn container_state(&self, container: ContainerId) -> Result<ContainerState, PeerError> {
        self.inner.container_state(container)
    }

    fn checksum_info(&self, container: ContainerId) -> Result<Option<Vec<u8>>, PeerError> {
        self.inner.checksum_info(container)
    }

    fn block(&self, container: ContainerId, block: LocalId) -> Result<BlockData, PeerError> {
        self.inner.block(container, block)
    }

    fn read_chunk(
        &self,
        container: ContainerId,
        block: LocalId,
        chunk: &ChunkInfo,
    ) -> Result<Vec<u8>, PeerError> {
        let read = {
            let mut reads = self.reads.lock();
            *reads += 1;
            *reads - 1
        };
        if read == self.at {
            let hook = self.hook.lock().take();
            if let Some(hook) = hook {
                hook();
            }
        }
        let fails = match self.failure {
            PeerFailure::None => false,
            PeerFailure::Once => read == self.at,
            PeerFailure::FromThenOn => read >= self.at,
        };
        if fails {
            return Err(PeerError::Unreachable {
                peer: self.inner.id(),
                reason: "connection reset".into(),
            });
        }
        self.inner.read_chunk(container, block, chunk)
    }
}
