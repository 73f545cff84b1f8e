//! The board's rows and cells, as `docs/scoreboard.json` holds them.

use serde::{Deserialize, Serialize};

/// One case under one engine, over the board's seeds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cell {
    /// The engine's label (`random`, `pct2`, `pct3`, `urw`, `threaded`, `proptest`).
    pub engine: String,
    /// Seeds run.
    pub seeds: usize,
    /// Seeds that caught the case within the bounds.
    pub caught: usize,
    /// Median schedules to the first catch, over the seeds that caught it (attempts on
    /// real threads, generated sequences under proptest).
    pub median_schedules: Option<u64>,
    /// Median seconds to the first catch, over the seeds that caught it.
    pub median_seconds: Option<f64>,
    /// proptest: the median length of the shrunk diverging sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrunk: Option<usize>,
    /// proptest: the operation at which the shrunk sequence diverges (first seed's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// One caught case of the catalogue on the board.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BoardRow {
    /// The defect's key (`HDDS-17268`, `beyond HDDS-16811`, …).
    pub defect: String,
    /// What goes wrong.
    pub what: String,
    /// `scenario/variant`.
    pub case: String,
    /// Context switches of the committed shrunk schedule (random, else PCT depth 3).
    pub shrunk_switches: Option<usize>,
    /// The loom model of the same race, when there is one and a loom log was given: the
    /// execution of its catch, and whether loom explored exhaustively or bounded.
    #[serde(default)]
    pub loom: Option<String>,
    /// One cell per engine.
    pub cells: Vec<Cell>,
}

/// The median of `values` (the lower one of an even count), `None` for none.
pub fn median<T: Copy + PartialOrd>(values: &mut [T]) -> Option<T> {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    values.get(values.len().checked_sub(1)? / 2).copied()
}
