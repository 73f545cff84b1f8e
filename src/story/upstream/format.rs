//! The log formats of upstream processes this crate reads.

use std::fmt;

/// A log format of an upstream process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpstreamFormat {
    /// An Ozone datanode's log (and its container log, `dn-container-*.log`).
    OzoneDatanode,
    /// An Ozone SCM's log.
    OzoneScm,
    /// An HDFS NameNode's log.
    HdfsNamenode,
}

impl UpstreamFormat {
    /// Every format.
    pub const ALL: [UpstreamFormat; 3] = [
        UpstreamFormat::OzoneDatanode,
        UpstreamFormat::OzoneScm,
        UpstreamFormat::HdfsNamenode,
    ];

    /// Its name on the command line: `ozone-datanode`, `ozone-scm`, `hdfs-namenode`.
    pub fn name(self) -> &'static str {
        match self {
            UpstreamFormat::OzoneDatanode => "ozone-datanode",
            UpstreamFormat::OzoneScm => "ozone-scm",
            UpstreamFormat::HdfsNamenode => "hdfs-namenode",
        }
    }

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl fmt::Display for UpstreamFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
