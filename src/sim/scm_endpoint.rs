//! An SCM as the datanode's heartbeat threads see it, in process: a stand-in for the
//! `SCMDatanodeProtocolServer` side of HDDS-17268, not the SCM of [`crate::scm`].
//!
//! Faithful to the parts that make HDDS-17268 possible: an SCM stamps its leader term on a
//! command when it creates it, and only while it believes it leads; it puts its term in a
//! heartbeat response only while it believes it leads; its per-datanode command queue is
//! *not* cleared on step-down, and a follower still hands queued commands out (without a
//! term). Ratis, the node manager's other duties and the wire are out of scope. Its
//! leadership changes are the events `became leader` and `stepped down` of a failure's
//! [story](crate::story).

use std::collections::{BTreeMap, BTreeSet};

use crate::hdds::command::{CommandId, CommandKind, ScmCommand};
use crate::hdds::heartbeat::{EndpointError, HeartbeatRequest, HeartbeatResponse, ScmEndpoint};
use crate::hdds::ids::{DatanodeId, ScmId};
use crate::hdds::term::Term;
use crate::sync::{Arc, Mutex, arc_from_box};

/// An in-process SCM that does not believe it leads refused to create a command (only
/// the leader creates commands: `SCMContext.getTermOfLeader` throws otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{scm} is not the leader: it creates no command")]
pub struct NotLeader {
    /// The SCM asked.
    pub scm: ScmId,
}

#[derive(Debug, Default)]
struct ScmState {
    believes_leader: bool,
    term: Term,
    paused: bool,
    registered: BTreeSet<DatanodeId>,
    queues: BTreeMap<DatanodeId, Vec<ScmCommand>>,
    next_command_id: u64,
}

/// One in-process SCM. Clones are handles to the same SCM: give one to the datanode (as
/// `Arc<dyn ScmEndpoint>`, see [`InProcessScm::endpoint`]) and steer it through another.
#[derive(Debug, Clone)]
pub struct InProcessScm {
    id: ScmId,
    state: Arc<Mutex<ScmState>>,
}

impl InProcessScm {
    /// A follower at term 0 with empty queues.
    pub fn new(id: ScmId) -> Self {
        Self {
            id,
            state: Arc::new(Mutex::new(ScmState::default())),
        }
    }

    /// A handle as the `Arc<dyn ScmEndpoint>` a datanode takes.
    pub fn endpoint(&self) -> Arc<dyn ScmEndpoint> {
        arc_from_box(Box::new(self.clone()) as Box<dyn ScmEndpoint>)
    }

    /// Ratis made this SCM leader at `term` (`notifyLeaderChanged`).
    pub fn become_leader(&self, term: Term) {
        let mut state = self.state.lock();
        state.believes_leader = true;
        state.term = term;
        crate::events::debug!(node = %self.id, term, "became leader");
    }

    /// Ratis told this SCM it lost leadership (`notifyNotLeader`); its queues stay.
    pub fn step_down(&self) {
        let mut state = self.state.lock();
        if std::mem::replace(&mut state.believes_leader, false) {
            crate::events::debug!(node = %self.id, term = state.term, "stepped down");
        }
    }

    /// Whether it believes it leads, and at which term.
    pub fn leadership(&self) -> Option<Term> {
        let state = self.state.lock();
        state.believes_leader.then_some(state.term)
    }

    /// Stops answering (a GC pause, a partition); queued commands stay.
    pub fn pause(&self) {
        self.state.lock().paused = true;
    }

    /// Answers again.
    pub fn resume(&self) {
        self.state.lock().paused = false;
    }

    /// Creates a command for `datanode`, stamped with this leader's term, and queues it
    /// (`ReplicationManager.sendDatanodeCommand`). `deadline_ms` 0 means none.
    pub fn queue_command(
        &self,
        datanode: DatanodeId,
        kind: CommandKind,
        deadline_ms: u64,
    ) -> Result<ScmCommand, NotLeader> {
        let mut state = self.state.lock();
        if !state.believes_leader {
            return Err(NotLeader { scm: self.id });
        }
        state.next_command_id += 1;
        let id = CommandId(self.id.0 << 32 | state.next_command_id);
        let command = ScmCommand::new(id, state.term, kind).with_deadline_ms(deadline_ms);
        state
            .queues
            .entry(datanode)
            .or_default()
            .push(command.clone());
        Ok(command)
    }

    /// Commands waiting for `datanode`.
    pub fn queued_for(&self, datanode: DatanodeId) -> usize {
        self.state.lock().queues.get(&datanode).map_or(0, Vec::len)
    }
}

impl ScmEndpoint for InProcessScm {
    fn scm_id(&self) -> ScmId {
        self.id
    }

    fn get_version(&self, _datanode: DatanodeId) -> Result<(), EndpointError> {
        if self.state.lock().paused {
            return Err(EndpointError::Unavailable);
        }
        Ok(())
    }

    fn register(&self, datanode: DatanodeId) -> Result<(), EndpointError> {
        let mut state = self.state.lock();
        if state.paused {
            return Err(EndpointError::Unavailable);
        }
        state.registered.insert(datanode);
        Ok(())
    }

    /// `SCMDatanodeProtocolServer.sendHeartbeat`: an unregistered datanode is told to
    /// register again; otherwise the queue is drained whatever the leadership, and the
    /// term is added only by a (self-believed) leader.
    fn send_heartbeat(
        &self,
        request: HeartbeatRequest,
    ) -> Result<HeartbeatResponse, EndpointError> {
        let mut state = self.state.lock();
        if state.paused {
            return Err(EndpointError::Unavailable);
        }
        let datanode = request.datanode;
        let commands = if state.registered.contains(&datanode) {
            state.queues.remove(&datanode).unwrap_or_default()
        } else {
            vec![ScmCommand::new(
                CommandId(0),
                state.term,
                CommandKind::Reregister,
            )]
        };
        Ok(HeartbeatResponse {
            datanode,
            term: state.believes_leader.then_some(state.term),
            commands,
        })
    }
}
