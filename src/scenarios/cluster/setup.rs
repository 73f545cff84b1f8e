//! What the cluster scenarios share: their set-up failure, their round count, and the
//! thread that ticks one datanode.

use super::invariants::SEED_KEY;
use crate::scenarios::Violation;
use crate::sim::mini_cluster::{ClusterError, Key, MiniOzoneCluster};
use crate::sync::{Arc, thread};

/// Rounds each datanode thread and each driver thread run before the cluster settles.
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

/// One thread per datanode of `cluster`, in index order, each running [`tick_datanode`];
/// `restart` names the datanode that restarts and the round it does, if one does.
pub(super) fn spawn_datanodes<T: Send + 'static>(
    cluster: &Arc<MiniOzoneCluster>,
    restart: Option<(usize, usize)>,
) -> Vec<thread::JoinHandle<Result<Vec<T>, Violation>>> {
    (0..cluster.datanode_count())
        .map(|index| {
            let cluster = Arc::clone(cluster);
            let restart_at = restart.filter(|(dn, _)| *dn == index).map(|(_, at)| at);
            thread::spawn(move || tick_datanode(&cluster, index, restart_at))
        })
        .collect()
}

/// A datanode's thread: [`ROUNDS`] ticks of the datanode at `index`, except that at round
/// `restart_at` the process restarts from its volume instead (its own thread does it, as
/// a real restart stops every thread of the process first).
fn tick_datanode<T>(
    cluster: &MiniOzoneCluster,
    index: usize,
    restart_at: Option<usize>,
) -> Result<Vec<T>, Violation> {
    for round in 0..ROUNDS {
        if restart_at == Some(round) {
            cluster.restart_datanode(index).map_err(setup)?;
        } else {
            cluster.tick_datanode(index).map_err(setup)?;
        }
    }
    Ok(Vec::new())
}
