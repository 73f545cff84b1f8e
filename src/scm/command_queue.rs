//! The SCM's per-datanode command queue (`SCMNodeManager`'s `CommandQueue`): commands a
//! service created wait here until the datanode's next heartbeat takes them.
//!
//! As in Ozone, the queue is not cleared when the SCM steps down (HDDS-17268): a deposed
//! leader's heartbeat still hands its queued commands out, each with the term it was
//! created at, and the datanode must drop those older than the term it knows. Unlike
//! Ozone's, each datanode's queue is bounded ([`CommandQueue::new`]'s limit): a full
//! queue refuses a command with a typed error rather than growing.

use std::collections::{BTreeMap, VecDeque};

use super::error::ScmError;
use crate::hdds::command::{CommandKind, ScmCommand};
use crate::hdds::ids::DatanodeId;
use crate::sync::RwCell;

/// Per-datanode queues of commands, each bounded.
#[derive(Debug)]
pub struct CommandQueue {
    limit_per_datanode: usize,
    queues: RwCell<BTreeMap<DatanodeId, DatanodeCommands>>,
}

#[derive(Debug, Default)]
struct DatanodeCommands {
    commands: VecDeque<ScmCommand>,
    /// Delete-blocks commands the datanode last reported queued on its side
    /// (`CommandQueueReportProto`).
    reported_delete_blocks: usize,
}

impl CommandQueue {
    /// Feeds `state` each datanode's queued commands
    /// ([`ScmCommand::digest`](crate::hdds::command::ScmCommand::digest)) and the
    /// delete-blocks commands it last reported queued.
    pub fn digest<H: std::hash::Hasher>(&self, state: &mut H) {
        use std::hash::Hash;
        self.queues.read(|queues| {
            for (datanode, queued) in queues {
                (datanode, queued.reported_delete_blocks).hash(state);
                queued.commands.iter().for_each(|c| c.digest(state));
            }
        });
    }

    /// Empty queues of at most `limit_per_datanode` commands each.
    pub fn new(limit_per_datanode: usize) -> Self {
        Self {
            limit_per_datanode,
            queues: RwCell::new(BTreeMap::new()),
        }
    }

    /// Queues `command` for `datanode` (`addDatanodeCommand`), or refuses it when the
    /// datanode's queue is full.
    pub fn add(&self, datanode: DatanodeId, command: ScmCommand) -> Result<(), ScmError> {
        let limit = self.limit_per_datanode;
        self.queues.write(|queues| {
            let queue = &mut queues.entry(datanode).or_default().commands;
            if queue.len() >= limit {
                return Err(ScmError::CommandQueueFull { datanode, limit });
            }
            queue.push_back(command);
            Ok(())
        })
    }

    /// Takes every command queued for `datanode`, oldest first (`getCommand`).
    pub fn take(&self, datanode: DatanodeId) -> Vec<ScmCommand> {
        self.queues.write(|queues| {
            queues
                .get_mut(&datanode)
                .map(|q| q.commands.drain(..).collect())
                .unwrap_or_default()
        })
    }

    /// Records how many delete-blocks commands `datanode` reports queued on its side.
    pub fn set_reported_delete_blocks(&self, datanode: DatanodeId, queued: usize) {
        self.queues.write(|queues| {
            queues.entry(datanode).or_default().reported_delete_blocks = queued;
        });
    }

    /// Delete-blocks commands of `datanode`: queued here, and as it last reported
    /// (`getDatanodesWithinCommandLimit` reads both).
    pub fn delete_blocks_counts(&self, datanode: DatanodeId) -> (usize, usize) {
        self.queues.read(|queues| {
            queues.get(&datanode).map_or((0, 0), |q| {
                let here = q
                    .commands
                    .iter()
                    .filter(|c| matches!(c.kind, CommandKind::DeleteBlocks { .. }))
                    .count();
                (here, q.reported_delete_blocks)
            })
        })
    }

    /// Whether a command of `kind` is queued for `datanode`.
    pub fn contains(&self, datanode: DatanodeId, kind: &CommandKind) -> bool {
        self.queues.read(|queues| {
            queues
                .get(&datanode)
                .is_some_and(|q| q.commands.iter().any(|c| c.kind == *kind))
        })
    }

    /// A copy of the commands queued for `datanode`, oldest first; nothing is taken.
    pub fn peek(&self, datanode: DatanodeId) -> Vec<ScmCommand> {
        self.queues.read(|queues| {
            queues
                .get(&datanode)
                .map(|q| q.commands.iter().cloned().collect())
                .unwrap_or_default()
        })
    }

    /// Commands queued for `datanode`.
    pub fn len(&self, datanode: DatanodeId) -> usize {
        self.queues
            .read(|queues| queues.get(&datanode).map_or(0, |q| q.commands.len()))
    }

    /// Whether no command is queued for `datanode`.
    pub fn is_empty(&self, datanode: DatanodeId) -> bool {
        self.len(datanode) == 0
    }
}
