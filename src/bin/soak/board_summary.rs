//! The board's summary, in three sections: the upstream defects (one row per JIRA key
//! beyond the four seeds, the headline's count), this crate's findings beyond the seeds
//! (its hardening switches), and the seeds' own sub-variants.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::board_row::BoardRow;

/// The four seeds the project comes from: a defect naming only these is a sub-variant.
const SEEDS: [&str; 4] = ["HDDS-16811", "HDDS-16891", "HDDS-17268", "HDFS-2742"];

/// Where a defect's row goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Section {
    /// An upstream defect beyond the seeds, by its JIRA key (`HDFS-17453/HDFS-17477`, a
    /// fix in two JIRAs one variant undoes, is one key).
    Upstream(String),
    /// A race this crate found beyond a seed's patch (`beyond …`).
    Finding,
    /// A seed's defect or one of its parts.
    Seed,
}

/// The section of `defect`: a `beyond` key is a finding; otherwise each `+`-joined part
/// (a parenthesised note dropped) that is not a seed is an upstream key; none, a seed.
fn sections(defect: &str) -> Vec<Section> {
    if defect.starts_with("beyond ") {
        return vec![Section::Finding];
    }
    let upstream: Vec<Section> = defect
        .split('+')
        .map(|part| part.split(" (").next().unwrap_or(part).trim())
        .filter(|key| !SEEDS.contains(key))
        .map(|key| Section::Upstream(key.to_owned()))
        .collect();
    if upstream.is_empty() {
        vec![Section::Seed]
    } else {
        upstream
    }
}

/// Engines that caught the case from at least one seed, loom included.
fn engines(row: &BoardRow) -> usize {
    let loom = row.loom.as_deref().is_some_and(|l| l.starts_with("caught"));
    row.cells.iter().filter(|c| c.caught > 0).count() + usize::from(loom)
}

/// The best engine's median seconds to a first catch of the case.
fn best_seconds(row: &BoardRow) -> Option<f64> {
    row.cells
        .iter()
        .filter_map(|c| c.median_seconds)
        .min_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal))
}

/// What a group of rows (one defect key, or one upstream key) adds up to.
#[derive(Debug, Default)]
struct Group<'a> {
    cases: usize,
    engines: usize,
    best: Option<f64>,
    what: &'a str,
}

impl<'a> Group<'a> {
    fn add(&mut self, row: &'a BoardRow, key: &str) {
        self.cases += 1;
        self.engines = self.engines.max(engines(row));
        if let Some(s) = best_seconds(row) {
            self.best = Some(self.best.map_or(s, |b| b.min(s)));
        }
        // The row of the key alone describes it best; else the first row met.
        if self.what.is_empty() || row.defect == key {
            self.what = &row.what;
        }
    }
}

/// Upstream keys of the seeds' classes that were read and are not on the board, with why:
/// a record too thin to reproduce faithfully, or a defect no case here can meet. They do
/// not count.
pub const LEFT_OUT: [(&str, &str); 9] = [
    (
        "HDDS-4632",
        "a command type sent without a term: the crate sends no decommission command",
    ),
    (
        "HDDS-5451",
        "pending-block counters: here derived from the replicas, not kept",
    ),
    (
        "HDDS-7123",
        "the container scanner racing block deletion: never merged (HDDS-7300 is on the \
         board)",
    ),
    (
        "HDDS-8139",
        "delete transactions out of id order: no case delivers them so",
    ),
    (
        "HDDS-10239",
        "reconciliation restoring a deleted block after an upgrade: a design document",
    ),
    (
        "HDDS-11267",
        "duplicate delete transactions driving block counts negative: counts here are \
         derived, not kept",
    ),
    (
        "HDDS-12127",
        "a double delete when the replica order changes between passes (HDDS-12115): one \
         SCM's sorted order never changes",
    ),
    (
        "HDDS-14684",
        "empty QUASI_CLOSED containers deleted: the cluster force-closes every such \
         container it could delete (three origins), so the key needs a container stuck \
         QUASI_CLOSED, which no case builds yet",
    ),
    ("HDFS-16987", "never merged"),
];

/// The list of [`LEFT_OUT`] keys, as the board shows it under the upstream section.
pub fn left_out_section() -> String {
    let mut out = String::from(
        "Read and left out (not counted): the record is too thin to reproduce faithfully, \
         or no case here meets the defect.\n\n| JIRA key | why not |\n|---|---|\n",
    );
    for (key, why) in LEFT_OUT {
        let _ = writeln!(out, "| {key} | {why} |");
    }
    out
}

/// Upstream keys beyond the seeds the board must hold (issue 37's goal, checked by CI).
pub const UPSTREAM_KEYS_GOAL: usize = 15;

/// The slowest the best engine may be to a first catch of an upstream key, in seconds.
const BEST_MEDIAN_GOAL_S: f64 = 10.0;

/// Engines that catch the case from every seed they ran, soon enough for CI to check it
/// again (`board_logs::checkable`, `ci/loom`), loom included.
fn engines_always(row: &BoardRow) -> usize {
    let loom = row.loom.as_deref().is_some_and(|l| l.starts_with("caught"));
    let checked = row.cells.iter().filter(|c| crate::board_logs::checkable(c));
    checked.count() + usize::from(loom)
}

/// The upstream section against its goal: at least [`UPSTREAM_KEYS_GOAL`] keys, each
/// caught by two engines from every seed (loom counted) with the best engine's median at
/// most ten seconds. Returns the number of keys, or what falls short.
pub fn upstream_goal(board: &[BoardRow]) -> Result<usize, Vec<String>> {
    let mut keys: BTreeMap<String, (usize, Option<f64>)> = BTreeMap::new();
    for row in board {
        for section in sections(&row.defect) {
            if let Section::Upstream(key) = section {
                let entry = keys.entry(key).or_default();
                entry.0 = entry.0.max(engines_always(row));
                if let Some(s) = best_seconds(row) {
                    entry.1 = Some(entry.1.map_or(s, |b: f64| b.min(s)));
                }
            }
        }
    }
    let mut short: Vec<String> = keys
        .iter()
        .filter(|(_, (engines, best))| *engines < 2 || best.is_none_or(|s| s > BEST_MEDIAN_GOAL_S))
        .map(|(key, (engines, best))| format!("{key}: {engines} engine(s), best {best:?} s"))
        .collect();
    if keys.len() < UPSTREAM_KEYS_GOAL {
        short.push(format!(
            "{} upstream keys, fewer than {UPSTREAM_KEYS_GOAL}",
            keys.len()
        ));
    }
    if short.is_empty() {
        Ok(keys.len())
    } else {
        Err(short)
    }
}

/// Writes the summary: the headline (upstream keys only), then the three sections.
pub fn summary(out: &mut String, board: &[BoardRow]) {
    let mut upstream: BTreeMap<String, Group> = BTreeMap::new();
    let mut findings: BTreeMap<&str, Group> = BTreeMap::new();
    let mut seeds: BTreeMap<&str, Group> = BTreeMap::new();
    for row in board {
        for section in sections(&row.defect) {
            match section {
                Section::Upstream(key) => upstream.entry(key.clone()).or_default().add(row, &key),
                Section::Finding => findings
                    .entry(&row.defect)
                    .or_default()
                    .add(row, &row.defect),
                Section::Seed => seeds.entry(&row.defect).or_default().add(row, &row.defect),
            }
        }
    }
    headline(out, &upstream);
    let _ = writeln!(
        out,
        "### Upstream defects beyond the seeds\n\nOne row per JIRA key: the code before \
         its fix, selectable as a variant (`cargo soak list`), caught; its fixed code \
         holds in the same cases. A key joined to a seed's (`HDDS-4589+HDDS-17268`) counts \
         for the key: its case needs both undone.\n"
    );
    table(
        out,
        "JIRA key",
        upstream.iter().map(|(k, g)| (k.as_str(), g)),
    );
    let _ = write!(out, "\n{}", left_out_section());
    let _ = writeln!(
        out,
        "\n### This crate's findings beyond the seeds\n\nRaces in a seed's patch (or in \
         upstream's code around it) found by this crate's checkers; each is closed by a \
         switch of the `Hardened` behavior, and the row's case catches the code without \
         it.\n"
    );
    table(out, "finding", findings.iter().map(|(k, g)| (*k, g)));
    let _ = writeln!(
        out,
        "\n### The seeds' own defects and their parts\n\nThe four bug reports the project \
         comes from, whole (`Legacy`) and one defect at a time.\n"
    );
    table(out, "defect", seeds.iter().map(|(k, g)| (*k, g)));
}

/// The headline: upstream keys only.
fn headline(out: &mut String, upstream: &BTreeMap<String, Group>) {
    let two_engines = upstream.values().filter(|g| g.engines >= 2).count();
    let cases: usize = upstream.values().map(|g| g.cases).sum();
    let mut best: Vec<f64> = upstream.values().filter_map(|g| g.best).collect();
    let median = crate::board_row::median(&mut best).unwrap_or(0.0);
    let slowest = best.iter().copied().fold(0.0_f64, f64::max);
    let _ = writeln!(
        out,
        "{} upstream defects beyond the four seeds (one per JIRA key) over {cases} caught \
         cases; {two_engines} of them caught by at least two engines (loom counted); the \
         best engine's median time to a first catch is {median:.3} s at the median key and \
         at most {slowest:.3} s over every key.\n",
        upstream.len(),
    );
}

/// One section's table.
fn table<'a>(out: &mut String, head: &str, groups: impl Iterator<Item = (&'a str, &'a Group<'a>)>) {
    let _ = writeln!(
        out,
        "| {head} | what goes wrong | caught cases | engines | best median |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (key, group) in groups {
        let best = group.best.map_or("-".to_owned(), |s| format!("{s:.3} s"));
        let _ = writeln!(
            out,
            "| {key} | {} | {} | {} | {best} |",
            group.what, group.cases, group.engines
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{Section, UPSTREAM_KEYS_GOAL, sections, upstream_goal};
    use crate::board_row::{BoardRow, Cell};

    fn row(defect: &str, caught: &[(usize, usize)]) -> BoardRow {
        let cell = |&(seeds, caught): &(usize, usize)| Cell {
            engine: "random".into(),
            seeds,
            caught,
            median_schedules: Some(1),
            median_seconds: Some(0.5),
            shrunk: None,
            at: None,
        };
        BoardRow {
            defect: defect.into(),
            what: String::new(),
            case: format!("{defect}/Legacy"),
            shrunk_switches: None,
            loom: None,
            cells: caught.iter().map(cell).collect(),
        }
    }

    #[test]
    fn the_committed_board_lists_the_keys_left_out() {
        let board = include_str!("../../../docs/scoreboard.md");
        assert!(
            board.contains(&super::left_out_section()),
            "docs/scoreboard.md lacks the keys left out as `LEFT_OUT` has them: regenerate it"
        );
    }

    #[test]
    fn the_upstream_goal_counts_keys_caught_by_two_engines_from_every_seed() {
        let keys: Vec<String> = (0..UPSTREAM_KEYS_GOAL)
            .map(|k| format!("HDDS-{}", 100 + k))
            .collect();
        let mut board: Vec<BoardRow> = keys.iter().map(|k| row(k, &[(5, 5), (5, 5)])).collect();
        board.push(row("HDDS-17268 (MC4)", &[(5, 5)]));
        assert_eq!(upstream_goal(&board), Ok(UPSTREAM_KEYS_GOAL));
        // A key caught from some seeds only by its second engine falls short.
        board[0] = row(&keys[0], &[(5, 5), (5, 3)]);
        let short = upstream_goal(&board).unwrap_err();
        assert_eq!(short.len(), 1, "{short:?}");
        assert!(short[0].starts_with("HDDS-100: 1 engine(s)"), "{short:?}");
        board.remove(0);
        assert!(upstream_goal(&board).unwrap_err()[0].contains("fewer than"));
    }

    #[test]
    fn a_defect_names_its_section() {
        let upstream = |k: &str| Section::Upstream(k.to_owned());
        assert_eq!(sections("HDDS-7619"), vec![upstream("HDDS-7619")]);
        assert_eq!(
            sections("HDDS-4589+HDDS-17268"),
            vec![upstream("HDDS-4589")]
        );
        assert_eq!(
            sections("HDFS-17453/HDFS-17477"),
            vec![upstream("HDFS-17453/HDFS-17477")]
        );
        assert_eq!(sections("HDDS-17268 (MC4)"), vec![Section::Seed]);
        assert_eq!(
            sections("HDDS-16891+HDDS-17268+HDDS-16811"),
            vec![Section::Seed]
        );
        assert_eq!(sections("beyond HDDS-16891 (gate)"), vec![Section::Finding]);
    }
}
