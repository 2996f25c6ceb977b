//! # hetscale-out
//!
//! The files hetscale writes and the ones it reads from the user. Files a user gives (a runs
//! CSV, a spec, a platform file) are read within a stated cap ([`read_capped`], the caps in
//! [`input`]), and an error echoes what was read at a readable length ([`echoed`]).
//!
//! Files written whole or not at all: every file hetscale writes (platform files, reports,
//! tables, traces, exports, study results, dumped results) goes through [`write_atomically`]
//! or [`write_atomically_with`].
//!
//! The contents go to a temporary file in the target's directory, which is synced and then
//! renamed over the target. A full disk, a failed writer or a killed process leaves the old
//! file as it was (or no file), never a truncated one, and no temporary file behind (but for
//! SIGKILL, which leaves a hidden `.hetscale-*.tmp` beside the target). A target that is not a
//! regular file (a terminal, a pipe) or is under `/dev` or `/proc` (`/dev/stdout`) is a stream,
//! written in place.
//!
//! Symbolic links are not followed out of where the user asked hetscale to write: a link at
//! the target is replaced by the new file (the file it led to is left as it was); a directory
//! a command makes inside its output directory must be a real directory ([`create_real_dir`]),
//! and a file made there by a writer that follows links (SQLite, for a study database) must
//! not be a link ([`check_not_link`]). Otherwise whoever could create entries in a shared
//! output directory could plant `out/index.html -> ~/.bashrc` and have the next report
//! overwrite it. Links in the path the user gave (`--out` itself, or a directory above it) are
//! the user's and are followed.
//!
//! A command registers the files it reads with [`protect_input`]; a write that would replace
//! one of them (the same path, a link to it or a hard link of it) is refused
//! ([`check_not_input`]), so `export s.db -o s.db` cannot turn the database into its export.

pub mod input;

pub use input::{InputCap, InputError, echoed, read_capped, read_capped_to_string};

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

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
    check_not_input(path)?;
    if written_in_place(path) || is_stream(path) {
        return write(path);
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hetscale-").suffix(".tmp");
    if let Some(permissions) = permissions_for(path) {
        builder.permissions(permissions);
    }
    let temporary = builder.tempfile_in(dir)?;
    write(temporary.path())?;
    std::fs::File::open(temporary.path())?.sync_all()?;
    // rename(2) replaces the directory entry itself: a link there is replaced, not followed.
    temporary.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Paths that stand for a stream, not a file (`/dev/stdout`, `/proc/self/fd/1`, even when
/// the descriptor is redirected to a regular file): replacing what they lead to would cut
/// the stream off from what the shell opened.
fn written_in_place(path: &Path) -> bool {
    path.starts_with("/dev") || path.starts_with("/proc")
}

/// Whether `path` itself (not what a link there leads to) is a pipe, a terminal or another
/// file that is not regular: written in place, as it cannot be replaced by a copy.
fn is_stream(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| {
        let kind = m.file_type();
        !kind.is_file() && !kind.is_symlink() && !kind.is_dir()
    })
}

/// Creates the directory `dir` (its parent must exist), or uses it if it is already one; a
/// symbolic link there (even to a directory) or any other file is refused ([`Refused`]), so
/// that a link planted in an output directory cannot lead the files written into `dir` out of
/// it.
pub fn create_real_dir(dir: impl AsRef<Path>) -> io::Result<()> {
    let dir = dir.as_ref();
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) if m.file_type().is_symlink() => Err(refused(format!(
            "it is a symbolic link, not a directory: {NO_LINKS}"
        ))),
        Ok(_) => Err(refused(
            "it is a file, not a directory: remove it or write elsewhere",
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match std::fs::create_dir(dir) {
            // Made meanwhile by someone else: check what it is.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => create_real_dir(dir),
            made => made,
        },
        Err(e) => Err(e),
    }
}

/// Refuses a symbolic link at `path`: for a file made inside an output directory by a writer
/// that would follow it (SQLite opens the file a link leads to).
pub fn check_not_link(path: impl AsRef<Path>) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            Err(refused(format!("it is a symbolic link: {NO_LINKS}")))
        }
        _ => Ok(()),
    }
}

/// Why a link inside an output directory is refused, and what to do.
const NO_LINKS: &str =
    "hetscale follows no link inside its output directory; remove the link or write elsewhere";

/// A write or directory this module refuses (not a failure of the system): the message says
/// what is wrong with the path (`it is ...`) and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(String);

fn refused(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, Refused(message.into()))
}

/// Whether `err` is a [`Refused`] write, whose message says what to do, rather than a failure
/// of the system.
pub fn is_refusal(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<Refused>())
}

/// An input file a command reads and must not replace.
struct Input {
    /// What it is to the command (`the study database`, `--runs`), for the message.
    what: String,
    path: PathBuf,
    ids: Vec<FileId>,
}

impl Input {
    /// Whether this input, as it is now, is one of the files `ids`. A file registered and
    /// since deleted is no input any more: its inode may be reused by an unrelated new file.
    fn still_is_any_of(&self, ids: &[FileId]) -> bool {
        let now = file_ids(&self.path);
        self.ids
            .iter()
            .any(|id| now.contains(id) && ids.contains(id))
    }
}

/// The files [`protect_input`] registered in this process.
static INPUTS: Mutex<Vec<Input>> = Mutex::new(Vec::new());

/// Registers `path` as a file this process reads, under the name `what` (`the study
/// database`, `--runs`): [`write_atomically`] then refuses to replace it. A path that names
/// no file (a preset's name, a database not yet made) registers nothing.
pub fn protect_input(what: impl Into<String>, path: impl AsRef<Path>) {
    let path = path.as_ref();
    let ids = file_ids(path);
    if ids.is_empty() {
        return;
    }
    INPUTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Input {
            what: what.into(),
            path: path.to_path_buf(),
            ids,
        });
}

/// Refuses `path` as an output if it is an input registered with [`protect_input`]: the same
/// path, a symbolic link to it, the link it was read through, or a hard link of it. Commands
/// call it before their work, to refuse in a moment rather than after it; every write checks
/// again.
pub fn check_not_input(path: impl AsRef<Path>) -> io::Result<()> {
    let ids = file_ids(path.as_ref());
    if ids.is_empty() {
        return Ok(());
    }
    let inputs = INPUTS.lock().unwrap_or_else(PoisonError::into_inner);
    match inputs.iter().find(|i| i.still_is_any_of(&ids)) {
        Some(input) => Err(refused(format!(
            "it is {} {}, which this command reads: writing it would destroy it; write to \
             another path",
            input.what,
            input.path.display()
        ))),
        None => Ok(()),
    }
}

/// What identifies a file: its device and inode (the same through any link or name).
#[cfg(unix)]
type FileId = (u64, u64);

#[cfg(not(unix))]
type FileId = PathBuf;

/// The identities of the directory entry at `path` and of the file it leads to (they differ
/// for a symbolic link); none if there is no file there.
#[cfg(unix)]
fn file_ids(path: &Path) -> Vec<FileId> {
    use std::os::unix::fs::MetadataExt;
    [std::fs::symlink_metadata(path), std::fs::metadata(path)]
        .into_iter()
        .flatten()
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

#[cfg(not(unix))]
fn file_ids(path: &Path) -> Vec<FileId> {
    std::fs::canonicalize(path).into_iter().collect()
}

/// The mode the new file gets: that of the regular file it replaces, or what
/// `std::fs::write` would give a new file (0o666 less the umask).
#[cfg(unix)]
fn permissions_for(target: &Path) -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    let replaced = std::fs::symlink_metadata(target)
        .ok()
        .filter(|m| m.is_file());
    let mode = replaced.map_or(0o666, |m| m.permissions().mode() & 0o7777);
    Some(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn permissions_for(target: &Path) -> Option<std::fs::Permissions> {
    std::fs::symlink_metadata(target)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions())
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
    fn keeps_the_mode_of_the_file_it_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    fn is_link(path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_the_target_is_replaced_and_what_it_led_to_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let link = out.join("index.html");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        write_atomically(&link, "report").unwrap();
        assert!(!is_link(&link), "the link was replaced by a file");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "report");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // A dangling link does not make the file it names either.
        let elsewhere = dir.path().join("created-elsewhere.txt");
        let dangling = out.join("table.csv");
        std::os::unix::fs::symlink(&elsewhere, &dangling).unwrap();
        write_atomically(&dangling, "a,b").unwrap();
        assert!(!elsewhere.exists() && !is_link(&dangling));
        assert_eq!(names_in(&out), ["index.html", "table.csv"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_real_dir_is_made_or_used_and_a_link_or_file_there_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tables = dir.path().join("tables");
        create_real_dir(&tables).unwrap();
        create_real_dir(&tables).unwrap();
        assert!(tables.is_dir());
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = dir.path().join("figures");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let err = create_real_dir(&link).unwrap_err().to_string();
        assert!(
            err.starts_with("it is a symbolic link, not a directory") && !err.contains('\n'),
            "{err}"
        );
        std::fs::write(dir.path().join("file"), "").unwrap();
        let err = create_real_dir(dir.path().join("file")).unwrap_err();
        assert!(err.to_string().starts_with("it is a file, not a directory"));
        assert!(is_refusal(&err));
        check_not_link(dir.path().join("file")).unwrap();
        check_not_link(dir.path().join("missing")).unwrap();
        let err = check_not_link(&link).unwrap_err().to_string();
        assert!(
            err.starts_with("it is a symbolic link: hetscale follows"),
            "{err}"
        );
        let err = create_real_dir(dir.path().join("no/such")).unwrap_err();
        assert!(err.kind() == io::ErrorKind::NotFound && !is_refusal(&err));
    }

    #[cfg(unix)]
    #[test]
    fn an_input_is_not_replaced_by_any_of_its_names() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("study.db");
        std::fs::write(&input, "runs").unwrap();
        let unrelated = dir.path().join("unrelated.db");
        std::fs::write(&unrelated, "other").unwrap();
        let read_through = dir.path().join("read-through.db");
        std::os::unix::fs::symlink(&unrelated, &read_through).unwrap();
        protect_input("the study database", &input);
        protect_input("--runs", &read_through);
        protect_input("--platform", dir.path().join("no such file"));
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let hard = dir.path().join("hard.db");
        std::fs::hard_link(&input, &hard).unwrap();
        let dir_link = dir.path().join("same-dir");
        std::os::unix::fs::symlink(dir.path(), &dir_link).unwrap();
        for output in [
            input.clone(),
            link,
            hard,
            dir_link.join("study.db"),
            dir.path().join(".").join("study.db"),
        ] {
            let err = write_atomically(&output, "csv").unwrap_err();
            let message = err.to_string();
            assert!(
                message.starts_with("it is the study database ")
                    && message.ends_with("write to another path")
                    && is_refusal(&err),
                "{message}"
            );
        }
        for output in [unrelated.clone(), read_through] {
            let err = write_atomically(&output, "csv").unwrap_err();
            assert!(err.to_string().starts_with("it is --runs "), "{err}");
        }
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "runs");
        assert_eq!(std::fs::read_to_string(&unrelated).unwrap(), "other");
        write_atomically(dir.path().join("export.csv"), "csv").unwrap();
    }

    #[test]
    fn a_deleted_input_protects_no_file_that_reuses_its_inode() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("gone.db");
        std::fs::write(&input, "runs").unwrap();
        protect_input("the deleted database", &input);
        std::fs::remove_file(&input).unwrap();
        // New files may get the freed inode; none of them is the input any more.
        for i in 0..8 {
            write_atomically(dir.path().join(format!("new-{i}.csv")), "csv").unwrap();
        }
        write_atomically(&input, "a new file where the input was").unwrap();
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
