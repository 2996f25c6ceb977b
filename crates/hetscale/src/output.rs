//! Standard output that ends quietly when its reader goes away.
//!
//! `println!` panics when stdout is a closed pipe (`hetscale study | head -2`). Like ripgrep,
//! hetscale instead stops with status 0 and no message: the reader has what it asked for. Every
//! command prints through [`outln!`] and [`out!`] (or writes to stdout and returns the error,
//! which [`is_closed_pipe`] recognises); nothing it prints comes before the work it reports is
//! stored, so stopping there loses nothing.

use std::io::{self, Write};

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

pub(crate) use {out, outln};

/// Writes and flushes `args` to stdout (flushing at once, so a closed pipe is seen here and not
/// lost at exit); on a closed pipe, ends the process with status 0.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        stop_writing(&err);
    }
}

fn stop_writing(err: &io::Error) -> ! {
    if err.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("hetscale: cannot write to standard output: {err}");
    std::process::exit(1);
}

/// Whether `err` is a write to a closed pipe, anywhere in its chain.
pub(crate) fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
