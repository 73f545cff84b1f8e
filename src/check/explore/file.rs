//! The file an explorer's counterexample is kept in: a header naming the case, then its
//! actions one a line, as `soak replay` and `soak explain` read it.
//!
//! ```text
//! # hadoop-ref explorer counterexample: replay with `soak replay FILE`
//! scenario: deletions_across_transfer_restart_and_repair
//! variant: Legacy
//! actions:
//! driver 2
//! heartbeat dn3 scm1
//! process dn3
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use super::action::Action;

const HEADER: &str = "# hadoop-ref explorer counterexample: replay with `soak replay FILE`";

/// The extension of a counterexample file.
pub const EXTENSION: &str = "actions";

/// Why a counterexample file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CounterexampleFileError {
    /// The file could not be read or written.
    #[error("cannot access {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A header line is missing or malformed, or an action does not parse.
    #[error("{path} is not a counterexample file: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// A counterexample: the case it breaks and the actions from its set-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterexampleFile {
    /// Scenario name.
    pub scenario: String,
    /// Variant name.
    pub variant: String,
    /// The actions.
    pub actions: Vec<Action>,
}

impl CounterexampleFile {
    /// Whether `path`'s first line is a counterexample file's header.
    pub fn is_one(path: &Path) -> bool {
        fs::read_to_string(path).is_ok_and(|text| text.starts_with(HEADER))
    }

    /// Writes it to `dir/SCENARIO.VARIANT.explore.actions`; returns the path.
    pub fn write_in(&self, dir: &Path) -> Result<PathBuf, CounterexampleFileError> {
        let path = dir.join(format!(
            "{}.{}.explore.{EXTENSION}",
            self.scenario, self.variant
        ));
        let io = |source| CounterexampleFileError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(dir).map_err(io)?;
        let mut text = format!(
            "{HEADER}\nscenario: {}\nvariant: {}\nactions:\n",
            self.scenario, self.variant
        );
        for action in &self.actions {
            text.push_str(&format!("{action}\n"));
        }
        fs::write(&path, text).map_err(io)?;
        Ok(path)
    }

    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Self, CounterexampleFileError> {
        let text = fs::read_to_string(path).map_err(|source| CounterexampleFileError::Io {
            path: path.to_owned(),
            source,
        })?;
        let malformed = |reason: String| CounterexampleFileError::Malformed {
            path: path.to_owned(),
            reason,
        };
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return Err(malformed("no header line".into()));
        }
        let mut field = |name: &str| {
            lines
                .next()
                .and_then(|line| line.strip_prefix(name))
                .map(|value| value.trim().to_owned())
                .ok_or_else(|| malformed(format!("no `{name}` line")))
        };
        let scenario = field("scenario:")?;
        let variant = field("variant:")?;
        if !field("actions:")?.is_empty() {
            return Err(malformed("text after `actions:`".into()));
        }
        let actions = lines
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.trim().parse().map_err(|e| malformed(format!("{e}"))))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            scenario,
            variant,
            actions,
        })
    }
}
