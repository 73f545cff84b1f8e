//! The pending bucket of one datanode (HDDS-16891) without an SCM: the slot arithmetic of
//! `StorageReport` and `hasSlot`, and the `TwoWindowBucket`'s roll, counts and space check.

use hadoop_ref::hdds::ids::ContainerId;
use hadoop_ref::hdds::report::StorageReport;
use hadoop_ref::scm::pending::{TwoWindowBucket, has_slot};

use crate::test_util::allocation::{ROLL_MS, SIZE, report};

// --- slot arithmetic (`StorageReport` usable space, `hasSlot`) ---------------------------

#[test]
fn usable_space_subtracts_committed_and_spare_and_never_goes_negative() {
    assert_eq!(StorageReport::new(1000, 300, 200).usable(), 500);
    assert_eq!(StorageReport::new(100, 300, 0).usable(), 0);
    assert_eq!(StorageReport::new(100, 50, 80).usable(), 0);
    assert_eq!(StorageReport::new(1000, 300, 200).slots(SIZE), 5);
    assert_eq!(
        StorageReport::new(1000, 0, 0).slots(0),
        0,
        "zero size is no slot"
    );
}

#[test]
fn has_slot_needs_more_slots_than_pending_and_skips_failed_volumes() {
    let failed = StorageReport {
        failed: true,
        ..report(10)
    };
    assert!(!has_slot(&[], SIZE, 0), "no report, no slot");
    assert!(has_slot(&[report(1)], SIZE, 0));
    assert!(!has_slot(&[report(1)], SIZE, 1));
    assert!(has_slot(&[report(1), report(1)], SIZE, 1), "volumes add up");
    assert!(
        !has_slot(&[failed, report(1)], SIZE, 1),
        "a failed volume counts for nothing"
    );
}

// --- the bucket (`TwoWindowBucket`) -----------------------------------------------------

#[test]
fn entry_survives_one_roll_and_ages_out_at_the_second() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    assert!(bucket.add(ContainerId(1)));
    assert_eq!(bucket.roll_if_needed(999), 0);
    assert_eq!(
        bucket.roll_if_needed(1_000),
        0,
        "first roll moves it to previous"
    );
    assert!(bucket.contains(ContainerId(1)));
    assert_eq!(bucket.roll_if_needed(2_000), 1, "second roll drops it");
    assert!(!bucket.contains(ContainerId(1)));
}

#[test]
fn two_intervals_without_access_drop_both_windows() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    bucket.add(ContainerId(1));
    bucket.roll_if_needed(1_000);
    bucket.add(ContainerId(2));
    assert_eq!(bucket.roll_if_needed(3_000), 2);
    assert_eq!(bucket.pending_count(), 0);
}

#[test]
fn roll_time_resets_to_the_access_time() {
    // Rolls drift with access times: an entry can live close to three intervals.
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    bucket.add(ContainerId(1));
    bucket.roll_if_needed(1_990);
    assert!(bucket.contains(ContainerId(1)));
    bucket.roll_if_needed(2_900);
    assert!(bucket.contains(ContainerId(1)), "not yet a second roll");
    bucket.roll_if_needed(2_990);
    assert!(!bucket.contains(ContainerId(1)));
}

#[test]
fn same_container_in_both_windows_counts_twice() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    bucket.add(ContainerId(1));
    bucket.roll_if_needed(1_000);
    bucket.add(ContainerId(1));
    assert_eq!(bucket.pending_count(), 2);
    assert!(bucket.remove(ContainerId(1)));
    assert_eq!(
        bucket.pending_count(),
        0,
        "remove takes it from both windows"
    );
    assert!(!bucket.remove(ContainerId(1)));
}

#[test]
fn check_space_and_add_refuses_without_slot() {
    let mut bucket = TwoWindowBucket::new(0, ROLL_MS);
    assert!(bucket.check_space_and_add(&[report(2)], SIZE, ContainerId(1)));
    assert!(bucket.check_space_and_add(&[report(2)], SIZE, ContainerId(2)));
    assert!(!bucket.check_space_and_add(&[report(2)], SIZE, ContainerId(3)));
    assert!(!bucket.contains(ContainerId(3)));
}
