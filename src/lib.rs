//! signupd: a self-contained double opt-in signup service. Its behaviour from the outside is
//! documented in the repository's `docs/` (HTTP API, configuration, operations); this crate is
//! the implementation. `main.rs` is a thin shell around [`cli`] and [`commands`].
//!
//! # Layout
//!
//! - [`app`]: assembly — start-up order, `Application::build` / `run_until_stopped`, the
//!   metrics listener with its gauge refresh and the status page (`app::metrics_server`), and
//!   the background workers' own multi-threaded runtimes, the mail workers' and the delivery
//!   workers' at a lower CPU priority (`app::worker_runtime`).
//! - [`background`]: the one loop every background worker runs (jittered tick, rounds, stop).
//! - [`preflight`]: every start-up check that writes nothing (files, credentials, transport,
//!   webhooks), shared by `serve` and `check-config`.
//! - [`state`]: `AppState`, what every handler and the scheduler share; built by [`app`]. The
//!   workers take only their parts of it (`Intake`, `Mailer`, `Deliverer`).
//! - [`cli`]: the clap command line (`docs/operations.md`).
//! - [`commands`]: one function per subcommand.
//! - [`healthcheck`]: `signupd healthcheck`, the container's readiness probe of its own server.
//! - [`operator`]: the operator's commands beside a running server — export, import (the
//!   command in `operator::import`, reading its file in `operator::import_file`), remove,
//!   stats, backup, and `doctor` (`operator::doctor`: the whole deployment checked, nothing
//!   written) — and the one way they open the database.
//! - [`metrics`]: the Prometheus metrics' names, and recording them (and adding the status page's
//!   counts to its in-memory tally); their help texts and label values, every counter
//!   registered at 0 from the first scrape (`metrics::series`); a leaf.
//! - [`config`]: defaults + TOML + environment → a checked `Config`; errors name the key.
//! - [`secrets`]: the token signing secret, verify-only secrets and the hash key; generated 0600.
//!   Where credentials are found (`$CREDENTIALS_DIRECTORY`, or `credentials/` beside the config
//!   file; flattened or directory form).
//! - [`storage`]: SQLite. **[`storage::writer`] is the one place SQLite is written**: a thread
//!   with the only read-write connection runs every write as a typed command, group-committed
//!   (and a checkpointer thread beside it copies the WAL into the file). The commands:
//!   `signup::intake` (record a signup), `signup::state_table` (apply intake), `mail::queue`
//!   (claim and settle mail), `webhooks::worker` (claim and settle deliveries),
//!   [`subscription`] (confirm, remove), [`preferences`] (save the preference page),
//!   [`scheduler`] (cleanup), [`status`] (the status page's rollups), [`operator`] (`import`'s
//!   batches, the audit log), [`relays`] (a bounce's or a complaint's effect), [`admin`] (a
//!   re-sent confirmation), and the writer's readiness
//!   probe. Everything else reads through the
//!   `query_only` pool [`storage::Db`]. All SQL of the program lives here, in functions named
//!   for what they answer, one file per table family; migrations are split by schema version.
//! - [`mail`]: mail messages and the sealed `X-Signupd-Ref` each one about a subscriber carries,
//!   SMTP/file transports, the mail workers, alerts.
//! - [`routes`]: HTTP endpoints, one file per endpoint family (signup, confirm, manage, privacy,
//!   health, relay events, stylesheets) with GET and POST side by side and one error enum each;
//!   the error pages the families share.
//! - [`presentation`]: how a list's pages and mails look and speak — the message catalogues
//!   (`locales/*.toml`) and the accent colour's contrast arithmetic; a leaf that [`config`]
//!   reads.
//! - [`frame`]: what every page is drawn in — the frame (site name, way back, privacy link) and
//!   the stylesheets — built from the configuration.
//! - [`middleware`]: access log (no query strings) and the security headers of HTML pages.
//! - [`domain`]: types valid by construction (`ListId`, `EmailAddress`, `TrustedProxies`) and
//!   Cloudflare's published ranges; leaves the configuration is built from.
//! - [`domain_policy`]: which email domains signup accepts — the blocked domains file (reloaded
//!   on SIGHUP) and the MX check.
//! - [`ratelimit`]: who the client is (behind trusted proxies) and the persistent per-network
//!   counters.
//! - [`scheduler`]: the hourly cleanup (tokio-cron-scheduler), also run once at start.
//! - [`status`]: the status page on the metrics listener — hourly rollups of the counts and of
//!   each source's signups and confirmations (a tally in memory, stored by a worker on a tick),
//!   their ranges, the inline SVG charts and the table by source.
//! - [`signup`]: recording signup requests, and the intake worker that applies the state table
//!   on a jittered tick.
//! - [`snippet`]: `signupd snippet`, a list's signup form to embed, printed from the configuration.
//! - [`subscription`]: confirming and removing, prepared off the writer thread and checked in
//!   it; shared by the routes and the command line.
//! - [`surge`]: which lists are in surge mode (a person presses to send), as the writer's counts
//!   last said.
//! - [`preferences`]: the preference page's use case — which lists of the sender a manage link
//!   shows, saving the ticked ones in one writer command, and "remove me from all".
//! - [`tokens`]: token derivation and the hashes that are stored instead of tokens.
//! - [`webhooks`]: subscriber events for the operator's systems — prepared before the change,
//!   queued with it, signed (Standard Webhooks), delivered in order by one worker per endpoint
//!   or destination (`webhooks::worker`).
//! - [`destinations`]: the operator's sender (listmonk, Buttondown, Mailchimp, Brevo) as a
//!   receiver of those events — each kind's API calls (one file per kind), the credential,
//!   `send-test-destination`'s probe.
//! - [`relays`]: hearing back from the relay that carries the mail — the configured relays and
//!   the SNS certificates (`relays::configured`), whether an event really comes from one
//!   (`relays::signature`, each kind's scheme over the raw bytes), what its payload or a DSN or
//!   feedback report says (`relays::payload`, `relays::report`, read into `relays::event`), and
//!   what a believed event does (`relays::hear` in order, `relays::effect` in one writer
//!   command: suppression, counts, the complaint breaker).
//! - [`api`]: the operator API under `/api/v1/` (lookup, removal, suppression, streamed export,
//!   stats, import as JSON lines), one file per endpoint family, behind [`api::authorize`]
//!   (windows in `api::limits`, then the token and its scope); every call audited.
//! - [`api_tokens`]: the `[[api_tokens]]` read at start and kept only as HMACs, the constant-time
//!   check of a presented token, and the per-credential form tokens of the admin page.
//! - [`admin`]: the admin page on the metrics listener (HTTP Basic with an `admin` token, no
//!   cookies, no JavaScript): search, the record as `lookup` shows it, remove, re-send a
//!   pending confirmation (`admin::resend`, a writer command).
//! - [`delivery`]: why an HTTP delivery failed and when to try again, in words without the
//!   address; a leaf the webhook worker and the destinations share.
//!
//! No module imports a module that imports it back (`.ci/modcycles` checks it in CI): the
//! leaves (`clock`, `domain`, `presentation`, `config`, `metrics`, `delivery`) import nothing
//! above them.
//! - [`clock`]: injected time, so tests never sleep; the jittered ticks, the retry backoff and
//!   RFC 3339 formatting.
//! - [`telemetry`]: tracing setup, text or JSON lines.

pub mod admin;
pub mod api;
pub mod api_tokens;
pub mod app;
pub mod background;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod delivery;
pub mod destinations;
pub mod domain;
pub mod domain_policy;
pub mod frame;
pub mod healthcheck;
pub mod mail;
pub mod metrics;
pub mod middleware;
pub mod operator;
pub mod preferences;
pub mod preflight;
pub mod presentation;
pub mod ratelimit;
pub mod relays;
pub mod routes;
pub mod scheduler;
pub mod secrets;
pub mod signup;
pub mod snippet;
pub mod state;
pub mod status;
pub mod storage;
pub mod subscription;
pub mod surge;
pub mod telemetry;
pub mod tokens;
pub mod webhooks;
