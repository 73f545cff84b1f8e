//! `StateContext`: the datanode's command queue and the leader-SCM term that fences
//! commands of a stale SCM leader (HDDS-3988, HDDS-7621, HDDS-17268).
//!
//! **The race (HDDS-17268).** Before the term is initialised, the term of a heartbeat
//! response was discarded, so init took the old leader's term from the first queued
//! command; and the heartbeat path raised the term with an unlocked check-then-set, so two
//! SCMs answering as leader at once could leave the term at 2 after 3 was applied.
//!
//! **The fix.** A heartbeat term seen before init is recorded, and init takes the larger of
//! it and the highest queued command term; every term update holds the context lock; the
//! term is mirrored in an atomic written only under that lock, for the handler threads.
//!
//! [`StateContextBehavior`] names the upstream code each variant equals: the seed's patch
//! (`SeedPatch`), the code before it (`Legacy`, both defects) and each defect on its own,
//! and `Hardened`, the patch plus this crate's wait for a leader's term, which also closes
//! the window the patch leaves open.
//!
//! # Example
//!
//! ```
//! # hadoop_ref::sync::run_example(|| {
//! use hadoop_ref::clock::ManualClock;
//! use hadoop_ref::datanode::state_context::{
//!     EndpointState, StateContext, StateContextBehavior, StateContextConfig,
//! };
//! use hadoop_ref::hdds::command::{CommandId, CommandKind, ScmCommand};
//! use hadoop_ref::hdds::ids::{ContainerId, ScmId};
//!
//! let ctx = StateContext::new(
//!     StateContextBehavior::SeedPatch,
//!     StateContextConfig::default(),
//!     &[(ScmId(1), false)],
//!     ManualClock::new(0).shared(),
//! )?;
//! ctx.endpoints()[0].set_state(EndpointState::Heartbeat);
//!
//! // The new leader's heartbeat (term 2) arrives before any command ...
//! ctx.update_term_from_heartbeat(2)?;
//! // ... then the old leader's force delete of term 1.
//! let delete = CommandKind::DeleteContainer { container: ContainerId(7), force: true };
//! ctx.add_command(ScmCommand::new(CommandId(1), 1, delete))?;
//!
//! // Init takes term 2 and drops the stale command.
//! assert!(ctx.get_next_command().is_none());
//! assert_eq!(ctx.term_of_leader(), Some(2));
//! # Ok::<(), hadoop_ref::datanode::DatanodeError>(())
//! # });
//! ```

mod behavior;
mod context;
mod contract;
mod dispatch;
mod endpoint;

pub use behavior::{StateContextBehavior, StateContextConfig};
pub use context::{StateContext, StateContextStats};
pub use contract::{StateContextApi, StateContextFactory};
pub use dispatch::{DispatchedCommand, TermObservation};
pub use endpoint::{EndpointState, EndpointStateMachine};
