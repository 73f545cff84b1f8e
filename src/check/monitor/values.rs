//! Field values as the components write them (`Display` or `Debug` text), read back
//! leniently: a monitor that cannot read a value treats the field as absent.

use crate::story::without_some;

/// A non-negative integer: `4`, or `Some(4)`.
pub fn number(text: &str) -> Option<u64> {
    without_some(text).parse().ok()
}

/// A term: `4` or `Some(4)`; `None` for `None` or anything else.
pub fn term_value(text: &str) -> Option<i64> {
    without_some(text).parse().ok()
}

/// The number an identifier ends with: `c1`, `dn1`, `blk_100`, `ContainerId(3)` → 1, 1,
/// 100, 3.
pub fn parse_id(text: &str) -> Option<u64> {
    let trimmed = text.trim().trim_end_matches(')');
    let start = trimmed
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit())
        .last()
        .map(|(i, _)| i)?;
    trimmed[start..].parse().ok()
}

/// The items of a list as written: `[1, 2]`, `c1,c2`, `dn2, dn3` (empty for `[]`, `` or
/// `none`).
pub fn items(text: &str) -> Vec<&str> {
    each_item(text).collect()
}

/// [`items`], one at a time (nothing to allocate).
pub(super) fn each_item(text: &str) -> impl Iterator<Item = &str> {
    let inner = text
        .trim()
        .trim_start_matches(['[', '{'])
        .trim_end_matches([']', '}']);
    inner
        .split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty() && *item != "none")
}

/// The container a command's text names: this crate's `Debug` text (`DeleteContainer {
/// container: ContainerId(3), force: true }` → 3) or upstream's (`deleteContainerCommand:
/// containerID: 3`, `... containerId=3, ...` → 3).
pub fn command_container(command: &str) -> Option<u64> {
    if let Some((_, rest)) = command.split_once("container: ") {
        let end = rest.find(')').map_or(rest.len(), |i| i + 1);
        return parse_id(&rest[..end]);
    }
    let (_, rest) = command
        .split_once("containerID: ")
        .or_else(|| command.split_once("containerId="))?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Whether a command's text is a delete-container command's (this crate's or upstream's).
pub fn is_delete_container(command: &str) -> bool {
    command.starts_with("DeleteContainer") || command.starts_with("deleteContainerCommand")
}
