//! The defect table: every caught case of the catalogue names the defect it shows, and no
//! case that must hold names one.

use hadoop_ref::check::catalogue::{self, Expectation, defect_of};

#[test]
fn every_caught_case_names_its_defect_and_no_fixed_case_does() {
    for case in catalogue::all() {
        let defect = defect_of(&case);
        match case.expectation {
            Expectation::Caught => {
                let defect = defect.unwrap_or_else(|| panic!("{} names no defect", case.id()));
                assert!(
                    defect.key.starts_with("HDDS-")
                        || defect.key.starts_with("HDFS-")
                        || defect.key.starts_with("beyond "),
                    "{}: {}",
                    case.id(),
                    defect.key
                );
                assert!(!defect.what.is_empty());
            }
            Expectation::Holds => assert_eq!(defect, None, "{}", case.id()),
        }
    }
}
