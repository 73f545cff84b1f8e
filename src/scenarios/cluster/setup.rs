//! What the cluster scenarios share: their set-up failure, their round count, and the
//! thread that ticks one datanode.

use super::invariants::SEED_KEY;
use crate::scenarios::Violation;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::sync::{Arc, channel, thread};

/// Rounds each datanode thread and each driver thread run before the cluster settles.
pub(super) const ROUNDS: usize = 4;

/// In the repair cases, the datanode cut off from the SCMs while the threads run: its
/// replica keeps the doomed key's blocks the longest.
pub(super) const CUT_OFF: usize = 0;
/// In the repair cases, the datanode whose replica lacks the doomed key's last block.
pub(super) const LAGGING: usize = 2;
/// In the repair cases, the datanodes that run their block deleting service on a thread
/// of their own: the two that run the delete transaction (every one but [`CUT_OFF`]), so
/// that a deletion can land while a reconciliation of the same replica runs.
pub(super) const DELETING: [usize; 2] = [1, LAGGING];

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

/// One thread per datanode of `cluster`, in index order, each running [`tick_datanode`];
/// `restart` names the datanode that restarts and the round it does, if one does.
pub(super) fn spawn_datanodes<T: Send + 'static>(
    cluster: &Arc<MiniOzoneCluster>,
    restart: Option<(usize, usize)>,
) -> Vec<thread::JoinHandle<Result<Vec<T>, Violation>>> {
    spawn_datanodes_with_deleting_services(cluster, restart, &[])
}

/// [`spawn_datanodes`], except that each datanode of `services` (the restarting one
/// aside) runs its block deleting service on a thread of its own, and its ticks leave the
/// service out: the service runs once a round, while the round's tick runs. A datanode's service and its command handler are different threads, so
/// a deletion can land while a reconcile command runs. A restart stops every thread of
/// the process first: the restarting datanode keeps its service in its ticks.
pub(super) fn spawn_datanodes_with_deleting_services<T: Send + 'static>(
    cluster: &Arc<MiniOzoneCluster>,
    restart: Option<(usize, usize)>,
    services: &[usize],
) -> Vec<thread::JoinHandle<Result<Vec<T>, Violation>>> {
    let mut handles = Vec::new();
    let mut service_threads = Vec::new();
    for index in 0..cluster.datanode_count() {
        let restart_at = restart.filter(|(dn, _)| *dn == index).map(|(_, at)| at);
        let ticked = (services.contains(&index) && restart_at.is_none()).then(|| {
            let (ticked, ticks) = channel::unbounded();
            let cluster = Arc::clone(cluster);
            service_threads.push(move || run_deleting_service(&cluster, index, &ticks));
            ticked
        });
        let cluster = Arc::clone(cluster);
        handles.push(thread::spawn(move || {
            tick_datanode(&cluster, index, restart_at, ticked.as_ref())
        }));
    }
    handles.extend(service_threads.into_iter().map(thread::spawn));
    handles
}

/// A datanode's thread: [`ROUNDS`] ticks of the datanode at `index`, except that at round
/// `restart_at` the process restarts from its volume instead (its own thread does it, as
/// a real restart stops every thread of the process first). With `ticked`, its block
/// deleting service runs on another thread: each round signals it, and the ticks leave
/// it out.
fn tick_datanode<T>(
    cluster: &MiniOzoneCluster,
    index: usize,
    restart_at: Option<usize>,
    ticked: Option<&channel::Sender<()>>,
) -> Result<Vec<T>, Violation> {
    for round in 0..ROUNDS {
        if restart_at == Some(round) {
            cluster.restart_datanode(index).map_err(setup)?;
        } else if let Some(ticked) = ticked {
            // The service's run of this round deletes what earlier rounds' commands
            // marked, while this round's commands run. The service thread has ended only
            // if it failed; its handle reports that.
            let _ = ticked.send(());
            cluster.tick_datanode_commands(index).map_err(setup)?;
        } else {
            cluster.tick_datanode(index).map_err(setup)?;
        }
    }
    Ok(Vec::new())
}

/// The block deleting service's thread of the datanode at `index`: one run each round of
/// the datanode's thread, until that thread is done.
fn run_deleting_service<T>(
    cluster: &MiniOzoneCluster,
    index: usize,
    ticks: &channel::Receiver<()>,
) -> Result<Vec<T>, Violation> {
    while ticks.recv().is_ok() {
        cluster.run_block_deleting_service(index).map_err(setup)?;
    }
    Ok(Vec::new())
}
