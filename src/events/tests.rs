//! The event macros' two paths: typed to the thread's hook, `tracing` without one.

use super::{Arg, EventHook, Site, hook, with_hook};
use crate::unmodelled::Shared;

/// Keeps each event's name and values, written out, for the test to read.
#[derive(Clone, Default)]
struct Kept(Shared<Vec<String>>);

impl EventHook for Kept {
    fn event(&self, site: &Site<'_>, args: &[Arg<'_>]) {
        let values: Vec<String> = site
            .fields
            .iter()
            .zip(args)
            .map(|(name, arg)| format!("{name}={}:{arg}", kind(arg)))
            .collect();
        let line = format!("{} [{}]", site.name, values.join(" "));
        self.0.with(|lines| lines.push(line));
    }
}

/// What kind of value `arg` is.
fn kind(arg: &Arg<'_>) -> &'static str {
    match arg {
        Arg::Absent => "absent",
        Arg::U64(_) => "u64",
        Arg::I64(_) => "i64",
        Arg::Bool(_) => "bool",
        Arg::Str(_) => "str",
        Arg::Id { .. } => "id",
        Arg::Display(_) => "display",
        Arg::Debug(_) => "debug",
    }
}

fn kept_while(f: impl FnOnce()) -> Vec<String> {
    let kept = Kept::default();
    with_hook(hook(kept.clone()), f);
    kept.0.with(|lines| lines.clone())
}

/// A datanode's id, as the protocol's ids are written (`dn3`).
#[derive(Debug, Clone, Copy)]
struct Dn(u64);

impl std::fmt::Display for Dn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dn{}", self.0)
    }
}

impl super::EventId for Dn {
    const PREFIX: &'static str = "dn";

    fn number(&self) -> u64 {
        self.0
    }
}

/// A replica's state, written as one of a few fixed texts.
struct Finalized;

impl std::fmt::Display for Finalized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FINALIZED")
    }
}

impl super::EventText for Finalized {
    fn text(&self) -> &'static str {
        "FINALIZED"
    }
}

#[test]
fn values_reach_the_hook_as_they_are() {
    let node = Dn(3);
    let peer = Some(Dn(4));
    let peers = "dn4,dn5".to_owned();
    let absent: Option<u64> = None;
    let lines = kept_while(|| {
        super::debug!(
            node = %node,
            term = 4_i64,
            debt = -2_i64,
            gone = absent,
            why = "stale",
            %peers,
            state = %Finalized,
            ?peer,
            "checked"
        );
    });
    let expected = "checked [node=id:dn3 term=u64:4 debt=i64:-2 gone=absent: why=str:stale \
                    peers=display:dn4,dn5 state=str:FINALIZED peer=debug:Some(Dn(4))]";
    assert_eq!(lines, [expected]);
}

/// Postmortem: the values were first evaluated inside the hook's busy section, so an
/// event emitted while they were evaluated (another task's, at a scheduling point a value
/// reached) was dropped, and shuttle runs recorded stories with holes.
#[test]
fn an_event_emitted_while_another_evaluates_its_values_is_kept() {
    let lines = kept_while(|| {
        let inner = || {
            super::debug!(n = 1_u64, "inner");
            2_u64
        };
        super::debug!(n = inner(), "outer");
    });
    assert_eq!(lines, ["inner [n=u64:1]", "outer [n=u64:2]"]);
}

#[test]
fn an_event_the_hook_emits_is_dropped() {
    struct Echo(Kept);
    impl EventHook for Echo {
        fn event(&self, site: &Site<'_>, args: &[Arg<'_>]) {
            self.0.event(site, args);
            super::debug!("echo");
        }
    }
    let kept = Kept::default();
    with_hook(hook(Echo(kept.clone())), || super::debug!("first"));
    assert_eq!(kept.0.with(|lines| lines.clone()), ["first []"]);
}

#[test]
fn silenced_events_reach_no_hook() {
    let lines = kept_while(|| {
        super::silenced(|| super::debug!("hidden"));
        super::debug!("shown");
    });
    assert_eq!(lines, ["shown []"]);
}
