//! Every relative link of the README, `FIDELITY.md` and `docs/*.md` resolves: the file
//! (or directory) exists, and an anchor (`page.md#heading`, `#heading`) names a heading of
//! the page it points to, as GitHub spells its anchors. Web addresses are not fetched.

use std::path::Path;

use super::markdown::{self, anchors, is_external, links, pages, shown};

/// What is wrong with `target`, a link on a line of `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.is_empty() {
        return Some("an empty link".to_owned());
    }
    if is_external(target) {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_owned()
    } else {
        page.parent().expect("a page's directory").join(path)
    };
    if !file.exists() {
        return Some(format!("{} does not exist", shown(&file)));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "an anchor into {}, which is not a Markdown page",
            shown(&file)
        ));
    }
    let text = std::fs::read_to_string(&file).expect("a readable page");
    let known = anchors(&text);
    (!known.iter().any(|a| a == anchor)).then(|| {
        format!(
            "{} has no heading `#{anchor}` (its anchors: {})",
            shown(&file),
            known.join(", ")
        )
    })
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("a readable page");
        for link in links(&text) {
            checked += 1;
            if let Some(problem) = broken(&page, &link.target) {
                problems.push(format!(
                    "{}:{}: ({}) {problem}",
                    shown(&page),
                    link.line,
                    link.target
                ));
            }
        }
    }
    assert!(checked > 20, "the pages' links were found ({checked})");
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_knows_githubs_anchors_and_a_broken_link() {
    assert_eq!(
        markdown::slug("Reading upstream's own logs"),
        "reading-upstreams-own-logs"
    );
    assert_eq!(
        markdown::slug("Ozone datanode (`ozone-datanode`)"),
        "ozone-datanode-ozone-datanode"
    );
    assert_eq!(
        markdown::slug("HDDS-17268 — `datanode::state_context`: the term"),
        "hdds-17268--datanodestate_context-the-term"
    );
    assert_eq!(markdown::slug("See [the log](event-log.md)"), "see-the-log");
    let page =
        "# A\n\n## A\n\n```sh\n# not a heading\n```\n[x](#a-1) [y](missing.md) `[z](nowhere.md)`\n";
    assert_eq!(anchors(page), ["a", "a-1"]);
    let targets: Vec<String> = links(page).into_iter().map(|l| l.target).collect();
    assert_eq!(targets, ["#a-1", "missing.md"]);
    let readme = markdown::root().join("README.md");
    assert!(broken(&readme, "docs/nowhere.md").is_some());
    assert!(broken(&readme, "docs/architecture.md#no-such-heading").is_some());
    assert!(broken(&readme, "docs/architecture.md#the-layers").is_none());
    assert!(broken(&readme, "https://docs.rs/redb").is_none());
}
