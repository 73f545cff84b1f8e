//! The project's own docs, checked as CI checks code: every relative link of the README
//! and of `docs/` leads to a file that exists (and an anchor to a heading of it), and
//! every command the README shows is one the project has (the soak tool's lines are
//! parsed by the soak tool's own command line). `docs/upstream-logging.md`'s claims are
//! checked where its statements are read (`tests/story/upstream_proposed.rs`).

mod links;
mod markdown;
mod readme_commands;
