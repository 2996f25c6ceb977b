//! Files written whole or not at all: every file hetscale writes (platform files, reports,
//! tables, traces, exports, study results, dumped results) goes through [`write_atomically`]
//! or [`write_atomically_with`].
//!
//! The contents go to a temporary file in the target's directory, which is synced and then
//! renamed over the target. A full disk, a failed writer or a killed process leaves the old
//! file as it was (or no file), never a truncated one, and no temporary file behind (but for
//! SIGKILL, which leaves a hidden `.hetscale-*.tmp` beside the target). A symbolic link is
//! followed, so the file it points to is replaced and the link kept; a target that is not a
//! regular file (a terminal, a pipe) or is under `/dev` or `/proc` (`/dev/stdout`) is a stream,
//! written in place.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `contents` to `path`, replacing it whole (see the module documentation).
pub fn write_atomically(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    write_atomically_with(path, |temporary| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(temporary)?;
        file.write_all(contents.as_ref())
    })
}

/// As [`write_atomically`], for writers that take a path: `write` writes the contents to
/// the path it is given (a temporary file beside `path`, empty, or `path` itself when that is
/// not a regular file).
pub fn write_atomically_with(
    path: impl AsRef<Path>,
    write: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let path = path.as_ref();
    if written_in_place(path) {
        return write(path);
    }
    let target = resolved(path)?;
    if target.exists() && !target.is_file() {
        return write(&target);
    }
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hetscale-").suffix(".tmp");
    if let Some(permissions) = permissions_for(&target) {
        builder.permissions(permissions);
    }
    let temporary = builder.tempfile_in(dir)?;
    write(temporary.path())?;
    std::fs::File::open(temporary.path())?.sync_all()?;
    temporary.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// Paths that stand for a stream, not a file (`/dev/stdout`, `/proc/self/fd/1`, even when
/// the descriptor is redirected to a regular file): replacing what they lead to would cut
/// the stream off from what the shell opened.
fn written_in_place(path: &Path) -> bool {
    path.starts_with("/dev") || path.starts_with("/proc")
}

/// The file a symbolic link at `path` leads to (the link is kept, its target replaced);
/// `path` itself otherwise.
fn resolved(path: &Path) -> io::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
            Ok(target) => Ok(target),
            // A dangling link: create the file it names.
            Err(_) => {
                let link = std::fs::read_link(path)?;
                Ok(match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                })
            }
        },
        _ => Ok(path.to_path_buf()),
    }
}

/// The mode the new file gets: the replaced file's, or what `std::fs::write` would give a
/// new file (0o666 less the umask).
#[cfg(unix)]
fn permissions_for(target: &Path) -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(target).map_or(0o666, |m| m.permissions().mode() & 0o7777);
    Some(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn permissions_for(target: &Path) -> Option<std::fs::Permissions> {
    std::fs::metadata(target).ok().map(|m| m.permissions())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_contents_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomically(&path, "first, longer").unwrap();
        write_atomically(&path, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(names_in(dir.path()), ["a.json"]);
    }

    #[test]
    fn a_writer_that_fails_half_way_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomically(&path, "complete").unwrap();
        let err = write_atomically_with(&path, |temporary| {
            std::fs::write(temporary, "trunc")?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
        })
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "complete");
        assert_eq!(names_in(dir.path()), ["a.json"]);
        let missing = dir.path().join("new.json");
        assert!(write_atomically_with(&missing, |_| Err(io::Error::other("no"))).is_err());
        assert!(!missing.exists(), "a failed first write leaves no file");
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_mode_of_the_file_it_replaces_and_the_link_to_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink("a.toml", &link).unwrap();
        write_atomically(&link, "new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: no mkfifo here");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_atomically(&fifo, "through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(!std::fs::metadata(&fifo).unwrap().is_file(), "still a pipe");
    }
}
