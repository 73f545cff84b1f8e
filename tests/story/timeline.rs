//! The HTML timeline: a lane per thread and per remote sender, a message drawn from its
//! sender's lane, text escaped, the violation last; self-contained.

use hadoop_ref::story::{Event, Story, read_fields, timeline};

fn event(step: usize, thread: &str, name: &str, fields: &[(&str, &str)]) -> Event {
    Event {
        step,
        thread: thread.to_owned(),
        node: Some("dn1".to_owned()),
        component: "datanode::heartbeat".to_owned(),
        name: name.to_owned(),
        fields: read_fields(fields.iter().copied()),
    }
}

fn story() -> Story {
    Story {
        events: vec![
            event(
                1,
                "endpoint scm1",
                "heartbeat response",
                &[("from", "scm1")],
            ),
            event(
                2,
                "command processor",
                "command run",
                &[("command", "<Delete & \"x\">")],
            ),
        ],
        left_out: 0,
    }
}

#[test]
fn timeline_has_a_lane_per_thread_and_per_remote_sender() {
    let page = timeline(
        &story(),
        Some("HDDS-17268: property `p` violated"),
        "case",
        "file",
    );
    assert_eq!(
        page.matches("<div class=\"lane\"").count(),
        2,
        "two threads"
    );
    assert_eq!(
        page.matches("<div class=\"lane remote\"").count(),
        1,
        "scm1 sends"
    );
    // scm1 is lane 2 (after the threads); the response is drawn from it.
    assert!(
        page.contains("data-step=\"1\" data-from-lane=\"2\""),
        "{page}"
    );
    assert_eq!(page.matches("data-from-lane=").count(), 1);
}

#[test]
fn timeline_escapes_text_and_ends_with_the_violation() {
    let page = timeline(&story(), Some("a <b> violation"), "case & co", "file");
    assert!(page.contains("&lt;Delete &amp; &quot;x&quot;&gt;"));
    assert!(page.contains("<title>case &amp; co</title>"));
    let violation = page
        .find("VIOLATION: a &lt;b&gt; violation")
        .expect("shown");
    assert!(
        violation > page.rfind("class=\"event").unwrap_or(0),
        "after every event"
    );
}

#[test]
fn timeline_loads_nothing_from_the_network() {
    let page = timeline(&story(), None, "case", "file");
    for external in ["http://", "https://", "src=", "<link"] {
        let allowed = external == "http://" && page.matches(external).count() == 1;
        assert!(
            !page.contains(external) || allowed,
            "{external} in the page (only the SVG namespace may appear)"
        );
    }
    assert!(page.contains("http://www.w3.org/2000/svg"));
    assert!(!page.contains("VIOLATION"), "no violation, no banner");
}
