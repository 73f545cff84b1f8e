//! The mutation table as the scoreboard shows it (`docs/scoreboard.md`, between its
//! `mutation-score` markers), rendered from [`Mutant::expected`], which each build's test
//! holds its suite to.

use std::fmt::Write;

use super::{Mutant, Verdicts};

/// Where the section starts on the board.
const BEGIN: &str = "<!-- mutation-score:begin -->";
/// Where it ends.
const END: &str = "<!-- mutation-score:end -->";

/// The board's section: the score per suite, then one row per mutant.
pub fn scoreboard_section() -> String {
    let live: Vec<Mutant> = Mutant::ALL
        .into_iter()
        .filter(|m| m.equivalent().is_none())
        .collect();
    let score = |suite: fn(Verdicts) -> bool| live.iter().filter(|m| suite(m.expected())).count();
    let by_two = live.iter().filter(|m| m.expected().count() >= 2).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{BEGIN}\n## The conformance kit's mutation score\n\n\
         {} mutants of the kit's three correct implementations (`examples/conformance-kit`, \
         `conformance_kit::mutants`), one change each; {} of them equivalent (named below \
         with the reason, held to passing every suite). Of the {} others the loom models \
         catch **{}**, the shuttle cases **{}**, the differential test **{}**; **{by_two} \
         of {}** are caught by at least two suites. Each build's `tests/mutants.rs` runs its \
         suite on every mutant and fails on any verdict other than this table's \
         (`ci/conformance-example`); the default build checks this section.\n",
        Mutant::ALL.len(),
        Mutant::ALL.len() - live.len(),
        live.len(),
        score(|v| v.loom),
        score(|v| v.shuttle),
        score(|v| v.differential),
        live.len(),
    );
    out.push_str("| mutant | implementation | change | loom | shuttle | differential |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for mutant in Mutant::ALL {
        let cells = match mutant.equivalent() {
            Some(reason) => format!("equivalent: {reason} | | "),
            None => {
                let mark = |caught: bool| if caught { "caught" } else { "—" };
                let v = mutant.expected();
                format!(
                    "{} | {} | {}",
                    mark(v.loom),
                    mark(v.shuttle),
                    mark(v.differential)
                )
            }
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {cells} |",
            mutant.name(),
            mutant.component().label(),
            mutant.change()
        );
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// `board` with its mutation section replaced by `section` (or added at the end).
pub fn with_section(board: &str, section: &str) -> String {
    match (board.find(BEGIN), board.find(END)) {
        (Some(begin), Some(end)) if begin < end => {
            let rest = &board[end + END.len()..];
            format!(
                "{}{section}{}",
                &board[..begin],
                rest.trim_start_matches('\n')
            )
        }
        _ => format!("{}\n\n{section}", board.trim_end()),
    }
}
