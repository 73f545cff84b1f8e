//! Verdicts over logs that do not show every event: upstream's own logs
//! (`story::upstream`). A monitor's verdict stands only when the logs show every
//! occurrence of the events it [reads](super::Reads) for that verdict: an ok needs every
//! event that could break the property, a violation every event that could clear it.
//! Otherwise the verdict is undecided, naming the event and why the logs lack it (as an
//! undecided verdict does when the logs could not show what breaks the property). A run
//! merged from several logs shows an event as well as the best of them shows it.

use std::borrow::Cow;

use super::judgement::{Judgement, Needed, Reads, Verdict};
use crate::story::upstream::{Coverage, Shown};

/// The verdicts `judgements` (with their monitors' `reads`, in the same order) as logs of
/// the given coverages can support them.
pub fn judge_with_coverage(
    judgements: Vec<Judgement>,
    reads: &[Reads],
    coverages: &[Coverage],
) -> Vec<Judgement> {
    judgements
        .into_iter()
        .zip(reads)
        .map(|(judgement, reads)| {
            let verdict = supported(judgement.verdict, reads, coverages);
            Judgement {
                verdict,
                ..judgement
            }
        })
        .collect()
}

fn supported(verdict: Verdict, reads: &Reads, coverages: &[Coverage]) -> Verdict {
    // An undecided verdict says why the logs cannot hold the property, when they cannot.
    let (needs, violation) = match &verdict {
        Verdict::Ok { .. } | Verdict::Undecided { .. } => (reads.to_hold, None),
        Verdict::Violated(finding) => (reads.to_break, Some(finding.step)),
    };
    let Some(gap) = needs.iter().find_map(|need| gap(need, coverages)) else {
        return verdict;
    };
    let missing = match violation {
        None => gap,
        Some(step) => format!("{gap}; the violation at step {step} is not confirmed"),
    };
    Verdict::Undecided {
        missing: Cow::Owned(missing),
    }
}

/// What the logs lack of `need`, if they do not show every occurrence of it.
fn gap(need: &Needed, coverages: &[Coverage]) -> Option<String> {
    let best = coverages
        .iter()
        .map(|c| (c.format, c.shown(need.component, need.event, need.only)))
        .max_by_key(|(_, (shown, _))| *shown);
    let (format, (shown, how)) = best?;
    if shown == Shown::Every {
        return None;
    }
    let what = match need.only {
        Some(kind) => format!("{} of {kind}", need.event),
        None => need.event.to_owned(),
    };
    let how = how.unwrap_or("no line of it is mapped");
    Some(format!(
        "{what} in full: {format} logs show {} ({how})",
        shown.word()
    ))
}
