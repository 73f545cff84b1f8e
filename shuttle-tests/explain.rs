//! `cargo soak explain`'s timeline as a person sees it: a committed legacy catch is
//! replayed with its story, drawn as HTML, and rendered by headless Chromium; the DOM the
//! browser dumps says how many lanes, events and arrows it shows and whether the violation
//! is in view (the page's own script writes them on `<body>` after layout).
//!
//! Chromium is found as `chromium` or `chromium-browser` on the PATH, or at `$CHROMIUM`.
//! Without one the test is skipped with a note, unless `HADOOP_REF_REQUIRE_CHROMIUM` is
//! set, as `ci/test` does after `ci/install-chromium`: there a missing browser fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use hadoop_ref::check::shuttle::{ReplayOutcome, explain_file};
use hadoop_ref::story;

/// The catch drawn: the seed's MC5, two SCMs answering as leader at once.
const SCHEDULE: &str =
    "concurrent_leader_heartbeats_keep_the_highest_term.LegacyUnlockedTermUpdate.random.schedule";

#[test]
fn timeline_shows_every_lane_message_and_the_violation_in_a_browser() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("HADOOP_REF_REQUIRE_CHROMIUM").is_none(),
            "headless Chromium is required here (ci/install-chromium installs it)"
        );
        println!("skipped: no chromium on the PATH (set $CHROMIUM)");
        return;
    };
    let schedule = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("shuttle-tests/schedules")
        .join(SCHEDULE);
    let (outcome, story) = explain_file(&schedule).unwrap_or_else(|e| panic!("{e}"));
    let ReplayOutcome::Violation(violation) = outcome else {
        panic!("{SCHEDULE} does not replay to a violation: {outcome:?}");
    };
    let page = story::timeline(&story, Some(&violation), "MC5", SCHEDULE);
    let html = Path::new(env!("CARGO_TARGET_TMPDIR")).join("explain-mc5.html");
    std::fs::write(&html, &page).expect("the target's temporary directory is writable");

    let body = rendered_body(&browser, &html);
    let lanes = page.matches("<div class=\"lane").count();
    let arrows = page.matches("data-from-lane=").count();
    assert!(
        lanes >= 3,
        "the endpoint threads and an SCM each have a lane"
    );
    assert!(
        arrows >= 2,
        "the two leaders' heartbeat responses are messages"
    );
    assert_eq!(
        attribute(&body, "data-lanes-shown"),
        Some(lanes.to_string()),
        "{body}"
    );
    assert_eq!(
        attribute(&body, "data-events-shown"),
        Some(story.events.len().to_string()),
        "{body}"
    );
    assert_eq!(
        attribute(&body, "data-arrows-shown"),
        Some(arrows.to_string()),
        "{body}"
    );
    assert_eq!(
        attribute(&body, "data-violation-shown").as_deref(),
        Some("true"),
        "{body}"
    );
}

fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The `<body …>` tag of the DOM Chromium dumps after loading `html`.
fn rendered_body(browser: &Path, html: &Path) -> String {
    let output = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", browser.display()));
    let dom = String::from_utf8_lossy(&output.stdout);
    let start = dom
        .find("<body")
        .unwrap_or_else(|| panic!("no <body> in Chromium's DOM dump: {dom}"));
    let end = dom[start..]
        .find('>')
        .map_or(dom.len(), |end| start + end + 1);
    dom[start..end].to_owned()
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let end = tag[start..].find('"')? + start;
    Some(tag[start..end].to_owned())
}
