//! The crash-point file system under a replica on disk: what a power loss keeps is what
//! was fsynced, file bytes and directory entries alike, and nothing past the crash point
//! goes through.

use std::fs;
use std::path::Path;

use hadoop_ref::datanode::container::disk::fs::Filesystem;
use hadoop_ref::sim::crash_fs::CrashFs;

fn settled(dir: &Path, files: &[(&str, &[u8])]) -> CrashFs {
    for (name, bytes) in files {
        fs::write(dir.join(name), bytes).unwrap();
    }
    let crash_fs = CrashFs::new();
    crash_fs.settle(dir, &[]).unwrap();
    crash_fs
}

/// Writes "new" to `tree.tmp`, fsyncs it and renames it over `tree`, without fsyncing
/// the directory: a tree write's steps but the last.
fn replace_through_fsynced_temporary(
    fs_: &CrashFs,
    dir: &Path,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let (tmp, tree) = (dir.join("tree.tmp"), dir.join("tree"));
    fs_.write_file(&tmp, b"new").unwrap();
    fs_.sync_file(&tmp).unwrap();
    fs_.rename(&tmp, &tree).unwrap();
    (tmp, tree)
}

#[test]
fn power_loss_drops_bytes_that_were_not_fsynced() {
    let dir = tempfile::tempdir().unwrap();
    let fs_ = settled(dir.path(), &[("a", b"old")]);
    fs_.write_file(&dir.path().join("a"), b"new").unwrap();
    fs_.power_loss().unwrap();
    assert_eq!(fs::read(dir.path().join("a")).unwrap(), b"old");
}

#[test]
fn power_loss_keeps_fsynced_bytes_of_a_durable_entry() {
    let dir = tempfile::tempdir().unwrap();
    let fs_ = settled(dir.path(), &[("a", b"old")]);
    let path = dir.path().join("a");
    fs_.write_file(&path, b"new").unwrap();
    fs_.sync_file(&path).unwrap();
    fs_.power_loss().unwrap();
    assert_eq!(fs::read(path).unwrap(), b"new");
}

#[test]
fn power_loss_undoes_a_rename_whose_directory_was_not_fsynced() {
    let dir = tempfile::tempdir().unwrap();
    let fs_ = settled(dir.path(), &[("tree", b"old")]);
    let (tmp, tree) = replace_through_fsynced_temporary(&fs_, dir.path());
    fs_.power_loss().unwrap();
    assert_eq!(fs::read(&tree).unwrap(), b"old", "the old file is back");
    assert!(
        !tmp.exists(),
        "the temporary file's entry was never durable"
    );
}

#[test]
fn power_loss_keeps_a_rename_once_its_directory_is_fsynced() {
    let dir = tempfile::tempdir().unwrap();
    let fs_ = settled(dir.path(), &[("tree", b"old")]);
    let (_, tree) = replace_through_fsynced_temporary(&fs_, dir.path());
    fs_.sync_dir(dir.path()).unwrap();
    fs_.power_loss().unwrap();
    assert_eq!(fs::read(&tree).unwrap(), b"new");
}

#[test]
fn power_loss_brings_back_an_unlink_whose_directory_was_not_fsynced() {
    let dir = tempfile::tempdir().unwrap();
    let fs_ = settled(dir.path(), &[("1.block", b"data")]);
    fs_.remove_file(&dir.path().join("1.block")).unwrap();
    fs_.power_loss().unwrap();
    assert_eq!(fs::read(dir.path().join("1.block")).unwrap(), b"data");
}

#[test]
fn a_created_file_fsynced_without_its_directory_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let fs_ = settled(dir.path(), &[]);
    let path = dir.path().join("2.block");
    let file = fs_.open_block_file(&path).unwrap();
    file.write_at(b"chunk", 0).unwrap();
    file.sync_data().unwrap();
    fs_.power_loss().unwrap();
    assert!(!path.exists());
}

#[test]
fn nothing_past_the_crash_point_goes_through() {
    let dir = tempfile::tempdir().unwrap();
    let fs_ = settled(dir.path(), &[("a", b"old")]);
    fs_.crash_after(1);
    fs_.write_file(&dir.path().join("b"), b"first").unwrap();
    assert!(
        fs_.rename(&dir.path().join("a"), &dir.path().join("c"))
            .is_err()
    );
    assert!(fs_.sync_dir(dir.path()).is_err());
    assert_eq!(fs_.mutations(), 1);
    assert!(
        dir.path().join("a").exists(),
        "the refused rename did nothing"
    );
}
