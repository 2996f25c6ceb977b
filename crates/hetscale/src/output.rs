//! Standard output that ends quietly when its reader goes away, and standard error that
//! never panics.
//!
//! `println!` panics when stdout is a closed pipe (`hetscale study | head -2`). Like ripgrep,
//! hetscale instead stops with status 0 and no message: the reader has what it asked for. Every
//! command prints through [`outln!`] and [`out!`] (or writes to stdout and returns the error,
//! which [`is_closed_pipe`] recognises); nothing it prints comes before the work it reports is
//! stored, so stopping there loses nothing. Any other failure to write stdout (a full disk)
//! ends the process with status 1.
//!
//! `eprintln!` panics when stderr cannot be written (`2>/dev/full`); notes, warnings and
//! errors go through [`errln!`] instead, which drops what cannot be shown: the command's
//! result does not depend on its diagnostics being read.

use std::io::{self, Write};
use std::path::Path;

/// `println!` that exits quietly when stdout is closed.
macro_rules! outln {
    () => {
        $crate::output::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that exits quietly when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}

/// `eprintln!` that does not panic when stderr cannot be written.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {errln, out, outln};

/// Writes and flushes `args` to stdout (flushing at once, so a closed pipe is seen here and not
/// lost at exit); on a closed pipe, ends the process with status 0.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        stop_writing(&err);
    }
}

/// Writes `args` to stderr; what cannot be written is dropped.
pub(crate) fn write_stderr(args: std::fmt::Arguments<'_>) {
    let _ = io::stderr().write_fmt(args);
}

/// Ends the process after a failed write to stdout: with status 0 for a closed pipe, else
/// with status 1 and the reason.
pub(crate) fn stop_writing(err: &io::Error) -> ! {
    if err.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    errln!("hetscale: cannot write to standard output: {err}");
    std::process::exit(1);
}

/// Whether `err` is a write to a closed pipe, anywhere in its chain.
pub(crate) fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

/// Refuses to start with stdout closed (`hetscale paper >&-`). Rust's runtime opens
/// `/dev/null` on a closed standard descriptor before `main` (so that no file the command opens
/// takes its number), and everything printed would vanish with status 0.
pub(crate) fn check_stdout_open() -> anyhow::Result<()> {
    if stdout_was_closed() {
        anyhow::bail!(
            "standard output is closed, so nothing this command prints could be read: give it \
             one (>/dev/null to discard it)"
        );
    }
    Ok(())
}

/// Whether stdout is the `/dev/null` Rust's runtime opened on a closed descriptor 1: it opens
/// it read-write, where a shell's `>/dev/null` opens it write-only. Linux only (it reads
/// `/proc`); elsewhere, false.
fn stdout_was_closed() -> bool {
    let null = std::fs::read_link("/proc/self/fd/1").is_ok_and(|to| to == Path::new("/dev/null"));
    null && std::fs::read_to_string("/proc/self/fdinfo/1").is_ok_and(|info| read_write(&info))
}

/// Whether a `/proc/self/fdinfo` entry's `flags` (octal) say read-write (`O_RDWR`).
fn read_write(fdinfo: &str) -> bool {
    fdinfo
        .lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())
        .is_some_and(|flags| flags & 0o3 == 0o2)
}

#[cfg(test)]
mod tests {
    use super::read_write;

    #[test]
    fn the_access_mode_is_read_from_the_octal_flags() {
        assert!(read_write("pos:\t0\nflags:\t0100002\nmnt_id:\t24\n"));
        assert!(!read_write("pos:\t0\nflags:\t0100001\nmnt_id:\t24\n"));
        assert!(!read_write("pos:\t0\n"));
    }
}
