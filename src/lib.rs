//! signupd: a self-contained double opt-in signup service. Its behaviour from the outside is
//! documented in the repository's `docs/` (HTTP API, configuration, operations); this crate is
//! the implementation. `main.rs` is a thin shell around [`cli`] and [`commands`].
//!
//! # Layout
//!
//! - [`app`]: assembly — start-up order, `Application::build` / `run_until_stopped`.
//! - [`preflight`]: every start-up check that writes nothing (files, credentials, transport,
//!   webhooks), shared by `serve` and `check-config`.
//! - [`state`]: `AppState`, what every handler, worker and the scheduler share; built by
//!   [`app`], used by everything else.
//! - [`cli`]: the clap command line (`docs/operations.md`).
//! - [`commands`]: one function per subcommand.
//! - [`operator`]: the operator's commands beside a running server — export, remove, stats,
//!   backup — and the one way they open the database.
//! - [`metrics`]: Prometheus counters, gauges and histograms on their own listener.
//! - [`config`]: defaults + TOML + environment → a checked `Config`; errors name the key.
//! - [`secrets`]: the token signing secret, verify-only secrets and the hash key; generated 0600.
//!   Where credentials are found (`$CREDENTIALS_DIRECTORY`, or `credentials/` beside the config
//!   file; flattened or directory form).
//! - [`storage`]: SQLite. **[`storage::writer`] is the one place SQLite is written**: a thread
//!   with the only read-write connection runs every write as a typed command, group-committed
//!   (and a checkpointer thread beside it copies the WAL into the file). The commands:
//!   `signup::intake` (record a signup), `signup::state_table` (apply intake), `mail::queue`
//!   (claim and settle mail), `webhooks::worker` (claim and settle deliveries),
//!   [`subscription`] (confirm, remove), [`scheduler`] (cleanup), and the writer's readiness
//!   probe. Everything else reads through the `query_only` pool [`storage::Db`]. Migrations,
//!   one file per table family.
//! - [`mail`]: mail messages, SMTP/file transports, the mail workers, alerts.
//! - [`routes`]: HTTP endpoints, one file per endpoint family (signup, confirm, manage, privacy,
//!   health, stylesheets) with GET and POST side by side and one error enum each; the error
//!   pages the families share.
//! - [`presentation`]: how a list's pages and mails look and speak — the message catalogues
//!   (`locales/*.toml`), the page frame (site name, way back, privacy link), the accent colour's
//!   contrast arithmetic and the stylesheets.
//! - [`middleware`]: access log (no query strings) and the security headers of HTML pages.
//! - [`domain`]: types valid by construction (`ListId`, `EmailAddress`).
//! - [`domain_policy`]: which email domains signup accepts — the blocked domains file (reloaded
//!   on SIGHUP) and the MX check.
//! - [`ratelimit`]: who the client is (trusted proxies, Cloudflare ranges) and the persistent
//!   per-network counters.
//! - [`scheduler`]: the hourly cleanup (tokio-cron-scheduler), also run once at start.
//! - [`signup`]: recording signup requests, and the intake worker that applies the state table
//!   on a jittered tick.
//! - [`subscription`]: confirming and removing, shared by the routes and the command line.
//! - [`tokens`]: token derivation and the hashes that are stored instead of tokens.
//! - [`webhooks`]: subscriber events for the operator's systems — queued with the change,
//!   signed (Standard Webhooks), delivered in order by one worker per endpoint.
//! - [`clock`]: injected time, so tests never sleep; the jittered ticks and the retry backoff.
//! - [`telemetry`]: tracing setup, text or JSON lines.

pub mod app;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod domain;
pub mod domain_policy;
pub mod frame;
pub mod mail;
pub mod metrics;
pub mod middleware;
pub mod operator;
pub mod preflight;
pub mod presentation;
pub mod ratelimit;
pub mod routes;
pub mod scheduler;
pub mod secrets;
pub mod signup;
pub mod state;
pub mod storage;
pub mod subscription;
pub mod telemetry;
pub mod tokens;
pub mod webhooks;
