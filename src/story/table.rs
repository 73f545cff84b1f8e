//! The step table of a story: one line per event (step, node/thread, component, event,
//! fields), columns as wide as their widest cell, ending at the violation when there is
//! one.

use std::fmt;

use super::event::{Event, Story};

/// A [`Story`] formatted as a table (`Display`).
#[derive(Debug, Clone, Copy)]
pub struct StepTable<'a> {
    story: &'a Story,
    violation: Option<&'a str>,
}

impl<'a> StepTable<'a> {
    fn new(story: &'a Story, violation: Option<&'a str>) -> Self {
        Self { story, violation }
    }
}

/// The fields of an event as `name=value`, space separated.
pub fn fields_text(event: &Event) -> String {
    event
        .fields
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Story {
    /// The step table: step, node/thread, component, event, fields.
    pub fn table(&self) -> StepTable<'_> {
        StepTable::new(self, None)
    }

    /// The step table followed by the violation it ends at.
    pub fn ending_at<'a>(&'a self, violation: &'a str) -> StepTable<'a> {
        StepTable::new(self, Some(violation))
    }
}

impl fmt::Display for StepTable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let events = &self.story.events;
        let step_w = events
            .last()
            .map_or(1, |e| e.step.to_string().len())
            .max("step".len());
        let place_w = column_width(
            events.iter().map(|e| e.place().chars().count()),
            "node/thread",
        );
        let component_w = column_width(events.iter().map(|e| e.component.len()), "component");
        let name_w = column_width(events.iter().map(|e| e.name.len()), "event");
        writeln!(
            f,
            "{:>step_w$}  {:<place_w$}  {:<component_w$}  {:<name_w$}  fields",
            "step", "node/thread", "component", "event"
        )?;
        if self.story.left_out > 0 {
            writeln!(
                f,
                "{:>step_w$}  ({} earlier events left out)",
                "…", self.story.left_out
            )?;
        }
        for event in events {
            writeln!(
                f,
                "{:>step_w$}  {:<place_w$}  {:<component_w$}  {:<name_w$}  {}",
                event.step,
                event.place(),
                event.component,
                event.name,
                fields_text(event)
            )?;
        }
        if events.is_empty() {
            writeln!(f, "{:>step_w$}  (no protocol event)", "-")?;
        }
        if let Some(violation) = self.violation {
            writeln!(f, "{:>step_w$}  VIOLATION: {violation}", "!")?;
        }
        Ok(())
    }
}

fn column_width(widths: impl Iterator<Item = usize>, header: &str) -> usize {
    widths.max().unwrap_or(0).max(header.len())
}
