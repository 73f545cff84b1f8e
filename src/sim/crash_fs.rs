//! A file system that stops the process, or cuts the power, at a numbered crash point.
//!
//! Every mutating call of [`Filesystem`] and [`BlockFile`] (create, write, fsync,
//! rename, unlink, truncate, a database batch) is a crash point: after
//! [`CrashFs::crash_after`]`(n)`, the first `n` go through and every later one fails, as
//! if the process had stopped there. Reads pass through.
//!
//! **Power loss.** Once [`settle`](CrashFs::settle)d, the file system also tracks what is
//! durable, as POSIX promises it: a file's bytes as of its last fsync (none for a file
//! never fsynced), and a directory's entries as of its last fsync (its entries at the
//! settle otherwise). [`power_loss`](CrashFs::power_loss) rewrites the directories to
//! exactly that. Files are told apart by identity, not name, so a rename that was not
//! made durable brings the old file back under the name. A database file is left as it
//! is: its store makes each batch durable before the batch returns (redb's documented
//! guarantee, which this file system does not check).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::datanode::container::disk::fs::{BlockFile, Filesystem, OsBlockFile, OsFilesystem};
use crate::datanode::container::store::StoreError;
use crate::sync::{Arc, Mutex};

/// A file system over the operating system's, with numbered crash points and a power
/// loss. Clones share their state.
#[derive(Clone, Default)]
pub struct CrashFs {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// Mutating calls that went through since the crash point was set.
    done: usize,
    crash_after: Option<usize>,
    /// What is durable, once settled.
    durable: Option<Durable>,
}

/// The durable view: file identities, their durable bytes, and the durable entries of
/// every directory under the settled root.
#[derive(Default)]
struct Durable {
    next_id: u64,
    /// The operating system's inode number of each file seen, to its identity here.
    ids: BTreeMap<u64, u64>,
    bytes: BTreeMap<u64, Vec<u8>>,
    entries: BTreeMap<PathBuf, BTreeMap<OsString, u64>>,
    /// Database files, which their store makes durable itself.
    databases: BTreeSet<PathBuf>,
}

impl Durable {
    /// A new identity for the file at `ino`, with no durable bytes.
    fn new_file(&mut self, ino: u64) -> u64 {
        self.next_id += 1;
        self.ids.insert(ino, self.next_id);
        self.bytes.insert(self.next_id, Vec::new());
        self.next_id
    }

    /// The identity of the file at `ino`, a new one if it was never seen.
    fn id(&mut self, ino: u64) -> u64 {
        match self.ids.get(&ino) {
            Some(id) => *id,
            None => self.new_file(ino),
        }
    }

    /// The files in `dir` now, by name and identity.
    fn current_entries(&mut self, dir: &Path) -> io::Result<BTreeMap<OsString, u64>> {
        let mut entries = BTreeMap::new();
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_file() {
                entries.insert(entry.file_name(), self.id(meta.ino()));
            }
        }
        Ok(entries)
    }
}

impl fmt::Debug for CrashFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("CrashFs")
            .field("done", &state.done)
            .field("crash_after", &state.crash_after)
            .field("settled", &state.durable.is_some())
            .finish()
    }
}

impl CrashFs {
    /// A file system with no crash point and nothing tracked.
    pub fn new() -> Self {
        Self::default()
    }

    /// A clone as the trait object a store takes.
    pub fn shared(&self) -> Arc<dyn Filesystem> {
        Arc::new(self.clone())
    }

    /// Lets `mutations` more mutating calls through, then fails every later one; the
    /// count starts again from 0.
    pub fn crash_after(&self, mutations: usize) {
        let mut state = self.state.lock();
        state.done = 0;
        state.crash_after = Some(mutations);
    }

    /// Mutating calls that went through since the crash point was set.
    pub fn mutations(&self) -> usize {
        self.state.lock().done
    }

    /// Takes everything under `root` as durable now, as if the machine had flushed it
    /// all, and tracks durability from here on; `databases` are files a database keeps.
    pub fn settle(&self, root: &Path, databases: &[PathBuf]) -> io::Result<()> {
        let mut durable = Durable {
            databases: databases.iter().cloned().collect(),
            ..Durable::default()
        };
        let mut dirs = vec![root.to_path_buf()];
        // Bounded by the directories under `root`: each is pushed once.
        while let Some(dir) = dirs.pop() {
            for entry in fs::read_dir(&dir)? {
                let entry = entry?;
                if entry.file_type()?.is_dir() {
                    dirs.push(entry.path());
                }
            }
            let entries = durable.current_entries(&dir)?;
            for (name, id) in &entries {
                durable.bytes.insert(*id, fs::read(dir.join(name))?);
            }
            durable.entries.insert(dir, entries);
        }
        self.state.lock().durable = Some(durable);
        Ok(())
    }

    /// Cuts the power: every settled directory is rewritten to its durable entries, each
    /// file to its durable bytes; files a database keeps stay as they are.
    pub fn power_loss(&self) -> io::Result<()> {
        let mut state = self.state.lock();
        let Some(durable) = state.durable.as_mut() else {
            return Err(io::Error::other(
                "power loss before the file system settled",
            ));
        };
        let dirs: Vec<PathBuf> = durable.entries.keys().cloned().collect();
        for dir in dirs {
            let now = durable.current_entries(&dir)?;
            let kept = &durable.entries[&dir];
            for name in now.keys().filter(|name| !kept.contains_key(*name)) {
                let path = dir.join(name);
                if !durable.databases.contains(&path) {
                    fs::remove_file(path)?;
                }
            }
            for (name, id) in kept {
                let path = dir.join(name);
                if !durable.databases.contains(&path) {
                    fs::write(path, &durable.bytes[id])?;
                }
            }
        }
        state.durable = None;
        Ok(())
    }

    /// Counts a mutating call on `path`, or fails it when past the crash point.
    fn permit(&self, what: &str, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        if state.crash_after.is_some_and(|after| state.done >= after) {
            return Err(io::Error::other(format!(
                "crashed before {what} of {}",
                path.display()
            )));
        }
        state.done += 1;
        Ok(())
    }

    /// Runs `track` on the durable view, when one is kept.
    fn track(&self, track: impl FnOnce(&mut Durable) -> io::Result<()>) -> io::Result<()> {
        match self.state.lock().durable.as_mut() {
            Some(durable) => track(durable),
            None => Ok(()),
        }
    }

    /// Records a file created at `path` (it did not exist before the call).
    fn created(&self, path: &Path) -> io::Result<()> {
        let ino = fs::metadata(path)?.ino();
        self.track(|durable| {
            durable.new_file(ino);
            Ok(())
        })
    }

    /// Records the bytes of the file at `path` as durable.
    fn synced(&self, path: &Path) -> io::Result<()> {
        let ino = fs::metadata(path)?.ino();
        let bytes = fs::read(path)?;
        self.track(|durable| {
            let id = durable.id(ino);
            durable.bytes.insert(id, bytes);
            Ok(())
        })
    }
}

/// A block file handle of a [`CrashFs`]: its writes and fsyncs are crash points.
#[derive(Debug)]
struct CrashBlockFile {
    file: OsBlockFile,
    path: PathBuf,
    fs: CrashFs,
}

impl BlockFile for CrashBlockFile {
    fn size(&self) -> io::Result<u64> {
        self.file.size()
    }

    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        self.fs.permit("a chunk write", &self.path)?;
        self.file.write_at(data, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.fs.permit("an fsync", &self.path)?;
        self.file.sync_data()?;
        // Through the handle: the file may be unlinked (the HDDS-16811 race).
        let meta = self.file.0.metadata()?;
        let mut bytes = vec![0u8; usize::try_from(meta.len()).map_err(io::Error::other)?];
        self.file.0.read_exact_at(&mut bytes, 0)?;
        self.fs.track(|durable| {
            let id = durable.id(meta.ino());
            durable.bytes.insert(id, bytes);
            Ok(())
        })
    }
}

impl Filesystem for CrashFs {
    fn open_block_file(&self, path: &Path) -> io::Result<Box<dyn BlockFile>> {
        self.permit("an open", path)?;
        let existed = path.exists();
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        if !existed {
            self.created(path)?;
        }
        Ok(Box::new(CrashBlockFile {
            file: OsBlockFile(file),
            path: path.to_path_buf(),
            fs: self.clone(),
        }))
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.permit("a directory create", dir)?;
        OsFilesystem.create_dir_all(dir)?;
        self.track(|durable| {
            durable.entries.entry(dir.to_path_buf()).or_default();
            Ok(())
        })
    }

    fn write_file(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.permit("a write", path)?;
        let existed = path.exists();
        OsFilesystem.write_file(path, bytes)?;
        if !existed {
            self.created(path)?;
        }
        Ok(())
    }

    fn sync_file(&self, path: &Path) -> io::Result<()> {
        self.permit("an fsync", path)?;
        OsFilesystem.sync_file(path)?;
        self.synced(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.permit("a rename", from)?;
        OsFilesystem.rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.permit("an unlink", path)?;
        OsFilesystem.remove_file(path)
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.permit("a truncate", path)?;
        OsFilesystem.truncate(path, len)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.permit("a directory fsync", dir)?;
        OsFilesystem.sync_dir(dir)?;
        self.track(|durable| {
            let entries = durable.current_entries(dir)?;
            durable.entries.insert(dir.to_path_buf(), entries);
            Ok(())
        })
    }

    fn database_batch(
        &self,
        db_file: &Path,
        commit: &mut dyn FnMut() -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.permit("a database batch", db_file)
            .map_err(|e| StoreError::Io {
                what: db_file.display().to_string(),
                reason: e.to_string(),
            })?;
        commit()
    }

    fn len(&self, path: &Path) -> io::Result<Option<u64>> {
        OsFilesystem.len(path)
    }

    fn read_at(&self, path: &Path, offset: u64, len: u64) -> io::Result<Option<Vec<u8>>> {
        OsFilesystem.read_at(path, offset, len)
    }

    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
        OsFilesystem.read_prefix(path, limit)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        OsFilesystem.list_dir(dir)
    }
}
