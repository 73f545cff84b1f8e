//! The replica reports a NameNode log shows: each report received is kept until the
//! line that says what became of it (queued, marked corrupt, stored, ignored), and one no
//! line judged becomes `report processed` (`nothing logged`) when a newer report of the
//! same replica arrives, or at the end; the corrupt marks standing, to lift the ones a
//! replica reported again lifts, and all of them at a restart.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::super::event::{At, Emitted};
use super::super::statement::{Captures, hdfs_block, number_after};
use super::statements::{Id, REPORTS};

/// A replica: block id and datanode.
type Replica = (u64, String);

/// A report received and not yet judged in the log.
#[derive(Debug, Clone)]
struct Pending {
    gs: u64,
    state: String,
    origin: &'static str,
    line: usize,
    time_ms: u64,
    thread: String,
}

/// The reports and corrupt marks of one NameNode.
#[derive(Debug, Default)]
pub(super) struct Reports {
    pending: BTreeMap<Replica, Pending>,
    /// Replicas whose next report comes from the standby queue.
    requeued: BTreeSet<Replica>,
    /// Standing corrupt marks: whether each was for a genstamp mismatch.
    marks: BTreeMap<Replica, bool>,
}

impl Reports {
    /// Applies a report's line.
    pub(super) fn apply(
        &mut self,
        id: Id,
        v: &Captures<'_>,
        at: At<'_>,
        postponing: bool,
        out: &mut VecDeque<Emitted>,
    ) {
        match id {
            Id::Reported | Id::InitialReport => self.received(id, v, at, out),
            Id::Requeued => {
                if let Some((block, _)) = hdfs_block(v.get(0)) {
                    self.requeued.insert((block, v.get(1).to_owned()));
                }
            }
            Id::Queueing => self.queued(v, at, out),
            Id::CorruptAdded | Id::CorruptAgain => self.marked(v, at, postponing, out),
            Id::Stored => self.judged(v.get(1), v.get(0), "stored", at, out),
            Id::RbwIgnored => self.judged(v.get(0), v.get(1), "ignored", at, out),
            Id::Redundant => {
                self.judged(v.get(0), v.get(1), "reported again", at, out);
                let Some((block, _)) = hdfs_block(v.get(0)) else {
                    return;
                };
                let replica = (block, v.get(1).to_owned());
                if self.marks.get(&replica) == Some(&true) {
                    self.marks.remove(&replica);
                    out.push_back(lifted(&replica, "reported again", at));
                }
            }
            Id::Removed => {
                let Some((block, _)) = hdfs_block(v.get(0)) else {
                    return;
                };
                let replica = (block, v.get(1).to_owned());
                self.marks.remove(&replica);
                let fields = vec![
                    ("block", format!("blk_{block}")),
                    ("datanode", replica.1),
                    ("why", "location removed".to_owned()),
                ];
                out.push_back(at.event(REPORTS, "location removed", fields));
            }
            _ => {}
        }
    }

    /// The process restarted: its marks and queues are gone.
    pub(super) fn restart(&mut self, at: At<'_>, out: &mut VecDeque<Emitted>) {
        self.flush_all(out);
        self.requeued.clear();
        for (replica, _) in std::mem::take(&mut self.marks) {
            out.push_back(lifted(&replica, "NameNode restarted", at));
        }
    }

    /// Every report still pending, as judged with nothing logged, oldest first.
    pub(super) fn flush_all(&mut self, out: &mut VecDeque<Emitted>) {
        let mut pending: Vec<_> = std::mem::take(&mut self.pending).into_iter().collect();
        pending.sort_by_key(|(_, p)| p.line);
        for (replica, report) in pending {
            out.push_back(nothing_logged(&replica, report));
        }
    }

    fn received(&mut self, id: Id, v: &Captures<'_>, at: At<'_>, out: &mut VecDeque<Emitted>) {
        let Some((block, gs)) = hdfs_block(v.get(0)) else {
            return;
        };
        let replica = (block, v.get(1).to_owned());
        let state = v.get(3).trim().to_owned();
        if let Some(old) = self.pending.get(&replica) {
            if old.gs == gs && old.state == state {
                return; // the same report, logged again by the method it is handed to
            }
            if let Some(old) = self.pending.remove(&replica) {
                out.push_back(nothing_logged(&replica, old));
            }
        }
        let origin = if self.requeued.remove(&replica) {
            "queued"
        } else if id == Id::InitialReport {
            "full"
        } else {
            "incremental"
        };
        let pending = Pending {
            gs,
            state,
            origin,
            line: at.line,
            time_ms: at.time_ms,
            thread: at.thread.to_owned(),
        };
        self.pending.insert(replica, pending);
    }

    /// The origin of the report of `replica` being judged, taking it out of pending.
    fn take(&mut self, replica: &Replica) -> (Option<Pending>, &'static str) {
        match self.pending.remove(replica) {
            Some(p) => {
                let origin = p.origin;
                (Some(p), origin)
            }
            None if self.requeued.remove(replica) => (None, "queued"),
            None => (None, "incremental"),
        }
    }

    fn queued(&mut self, v: &Captures<'_>, at: At<'_>, out: &mut VecDeque<Emitted>) {
        let Some((block, gs)) = hdfs_block(v.get(0)) else {
            return;
        };
        let replica = (block, v.get(2).to_owned());
        let (_, origin) = self.take(&replica);
        let fields = vec![
            ("block", format!("blk_{block}")),
            ("datanode", replica.1),
            ("gs", gs.to_string()),
            ("report", origin.to_owned()),
            ("state", v.get(1).to_owned()),
            ("why", v.get(3).to_owned()),
        ];
        out.push_back(at.event(REPORTS, "report queued", fields));
    }

    fn marked(
        &mut self,
        v: &Captures<'_>,
        at: At<'_>,
        postponing: bool,
        out: &mut VecDeque<Emitted>,
    ) {
        let Some((block, gs)) = hdfs_block(v.get(0)) else {
            return;
        };
        let replica = (block, v.get(1).to_owned());
        let why = v.get(3).trim();
        let why = why.strip_prefix("because ").unwrap_or(why).to_owned();
        let (pending, origin) = self.take(&replica);
        let state = pending.map(|p| p.state).or_else(|| state_in(&why));
        self.marks.insert(replica.clone(), why.contains("genstamp"));
        let mut fields = vec![
            ("block", format!("blk_{block}")),
            ("datanode", replica.1),
            ("gs", gs.to_string()),
            ("report", origin.to_owned()),
        ];
        fields.extend(state.map(|s| ("state", s)));
        fields.extend(number_after(&why, "in block map ").map(|g| ("stored_gs", g.to_string())));
        fields.push(("why", why));
        if postponing {
            fields.push(("postponing", "true".to_owned()));
        }
        out.push_back(at.event(REPORTS, "replica marked corrupt", fields));
    }

    /// A report judged without a mark: `block` as stored, `datanode`, the `verdict`.
    fn judged(
        &mut self,
        block: &str,
        datanode: &str,
        verdict: &str,
        at: At<'_>,
        out: &mut VecDeque<Emitted>,
    ) {
        let Some((block, stored_gs)) = hdfs_block(block) else {
            return;
        };
        let replica = (block, datanode.trim().to_owned());
        let (pending, origin) = self.take(&replica);
        let (gs, state) = match pending {
            Some(p) => (p.gs, p.state),
            None => (stored_gs, "FINALIZED".to_owned()),
        };
        let fields = vec![
            ("block", format!("blk_{block}")),
            ("datanode", replica.1),
            ("gs", gs.to_string()),
            ("report", origin.to_owned()),
            ("state", state),
            ("verdict", verdict.to_owned()),
        ];
        out.push_back(at.event(REPORTS, "report processed", fields));
    }
}

/// A report no line judged.
fn nothing_logged(replica: &Replica, report: Pending) -> Emitted {
    let at = At {
        line: report.line,
        time_ms: report.time_ms,
        thread: &report.thread,
    };
    let fields = vec![
        ("block", format!("blk_{}", replica.0)),
        ("datanode", replica.1.clone()),
        ("gs", report.gs.to_string()),
        ("report", report.origin.to_owned()),
        ("state", report.state),
        ("verdict", "nothing logged".to_owned()),
    ];
    at.event(REPORTS, "report processed", fields)
}

/// A corrupt mark lifted.
fn lifted(replica: &Replica, why: &str, at: At<'_>) -> Emitted {
    let fields = vec![
        ("block", format!("blk_{}", replica.0)),
        ("datanode", replica.1.clone()),
        ("why", why.to_owned()),
    ];
    at.event(REPORTS, "corrupt mark removed", fields)
}

/// The reported state a corrupt mark's reason names.
fn state_in(why: &str) -> Option<String> {
    for state in ["RBW", "RWR", "RUR", "TEMPORARY"] {
        if why.contains(&format!("reported {state}")) || why.contains(&format!("state {state}")) {
            return Some(state.to_owned());
        }
    }
    (why.starts_with("block is ") && why.contains("reported genstamp"))
        .then(|| "FINALIZED".to_owned())
}
