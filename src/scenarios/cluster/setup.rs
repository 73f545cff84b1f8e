//! What the cluster scenarios share: their set-up failure, their round count, and the
//! run of the cluster on its threads.

use super::invariants::SEED_KEY;
use crate::scenarios::{Violation, join_all};
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::sync::thread;

/// Moves of the clock (each a round of every service) before the cluster settles.
pub(super) const ROUNDS: usize = 4;

/// In the repair cases, the datanode cut off from the SCMs while the threads run: its
/// replica keeps the doomed key's blocks the longest.
pub(super) const CUT_OFF: usize = 0;
/// In the repair cases, the datanode whose replica lacks the doomed key's last block.
pub(super) const LAGGING: usize = 2;

/// Writes two keys of two blocks into one container: a kept one, whole, and a doomed one
/// whose replica on [`LAGGING`] lacks its last block. One container for both, as in the
/// seed's reproduction: the kept key's blocks keep every replica from reporting empty, so
/// the container is not deleted with the doomed key.
pub(super) fn write_kept_and_lagging(
    cluster: &MiniOzoneCluster,
) -> Result<(Key, Key), ClusterError> {
    let keys = cluster.open_keys(2, 2)?;
    let (kept, doomed) = (keys[0].clone(), keys[1].clone());
    cluster.write_blocks(&kept)?;
    cluster.write_blocks_lagging(&doomed, cluster.datanode(LAGGING)?.id())?;
    Ok((kept, doomed))
}

/// A cluster problem that is no property's violation (the set-up failed).
pub(super) fn setup(error: ClusterError) -> Violation {
    Violation {
        seed: SEED_KEY,
        property: "scenario setup",
        detail: error.to_string(),
    }
}

/// Runs `cluster` on its threads, as Ozone runs it
/// ([`start_paced`](MiniOzoneCluster::start_paced): every datanode's heartbeat threads,
/// command processor, executors, scanner and block deleting service, each SCM's
/// replication manager, processors and block deleting service) for [`ROUNDS`] moves of
/// its clock. At each round's start, `round` runs the driver's steps on the calling
/// thread (the seed's faults, an operator's command), then the clock moves; `others` run
/// beside (a client, an operator). Then every thread stops, and what they left is the
/// settling phase's. Returns what `others` returned.
pub(super) fn run_on_threads<T>(
    cluster: &MiniOzoneCluster,
    others: Vec<thread::JoinHandle<Result<Vec<T>, Violation>>>,
    mut round: impl FnMut(usize) -> Result<(), Violation>,
) -> Result<Vec<T>, Violation> {
    cluster.start_paced().map_err(setup)?;
    let driven: Result<(), Violation> = (0..ROUNDS).try_for_each(|r| {
        round(r)?;
        cluster.advance();
        Ok(())
    });
    let joined = join_all(others);
    cluster.stop();
    driven?;
    joined
}
