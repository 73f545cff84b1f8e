//! Hand-written event logs for the monitors' tests.

use hadoop_ref::check::monitor::{MonitorSet, Verdict};
use hadoop_ref::story::{Event, read_fields};

/// One event of a hand-written run.
pub fn ev(node: &str, component: &str, name: &str, fields: &[(&str, &str)]) -> Event {
    Event {
        step: 0,
        thread: "t".into(),
        node: Some(node.to_owned()),
        component: component.into(),
        name: name.into(),
        // Written as text, read as a version 1 log's fields are.
        fields: read_fields(fields.iter().copied()),
    }
}

/// The verdict on `property` over `events`, numbered from 1.
pub fn judge(events: &[Event], property: &str) -> Verdict {
    let mut set = MonitorSet::all();
    for (i, event) in events.iter().enumerate() {
        let mut event = event.clone();
        event.step = i + 1;
        set.observe(&event);
    }
    set.finish()
        .into_iter()
        .find(|j| j.property == property)
        .unwrap_or_else(|| panic!("no monitor of {property}"))
        .verdict
}
