//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default: signupd at `info`, chatty
//! dependencies at `warn`), as text or JSON lines (`server.log_format`).
//!
//! What must never reach a log line: a full email address, a token, a secret, a raw IP address or
//! a query string. Code logs masked addresses (`j***@example.com`) at most.
//!
//! Lines are written by a thread of their own (`tracing-appender`'s non-blocking writer): under
//! load the access log is one line per request, and a `write` to the pipe journald reads, made
//! on the worker that answers, would put that pipe's speed into every request. The queue holds
//! `QUEUED_LINES`; when it is full, the logging thread waits for room (it is not lossy), so no
//! line is dropped, silently or otherwise. [`flush`] writes what is queued before the process
//! exits; only a crash (`kill -9`, a power cut) can lose the last queued lines, as it would lose
//! lines in any buffer of journald's side of the pipe.

use std::io::IsTerminal;
use std::sync::{Mutex, OnceLock, PoisonError};

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Used when `RUST_LOG` is unset. tokio-cron-scheduler logs at INFO on every start
/// (DEPENDENCIES trap 9); actix logs each worker thread.
pub const DEFAULT_FILTER: &str =
    "info,actix_server=warn,actix_web=warn,actix_http=warn,tokio_cron_scheduler=warn,lettre=warn,r2d2=warn,rustls=warn";

/// Installs the global subscriber. Safe to call more than once (later calls do nothing), so the
/// CLI can install a text logger before the configuration says which format to use.
pub fn init(format: LogFormat) {
    let writer_thread = WRITER_THREAD.get_or_init(Mutex::default);
    let mut guard = writer_thread.lock().unwrap_or_else(PoisonError::into_inner);
    if guard.is_some() || tracing::dispatcher::has_been_set() {
        return;
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let (writer, flushed_on_drop) = NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(QUEUED_LINES)
        .thread_name("signupd-log")
        .finish(std::io::stderr());
    // Colours only for a person at a terminal: journald and log files get plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(std::io::stderr().is_terminal());
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // An error means a subscriber is already installed (a test harness): this one is unused.
    if installed.is_ok() {
        *guard = Some(flushed_on_drop);
    }
}

/// Writes every queued line and stops the logging thread; later lines are not written. Call it
/// once, as the process ends.
pub fn flush() {
    if let Some(writer_thread) = WRITER_THREAD.get() {
        drop(writer_thread.lock().unwrap_or_else(PoisonError::into_inner).take());
    }
}

/// Lines waiting for the logging thread before a logger waits for room: a burst of a few
/// thousand requests is absorbed, and the queue stays under a megabyte.
const QUEUED_LINES: usize = 4096;

/// The logging thread's guard: dropping it writes what is queued.
static WRITER_THREAD: OnceLock<Mutex<Option<WorkerGuard>>> = OnceLock::new();
