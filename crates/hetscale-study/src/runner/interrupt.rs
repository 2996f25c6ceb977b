//! Ctrl-C (SIGINT), SIGTERM and SIGHUP (the terminal or SSH session closed) while programs
//! run. A launched program has its own process group, so a terminal's Ctrl-C or hang-up never
//! reaches it (nor what it started: left alone, it would run on with no parent); once
//! [`catch`] is called, the first signal asks hetscale to stop instead of dying: [`crate::runner::external::launch`] ends the running
//! program's whole group, the runner stores nothing of the run it cut short and starts no
//! other, and the study ends with [`crate::StudyError::Interrupted`]. A second signal ends
//! hetscale at once, as if nothing were caught (a kernel run in-process is not cut short by
//! the first one: it completes and is stored first).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signals that ask hetscale to stop.
const STOPPING: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

static REQUESTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(Arc::default);
static SIGNAL: LazyLock<Arc<AtomicUsize>> = LazyLock::new(Arc::default);

/// From now on, SIGINT, SIGTERM and SIGHUP ask hetscale to stop (see the module); calling it again
/// changes nothing.
pub fn catch() -> std::io::Result<()> {
    static ONCE: Once = Once::new();
    let mut outcome = Ok(());
    ONCE.call_once(|| outcome = register());
    outcome
}

fn register() -> std::io::Result<()> {
    for signal in STOPPING {
        // Handlers run in this order: the first signal finds the flag clear and lives; the
        // signal is known before the flag says there is one.
        signal_hook::flag::register_conditional_default(signal, Arc::clone(&REQUESTED))?;
        signal_hook::flag::register_usize(signal, Arc::clone(&SIGNAL), signal as usize)?;
        signal_hook::flag::register(signal, Arc::clone(&REQUESTED))?;
    }
    Ok(())
}

/// The signal that asked hetscale to stop, if one did.
pub fn requested() -> Option<i32> {
    REQUESTED
        .load(Ordering::SeqCst)
        .then(|| SIGNAL.load(Ordering::SeqCst) as i32)
}

/// The signal's name, for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
