//! Every command the README shows is one the project has, and the soak tool's own help
//! shows lines that run.
//!
//! **How a soak line is checked.** The soak tool is a binary behind the `soak` feature
//! (the shuttle build), so this production test binary cannot run it: cargo gives no
//! `CARGO_BIN_EXE_soak` to a test of a build without the feature, and building it here
//! (`cargo run --features soak`) would compile the crate a second time in another build
//! for every test run. Its command line, though, is plain data: `src/bin/soak/cli.rs`
//! declares every subcommand and option with clap and runs nothing, so it is compiled
//! into this test as it is (`#[path]` below) and each README line is parsed by it, whole,
//! exactly as the binary would parse it: a subcommand, option or value the tool does not
//! take fails here. Each subcommand's `--help` is rendered by the same definition. What
//! this cannot see is what a subcommand does once parsed; the soak's own tests and
//! `ci/check-soak-shards` run the binary.
//!
//! **The other lines** of a README command block (`sh`, `bash`, `shell`) are checked
//! without running them: `ci/NAME` is an executable script of `ci/`; a `cargo` command's
//! `--features`, `--test`, `--bench`, `--bin` and `-p` name features and targets the
//! manifests declare. Any other command in a README command block fails the test, so a
//! new kind of command gets a check here before it gets a line there. In the command
//! blocks of `docs/` and `FIDELITY.md`, every `cargo soak` line is parsed the same way
//! (prose keeps synopses such as `--format FORMAT`, which are not commands).

use std::collections::BTreeSet;
use std::path::Path;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};

use super::markdown::{self, root, shown, split};

#[allow(dead_code)]
#[path = "../../src/bin/soak/cli.rs"]
mod cli;

use cli::Cli;

/// The info strings of a code block that holds commands.
const COMMAND_BLOCKS: [&str; 3] = ["sh", "bash", "shell"];

/// The commands of a block: comment lines dropped, a `\` continuation joined, a trailing
/// ` # comment` cut.
fn commands(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in lines {
        let line = line.trim();
        if pending.is_empty() && (line.is_empty() || line.starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head.trim_end());
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                out.push(strip_comment(&pending));
                pending.clear();
            }
        }
    }
    out
}

/// `line` without a ` # comment` outside quotes.
fn strip_comment(line: &str) -> String {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return line[..at].trim().to_owned(),
            _ => {}
        }
        previous = c;
    }
    line.trim().to_owned()
}

/// The words of a command, as a shell splits them (quotes kept together, not kept).
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in command.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            _ => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The words after any leading `NAME=value` environment assignments.
fn without_environment(words: &[String]) -> &[String] {
    let start = words
        .iter()
        .position(|w| {
            !w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            })
        })
        .unwrap_or(words.len());
    &words[start..]
}

/// Parses `args` (after `soak`) as the soak tool does; what is wrong, if anything.
fn soak_line_fails(args: &[String]) -> Option<String> {
    let argv = std::iter::once("soak".to_owned()).chain(args.iter().cloned());
    if let Err(error) = Cli::try_parse_from(argv) {
        return Some(format!("the soak tool refuses it: {}", error.render()));
    }
    let subcommand = args.first().filter(|a| !a.starts_with('-'))?;
    let help = Cli::try_parse_from(["soak", subcommand.as_str(), "--help"]);
    match help {
        Err(error) if error.kind() == ErrorKind::DisplayHelp => None,
        other => Some(format!(
            "`soak {subcommand} --help` shows no help: {other:?}"
        )),
    }
}

/// What the root manifest and the example's declare: features, and the names of test,
/// bench and binary targets, and packages.
struct Manifests {
    features: BTreeSet<String>,
    targets: BTreeSet<(String, String)>,
    packages: BTreeSet<String>,
}

impl Manifests {
    fn read() -> Self {
        let mut manifests = Self {
            features: BTreeSet::new(),
            targets: BTreeSet::new(),
            packages: BTreeSet::new(),
        };
        for file in ["Cargo.toml", "examples/conformance-kit/Cargo.toml"] {
            let text = std::fs::read_to_string(root().join(file)).expect("a manifest");
            manifests.take(&text);
        }
        manifests
    }

    /// The features, `[[kind]]` targets' names and the package's name of one manifest.
    fn take(&mut self, text: &str) {
        let mut table = String::new();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                table = line.trim_matches(['[', ']']).to_owned();
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let (key, value) = (key.trim(), value.trim().trim_matches('"'));
            match table.as_str() {
                "features" => {
                    self.features.insert(key.to_owned());
                }
                "package" if key == "name" => {
                    self.packages.insert(value.to_owned());
                }
                "test" | "bench" | "bin" if key == "name" => {
                    self.targets.insert((table.clone(), value.to_owned()));
                }
                _ => {}
            }
        }
    }

    /// What is wrong with a cargo command's words (after `cargo`), if anything.
    fn cargo_line_fails(&self, args: &[String]) -> Option<String> {
        let known = [
            "test", "build", "run", "clippy", "doc", "fmt", "bench", "check", "clean", "fuzz",
        ];
        let args: Vec<&str> = args
            .iter()
            .map(String::as_str)
            .skip_while(|a| a.starts_with('+'))
            .collect();
        let Some(subcommand) = args.first() else {
            return Some("a bare `cargo`".to_owned());
        };
        if *subcommand == "soak" {
            let rest: Vec<String> = args[1..].iter().map(|a| (*a).to_owned()).collect();
            return soak_line_fails(&rest);
        }
        if !known.contains(subcommand) {
            return Some(format!(
                "`cargo {subcommand}` is not a command this check knows"
            ));
        }
        let own = args.iter().position(|a| *a == "--").unwrap_or(args.len());
        if *subcommand == "run" && args.windows(2).any(|w| w == ["--bin", "soak"]) {
            let rest: Vec<String> = args[own.min(args.len())..]
                .iter()
                .skip(1)
                .map(|a| (*a).to_owned())
                .collect();
            return soak_line_fails(&rest);
        }
        for pair in args[..own].windows(2) {
            let problem = match pair[0] {
                "--features" => pair[1]
                    .split([',', ' '])
                    .find(|f| !self.features.contains(*f))
                    .map(|f| format!("no feature `{f}`")),
                "--test" | "--bench" | "--bin" => {
                    let kind = pair[0].trim_start_matches('-').to_owned();
                    let name = pair[1].to_owned();
                    (!self.targets.contains(&(kind, name)))
                        .then(|| format!("no target {} {}", pair[0], pair[1]))
                }
                "-p" | "--package" => {
                    (!self.packages.contains(pair[1])).then(|| format!("no package `{}`", pair[1]))
                }
                _ => None,
            };
            if problem.is_some() {
                return problem;
            }
        }
        None
    }
}

/// What is wrong with one README command, if anything.
fn readme_command_fails(manifests: &Manifests, command: &str) -> Option<String> {
    let words = words(command);
    let words = without_environment(&words);
    let Some(program) = words.first() else {
        return Some("an empty command".to_owned());
    };
    if program == "cargo" {
        return manifests.cargo_line_fails(&words[1..]);
    }
    if let Some(script) = program.strip_prefix("ci/") {
        let path = root().join("ci").join(script);
        return match std::fs::metadata(&path) {
            Ok(meta) if executable(&meta) => None,
            Ok(_) => Some(format!("{} is not executable", shown(&path))),
            Err(_) => Some(format!("{} does not exist", shown(&path))),
        };
    }
    Some(format!("`{program}` is not a command this check knows"))
}

#[cfg(unix)]
fn executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(meta: &std::fs::Metadata) -> bool {
    meta.is_file()
}

/// The `cargo soak` commands of a line of any kind (`time cargo soak ...`,
/// `a && cargo soak ...`): the words after `cargo soak`, up to a pipe, `&&`, `;` or a
/// redirection.
fn soak_invocations(line: &str) -> Vec<Vec<String>> {
    let words = words(line);
    let mut found = Vec::new();
    for (at, pair) in words.windows(2).enumerate() {
        if pair[0] == "cargo" && pair[1] == "soak" {
            let args: Vec<String> = words[at + 2..]
                .iter()
                .take_while(|w| !matches!(w.as_str(), "|" | "&&" | ";" | ">" | "2>" | "||"))
                .cloned()
                .collect();
            found.push(args);
        }
    }
    found
}

/// The command blocks' commands of a page, with their lines.
fn page_commands(page: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(page).expect("a readable page");
    let (blocks, _) = split(&text);
    blocks
        .iter()
        .filter(|b| COMMAND_BLOCKS.contains(&b.info.as_str()))
        .flat_map(|b| {
            commands(&b.lines)
                .into_iter()
                .map(move |c| (b.first_line, c))
        })
        .collect()
}

#[test]
fn every_readme_command_is_one_the_project_has() {
    let manifests = Manifests::read();
    let readme = root().join("README.md");
    let commands = page_commands(&readme);
    assert!(
        commands.iter().any(|(_, c)| c.starts_with("cargo soak"))
            && commands.iter().any(|(_, c)| c.starts_with("ci/test")),
        "the README shows its two commands: {commands:?}"
    );
    let problems: Vec<String> = commands
        .iter()
        .filter_map(|(line, command)| {
            readme_command_fails(&manifests, command)
                .map(|p| format!("README.md (block at line {line}): `{command}`: {p}"))
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_two_commands_come_within_the_readmes_first_40_lines() {
    let text = std::fs::read_to_string(root().join("README.md")).expect("the README");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() <= 200, "the README has {} lines", lines.len());
    let head = lines[..40.min(lines.len())].join("\n");
    for command in ["\ncargo soak ", "\nci/test "] {
        assert!(
            head.contains(command),
            "`{}` within the first 40 lines",
            command.trim()
        );
    }
}

#[test]
fn every_soak_line_of_the_docs_parses() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for page in markdown::pages() {
        let text = std::fs::read_to_string(&page).expect("a readable page");
        let (blocks, _) = split(&text);
        let command_blocks = blocks
            .iter()
            .filter(|b| COMMAND_BLOCKS.contains(&b.info.as_str()));
        for line in command_blocks.flat_map(|b| commands(&b.lines)) {
            for args in soak_invocations(&line) {
                checked += 1;
                if let Some(problem) = soak_line_fails(&args) {
                    problems.push(format!("{}: `{line}`: {problem}", shown(&page)));
                }
            }
        }
    }
    assert!(checked > 20, "the docs' soak lines were found ({checked})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_subcommands_help_shows_examples_that_parse() {
    let command = Cli::command();
    let mut subcommands = 0;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        subcommands += 1;
        let name = sub.get_name().to_owned();
        let help = match Cli::try_parse_from(["soak", name.as_str(), "--help"]) {
            Err(error) if error.kind() == ErrorKind::DisplayHelp => error.render().to_string(),
            other => panic!("`soak {name} --help`: {other:?}"),
        };
        let examples: Vec<&str> = help
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("cargo soak"))
            .collect();
        assert!(
            !examples.is_empty(),
            "`soak {name} --help` shows an example:\n{help}"
        );
        for example in examples {
            for args in soak_invocations(&strip_comment(example)) {
                assert_eq!(args.first(), Some(&name), "{example}");
                assert_eq!(soak_line_fails(&args), None, "{example}");
            }
        }
    }
    assert!(
        subcommands >= 8,
        "the subcommands were found ({subcommands})"
    );
}

#[test]
fn a_mistyped_subcommand_is_told_the_right_one() {
    for (typo, meant) in [
        ("exlpore", "explore"),
        ("chek-log", "check-log"),
        ("rplay", "replay"),
        ("explian", "explain"),
        ("bored", "board"),
        ("tla-trcae", "tla-trace"),
    ] {
        let error = Cli::try_parse_from(["soak", typo]).expect_err("a typo is refused");
        assert_eq!(error.kind(), ErrorKind::InvalidSubcommand, "{typo}");
        let message = error.render().to_string();
        // clap lists the similar commands from the least to the most alike.
        let tip = message
            .lines()
            .find(|l| l.contains("tip:") && l.contains("similar subcommand"))
            .unwrap_or_else(|| panic!("`soak {typo}` gives a tip:\n{message}"));
        let best = tip.rsplit('\'').nth(1);
        assert_eq!(
            best,
            Some(meant),
            "`soak {typo}` suggests `{meant}` first:\n{message}"
        );
    }
}

#[test]
fn the_command_checks_refuse_what_the_project_does_not_have() {
    let manifests = Manifests::read();
    for (command, refused) in [
        ("cargo soak run --time 20 --filter heartbeat_term", false),
        ("cargo soak", false),
        ("RUSTFLAGS=\"--cfg loom\" cargo test --release", false),
        ("cargo test --release --features shuttle", false),
        ("ci/test", false),
        ("cargo soak run --tim 20", true),
        ("cargo soak replya FILE", true),
        ("cargo soak check-log --format syslog x.log", true),
        ("cargo test --features turbo", true),
        ("cargo test --test nowhere", true),
        ("ci/nowhere", true),
        ("make all", true),
    ] {
        assert_eq!(
            readme_command_fails(&manifests, command).is_some(),
            refused,
            "{command}: {:?}",
            readme_command_fails(&manifests, command)
        );
    }
    assert_eq!(
        commands(&[
            "cargo soak run \\".to_owned(),
            "  --time 5   # five seconds".to_owned()
        ]),
        ["cargo soak run --time 5"]
    );
}
