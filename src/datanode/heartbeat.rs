//! `HeartbeatEndpointTask`: the datanode's conversation with one SCM, through the
//! [`ScmEndpoint`] boundary.
//!
//! **The race (HDDS-17268).** Each SCM endpoint has its own heartbeat thread, and
//! `processResponse` applied the response's term with an unlocked check-then-set: two
//! SCMs answering as leader at once (terms 2 and 3) could leave the term at 2.
//!
//! **The fix** is in [`StateContext::update_term_from_heartbeat`], which holds the context
//! lock. This task applies the response's term before it queues any command of the same
//! response, as Ozone does, so a command never raises the term past its own response's.

use super::error::DatanodeError;
use super::reports::ReportPublisher;
use super::state_context::{EndpointState, EndpointStateMachine, StateContext, StateContextApi};
use crate::hdds::command::CommandKind;
use crate::hdds::heartbeat::{EndpointError, HeartbeatRequest, HeartbeatResponse, ScmEndpoint};
use crate::hdds::ids::DatanodeId;
use crate::hdds::term::{Term, validate_term};
use crate::sync::Arc;

/// What one call of [`HeartbeatEndpointTask::run_once`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskOutcome {
    /// GETVERSION answered; the endpoint moved to REGISTER.
    Versioned,
    /// REGISTER answered; the endpoint moved to HEARTBEAT.
    Registered,
    /// A heartbeat response was processed.
    Heartbeat(HeartbeatSummary),
    /// The endpoint is shut down; nothing was sent.
    Shutdown,
}

/// What a processed heartbeat response contained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatSummary {
    /// The response's term, applied to the context.
    pub term: Option<Term>,
    /// Commands queued.
    pub queued: usize,
    /// The highest term among the commands queued.
    pub max_queued_term: Option<Term>,
    /// The SCM asked the datanode to register again; the next call starts at GETVERSION
    /// and should run at once.
    pub reregister: bool,
}

/// The task one endpoint thread runs each cycle (`HeartbeatEndpointTask`, together with
/// the version and register tasks of the other endpoint states), over any implementation of
/// the term-fencing boundary ([`StateContextApi`]; the crate's [`StateContext`] by default).
#[derive(Debug)]
pub struct HeartbeatEndpointTask<C: StateContextApi = StateContext> {
    datanode: DatanodeId,
    endpoint: Arc<EndpointStateMachine>,
    scm: Arc<dyn ScmEndpoint>,
    context: Arc<C>,
    /// What heartbeats carry; none: heartbeats carry no report.
    reports: Option<Arc<ReportPublisher>>,
}

impl<C: StateContextApi> HeartbeatEndpointTask<C> {
    /// The task for `scm`, whose state is `endpoint` (one of `context.endpoints()`).
    pub fn new(
        datanode: DatanodeId,
        endpoint: Arc<EndpointStateMachine>,
        scm: Arc<dyn ScmEndpoint>,
        context: Arc<C>,
    ) -> Self {
        Self {
            datanode,
            endpoint,
            scm,
            context,
            reports: None,
        }
    }

    /// The same task, its heartbeats carrying the reports of `reports`.
    pub fn with_reports(mut self, reports: Arc<ReportPublisher>) -> Self {
        self.reports = Some(reports);
        self
    }

    /// One task per endpoint of `context`, paired with the SCM of the same id.
    ///
    /// An endpoint without an SCM in `scms` is [`DatanodeError::ScmUnreachable`].
    pub fn for_all_endpoints(
        datanode: DatanodeId,
        context: &Arc<C>,
        scms: &[Arc<dyn ScmEndpoint>],
    ) -> Result<Vec<HeartbeatEndpointTask<C>>, DatanodeError> {
        context
            .endpoints()
            .iter()
            .map(|endpoint| {
                let scm = scms
                    .iter()
                    .find(|s| s.scm_id() == endpoint.scm())
                    .ok_or_else(|| DatanodeError::ScmUnreachable {
                        scm: endpoint.scm(),
                        reason: "no endpoint configured for this SCM".into(),
                    })?;
                Ok(HeartbeatEndpointTask::new(
                    datanode,
                    Arc::clone(endpoint),
                    Arc::clone(scm),
                    Arc::clone(context),
                ))
            })
            .collect()
    }

    /// The endpoint's state machine.
    pub fn endpoint(&self) -> &Arc<EndpointStateMachine> {
        &self.endpoint
    }

    /// Runs the step of the endpoint's current state: GETVERSION → REGISTER → HEARTBEAT.
    pub fn run_once(&self) -> Result<TaskOutcome, DatanodeError> {
        let unreachable = |error: EndpointError| {
            self.endpoint.record_missed();
            DatanodeError::ScmUnreachable {
                scm: self.scm.scm_id(),
                reason: error.to_string(),
            }
        };
        match self.endpoint.state() {
            EndpointState::GetVersion => {
                self.scm.get_version(self.datanode).map_err(unreachable)?;
                self.endpoint.record_answered();
                self.endpoint.set_state(EndpointState::Register);
                Ok(TaskOutcome::Versioned)
            }
            EndpointState::Register => {
                self.scm.register(self.datanode).map_err(unreachable)?;
                self.endpoint.record_answered();
                self.endpoint.set_state(EndpointState::Heartbeat);
                Ok(TaskOutcome::Registered)
            }
            EndpointState::Heartbeat => {
                let mut request = HeartbeatRequest::new(self.datanode, self.context.queue_len());
                if let Some(reports) = &self.reports {
                    reports.fill(self.scm.scm_id(), &mut request);
                }
                let statuses = request.command_statuses.clone();
                let response = match self.scm.send_heartbeat(request) {
                    Ok(response) => response,
                    Err(error) => {
                        if let Some(reports) = &self.reports {
                            reports.put_back(self.scm.scm_id(), statuses);
                        }
                        return Err(unreachable(error));
                    }
                };
                self.endpoint.record_answered();
                self.process_response(response).map(TaskOutcome::Heartbeat)
            }
            EndpointState::Shutdown => Ok(TaskOutcome::Shutdown),
        }
    }

    /// `processResponse`: checks the response as a whole first (it is for this datanode,
    /// every term is valid), so a malformed response changes nothing; then applies the term,
    /// then queues the commands in order.
    pub fn process_response(
        &self,
        response: HeartbeatResponse,
    ) -> Result<HeartbeatSummary, DatanodeError> {
        if response.datanode != self.datanode {
            return Err(DatanodeError::ResponseForAnotherDatanode {
                expected: self.datanode,
                actual: response.datanode,
            });
        }
        if let Some(term) = response.term {
            validate_term(term)?;
        }
        for command in &response.commands {
            validate_term(command.term)?;
        }
        crate::events::debug!(
            node = %self.datanode,
            from = %self.scm.scm_id(),
            term = response.term,
            commands = response.commands.len(),
            "heartbeat response"
        );
        if let Some(term) = response.term {
            self.context.update_term_from_heartbeat(term)?;
        }
        let mut summary = HeartbeatSummary {
            term: response.term,
            queued: 0,
            max_queued_term: None,
            reregister: false,
        };
        let (mut refused, mut limit) = (0, 0);
        for command in response.commands {
            if matches!(&command.kind, CommandKind::DeleteBlocks { transactions } if transactions.is_empty())
            {
                // Ozone ignores a delete-blocks command with nothing to delete.
                continue;
            }
            if command.kind == CommandKind::Reregister {
                if self.endpoint.state() == EndpointState::Heartbeat {
                    self.endpoint.set_state(EndpointState::GetVersion);
                    summary.reregister = true;
                }
                continue;
            }
            let term = command.term;
            match self.context.add_command(command) {
                Ok(()) => {
                    summary.queued += 1;
                    summary.max_queued_term = summary.max_queued_term.max(Some(term));
                }
                Err(DatanodeError::CommandQueueFull { limit: at, .. }) => {
                    refused += 1;
                    limit = at;
                }
                Err(other) => return Err(other),
            }
        }
        if refused > 0 {
            return Err(DatanodeError::CommandQueueFull {
                limit,
                dropped: refused,
            });
        }
        Ok(summary)
    }
}
