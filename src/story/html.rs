//! A story as a self-contained HTML swimlane timeline: one lane per thread (and one per
//! remote node a message comes from), one row per step, an arrow for each message between
//! lanes, the violation highlighted at the end. No network resource: the style and the
//! small script that draws the arrows are inline.
//!
//! A message is an event with a `from` field naming the node that sent it (a heartbeat
//! response from an SCM, a report from a datanode, a chunk pulled from a peer): its arrow
//! runs from the lane of that node (the first thread lane whose events carry that node, or
//! a lane of its own) to the lane of the event. After layout the script records on `<body>`
//! how many lanes, events and arrows it shows and whether the violation is in view
//! (`data-lanes-shown`, `data-events-shown`, `data-arrows-shown`, `data-violation-shown`),
//! so a headless browser's DOM dump tells what a person sees.

use std::fmt::Write;

use super::event::{Event, Story};
use super::table::fields_text;

/// The page's style: lanes as grid columns, events as cards, the violation in red.
const STYLE: &str = "body{font:13px/1.35 system-ui,sans-serif;margin:16px;color:#222}\
h1{font-size:17px;margin:0 0 4px}p.case{margin:0 0 12px;color:#555}\
.timeline{display:grid;gap:4px 10px;position:relative;align-items:start}\
.lane{position:sticky;top:0;background:#eef2f7;border-bottom:2px solid #7a8ca5;\
padding:6px;font-weight:600;z-index:2}.lane.remote{background:#f5f0e6;border-bottom-style:dashed}\
.step{color:#888;text-align:right;padding-top:4px}\
.event{border:1px solid #c8d1dc;border-radius:5px;padding:3px 6px;background:#fff;z-index:1}\
.event .name{font-weight:600}.event .node{color:#3a6ea5;margin-left:6px}\
.event .fields{display:block;color:#444;font-family:ui-monospace,monospace;font-size:11.5px;\
word-break:break-word}.event.message{border-color:#3a6ea5}\
.violation{grid-column:1/-1;background:#fde8e8;border:2px solid #c62828;color:#8e1b1b;\
border-radius:5px;padding:8px;font-weight:600}\
svg.arrows{position:absolute;left:0;top:0;pointer-events:none;overflow:visible;z-index:3}\
svg.arrows line{stroke:#3a6ea5;stroke-width:1.6}";

/// Draws an arrow for each message and records what the page shows on `<body>`.
const SCRIPT: &str = "(function(){\
var t=document.querySelector('.timeline'),s=document.querySelector('svg.arrows'),\
ns='http://www.w3.org/2000/svg',b=t.getBoundingClientRect(),arrows=0;\
function lane(i){return t.querySelector('.lane[data-lane=\"'+i+'\"]').getBoundingClientRect();}\
s.setAttribute('width',b.width);s.setAttribute('height',b.height);\
t.querySelectorAll('.event[data-from-lane]').forEach(function(e){\
var r=e.getBoundingClientRect(),f=lane(e.dataset.fromLane),y=r.top+r.height/2-b.top,\
fx=f.left+f.width/2-b.left,tx=(fx<r.left-b.left)?r.left-b.left:r.right-b.left,\
l=document.createElementNS(ns,'line');\
l.setAttribute('x1',fx);l.setAttribute('y1',y);l.setAttribute('x2',tx);l.setAttribute('y2',y);\
l.setAttribute('marker-end','url(#head)');l.setAttribute('class','message');\
l.setAttribute('data-step',e.dataset.step);s.appendChild(l);arrows++;});\
function shown(e){var r=e.getBoundingClientRect();return r.width>0&&r.height>0;}\
var d=document.body.dataset,v=document.querySelector('.violation');\
d.lanesShown=[].filter.call(t.querySelectorAll('.lane'),shown).length;\
d.eventsShown=[].filter.call(t.querySelectorAll('.event'),shown).length;\
d.arrowsShown=arrows;d.violationShown=!!(v&&shown(v));})();";

/// A lane: a thread, or a remote node that only sends messages.
#[derive(Debug)]
struct Lane {
    name: String,
    remote: bool,
}

/// The lanes of `story`, in order of first appearance, and each event's lane and the lane
/// its message comes from.
struct Layout {
    lanes: Vec<Lane>,
    placed: Vec<(usize, Option<usize>)>,
}

impl Layout {
    fn of(story: &Story) -> Self {
        let mut layout = Layout {
            lanes: Vec::new(),
            placed: Vec::new(),
        };
        for event in &story.events {
            layout.lane_of(&event.thread, false);
        }
        for event in &story.events {
            let lane = layout.lane_of(&event.thread, false);
            let from = event
                .text("from")
                .map(|node| layout.lane_of_node(story, node))
                .filter(|&from| from != lane);
            layout.placed.push((lane, from));
        }
        layout
    }

    fn lane_of(&mut self, name: &str, remote: bool) -> usize {
        if let Some(index) = self.lanes.iter().position(|l| l.name == name) {
            return index;
        }
        self.lanes.push(Lane {
            name: name.to_owned(),
            remote,
        });
        self.lanes.len() - 1
    }

    /// The first thread lane whose events carry `node`, else a remote lane of its own.
    fn lane_of_node(&mut self, story: &Story, node: &str) -> usize {
        match story
            .events
            .iter()
            .find(|e| e.node.as_deref() == Some(node))
        {
            Some(event) => self.lane_of(&event.thread.clone(), false),
            None => self.lane_of(node, true),
        }
    }
}

/// The page for `story` ending at `violation`, titled `title` (the case) with `subtitle`
/// (where it comes from).
pub fn timeline(story: &Story, violation: Option<&str>, title: &str, subtitle: &str) -> String {
    let layout = Layout::of(story);
    let mut page = String::new();
    // Writing to a String cannot fail.
    let _ = write!(
        page,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head>\n<body>\n<h1>{}</h1><p class=\"case\">{}</p>\n",
        escape(title),
        escape(title),
        escape(subtitle)
    );
    let _ = write!(
        page,
        "<div class=\"timeline\" style=\"grid-template-columns:3em repeat({},minmax(15em,1fr))\">\n\
         <div class=\"step\">step</div>",
        layout.lanes.len().max(1)
    );
    for (index, lane) in layout.lanes.iter().enumerate() {
        let class = if lane.remote { "lane remote" } else { "lane" };
        let _ = write!(
            page,
            "<div class=\"{class}\" data-lane=\"{index}\">{}</div>",
            escape(&lane.name)
        );
    }
    page.push('\n');
    if story.left_out > 0 {
        let _ = writeln!(
            page,
            "<div class=\"step\">…</div><div style=\"grid-column:2/-1\">{} earlier events left out</div>",
            story.left_out
        );
    }
    for (event, &(lane, from)) in story.events.iter().zip(&layout.placed) {
        push_row(&mut page, event, lane, from, layout.lanes.len());
    }
    if let Some(violation) = violation {
        let _ = writeln!(
            page,
            "<div class=\"violation\">VIOLATION: {}</div>",
            escape(violation)
        );
    }
    let _ = write!(
        page,
        "<svg class=\"arrows\"><defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" \
         markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" \
         fill=\"#3a6ea5\"/></marker></defs></svg>\n</div>\n<script>{SCRIPT}</script>\n</body></html>\n"
    );
    page
}

/// One grid row: the step number, then `lanes` cells with the event in its lane.
fn push_row(page: &mut String, event: &Event, lane: usize, from: Option<usize>, lanes: usize) {
    let _ = write!(page, "<div class=\"step\">{}</div>", event.step);
    for cell in 0..lanes {
        if cell != lane {
            page.push_str("<div></div>");
            continue;
        }
        let (class, from_attr) = match from {
            Some(from) => ("event message", format!(" data-from-lane=\"{from}\"")),
            None => ("event", String::new()),
        };
        let node = event
            .node
            .as_deref()
            .map(|n| format!("<span class=\"node\">{}</span>", escape(n)))
            .unwrap_or_default();
        let _ = write!(
            page,
            "<div class=\"{class}\" data-step=\"{}\"{from_attr} title=\"{}\"><span class=\"name\">{}</span>{node}\
             <span class=\"fields\">{}</span></div>",
            event.step,
            escape(&event.component),
            escape(&event.name),
            escape(&fields_text(event))
        );
    }
    page.push('\n');
}

/// Escapes text for HTML content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
