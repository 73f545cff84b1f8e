//! Upstream log statements as data: the logger's class, the level, the message's format
//! with `{}` where upstream formats a value, and the event the line yields; and the
//! matching of a message against such a format.

use super::layout::{Level, Line};

/// One log statement of upstream's source, as a parser maps it.
#[derive(Debug, Clone, Copy)]
pub struct Statement<I: 'static> {
    /// The parser's name for it.
    pub id: I,
    /// The class whose logger writes it (the logger name's last part); `""` for any logger.
    pub class: &'static str,
    /// The level upstream logs it at: the level the user must enable for that logger.
    pub level: Level,
    /// Upstream's message with `{}` where it formats a value.
    pub template: &'static str,
    /// The events a line of it yields, as (component, event); none when it only tells the
    /// parser something about later lines (which container a deleting task works on).
    pub yields: &'static [(&'static str, &'static str)],
}

/// The values a message holds where its template has `{}`.
#[derive(Debug, Clone, Copy)]
pub struct Captures<'a> {
    parts: [&'a str; MAX_CAPTURES],
    len: usize,
}

/// Most `{}` in a template.
const MAX_CAPTURES: usize = 8;

impl<'a> Captures<'a> {
    /// The `i`-th value (from 0); `""` past the last.
    pub fn get(&self, i: usize) -> &'a str {
        if i < self.len { self.parts[i] } else { "" }
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Matches `message` against `template`: the text between the `{}` must appear as
/// written, each `{}` taking the shortest text up to the next piece (the last one, when
/// the template ends with `{}`, takes the rest). A template ending in text must end the
/// message.
pub fn capture<'a>(template: &str, message: &'a str) -> Option<Captures<'a>> {
    let mut pieces = template.split("{}");
    let first = pieces.next().unwrap_or("");
    let mut rest = message.strip_prefix(first)?;
    let mut captures = Captures {
        parts: [""; MAX_CAPTURES],
        len: 0,
    };
    let mut pieces = pieces.peekable();
    while let Some(piece) = pieces.next() {
        if captures.len == MAX_CAPTURES {
            return None;
        }
        let last = pieces.peek().is_none();
        let (value, after) = if last && piece.is_empty() {
            (rest, "")
        } else if last {
            (rest.strip_suffix(piece)?, "")
        } else {
            let at = rest.find(piece)?;
            (&rest[..at], &rest[at + piece.len()..])
        };
        captures.parts[captures.len] = value;
        captures.len += 1;
        rest = after;
    }
    (captures.len > 0 || rest.is_empty()).then_some(captures)
}

/// The first statement of `statements` whose class and template `line` fits, with its
/// values (a format's `STATEMENTS` first, then its `PROPOSED`).
pub fn find<'s, 'a, I>(
    statements: &'s [Statement<I>],
    line: &Line<'a>,
) -> Option<(&'s Statement<I>, Captures<'a>)> {
    let class = line.class();
    statements
        .iter()
        .filter(|s| s.class.is_empty() || s.class == class)
        .find_map(|s| capture(s.template, line.message).map(|c| (s, c)))
}

/// The number a value ends with: `5`, `#5`, `blk_7` → 5, 5, 7 (digits only, at most 19).
pub fn trailing_number(text: &str) -> Option<u64> {
    let text = text.trim();
    let start = text
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit())
        .last()
        .map(|(i, _)| i)?;
    text[start..].parse().ok()
}

/// The number right after `key` in `text` (`term: 3` with key `term: `).
pub fn number_after(text: &str, key: &str) -> Option<u64> {
    let (_, rest) = text.split_once(key)?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// A block as HDFS writes it, `blk_<id>_<genstamp>`: (id, genstamp).
pub fn hdfs_block(text: &str) -> Option<(u64, u64)> {
    let rest = text.trim().strip_prefix("blk_")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(rest.len());
    let (id, gs) = rest[..end].split_once('_')?;
    Some((id.parse().ok()?, gs.parse().ok()?))
}

/// The items of a list as Java writes one (`[a, b]`, or `a, b`), trimmed; none for `[]`.
pub fn list_items(text: &str) -> Vec<String> {
    text.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}
