//! Every scenario with the variants it runs and what each must do: fixed variants must
//! hold, legacy variants must be caught. The shuttle tests and the soak tool iterate it.

#[macro_use]
pub(crate) mod case;
mod allocation;
mod cluster;
mod container;
mod defects;
mod explorable;
mod scm_windows;
mod standby;
mod standby_windows;
mod term_fencing;
pub mod windows;

pub use allocation::allocation;
pub use case::{Case, Expectation};
pub use cluster::cluster;
pub use container::container;
pub use defects::{Defect, defect_of};
pub use explorable::explorable;
pub use standby::standby;
pub use term_fencing::{STALE_LEADER_ROUNDS, term_fencing};

/// Every scenario of the crate.
pub fn all() -> Vec<Case> {
    let mut cases = term_fencing();
    cases.extend(allocation());
    cases.extend(standby());
    cases.extend(container());
    cases.extend(cluster());
    windows::attach(&mut cases);
    cases
}
