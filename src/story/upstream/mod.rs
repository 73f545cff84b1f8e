//! Readers of upstream's own logs: the Ozone datanode's and SCM's and the HDFS NameNode's
//! log4j files, mapped line by line onto this crate's protocol events, so that the
//! monitors of `check::monitor` judge a real cluster's logs as they judge an event log.
//!
//! Each format ([`UpstreamFormat`]) is a table of upstream log statements (the logger's
//! class, the level, the message's format, the event it yields: [`Statement`]) read from
//! upstream's source, and a parser that keeps what later lines need (which container a
//! deleting task works on, whether the NameNode postpones reports). A line of the log
//! layout ([`layout`]) that matches no statement is skipped and counted: a real log is
//! mostly other lines. A line longer than [`MAX_UPSTREAM_LINE_BYTES`] or not UTF-8 is an
//! error naming the line, as in the event log's reader; nothing panics.
//!
//! One file is one process: every event gets the file's node ([`node_from_file_name`] or
//! the caller's), `seq` in line order, `time_ms` from the line's timestamp. A process's
//! log cannot show the other processes' events, and upstream logs only some of its own
//! steps, some only at DEBUG or TRACE: each format says, per event, how much of it a log
//! shows ([`Coverage`]), so that a monitor lacking its events says undecided, not ok.
//! `docs/event-log.md` lists every statement mapped and the levels to enable.
//!
//! Beside upstream's statements, each format reads the statements
//! `docs/upstream-logging.md` proposes upstream add for the events it does not log today
//! (each format's `PROPOSED` table, [`Basis::Proposed`]): none is in upstream's code, so
//! a log of today's upstream holds none of their lines and is judged as before; a log
//! written with them decides every HDDS-17268, HDDS-16811 and HDFS-2742 monitor.

pub mod coverage;
mod event;
mod format;
pub mod hdfs_namenode;
pub mod layout;
pub mod ozone_datanode;
pub mod ozone_scm;
mod reader;
pub mod statement;

use std::path::Path;

pub use coverage::{Basis, Coverage, Covered, Evidence, Shown, Shows};
pub use format::UpstreamFormat;
pub use layout::{Level, Line};
pub use reader::{MAX_UPSTREAM_LINE_BYTES, ReadStats, UpstreamReader};
pub use statement::{Captures, Statement};

/// The roles in upstream's log file names (`ozone-USER-ROLE-HOST.log`,
/// `hadoop-USER-ROLE-HOST.log`).
const ROLES: [&str; 8] = [
    "datanode",
    "scm",
    "namenode",
    "om",
    "recon",
    "s3g",
    "journalnode",
    "zkfc",
];

/// The node a log file belongs to, from its name: the host of upstream's naming
/// (`ozone-hadoop-datanode-dn1.log` and `dn-container-dn1.log` → `dn1`,
/// `hadoop-hdfs-namenode-nn1.log.3` → `nn1`), else the name without its `.log…` ending.
pub fn node_from_file_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = match name.find(".log") {
        Some(at) if at > 0 => &name[..at],
        _ => path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name.as_str()),
    };
    if let Some(host) = stem.strip_prefix("dn-container-") {
        return host.to_owned();
    }
    for role in ROLES {
        let marker = format!("-{role}-");
        if let Some(at) = stem.find(&marker) {
            let host = &stem[at + marker.len()..];
            if !host.is_empty() {
                return host.to_owned();
            }
        }
    }
    stem.to_owned()
}
