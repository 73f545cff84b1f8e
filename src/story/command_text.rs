//! An SCM command written as text, read where a text log is read: a version 1 event
//! log's `command` field (this crate's `Debug` of the command, `DeleteContainer {
//! container: ContainerId(3), force: true }`) or an Ozone datanode's log line (the
//! command's protobuf type and fields, `deleteContainerCommand: containerID: 3`). Events
//! carry a command's kind and its container as fields of their own
//! (`hdds::command::CommandKind::name`); these readers give them from such text.

use super::value::{FieldValue, trailing_number};

/// The command's kind as this crate names it (`DeleteContainer`): the text's leading
/// word, upstream's protobuf type name (`deleteContainerCommand`) without its `Command`
/// suffix and capitalised. The whole text, trimmed, when it has no leading word.
pub(crate) fn kind_of(text: &str) -> String {
    let text = text.trim();
    let end = text
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(text.len());
    let word = &text[..end];
    if word.is_empty() {
        return text.to_owned();
    }
    let word = word.strip_suffix("Command").unwrap_or(word);
    let mut kind = String::with_capacity(word.len());
    let mut chars = word.chars();
    if let Some(first) = chars.next() {
        kind.push(first.to_ascii_uppercase());
    }
    kind.extend(chars);
    kind
}

/// The container a command's text names: this crate's `Debug` text (`container:
/// ContainerId(3)`) or upstream's (`containerID: 3`, `containerId=3`).
pub(crate) fn container_of(text: &str) -> Option<u64> {
    if let Some((_, rest)) = text.split_once("container: ") {
        let end = rest.find(')').map_or(rest.len(), |i| i + 1);
        return trailing_number(&rest[..end]);
    }
    let (_, rest) = text
        .split_once("containerID: ")
        .or_else(|| text.split_once("containerId="))?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Fields with a command written as its whole text (`command`): its kind goes to
/// `command` and its container, when it names one and no `container` field is there, to
/// `container`, as this crate's events carry them.
pub(crate) fn split_command(fields: &mut Vec<(String, FieldValue)>) {
    let Some(at) = fields.iter().position(|(name, _)| name == "command") else {
        return;
    };
    let FieldValue::Text(text) = &fields[at].1 else {
        return;
    };
    let container = container_of(text);
    fields[at].1 = FieldValue::Text(kind_of(text));
    if let Some(container) = container
        && !fields.iter().any(|(name, _)| name == "container")
    {
        fields.push(("container".to_owned(), FieldValue::U64(container)));
    }
}

/// Fields written as text (a version 1 event log's, a parsed upstream log line's) read
/// into values ([`FieldValue::read`]), a command written as its whole text split into its
/// kind (`command`) and its `container`, as this crate's events carry them.
///
/// ```
/// use hadoop_ref::story::{FieldValue, read_fields};
///
/// let fields = read_fields([
///     ("command", "DeleteContainer { container: ContainerId(3), force: true }"),
///     ("term", "2"),
/// ]);
/// assert_eq!(fields[0], ("command".into(), FieldValue::Text("DeleteContainer".into())));
/// assert_eq!(fields[1], ("term".into(), FieldValue::U64(2)));
/// assert_eq!(fields[2], ("container".into(), FieldValue::U64(3)));
/// ```
pub fn read_fields<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<(String, FieldValue)> {
    let mut read: Vec<(String, FieldValue)> = fields
        .into_iter()
        .map(|(name, text)| (name.to_owned(), FieldValue::read(name, text)))
        .collect();
    split_command(&mut read);
    read
}
