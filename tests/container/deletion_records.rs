//! The tree file is Ozone's only record of a deletion (HDDS-16811's fix reads it): a lost
//! or damaged tree file lets a scan and a reconciliation restore a deleted block. The
//! hardened `deletion_records_in_database` keeps the record in the database as well.

use hadoop_ref::datanode::container::{ContainerBehavior, ContainerConfig};
use hadoop_ref::hdds::container::ContainerState;
use hadoop_ref::hdds::ids::DatanodeId;
use hadoop_ref::scenarios::container::{BLOCK_X, deleted_blocks_not_live};
use hadoop_ref::sim::replica_node::{ReplicaNode, transaction};

/// dn1 deletes X, which dn2 still holds; dn1's tree file is then replaced by `tree` (lost
/// or damaged) and dn1 restarts; it scans, then reconciles with dn2 (and scans). Whether
/// X stays deleted.
fn x_stays_deleted(config: ContainerConfig, tree: Option<Vec<u8>>) -> bool {
    let qc = ContainerState::QuasiClosed;
    let dn1 = ReplicaNode::new(DatanodeId(1), config, qc, &[(BLOCK_X, 2)]).unwrap();
    let dn2 = ReplicaNode::new(DatanodeId(2), config, qc, &[(BLOCK_X, 2)]).unwrap();
    dn1.store_transactions(&[transaction(1, &[BLOCK_X])])
        .unwrap();
    dn1.delete_blocks().unwrap();
    deleted_blocks_not_live(&dn1, &[BLOCK_X]).unwrap();
    dn1.memory().unwrap().overwrite_tree_file(tree);
    // As after a power loss: the datanode restarts from what its storage holds.
    dn1.handler.restart().unwrap();
    // A scan rewrites the tree; reconciliation then compares it with dn2's. Either may
    // refuse on the way (an unreadable tree): the outcome is what matters.
    let _ = dn1.handler.scan(hadoop_ref::sim::replica_node::CONTAINER);
    let _ = dn1.reconcile(&[&dn2]);
    deleted_blocks_not_live(&dn1, &[BLOCK_X]).is_ok()
}

#[test]
fn a_lost_tree_file_restores_a_deleted_block_unless_recorded() {
    let seed = ContainerConfig::new(ContainerBehavior::SeedPatch);
    let hardened = ContainerConfig::new(ContainerBehavior::Hardened);
    let without = ContainerConfig {
        deletion_records_in_database: false,
        ..hardened
    };
    for (tree, what) in [(None, "lost"), (Some(b"damaged".to_vec()), "damaged")] {
        assert!(
            !x_stays_deleted(seed, tree.clone()),
            "SeedPatch, tree {what}"
        );
        assert!(
            !x_stays_deleted(without, tree.clone()),
            "Hardened without records, tree {what}"
        );
        assert!(x_stays_deleted(hardened, tree), "Hardened, tree {what}");
    }
}
