//! Helpers shared by the test modules.

use std::time::Duration;

use hadoop_ref::sync::thread;

pub mod allocation;
pub mod container;
pub mod datanode;
pub mod monitor;
pub mod standby;
pub mod term_fencing;

/// The (component, event) rows of the event catalogue in `docs/event-log.md`.
pub fn catalogue_events() -> std::collections::BTreeSet<(String, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/event-log.md"))
        .expect("docs/event-log.md exists");
    let begin = doc
        .find("<!-- events: begin -->")
        .expect("the catalogue's start");
    let end = doc
        .find("<!-- events: end -->")
        .expect("the catalogue's end");
    doc[begin..end]
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let unquote = |c: &str| c.strip_prefix('`')?.strip_suffix('`').map(str::to_owned);
            Some((unquote(cells.get(1)?)?, unquote(cells.get(2)?)?))
        })
        .collect()
}

/// The fields of the field glossary in `docs/event-log.md`.
pub fn glossary_fields() -> std::collections::BTreeSet<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/event-log.md"))
        .expect("docs/event-log.md exists");
    let begin = doc
        .find("<!-- fields: begin -->")
        .expect("the glossary's start");
    let end = doc
        .find("<!-- fields: end -->")
        .expect("the glossary's end");
    doc[begin..end]
        .lines()
        .filter_map(|l| {
            let cell = l.split('|').nth(1)?.trim();
            Some(cell.strip_prefix('`')?.strip_suffix('`')?.to_owned())
        })
        .collect()
}

/// Whether the catalogue has an event `event` of a component starting with `component`.
pub fn in_catalogue(
    rows: &std::collections::BTreeSet<(String, String)>,
    component: &str,
    event: &str,
) -> bool {
    rows.iter()
        .any(|(c, e)| c.starts_with(component) && e == event)
}

/// `bytes` damaged at `at` (taken modulo their length): overwritten by `with` there, or
/// truncated there. What the fuzz targets feed to a decoder.
pub fn damaged(mut bytes: Vec<u8>, at: usize, with: &[u8], truncate: bool) -> Vec<u8> {
    if bytes.is_empty() {
        return with.to_vec();
    }
    let at = at % bytes.len();
    if truncate {
        bytes.truncate(at);
    } else {
        for (offset, byte) in with.iter().enumerate() {
            if let Some(slot) = bytes.get_mut(at + offset) {
                *slot = *byte;
            }
        }
    }
    bytes
}

/// Polls `condition` up to `attempts` times, sleeping a millisecond between tries: how a
/// test waits for the production threads (no timing is asserted).
pub fn eventually(attempts: u32, mut condition: impl FnMut() -> bool) -> bool {
    (0..attempts).any(|_| {
        let met = condition();
        if !met {
            thread::sleep(Duration::from_millis(1));
        }
        met
    })
}
