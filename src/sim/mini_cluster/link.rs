//! The network between a datanode and the SCMs of a [`MiniOzoneCluster`](super::MiniOzoneCluster):
//! each SCM sits in a slot that a crash empties and a restart fills, and each
//! (datanode, SCM) link can be cut and healed.

use std::collections::BTreeSet;

use crate::hdds::heartbeat::{EndpointError, HeartbeatRequest, HeartbeatResponse, ScmEndpoint};
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::scm::StorageContainerManager;
use crate::sync::{Arc, ArcSwap, RwCell};

/// The SCMs as the network reaches them: a running SCM per slot, or none while it is down,
/// and the links that are cut.
#[derive(Debug)]
pub(super) struct Switchboard {
    scms: Vec<(ScmId, ArcSwap<Option<Arc<StorageContainerManager>>>)>,
    cut: RwCell<BTreeSet<(DatanodeId, ScmId)>>,
}

impl Switchboard {
    /// A switchboard over `scms`, every link up.
    pub(super) fn new(scms: Vec<Arc<StorageContainerManager>>) -> Self {
        Self {
            scms: scms
                .into_iter()
                .map(|scm| (scm.id(), ArcSwap::new(Arc::new(Some(scm)))))
                .collect(),
            cut: RwCell::new(BTreeSet::new()),
        }
    }

    /// Feeds `state` the cut links.
    pub(super) fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.cut.read(|cut| cut.hash(state));
    }

    /// The SCM in slot `scm`, if it runs.
    pub(super) fn scm(&self, scm: ScmId) -> Option<Arc<StorageContainerManager>> {
        let (_, slot) = self.scms.iter().find(|(id, _)| *id == scm)?;
        slot.load_full().as_ref().clone()
    }

    /// Every running SCM.
    pub(super) fn running(&self) -> Vec<Arc<StorageContainerManager>> {
        self.scms
            .iter()
            .filter_map(|(_, slot)| slot.load_full().as_ref().clone())
            .collect()
    }

    /// The SCM ids, in order.
    pub(super) fn ids(&self) -> Vec<ScmId> {
        self.scms.iter().map(|(id, _)| *id).collect()
    }

    /// Fills (or empties, with `None`) slot `scm`.
    pub(super) fn set(&self, scm: ScmId, running: Option<Arc<StorageContainerManager>>) {
        if let Some((_, slot)) = self.scms.iter().find(|(id, _)| *id == scm) {
            slot.store(Arc::new(running));
        }
    }

    /// Cuts (`up` false) or heals the link between `datanode` and `scm`.
    pub(super) fn set_link(&self, datanode: DatanodeId, scm: ScmId, up: bool) {
        self.cut.write(|cut| {
            if up {
                cut.remove(&(datanode, scm));
            } else {
                cut.insert((datanode, scm));
            }
        });
    }

    /// Whether the link between `datanode` and `scm` is cut.
    pub(super) fn is_cut(&self, datanode: DatanodeId, scm: ScmId) -> bool {
        self.cut.read(|cut| cut.contains(&(datanode, scm)))
    }

    /// Heals every cut link.
    pub(super) fn heal_all(&self) {
        self.cut.write(BTreeSet::clear);
    }

    /// The SCM `datanode` reaches at `scm`, if the link is up and the SCM runs.
    fn reach(
        &self,
        datanode: DatanodeId,
        scm: ScmId,
    ) -> Result<Arc<StorageContainerManager>, EndpointError> {
        if self.is_cut(datanode, scm) {
            return Err(EndpointError::Unavailable);
        }
        self.scm(scm).ok_or(EndpointError::Unavailable)
    }
}

/// One datanode's end of its link to one SCM slot.
#[derive(Debug)]
pub(super) struct Link {
    pub(super) datanode: DatanodeId,
    pub(super) scm: ScmId,
    pub(super) board: Arc<Switchboard>,
}

impl ScmEndpoint for Link {
    fn scm_id(&self) -> ScmId {
        self.scm
    }

    fn get_version(&self, datanode: DatanodeId) -> Result<(), EndpointError> {
        self.board
            .reach(self.datanode, self.scm)?
            .get_version(datanode)
    }

    fn register(&self, datanode: DatanodeId) -> Result<(), EndpointError> {
        ScmEndpoint::register(&*self.board.reach(self.datanode, self.scm)?, datanode)
    }

    fn send_heartbeat(
        &self,
        request: HeartbeatRequest,
    ) -> Result<HeartbeatResponse, EndpointError> {
        self.board
            .reach(self.datanode, self.scm)?
            .send_heartbeat(request)
    }
}
