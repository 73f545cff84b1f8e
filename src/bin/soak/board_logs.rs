//! The board's production-build columns, read from the logs of `board-production`
//! (`src/bin/board_production.rs`): `threaded` (the case on real threads, streams of
//! attempts until a catch) and `proptest` (the differential of the case's variant against
//! the fixed behavior it lacks a patch of).
//!
//! Real threads are not a scheduler: a case is checked on them in CI only where the
//! committed board shows it caught [reliably](reliable): from every stream, with a median
//! of at most [`RELIABLE_SECONDS`] (CI gives its one stream 10 s: fifty times that). A differential is deterministic for its seed:
//! it is checked wherever it diverged from every seed.

use std::collections::BTreeMap;

use crate::board_row::{BoardRow, Cell, median};

/// The engines of the production build, in their column order.
pub const ENGINES: [&str; 2] = ["threaded", "proptest"];

/// The largest median of seconds at which the committed board's threaded catch of a case
/// is taken as reliable enough for CI (whose stream allows 10 s). Seconds, not attempts:
/// how many attempts a race takes on real threads moves with the machine's load (a case
/// caught at the first attempt from every stream of the board took thousands in a rerun).
pub const RELIABLE_SECONDS: f64 = 0.2;

/// What the production build's columns measure, and what CI checks of them.
pub const LEGEND: &str = "`threaded`: the case unchanged on real threads (the \
    build without shuttle), five streams of attempts with fresh scenario seeds, each until \
    the first catch or 2 s; the cell is streams that caught it / streams, the median \
    attempts and seconds to the catch. The machine's scheduling, not a scheduler: a rerun \
    moves these figures (a case caught at the first attempt here can take thousands on a \
    machine loaded otherwise), and CI checks a case on real threads only where the board \
    shows it caught from every stream with a median of at most 0.2 s, giving it up to \
    three streams of 10 s (the first catch ends them). \
    `proptest`: not the scenario but its variant's component (term fencing, SCM, standby, \
    replica), the variant's behavior against the fixed behavior it lacks a patch of (a \
    legacy one against the seed's patch or trunk, the seed's patch against the hardened \
    code) in the sequential differential of `check::conformance`, 256 generated \
    sequences from each of five seeds; the cell is seeds that diverged / seeds, the median \
    sequences and seconds to the first divergence, the median length of the shrunk \
    sequence and the operation where it diverges (which may be another defect of the same \
    behavior than the row's). `—`: the engine cannot run the case (a variant of no \
    component with a differential, or a board made without that engine's log). CI checks \
    every proptest cell diverging from every seed (deterministic for its seed).";

/// One stream's (or proptest seed's) outcome.
struct Stream {
    caught: bool,
    count: u64,
    seconds: f64,
    shrunk: Option<usize>,
    at: Option<String>,
}

/// Parses one line of a `board-production` log for `engine`: the case and its stream.
fn parse(engine: &str, line: &str) -> Option<(String, Stream)> {
    let rest = line.strip_prefix(engine)?.strip_prefix(' ')?;
    let (head, outcome) = rest.split_once(": ")?;
    let case = head.split(' ').next()?.to_owned();
    let numbers: Vec<f64> = outcome
        .split([' ', ','])
        .filter_map(|word| word.parse().ok())
        .collect();
    let caught = outcome.starts_with("caught") || outcome.starts_with("diverged");
    let (count, seconds) = (*numbers.first()? as u64, *numbers.get(1)?);
    let shrunk = numbers.get(2).map(|&n| n as usize);
    let at = outcome.split_once(", at ").map(|(_, op)| op.to_owned());
    Some((
        case,
        Stream {
            caught,
            count,
            seconds,
            shrunk: shrunk.filter(|_| caught),
            at,
        },
    ))
}

/// The `engine` column of a log: a cell per case it ran.
pub fn column(engine: &str, log: &str) -> BTreeMap<String, Cell> {
    let mut streams: BTreeMap<String, Vec<Stream>> = BTreeMap::new();
    for (case, stream) in log.lines().filter_map(|line| parse(engine, line)) {
        streams.entry(case).or_default().push(stream);
    }
    streams
        .into_iter()
        .map(|(case, streams)| (case, cell(engine, &streams)))
        .collect()
}

fn cell(engine: &str, streams: &[Stream]) -> Cell {
    let caught: Vec<&Stream> = streams.iter().filter(|s| s.caught).collect();
    let mut counts: Vec<u64> = caught.iter().map(|s| s.count).collect();
    let mut seconds: Vec<f64> = caught.iter().map(|s| s.seconds).collect();
    let mut shrunk: Vec<usize> = caught.iter().filter_map(|s| s.shrunk).collect();
    Cell {
        engine: engine.to_owned(),
        seeds: streams.len(),
        caught: caught.len(),
        median_schedules: median(&mut counts),
        median_seconds: median(&mut seconds),
        shrunk: median(&mut shrunk),
        at: caught.iter().find_map(|s| s.at.clone()),
    }
}

/// Whether the committed `cell` of a production engine is one CI checks: caught from every
/// stream, and, on real threads, with a median of at most [`RELIABLE_SECONDS`].
pub fn reliable(cell: &Cell) -> bool {
    cell.seeds > 0
        && cell.caught == cell.seeds
        && (cell.engine != "threaded" || cell.median_seconds.is_some_and(|s| s <= RELIABLE_SECONDS))
}

/// A shuttle cell's median schedules to a first catch above which one fresh seed may
/// miss it within the board's bound (20 000): a tenth of it. `--check` leaves such cells
/// out (on real threads the bound is a median of 0.2 s).
pub const CHECKED_MEDIAN_SCHEDULES: u64 = 2_000;

/// Whether CI checks `cell` again: a production engine's by its own rule
/// ([`reliable`]); a shuttle engine's when caught from every seed within a median of
/// [`CHECKED_MEDIAN_SCHEDULES`].
pub fn checkable(cell: &Cell) -> bool {
    if ENGINES.contains(&cell.engine.as_str()) {
        return reliable(cell);
    }
    cell.seeds > 0
        && cell.caught == cell.seeds
        && cell
            .median_schedules
            .is_some_and(|n| n <= CHECKED_MEDIAN_SCHEDULES)
}

/// The cases the committed board's `engine` cells say CI checks.
pub fn checked_cases<'a>(committed: &'a [BoardRow], engine: &str) -> Vec<&'a str> {
    committed
        .iter()
        .filter(|row| {
            row.cells
                .iter()
                .any(|cell| cell.engine == engine && reliable(cell))
        })
        .map(|row| row.case.as_str())
        .collect()
}

/// Adds `engine`'s cells from `log` to `board`. With a `committed` board (CI), only the
/// cells it says are [reliable](reliable), and an empty one where the log lacks such a
/// case, so that the check reports it lost.
pub fn add(board: &mut [BoardRow], engine: &str, log: &str, committed: Option<&[BoardRow]>) {
    let column = column(engine, log);
    for row in board {
        let cell = match committed {
            None => column.get(&row.case).cloned(),
            Some(committed) if checked_cases(committed, engine).contains(&row.case.as_str()) => {
                Some(column.get(&row.case).cloned().unwrap_or(Cell {
                    engine: engine.to_owned(),
                    seeds: 0,
                    caught: 0,
                    median_schedules: None,
                    median_seconds: None,
                    shrunk: None,
                    at: None,
                }))
            }
            Some(_) => None,
        };
        row.cells.extend(cell);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threaded_lines_give_caught_streams_and_median_attempts() {
        let log = "threaded a/B stream 0: caught after 5 attempt(s) in 0.010 s\n\
                   threaded a/B stream 1: not caught in 900 attempt(s), 2.000 s\n\
                   threaded a/B stream 2: caught after 9 attempt(s) in 0.020 s\n";
        let cell = &column("threaded", log)["a/B"];
        assert_eq!((cell.seeds, cell.caught), (3, 2));
        assert_eq!(cell.median_schedules, Some(5));
        assert_eq!(cell.median_seconds, Some(0.010));
        assert!(!reliable(cell));
    }

    #[test]
    fn proptest_lines_give_cases_shrunk_length_and_diverging_operation() {
        let log = "proptest a/B seed 0: diverged after 8 case(s) in 0.001 s, shrunk to 5 \
                   operation(s), at take next command\n";
        let cell = &column("proptest", log)["a/B"];
        assert_eq!((cell.caught, cell.median_schedules), (1, Some(8)));
        assert_eq!(cell.shrunk, Some(5));
        assert_eq!(cell.at.as_deref(), Some("take next command"));
        assert!(reliable(cell));
    }

    fn row(case: &str, cells: Vec<Cell>) -> BoardRow {
        BoardRow {
            defect: "HDDS-0".into(),
            what: String::new(),
            case: case.into(),
            shrunk_switches: None,
            loom: None,
            cells,
        }
    }

    #[test]
    fn check_requires_only_reliable_threaded_catches_and_loses_one_missing_from_the_log() {
        let board = "threaded a/B stream 0: caught after 1 attempt(s) in 0.010 s\n\
                     threaded c/D stream 0: caught after 900 attempt(s) in 0.900 s\n";
        let committed = [
            row("a/B", vec![column("threaded", board)["a/B"].clone()]),
            row("c/D", vec![column("threaded", board)["c/D"].clone()]),
        ];
        assert_eq!(checked_cases(&committed, "threaded"), ["a/B"]);
        let mut now = [row("a/B", Vec::new()), row("c/D", Vec::new())];
        add(&mut now, "threaded", "", Some(&committed));
        assert_eq!(now[0].cells.len(), 1);
        assert_eq!(now[0].cells[0].caught, 0);
        assert!(now[1].cells.is_empty());
    }
}
