//! The file operations of a replica on disk, behind one small trait, so that a test can
//! stop the process, or cut the power, between any two of them.
//!
//! [`DiskStore`](super::DiskStore) does every create, write, fsync, rename, unlink and
//! truncate through a [`Filesystem`], and runs each database batch through
//! [`Filesystem::database_batch`], which orders it among the file operations.
//! [`OsFilesystem`] is the operating system's; the simulation layer's `CrashFs` numbers
//! each mutating call as a crash point and can drop what was not made durable.

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::super::store::StoreError;

/// The file operations a replica on disk needs. Mutating calls (the crash points of a
/// fault-injecting implementation) are marked so; reads never change anything.
pub trait Filesystem: fmt::Debug + Send + Sync {
    /// Opens `path` for reading and writing, creating it empty if it does not exist
    /// (mutating: it may create a directory entry). The handle stays valid if the path
    /// is unlinked, as a cached handle does on POSIX.
    fn open_block_file(&self, path: &Path) -> io::Result<Box<dyn BlockFile>>;
    /// Creates `dir` and its missing parents (mutating).
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Creates or truncates `path` and writes `bytes` to it, without fsync (mutating).
    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Fsyncs the data of the file at `path` (mutating: it makes data durable).
    fn sync_file(&self, path: &Path) -> io::Result<()>;
    /// Renames `from` over `to` (mutating).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Unlinks `path` (mutating).
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Shortens the file at `path` to `len` bytes, without fsync (mutating).
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;
    /// Fsyncs the directory `dir`, making the creates, renames and unlinks in it durable
    /// (mutating).
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Runs `commit`, one durable batch of the database in `db_file` (mutating).
    fn database_batch(
        &self,
        db_file: &Path,
        commit: &mut dyn FnMut() -> Result<(), StoreError>,
    ) -> Result<(), StoreError>;
    /// The length of the file at `path`, `None` if there is none.
    fn len(&self, path: &Path) -> io::Result<Option<u64>>;
    /// Up to `len` bytes of `path` from `offset`, `None` if there is no such file.
    fn read_at(&self, path: &Path, offset: u64, len: u64) -> io::Result<Option<Vec<u8>>>;
    /// The first `limit` bytes of `path`, `None` if there is no such file.
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>>;
    /// The names in `dir`.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<OsString>>;
}

/// An open block file (a cached handle of `FilePerBlockStrategy`).
pub trait BlockFile: fmt::Debug + Send {
    /// The length of the open file, linked or not.
    fn size(&self) -> io::Result<u64>;
    /// Writes `data` at `offset` (mutating).
    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()>;
    /// Fsyncs the file's data (mutating: it makes data durable).
    fn sync_data(&self) -> io::Result<()>;
}

/// The operating system's file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsFilesystem;

/// A block file open in the operating system.
#[derive(Debug)]
pub struct OsBlockFile(pub File);

impl BlockFile for OsBlockFile {
    fn size(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.0.write_all_at(data, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}

/// `Ok(None)` for a missing file.
fn absent_as_none<T>(result: io::Result<T>) -> io::Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

impl Filesystem for OsFilesystem {
    fn open_block_file(&self, path: &Path) -> io::Result<Box<dyn BlockFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(Box::new(OsBlockFile(file)))
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        File::create(path)?.write_all(bytes)
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        OpenOptions::new().write(true).open(path)?.sync_data()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        OpenOptions::new().write(true).open(path)?.set_len(len)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn database_batch(
        &self,
        _db_file: &Path,
        commit: &mut dyn FnMut() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        commit()
    }

    fn len(&self, path: &Path) -> io::Result<Option<u64>> {
        absent_as_none(fs::metadata(path)).map(|meta| meta.map(|m| m.len()))
    }

    fn read_at(&self, path: &Path, offset: u64, len: u64) -> io::Result<Option<Vec<u8>>> {
        let Some(file) = absent_as_none(File::open(path))? else {
            return Ok(None);
        };
        let available = file.metadata()?.len().saturating_sub(offset).min(len);
        let size = usize::try_from(available).map_err(|_| {
            io::Error::other(format!("{available} bytes exceed addressable memory"))
        })?;
        let mut buf = vec![0u8; size];
        file.read_exact_at(&mut buf, offset)?;
        Ok(Some(buf))
    }

    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
        let Some(file) = absent_as_none(File::open(path))? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.take(limit).read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        fs::read_dir(dir)?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect()
    }
}
