//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default: signupd at `info`, chatty
//! dependencies at `warn`), as text or JSON lines (`server.log_format`).
//!
//! What must never reach a log line: a full email address, a token, a secret, a raw IP address or
//! a query string. Code logs masked addresses (`j***@example.com`) at most.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Used when `RUST_LOG` is unset. tokio-cron-scheduler logs at INFO on every start
/// (DEPENDENCIES trap 9); actix logs each worker thread.
pub const DEFAULT_FILTER: &str =
    "info,actix_server=warn,actix_web=warn,actix_http=warn,tokio_cron_scheduler=warn,lettre=warn,r2d2=warn,rustls=warn";

/// Installs the global subscriber. Safe to call more than once (later calls do nothing), so the
/// CLI can install a text logger before the configuration says which format to use.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    // Colours only for a person at a terminal: journald and log files get plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    // An error means a subscriber is already installed (a test harness, or an earlier call).
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
