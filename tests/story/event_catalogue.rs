//! The event catalogue of `docs/event-log.md` cannot drift from the code: every
//! event the library emits (its component, its message, its fields) has its
//! row, every row an event, and every field its entry in the field glossary.
//!
//! `EVENT_LOG_DOC=write cargo test --test tests event_catalogue` rewrites the catalogue
//! from the code, keeping each row's description (a new row says `TODO`, which fails the
//! check until it is described).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const DOC: &str = "docs/event-log.md";
const EVENTS_BEGIN: &str = "<!-- events: begin -->";
const EVENTS_END: &str = "<!-- events: end -->";
const FIELDS_BEGIN: &str = "<!-- fields: begin -->";
const FIELDS_END: &str = "<!-- fields: end -->";
const MACROS: [&str; 8] = [
    "events::debug!(",
    "events::info!(",
    "events::warn!(",
    "tracing::debug!(",
    "tracing::info!(",
    "tracing::warn!(",
    "tracing::trace!(",
    "tracing::error!(",
];

/// (component, event) → the fields any of its emission sites writes (`node` apart).
type Catalogue = BTreeMap<(String, String), BTreeSet<String>>;

#[test]
fn every_emitted_event_and_field_is_documented_in_the_event_log_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let code = events_in_code(&root.join("src"));
    assert!(code.len() > 50, "found only {} events in src/", code.len());
    let doc_path = root.join(DOC);
    let doc = fs::read_to_string(&doc_path).expect("docs/event-log.md exists");
    let rows = catalogue_rows(&doc);
    if std::env::var("EVENT_LOG_DOC").as_deref() == Ok("write") {
        let written = splice(&doc, EVENTS_BEGIN, EVENTS_END, &render(&code, &rows));
        fs::write(&doc_path, written).expect("docs/event-log.md is writable");
        return;
    }
    let mut problems = Vec::new();
    for ((component, event), fields) in &code {
        match rows.get(&(component.clone(), event.clone())) {
            None => problems.push(format!("missing row: `{component}` `{event}`")),
            Some((documented, description)) => {
                if documented != fields {
                    problems.push(format!(
                        "`{component}` `{event}`: the doc lists fields {documented:?}, the code writes {fields:?}"
                    ));
                }
                if description.trim().is_empty() || description.contains("TODO") {
                    problems.push(format!("`{component}` `{event}` is not described"));
                }
            }
        }
    }
    for key in rows.keys().filter(|key| !code.contains_key(*key)) {
        problems.push(format!("row of an event no code emits: {key:?}"));
    }
    let glossary = glossary(&doc);
    let used: BTreeSet<&String> = code.values().flatten().collect();
    for field in used.iter().filter(|f| !glossary.contains(**f)) {
        problems.push(format!("field `{field}` is not in the field glossary"));
    }
    assert!(
        problems.is_empty(),
        "{DOC} is out of date (`EVENT_LOG_DOC=write cargo test --test tests event_catalogue` rewrites its catalogue):\n{}",
        problems.join("\n")
    );
}

/// The recorder routes an event to its sinks by its call site alone (`story::Recorder`),
/// which is exact only while each call site has one message: a literal, never formatted
/// from values. Every call under `src` must end with one.
#[test]
fn every_emitted_event_has_a_literal_message() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    let mut calls = 0;
    for file in rust_files(&src) {
        let text = fs::read_to_string(&file).expect("source is UTF-8");
        for args in macro_calls(&text) {
            calls += 1;
            match event_of(&args) {
                Some((message, _)) if !message.contains('{') => {}
                _ => problems.push(format!("{}: `{}`", file.display(), args.trim())),
            }
        }
    }
    assert!(calls > 50, "found only {calls} calls in src/");
    assert!(
        problems.is_empty(),
        "events whose message is not a literal (the recorder routes by call site):\n{}",
        problems.join("\n")
    );
}

/// Every `tracing` event under `src`, by component and message.
fn events_in_code(src: &Path) -> Catalogue {
    let mut catalogue = Catalogue::new();
    for file in rust_files(src) {
        let text = fs::read_to_string(&file).expect("source is UTF-8");
        let component = declared_target(&text).unwrap_or_else(|| component_of(src, &file));
        for args in macro_calls(&text) {
            let Some((event, fields)) = event_of(&args) else {
                continue;
            };
            catalogue
                .entry((component.clone(), event))
                .or_default()
                .extend(fields);
        }
    }
    catalogue
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("src/ is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "bin") {
                files.extend(rust_files(&path));
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// `src/scm/container_manager/heartbeat.rs` → `scm::container_manager::heartbeat`
/// (a `mod.rs` is its directory): the event's target below the crate.
fn component_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src/");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod.rs") {
        parts.pop();
    } else if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    parts.join("::")
}

/// The component a file names for its events with `target: EVENTS`, when it declares
/// `const EVENTS: &str = "hadoop_ref::…";` (a module split into files whose events keep
/// the module's name).
fn declared_target(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("const EVENTS: &str = \"hadoop_ref::")?;
    Some(rest.split_once('"')?.0.to_owned())
}

/// The argument text of every event macro call in `text` (the crate's `events` macros or
/// `tracing`'s), outside comments.
fn macro_calls(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|line| match line.trim_start().starts_with("//") {
            true => "",
            false => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut calls = Vec::new();
    for name in MACROS {
        let mut from = 0;
        while let Some(found) = code[from..].find(name) {
            let start = from + found + name.len();
            let end = closing_paren(&code, start);
            calls.push(code[start..end].to_owned());
            from = end;
        }
    }
    calls
}

/// The index of the `)` that closes a call whose arguments start at `start`.
fn closing_paren(code: &str, start: usize) -> usize {
    let bytes = code.as_bytes();
    let (mut depth, mut i) = (1usize, start);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// The index of the `"` that closes the string opening at `open`.
fn string_end(bytes: &[u8], open: usize) -> usize {
    let mut i = open + 1;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    i
}

/// The message (the last argument, a string literal) and field names of one call.
fn event_of(args: &str) -> Option<(String, BTreeSet<String>)> {
    let mut items = split_top_level(args);
    items.retain(|item| !item.trim_start().starts_with("target:"));
    let (last, fields) = items.split_last()?;
    let message = last.trim().strip_prefix('"')?.strip_suffix('"')?.to_owned();
    let names = fields
        .iter()
        .map(|item| {
            let name = item.split('=').next().unwrap_or(item);
            name.trim().trim_start_matches(['%', '?']).trim().to_owned()
        })
        .filter(|name| name != "node" && name != "message")
        .collect();
    Some((message, names))
}

/// `args` split at its top-level commas, empty items dropped.
fn split_top_level(args: &str) -> Vec<String> {
    let bytes = args.as_bytes();
    let (mut items, mut depth, mut start, mut i) = (Vec::new(), 0usize, 0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                items.push(args[start..i].to_owned());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    items.push(args[start..].to_owned());
    items.retain(|item| !item.trim().is_empty());
    items
}

/// The catalogue's rows: (component, event) → (fields, description).
fn catalogue_rows(doc: &str) -> BTreeMap<(String, String), (BTreeSet<String>, String)> {
    section(doc, EVENTS_BEGIN, EVENTS_END)
        .lines()
        .filter_map(|line| {
            let cells = table_cells(line)?;
            let [component, event, fields, description] = cells.as_slice() else {
                return None;
            };
            let fields = fields
                .split(',')
                .map(|f| f.trim().trim_matches('`').to_owned())
                .filter(|f| !f.is_empty() && f != "—")
                .collect();
            Some((
                (unquote(component), unquote(event)),
                (fields, description.clone()),
            ))
        })
        .collect()
}

/// The glossary's field names.
fn glossary(doc: &str) -> BTreeSet<String> {
    section(doc, FIELDS_BEGIN, FIELDS_END)
        .lines()
        .filter_map(table_cells)
        .filter_map(|cells| cells.first().map(|c| unquote(c)))
        .collect()
}

/// The cells of a table row, `None` for the header, its rule, and other lines.
fn table_cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<String> = inner.split(" | ").map(|c| c.trim().to_owned()).collect();
    let is_rule = cells.iter().all(|c| c.chars().all(|ch| ch == '-'));
    let is_header = cells
        .first()
        .is_some_and(|c| c == "component" || c == "field");
    (!is_rule && !is_header).then_some(cells)
}

fn unquote(cell: &str) -> String {
    cell.trim().trim_matches('`').to_owned()
}

fn section<'a>(doc: &'a str, begin: &str, end: &str) -> &'a str {
    let start = doc
        .find(begin)
        .unwrap_or_else(|| panic!("{DOC} has no `{begin}` marker"));
    let stop = doc[start..]
        .find(end)
        .unwrap_or_else(|| panic!("{DOC} has no `{end}` marker"));
    &doc[start + begin.len()..start + stop]
}

/// `doc` with the text between `begin` and `end` replaced by `body`.
fn splice(doc: &str, begin: &str, end: &str, body: &str) -> String {
    let start = doc.find(begin).expect("begin marker") + begin.len();
    let stop = start + doc[start..].find(end).expect("end marker");
    format!("{}\n{body}{}", &doc[..start], &doc[stop..])
}

/// The catalogue table for `code`, with the descriptions `rows` already have.
fn render(
    code: &Catalogue,
    rows: &BTreeMap<(String, String), (BTreeSet<String>, String)>,
) -> String {
    let mut table =
        String::from("| component | event | fields | what it says |\n|---|---|---|---|\n");
    for (key, fields) in code {
        let description = rows.get(key).map_or("TODO", |(_, d)| d.as_str());
        let fields = if fields.is_empty() {
            "—".to_owned()
        } else {
            fields
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        table.push_str(&format!(
            "| `{}` | `{}` | {fields} | {description} |\n",
            key.0, key.1
        ));
    }
    table
}
