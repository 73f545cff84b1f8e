//! The file a failing schedule is kept in: a header naming the case, then the schedule as
//! shuttle encodes it (hex, wrapped).
//!
//! ```text
//! # hadoop-ref shuttle schedule: replay with `soak replay FILE`
//! scenario: concurrent_leader_heartbeats_keep_the_highest_term
//! variant: Legacy
//! schedule:
//! 91030e9f2e0000...
//! ```

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use shuttle_engine::scheduler::Schedule;
use shuttle_engine::scheduler::serialization::{deserialize_schedule, serialize_schedule};

use crate::check::catalogue::{self, Case};

const HEADER: &str = "# hadoop-ref shuttle schedule: replay with `soak replay FILE`";

/// Why a schedule file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleFileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A header line is missing or malformed, or the schedule does not decode.
    #[error("{path} is not a schedule file: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No scenario of the catalogue has that name and variant.
    #[error("no scenario {scenario}/{variant} in the catalogue")]
    UnknownCase {
        /// Scenario name.
        scenario: String,
        /// Variant name.
        variant: String,
    },
}

/// A schedule file, read: the case it fails and the schedule.
#[derive(Debug, Clone)]
pub struct ScheduleFile {
    /// The case.
    pub case: Case,
    /// The schedule.
    pub schedule: Schedule,
}

/// The file name of `case`'s schedule under `scheduler` (its label) in `dir`.
pub fn path_for(dir: &Path, case: &Case, scheduler: &str) -> PathBuf {
    dir.join(format!(
        "{}.{}.{scheduler}.schedule",
        case.scenario, case.variant
    ))
}

/// Writes `schedule` (as shuttle encoded it) for `case` to `path`.
pub fn write(path: &Path, case: &Case, schedule: &str) -> std::io::Result<()> {
    let text = format!(
        "{HEADER}\nscenario: {}\nvariant: {}\nschedule:\n{}\n",
        case.scenario,
        case.variant,
        schedule.trim()
    );
    fs::write(path, text)
}

/// `schedule`, encoded as shuttle prints it.
pub fn encode(schedule: &Schedule) -> String {
    serialize_schedule(schedule)
}

/// Decodes a schedule shuttle encoded; `None` if it is not one.
pub fn decode(encoded: &str) -> Option<Schedule> {
    let hex: String = encoded.chars().filter(|c| !c.is_whitespace()).collect();
    if hex.is_empty() || hex.len() % 2 != 0 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    // Shuttle's decoder indexes without checks on a truncated encoding: a panic there is
    // a malformed file, not a failure of the caller.
    catch_unwind(AssertUnwindSafe(|| deserialize_schedule(&hex)))
        .ok()
        .flatten()
}

/// Reads a schedule file and finds its case in the catalogue.
pub fn read(path: &Path) -> Result<ScheduleFile, ScheduleFileError> {
    let malformed = |reason: String| ScheduleFileError::Malformed {
        path: path.to_owned(),
        reason,
    };
    let text = fs::read_to_string(path).map_err(|source| ScheduleFileError::Io {
        path: path.to_owned(),
        source,
    })?;
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
            .map(str::to_owned)
            .ok_or_else(|| malformed(format!("no `{name}:` line")))
    };
    let (scenario, variant) = (field("scenario")?, field("variant")?);
    // The schedule is every line after `schedule:`, as shuttle wrapped it.
    let encoded: String = text
        .lines()
        .skip_while(|line| line.trim() != "schedule:")
        .skip(1)
        .collect();
    let schedule = decode(&encoded).ok_or_else(|| {
        malformed("the lines after `schedule:` must be a schedule shuttle encoded".into())
    })?;
    let case = catalogue::all()
        .into_iter()
        .find(|c| c.scenario == scenario && c.variant == variant)
        .ok_or(ScheduleFileError::UnknownCase { scenario, variant })?;
    Ok(ScheduleFile { case, schedule })
}
