//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default: signupd at `info`, chatty
//! dependencies at `warn`), as text or JSON lines (`server.log_format`).
//!
//! What must never reach a log line: a full email address, a token, a secret, a raw IP address or
//! a query string. Code logs masked addresses (`j***@example.com`) at most.
//!
//! That holds at every level and whatever `RUST_LOG` says, because `RUST_LOG` is not the only
//! filter: a fixed [`ceiling`] sits beside it, and an event passes only when both let it. The
//! dependencies that log what crosses the wire are held at `warn` there: lettre writes its whole
//! SMTP conversation at `debug` (the `AUTH PLAIN` line, the base64 of the user name and the
//! password; every address; every mail with its confirm and manage links), reqwest logs every
//! byte of a connection at `trace` when asked, hyper, h2, rustls and hickory the requests and
//! answers they carry. Every other dependency is held at `info`, so one added later cannot
//! lift a transcript either; signupd's own lines (`signupd::…`) follow `RUST_LOG` alone, and
//! none of them holds what is listed above at any level. A directive in `RUST_LOG` can lower
//! these levels, never raise them: `RUST_LOG=lettre=trace` shows lettre's warnings, no more.
//! (`tracing-log` carries the `log` crate's records here under their own targets, so a crate
//! that logs through `log`, as reqwest does, is held by the same ceiling.)
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

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, layer};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

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
    // Both filters decide every event (and every `log` record, by its target): RUST_LOG's and
    // the fixed ceiling.
    let filtered = tracing_subscriber::registry().with(filter).with(ceiling());
    // Colours only for a person at a terminal: journald and log files get plain text.
    let ansi = std::io::stderr().is_terminal();
    let installed = match format {
        LogFormat::Text => filtered
            .with(layer().with_writer(writer).with_ansi(ansi).event_format(ClientErrorsAsWarnings(format::format())))
            .try_init(),
        LogFormat::Json => filtered
            .with(
                layer()
                    .with_writer(writer)
                    .with_ansi(ansi)
                    .fmt_fields(JsonFields::new())
                    .event_format(ClientErrorsAsWarnings(format::format().json().flatten_event(true))),
            )
            .try_init(),
    };
    // An error means a subscriber is already installed (a test harness): this one is unused.
    if installed.is_ok() {
        *guard = Some(flushed_on_drop);
    }
}

/// The dependencies that log what crosses the wire (an SMTP or HTTP transcript, a DNS answer,
/// a TLS handshake), by the first segment of their targets: held at `warn` by [`ceiling`].
/// Check a new HTTP, TLS, SMTP or DNS crate against this list when it enters `Cargo.lock`.
pub const WIRE_TARGETS: &[&str] = &[
    "lettre",
    "reqwest",
    "hyper",
    "hyper_util",
    "hyper_rustls",
    "h2",
    "http_body_util",
    "rustls",
    "tokio_rustls",
    "rustls_platform_verifier",
    "rustls_native_certs",
    "webpki",
    "actix_http",
    "actix_web",
    "actix_server",
    "hickory_proto",
    "hickory_resolver",
    "hickory_net",
    "mail_auth",
    "mail_parser",
    "mail_builder",
];

/// The most each target may log, whatever `RUST_LOG` says: signupd's own targets anything,
/// [`WIRE_TARGETS`] `warn`, every other dependency `info`.
pub fn ceiling() -> Targets {
    Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target(env!("CARGO_CRATE_NAME"), LevelFilter::TRACE)
        .with_targets(WIRE_TARGETS.iter().map(|target| (*target, LevelFilter::WARN)))
}

/// The line formatter `F`, except that actix-http's `stream error` (a request head it could not
/// parse, a connection the client broke) is written at `WARN`: actix-http logs it at `ERROR`
/// (target `actix_http::h1::dispatcher`) though any client can cause it, and an `ERROR` is
/// what wakes whoever watches the journal. How signupd answers such a request itself:
/// `crate::web::middleware::connection`.
struct ClientErrorsAsWarnings<F>(F);

impl<S, N, F> FormatEvent<S, N> for ClientErrorsAsWarnings<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> std::fmt::Result {
        if !is_client_stream_error(event) {
            return self.0.format_event(ctx, writer, event);
        }
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        // The first `ERROR` of a text line is its level (after the timestamp); in JSON, the
        // `level` member.
        let demoted = if line.starts_with('{') {
            line.replacen("\"level\":\"ERROR\"", "\"level\":\"WARN\"", 1)
        } else {
            line.replacen("ERROR", " WARN", 1)
        };
        writer.write_str(&demoted)
    }
}

/// actix-http's own "stream error" line: the end of a connection that failed on the client's
/// side (a head httparse refused, a reset).
fn is_client_stream_error(event: &Event<'_>) -> bool {
    let metadata = event.metadata();
    if *metadata.level() != Level::ERROR || !metadata.target().starts_with("actix_http::h1::dispatcher") {
        return false;
    }
    let mut message = Message(String::new());
    event.record(&mut message);
    message.0.starts_with("stream error")
}

/// An event's `message` field, as text.
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
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

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::*;

    #[test]
    fn the_ceiling_holds_wire_crates_at_warn_other_dependencies_at_info_and_leaves_signupd_alone() {
        let ceiling = ceiling();
        for target in
            ["lettre::transport::smtp::client::async_connection", "reqwest::connect", "h2::codec", "hyper_util"]
        {
            assert!(!ceiling.would_enable(target, &Level::INFO), "{target}");
            assert!(ceiling.would_enable(target, &Level::WARN), "{target}");
        }
        assert!(!ceiling.would_enable("some_new_crate::module", &Level::DEBUG));
        assert!(ceiling.would_enable("some_new_crate::module", &Level::INFO));
        assert!(ceiling.would_enable("signupd::access", &Level::TRACE));
    }
}
