//! A datanode that registers again (HDDS-16891, beyond the seed) without a checker: what
//! `SCMNodeManager.register` compares, the fresh `DatanodeInfo` of a changed address,
//! version or port set (and which of them processes the registration's node report), and
//! `ScmHardening::keep_space_on_reregistration` on and off.

use hadoop_ref::hdds::ids::{ContainerId, DatanodeId};
use hadoop_ref::scenarios::allocation::{
    SEED_KEY, reregistration_keeps_unwritten_slots, reregistration_keeps_unwritten_slots_with,
};
use hadoop_ref::scm::datanode_details::PortName;
use hadoop_ref::scm::{
    DatanodeDetails, Registration, RegistrationChange, ScmBehavior, ScmError, ScmHardening,
    StorageContainerManager,
};

use crate::test_util::allocation::{Fixture, pending, report};

const CHANGES: [RegistrationChange; 3] = [
    RegistrationChange::Address,
    RegistrationChange::Version,
    RegistrationChange::Ports,
];

/// The details of datanode `dn` with `change` applied.
fn changed(dn: u64, change: RegistrationChange) -> DatanodeDetails {
    let mut details = DatanodeDetails::new(DatanodeId(dn));
    match change {
        RegistrationChange::Address => details.ip_address = format!("10.0.9.{dn}"),
        RegistrationChange::Version => details.version = "2.3.0".into(),
        RegistrationChange::Ports => {
            details.ports.insert(PortName::Ratis, 19858);
        }
    }
    details
}

/// A serving SCM of `behavior` (with `hardening`) on p1 only, datanodes of one slot, and
/// c1 granted on p1.
fn serving_with_one_grant(
    behavior: ScmBehavior,
    hardening: ScmHardening,
) -> (Fixture, StorageContainerManager) {
    let mut f = Fixture::p1_only();
    f.config.hardening = hardening;
    let scm = f.scm(1, behavior, 1);
    f.lead(&scm);
    scm.allocate_container().unwrap();
    (f, scm)
}

#[test]
fn registration_change_is_judged_address_then_version_then_ports() {
    let registered = DatanodeDetails::new(DatanodeId(1));
    assert_eq!(registered.change_to(&registered.clone()), None);
    for change in CHANGES {
        assert_eq!(registered.change_to(&changed(1, change)), Some(change));
    }
    let mut everything = changed(1, RegistrationChange::Address);
    everything.version = "2.3.0".into();
    everything.ports.insert(PortName::Ratis, 19858);
    assert_eq!(
        registered.change_to(&everything),
        Some(RegistrationChange::Address)
    );
    let mut host = registered.clone();
    host.host_name = "dn1.new".into();
    assert_eq!(
        registered.change_to(&host),
        Some(RegistrationChange::Address)
    );
}

#[test]
fn address_change_gives_a_fresh_datanode_info_with_the_registration_report() {
    let (_f, scm) = serving_with_one_grant(ScmBehavior::SeedPatch, ScmHardening::ALL);
    assert_eq!(pending(&scm, 1).len(), 1);
    let registration =
        scm.register_datanode(&changed(1, RegistrationChange::Address), vec![report(3)]);
    assert_eq!(
        registration,
        Registration::Updated(RegistrationChange::Address)
    );
    let node = scm.nodes().get(DatanodeId(1)).unwrap();
    assert_eq!(node.storage_reports(), vec![report(3)]);
    assert_eq!(node.details(), &changed(1, RegistrationChange::Address));
    assert!(pending(&scm, 1).is_empty(), "Ozone's fresh bucket");
}

#[test]
fn version_or_port_change_leaves_no_storage_report_until_the_next_heartbeat() {
    for change in [RegistrationChange::Version, RegistrationChange::Ports] {
        let (_f, scm) = serving_with_one_grant(ScmBehavior::SeedPatch, ScmHardening::ALL);
        for dn in 1..=3 {
            let details = changed(dn, change);
            assert_eq!(
                scm.register_datanode(&details, vec![report(1)]),
                Registration::Updated(change)
            );
        }
        assert!(
            scm.nodes()
                .get(DatanodeId(1))
                .unwrap()
                .storage_reports()
                .is_empty()
        );
        assert_eq!(
            scm.allocate_container(),
            Err(ScmError::NoPipelineWithSpace),
            "{change:?}"
        );
        for dn in 1..=3 {
            scm.process_node_report(DatanodeId(dn), vec![report(1)])
                .unwrap();
        }
        assert!(
            scm.allocate_container().is_ok(),
            "{change:?}: the forgotten slot is granted again"
        );
    }
}

#[test]
fn registering_again_with_the_same_details_changes_nothing() {
    let (_f, scm) = serving_with_one_grant(ScmBehavior::SeedPatch, ScmHardening::ALL);
    let before = pending(&scm, 1);
    let registration = scm.register_datanode(&DatanodeDetails::new(DatanodeId(1)), vec![report(9)]);
    assert_eq!(registration, Registration::Unchanged);
    assert_eq!(pending(&scm, 1), before);
    assert_eq!(
        scm.nodes().get(DatanodeId(1)).unwrap().storage_reports(),
        vec![report(1)],
        "the registration's node report is not processed"
    );
}

#[test]
fn hardened_keeps_the_space_record_across_reregistration() {
    for change in CHANGES {
        let (_f, scm) = serving_with_one_grant(ScmBehavior::Hardened, ScmHardening::ALL);
        let granted = pending(&scm, 1);
        for dn in 1..=3 {
            let details = changed(dn, change);
            scm.register_datanode(&details, vec![report(1)]);
            scm.process_node_report(DatanodeId(dn), vec![report(1)])
                .unwrap();
        }
        assert_eq!(pending(&scm, 1), granted, "{change:?}");
        assert_eq!(
            scm.allocate_container(),
            Err(ScmError::NoPipelineWithSpace),
            "{change:?}"
        );
    }
}

#[test]
fn hardened_without_keep_space_switch_forgets_pending_entries_on_reregistration() {
    let hardening = ScmHardening {
        keep_space_on_reregistration: false,
        ..ScmHardening::ALL
    };
    for change in CHANGES {
        let (_f, scm) = serving_with_one_grant(ScmBehavior::Hardened, hardening);
        scm.register_datanode(&changed(1, change), vec![report(1)]);
        assert!(pending(&scm, 1).is_empty(), "{change:?}");
    }
}

#[test]
fn reregistered_pipeline_keeps_unwritten_slots_only_with_the_kept_space_record() {
    let without_switch = ScmHardening {
        keep_space_on_reregistration: false,
        ..ScmHardening::ALL
    };
    for change in CHANGES {
        assert_eq!(
            reregistration_keeps_unwritten_slots(ScmBehavior::Hardened, change),
            Ok(()),
            "{change:?}"
        );
        for result in [
            reregistration_keeps_unwritten_slots_with(
                ScmBehavior::Hardened,
                without_switch,
                change,
            ),
            reregistration_keeps_unwritten_slots(ScmBehavior::SeedPatch, change),
        ] {
            let violation = result.expect_err("the fresh buckets grant C1's slots again");
            assert_eq!(violation.seed, SEED_KEY, "{change:?}: {violation}");
        }
    }
}

#[test]
fn replaced_datanode_info_reads_and_records_where_its_replacement_does_only_when_kept() {
    let without_switch = ScmHardening {
        keep_space_on_reregistration: false,
        ..ScmHardening::ALL
    };
    for (hardening, shared) in [(ScmHardening::ALL, true), (without_switch, false)] {
        let (_f, scm) = serving_with_one_grant(ScmBehavior::Hardened, hardening);
        // An allocation or a rebuild that resolved dn1 just before it registers again.
        let old = scm.nodes().get(DatanodeId(1)).unwrap();
        scm.register_datanode(&changed(1, RegistrationChange::Version), vec![report(1)]);
        assert!(
            old.storage_reports().is_empty() == shared,
            "{hardening:?}: kept, the shared reports are cleared as in Ozone's fresh DatanodeInfo; not kept, the old ones stay frozen"
        );
        scm.process_node_report(DatanodeId(1), vec![report(3)])
            .unwrap();
        assert_eq!(
            old.storage_reports() == vec![report(3)],
            shared,
            "{hardening:?}"
        );
        let tracker = scm.nodes().tracker();
        assert!(tracker.check_space_and_record_allocation(&old, ContainerId(99)) == shared);
        assert_eq!(
            pending(&scm, 1).contains(&ContainerId(99)),
            shared,
            "{hardening:?}"
        );
    }
}
