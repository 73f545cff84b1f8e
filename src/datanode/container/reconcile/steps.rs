//! A reconciliation one step at a time: what the replication supervisor's thread runs to
//! its end, and what an explorer of the cluster's actions interleaves with the block
//! deleting service, the heartbeats and the other datanodes (HDDS-16811's window is a
//! deletion between two of these steps).
//!
//! The steps are `reconcileContainerInternal`'s own: the start (the replica's tree read),
//! then for each peer the comparison of the trees, the repair of each block the peer has
//! and this replica lacks (pull and commit), the end of the peer's round (deletions
//! adopted, the tree written), and the end of the whole (`reconciliation finished`).

use super::super::checksum_tree::{ChecksumText, TreeWriter};
use super::super::error::ContainerError;
use super::super::merkle::{self, ChunkMerkle, ContainerChecksumInfo, ContainerMerkleTree};
use super::super::peer_deletion::apply_peer_deletion;
use super::super::replica::KeyValueContainer;
use super::super::store::MetadataBatch;
use super::peer::{PeerDatanode, PeerRound, ReconcileReport, ids_text};
use super::pull::reconcile_chunks_per_block;
use crate::hdds::ids::LocalId;
use crate::sync::Arc;

/// The target of the reconciliation's protocol events: the module of its public path, so
/// the event log calls it `datanode::container::reconcile` whichever file emits them.
const EVENTS: &str = "hadoop_ref::datanode::container::reconcile";

/// A reconciliation of one replica with its peers, in progress
/// (`KeyValueHandler.reconcileContainer` without the scan that ends it).
pub struct Reconciliation {
    container: Arc<KeyValueContainer>,
    peers: Vec<Arc<dyn PeerDatanode>>,
    /// The replica's tree as the last peer round left it.
    latest: Arc<ContainerChecksumInfo>,
    report: ReconcileReport,
    /// The next peer to compare with.
    next_peer: usize,
    /// The peer round being worked through, once its trees were compared.
    round: Option<RoundInProgress>,
}

/// One peer's round between the comparison of the trees and its end.
struct RoundInProgress {
    peer: Arc<dyn PeerDatanode>,
    round: PeerRound,
    /// The blocks to repair with the chunks wanted of each, and the next one.
    work: Vec<(LocalId, Vec<ChunkMerkle>)>,
    next_block: usize,
    /// Blocks the peer's tree marks deleted while they are live here, with the checksum.
    diverged_deleted: Vec<(LocalId, u64)>,
    writer: ContainerMerkleTree,
}

impl std::fmt::Debug for Reconciliation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconciliation")
            .field("container", &self.container.id())
            .field("next_peer", &self.next_peer)
            .field(
                "block",
                &self.round.as_ref().map(|r| (r.peer.id(), r.next_block)),
            )
            .finish()
    }
}

impl Reconciliation {
    /// Starts reconciling `container` with `peers`: refused unless the replica is closed
    /// for data; reads its tree (built from metadata when it has no data checksum yet).
    pub fn start(
        container: Arc<KeyValueContainer>,
        peers: Vec<Arc<dyn PeerDatanode>>,
    ) -> Result<Self, ContainerError> {
        container.check_closed_for_repair()?;
        crate::events::debug!(
            target: EVENTS,
            node = %container.datanode(),
            container = container.id().0,
            peers = %ids_text(peers.iter().map(|p| p.id())),
            "reconciliation started"
        );
        let mut latest = Arc::new(container.checksums().read()?);
        if !latest.has_data_checksum() {
            latest = container.update_checksum_from_metadata()?;
        }
        Ok(Self {
            container,
            peers,
            latest,
            report: ReconcileReport::default(),
            next_peer: 0,
            round: None,
        })
    }

    /// The replica being reconciled.
    pub fn container(&self) -> &Arc<KeyValueContainer> {
        &self.container
    }

    /// Feeds `state` all that decides its next steps: the container, the peers, the next
    /// peer, the replica's tree as the last round left it, the round in progress (its
    /// peer, the blocks to repair with the chunks wanted of each, the next one, what it
    /// did so far, the blocks the peer's tree, as compared, marks deleted, and the tree
    /// being written) and what it repaired so far (as its `Debug` text, errors included).
    /// What the comparison read of a peer is not in the peer's own state any more once
    /// the peer moved on (a block it deleted since), so it is fed here.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.container.id().hash(state);
        for peer in &self.peers {
            peer.id().hash(state);
        }
        self.next_peer.hash(state);
        self.latest.hash(state);
        if let Some(round) = &self.round {
            round.peer.id().hash(state);
            (&round.work, &round.diverged_deleted, &round.writer).hash(state);
            format!("{:?}", round.round).hash(state);
            round.next_block.hash(state);
        }
        format!("{:?}", self.report).hash(state);
    }

    /// One step: the comparison with the next peer, the repair of one block, or the end of
    /// a peer's round; the report once every peer was tried. A peer whose step failed is
    /// recorded and the next one tried, as upstream does.
    pub fn step(&mut self) -> Option<ReconcileReport> {
        match self.round.take() {
            Some(mut round) if round.next_block < round.work.len() => {
                let (block, chunks) = &round.work[round.next_block];
                let outcome = reconcile_chunks_per_block(
                    &self.container,
                    round.peer.as_ref(),
                    *block,
                    chunks,
                    &mut round.writer,
                );
                round.round.blocks.insert(*block, outcome);
                round.next_block += 1;
                self.round = Some(round);
            }
            Some(round) => {
                let peer = round.peer.id();
                match self.end_round(round) {
                    Ok((round, updated)) => {
                        self.latest = updated;
                        self.report.rounds.push(round);
                    }
                    Err(error) => self.peer_failed(peer, error),
                }
            }
            None if self.next_peer < self.peers.len() => {
                let peer = Arc::clone(&self.peers[self.next_peer]);
                self.next_peer += 1;
                match self.compare(peer) {
                    Ok(Some(round)) => self.round = Some(round),
                    Ok(None) => {}
                    Err((peer, error)) => self.peer_failed(peer, error),
                }
            }
            None => return Some(self.finish()),
        }
        None
    }

    /// Compares the replica's tree with `peer`'s (`None`: the peer had no answer, an empty
    /// round is recorded).
    fn compare(
        &mut self,
        peer: Arc<dyn PeerDatanode>,
    ) -> Result<Option<RoundInProgress>, (crate::hdds::ids::DatanodeId, ContainerError)> {
        let id = self.container.id();
        let failed = |error: ContainerError| (peer.id(), error);
        let mut round = PeerRound {
            peer: peer.id(),
            blocks: Default::default(),
            adopted_deleted: Vec::new(),
            applied_peer_deletions: Vec::new(),
        };
        let Some(bytes) = peer.checksum_info(id).map_err(|e| failed(e.into()))? else {
            self.report.rounds.push(round);
            return Ok(None);
        };
        if bytes.is_empty() {
            return Err(failed(ContainerError::EmptyPeerTree {
                peer: peer.id(),
                container: id,
            }));
        }
        let peer_info = merkle::decode(&bytes).map_err(|source| {
            failed(ContainerError::MalformedTreeFile {
                container: id,
                source,
            })
        })?;
        let peer_deletions = self.applies_peer_deletions();
        let diff = merkle::diff(&self.latest, &peer_info, peer_deletions)
            .map_err(|mismatch| failed(mismatch.into()))?;
        let mut work: Vec<(LocalId, Vec<ChunkMerkle>)> = diff
            .missing_blocks
            .iter()
            .map(|b| (b.local_id, b.chunks.values().copied().collect()))
            .collect();
        work.extend(diff.missing_chunks.clone());
        work.extend(diff.corrupt_chunks.clone());
        crate::events::debug!(
            target: EVENTS,
            node = %self.container.datanode(),
            container = id.0,
            peer = %peer.id(),
            repair = ?work.iter().map(|(block, _)| *block).collect::<Vec<_>>(),
            deleted = ?diff.diverged_deleted.iter().map(|(block, _)| *block).collect::<Vec<_>>(),
            "trees compared"
        );
        round.peer = peer.id();
        Ok(Some(RoundInProgress {
            writer: self.latest.tree.clone(),
            peer,
            round,
            work,
            next_block: 0,
            diverged_deleted: diff.diverged_deleted,
        }))
    }

    /// The end of a peer's round: the peer's deletions adopted (and applied, hardened),
    /// the tree written, the adopted deletions recorded in the database.
    fn end_round(
        &self,
        mut work: RoundInProgress,
    ) -> Result<(PeerRound, Arc<ContainerChecksumInfo>), ContainerError> {
        let container = &self.container;
        let peer_deletions = self.applies_peer_deletions();
        for (block, checksum) in &work.diverged_deleted {
            if peer_deletions && apply_peer_deletion(container, *block, *checksum)? {
                work.round.applied_peer_deletions.push(*block);
            }
            work.writer.set_deleted_block(*block, *checksum);
            work.round.adopted_deleted.push(*block);
        }
        let updated = container
            .update_and_get_container_checksum(TreeWriter::Reconciliation, &work.writer)?;
        if container.config().records_deletions_in_database() && !work.diverged_deleted.is_empty() {
            // The adopted deletions, now in the tree, are recorded in the database too.
            container
                .store()
                .commit(MetadataBatch {
                    put_deleted: work.diverged_deleted.clone(),
                    ..MetadataBatch::default()
                })
                .map_err(ContainerError::store(container.id()))?;
        }
        Ok((work.round, updated))
    }

    /// Whether a peer's deletion of a block live here is applied here (HDDS-11765,
    /// hardened).
    fn applies_peer_deletions(&self) -> bool {
        let config = self.container.config();
        config.behavior.is_patched() && config.apply_peer_deletions
    }

    fn peer_failed(&mut self, peer: crate::hdds::ids::DatanodeId, error: ContainerError) {
        crate::events::debug!(
            target: EVENTS,
            node = %self.container.datanode(),
            container = self.container.id().0,
            peer = %peer,
            %error,
            "peer round failed"
        );
        self.report.peer_failures.push((peer, error));
    }

    fn finish(&mut self) -> ReconcileReport {
        crate::events::debug!(
            target: EVENTS,
            node = %self.container.datanode(),
            container = self.container.id().0,
            repaired = ?self.report.committed(),
            root = %ChecksumText(self.latest.tree.data_checksum()),
            "reconciliation finished"
        );
        std::mem::take(&mut self.report)
    }
}

/// `reconcileContainerInternal`: reconciles `container` with each of `peers` in turn, all
/// at once on the caller's thread ([`Reconciliation`] runs the same steps one at a time).
/// Takes no container lock except the patched commit's read lock (and the write lock to
/// remove what a failed repair pulled, or to apply a peer's deletion). Not deduplicated
/// here: the [handler](super::super::handler::KeyValueHandler) runs at most one per container.
pub fn reconcile_container(
    container: &Arc<KeyValueContainer>,
    peers: &[Arc<dyn PeerDatanode>],
) -> Result<ReconcileReport, ContainerError> {
    let mut reconciliation = Reconciliation::start(Arc::clone(container), peers.to_vec())?;
    // Bounded: each step compares with a peer, repairs one of its blocks or ends its round.
    loop {
        if let Some(report) = reconciliation.step() {
            return Ok(report);
        }
    }
}
