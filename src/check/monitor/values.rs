//! What the monitors read of text fields: a list's items (`c2,c3`, as a component writes
//! a list of ids) and a command's kind. Ids, terms, counts and flags are typed values
//! (`story::FieldValue`), never parsed here.

/// The number a list's item (an id) ends with: `c1`, `dn1`, `blk_100` → 1, 1, 100.
pub fn parse_id(text: &str) -> Option<u64> {
    crate::story::list_item_id(text)
}

/// The items of a list as written: `[1, 2]`, `c1,c2`, `dn2, dn3` (empty for `[]`, `` or
/// `none`).
pub fn items(text: &str) -> Vec<&str> {
    each_item(text).collect()
}

/// The ids a list field names (`c2,c3`; `-` or `none` for none), one at a time. A list
/// read from a text log that holds one id may have been read as that id's number: it is
/// the list of that one.
pub(super) fn listed_ids<'a>(
    event: &'a crate::story::Event,
    name: &str,
) -> impl Iterator<Item = u64> + 'a {
    let value = event.value(name);
    let single = value.and_then(crate::story::FieldValue::as_u64);
    let text = value
        .and_then(crate::story::FieldValue::as_text)
        .unwrap_or("");
    single.into_iter().chain(
        each_item(text)
            .filter(|item| *item != "-")
            .filter_map(parse_id),
    )
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

/// Whether a command's kind (an event's `command` field) is a delete-container command's.
pub fn is_delete_container(command: &str) -> bool {
    command == "DeleteContainer"
}

/// Field `name` of `event` as a finding shows it: its value, or `?` when absent.
pub(super) fn shown(event: &crate::story::Event, name: &str) -> String {
    event
        .value(name)
        .map_or_else(|| "?".to_owned(), ToString::to_string)
}
