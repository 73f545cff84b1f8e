//! # hadoop-ref
//!
//! An executable reference, in production style, of the concurrency-critical control-plane
//! pieces of Apache Ozone (HDDS) and HDFS HA whose races were found by model checking and
//! code review — with every fix in place, every unpatched defect still selectable, and
//! checkers that prove the difference.
//!
//! ## What is modelled
//!
//! | module | seed | the race |
//! |---|---|---|
//! | [`datanode`] | HDDS-17268 | the heartbeat SCM term ignored before term init, and updated with an unlocked check-then-set, let a stale leader's command run on the real replica |
//! | [`datanode::container`] | HDDS-16811, HDDS-16808 | block deletion before or during a block's repair by reconciliation restores the deleted block or commits its metadata without its file |
//! | [`namenode`] | HDFS-2742 | the standby judges a datanode's RBW report after replaying the block's completion and marks a healthy replica corrupt (then every replica can be lost); a replica credited before completion leaves safe-mode counts short |
//! | [`scm`] | HDDS-16891 | after a leader change or restart the SCM has no pending allocations and grants again the slots of containers not yet written |
//!
//! ## The layers
//!
//! Arrows point down only, and no component imports another (`ci/check-layering` checks
//! both, and that no two source files import each other, directly or around a cycle):
//!
//! | layer | modules | what it holds |
//! |---|---|---|
//! | tools | `bin/soak` | the soak tool: every catalogue case under shuttle |
//! | checking | [`check`] | the catalogue of cases and what each must do; the shuttle harness |
//! | scenarios | [`scenarios`] | per seed: the named invariants, the seed's reproductions, a random cluster |
//! | simulation | [`sim`] | in-process SCMs, Ratis, peers and their network, a faulty store, simulated datanodes of both systems |
//! | components | [`datanode`], [`scm`], [`namenode`] | the production code the checkers run |
//! | protocol | [`hdds`] | the Ozone types the datanode, the SCM and the simulation share |
//! | base | [`sync`], [`clock`], [`unmodelled`], [`story`] | the synchronization facade, time, harness bookkeeping kept outside the model, and the recorder of protocol events |
//!
//! ## How it is checked
//!
//! The same source runs in three builds, chosen by [`sync`]: production (`parking_lot`,
//! `std` threads, `crossbeam-channel`, `arc-swap`), `--cfg loom` (exhaustive exploration of
//! each small race, `loom-tests/`) and `--features shuttle` (randomized and PCT schedules
//! of multi-node runs, `shuttle-tests/` and the `soak` tool). Time comes from a
//! [`clock::Clock`], randomness from a seed passed in. The [`scenarios`] hold the drivers
//! and the named invariants every checker reuses; [`check::catalogue`] says, for every
//! scenario and variant, whether it must hold or be caught.
//!
//! ## Embedding
//!
//! Build on the components directly, as in production:
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::clock::SystemClock;
//! use hadoop_ref::datanode::state_context::{
//!     StateContext, StateContextBehavior, StateContextConfig,
//! };
//! use hadoop_ref::hdds::ids::ScmId;
//!
//! let context = StateContext::new(
//!     StateContextBehavior::SeedPatch,
//!     StateContextConfig::default(),
//!     &[(ScmId(1), false), (ScmId(2), false), (ScmId(3), false)],
//!     SystemClock::shared(),
//! )?;
//! context.update_term_from_heartbeat(4)?;
//! assert_eq!(context.term_of_leader(), None); // recorded, used at init
//! # Ok::<(), hadoop_ref::datanode::DatanodeError>(())
//! # });
//! ```
//!
//! [`datanode::daemon::Datanode`] assembles a whole datanode with its threads over a
//! volume it restarts from; its example shows it against an in-process SCM endpoint.
//!
//! Because the backend is picked by `cfg(loom)` and the `shuttle` feature, a downstream
//! crate's own loom or shuttle tests put this crate into the same mode, and its scenarios
//! ([`scenarios::term_fencing`], [`scenarios::allocation`], [`scenarios::standby`],
//! [`scenarios::container`]) run inside them unchanged.
//!
//! ## Check your own implementation
//!
//! Each seed's component has a boundary trait, named after the upstream class it stands
//! for and implemented by the crate's own component in every behavior:
//! [`StateContextApi`](datanode::state_context::StateContextApi) (HDDS-17268),
//! [`PendingContainerTrackerApi`](scm::PendingContainerTrackerApi) (HDDS-16891),
//! [`NamesystemApi`](namenode::namesystem::NamesystemApi) (HDFS-2742) and
//! [`KeyValueContainerApi`](datanode::container::KeyValueContainerApi) (HDDS-16811, the
//! whole replica: its race's other party, a block deleting pass, runs on no SCM command).
//! Implement one for your own code, with `hadoop_ref::sync` for every lock, and
//! [`check::conformance`] runs the seed's loom models, its shuttle cases and a
//! differential property test against it, in a few lines per build.
//!
//! ```ignore
//! #[cfg(loom)]
//! #[test]
//! fn mine_passes_the_hdds_17268_loom_models() {
//!     term_fencing::loom_suite(MyStateContext::start, SeedPatch).assert_passes();
//! }
//! #[cfg(not(any(loom, feature = "shuttle")))]
//! #[test]
//! fn mine_behaves_as_the_seed_patch() {
//!     term_fencing::differential(MyStateContext::start, SeedPatch, &Default::default())
//!         .assert_conforms();
//! }
//! ```
//!
//! `docs/conformance.md` has the whole recipe, and `examples/conformance-kit` a correct
//! and a defective implementation of three of the components.

#![warn(missing_docs)]

pub mod check;
pub mod clock;
pub mod datanode;
pub mod events;
pub mod hdds;
pub mod namenode;
pub mod scenarios;
pub mod scm;
pub mod sim;
pub mod story;
pub mod sync;
pub mod unmodelled;
