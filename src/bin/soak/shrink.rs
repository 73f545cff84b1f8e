//! Shrinks a saved schedule in place (`replay --minimize`, and every catch of a soak unless
//! `--no-minimize`): the file keeps its case and gets the shorter schedule.

use std::path::Path;

use hadoop_ref::check::shuttle::{Minimized, minimize, schedule_file};

use crate::report::Shrink;

/// Replays of the scenario a shrink may take: bounds its time (about a minute for the
/// largest clusters).
pub const MINIMIZE_REPLAYS: usize = 2_000;

/// Shrinks the schedule in `file` and writes the shrunk one over it.
pub fn shrink_file(file: &Path) -> Result<Minimized, String> {
    let read = schedule_file::read(file).map_err(|error| error.to_string())?;
    let shrunk = minimize(read.case, &read.schedule, MINIMIZE_REPLAYS)
        .map_err(|error| format!("{}: {error}", file.display()))?;
    let encoded = schedule_file::encode(&shrunk.schedule);
    schedule_file::write(file, &read.case, &encoded)
        .map_err(|error| format!("cannot write {}: {error}", file.display()))?;
    Ok(shrunk)
}

/// The before and after of a shrink, as the report shows it.
pub fn summary(shrunk: &Minimized) -> Shrink {
    Shrink {
        steps_before: shrunk.steps_before,
        steps_after: shrunk.steps_after,
        switches_before: shrunk.switches_before,
        switches_after: shrunk.switches_after,
    }
}
