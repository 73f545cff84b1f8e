//! Just enough Markdown for the doc checks: fenced code blocks, headings and their
//! GitHub anchors, and the targets of links.

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown pages the checks read: the README, `FIDELITY.md` and every page of
/// `docs/`.
pub fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages = vec![root.join("README.md"), root.join("FIDELITY.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A fenced code block: its info string (`sh`, `rust`, …) and its lines, with the line
/// number of its first line.
#[derive(Debug, Clone)]
pub struct Block {
    pub info: String,
    pub first_line: usize,
    pub lines: Vec<String>,
}

/// A line of prose (outside fenced code), with its number.
#[derive(Debug, Clone)]
pub struct Prose {
    pub number: usize,
    pub text: String,
}

/// The page split into its fenced code blocks and its prose lines.
pub fn split(text: &str) -> (Vec<Block>, Vec<Prose>) {
    let mut blocks = Vec::new();
    let mut prose = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim_start();
        let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        match (&mut open, fence) {
            (None, true) => {
                let marker: String = trimmed
                    .chars()
                    .take_while(|c| *c == '`' || *c == '~')
                    .collect();
                let info = trimmed[marker.len()..].trim().to_owned();
                open = Some((
                    marker,
                    Block {
                        info,
                        first_line: number + 1,
                        lines: Vec::new(),
                    },
                ));
            }
            (Some((marker, _)), true) if trimmed.trim_end() == marker.as_str() => {
                if let Some((_, block)) = open.take() {
                    blocks.push(block);
                }
            }
            (Some((_, block)), _) => block.lines.push(line.to_owned()),
            (None, false) => prose.push(Prose {
                number,
                text: line.to_owned(),
            }),
        }
    }
    assert!(open.is_none(), "a fenced code block is never closed");
    (blocks, prose)
}

/// The text without its inline code spans.
pub fn without_code_spans(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|c| *c == '`').count();
        let after = &rest[start + ticks..];
        let closing = "`".repeat(ticks);
        match after.find(&closing) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The anchors GitHub gives the page's headings, in order (a repeated one gets `-1`,
/// `-2`, …).
pub fn anchors(text: &str) -> Vec<String> {
    let (_, prose) = split(text);
    let mut anchors: Vec<String> = Vec::new();
    for line in prose {
        let trimmed = line.text.trim_start();
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if hashes == 0 || hashes > 6 || !trimmed[hashes..].starts_with(' ') {
            continue;
        }
        let heading = trimmed[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while anchors.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        anchors.push(anchor);
    }
    anchors
}

/// GitHub's anchor of a heading: lower case, every character but letters, digits, `_`,
/// `-` and spaces dropped, each space a `-`. Link text keeps its words, not its target.
pub fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[words](target)` reads as `words`.
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](") else {
            break;
        };
        let Some(end) = rest[open + close..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + close]);
        rest = &rest[open + close + end + 1..];
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
            _ => None,
        })
        .collect()
}

/// A link's target as written, and the line it is on.
#[derive(Debug, Clone)]
pub struct Link {
    pub line: usize,
    pub target: String,
}

/// Every link and image target of the page's prose: `[text](target)`,
/// `![alt](target "title")`, and reference definitions `[label]: target`.
pub fn links(text: &str) -> Vec<Link> {
    let (_, prose) = split(text);
    let mut links = Vec::new();
    for line in prose {
        let text = without_code_spans(&line.text);
        if let Some(target) = reference_definition(&text) {
            links.push(Link {
                line: line.number,
                target: target.to_owned(),
            });
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            let target = after[..end].split_whitespace().next().unwrap_or("");
            links.push(Link {
                line: line.number,
                target: target.trim_matches(['<', '>']).to_owned(),
            });
            rest = &after[end..];
        }
    }
    links
}

/// The target of a reference definition, `[label]: target`.
fn reference_definition(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (label, rest) = rest.split_once("]:")?;
    if label.is_empty() || label.contains(['[', ']']) || !rest.starts_with(' ') {
        return None;
    }
    rest.split_whitespace().next()
}

/// Whether a target leaves the repository (a web address, a mail address).
pub fn is_external(target: &str) -> bool {
    ["http://", "https://", "mailto:", "ftp://"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
}

/// `path` relative to the repository's root, for messages.
pub fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}
