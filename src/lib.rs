//! signupd: a self-contained double opt-in signup service. Its behaviour from the outside is
//! documented in the repository's `docs/` (HTTP API, configuration, operations); this crate is
//! the implementation. `main.rs` is a thin shell around [`app::cli`] and [`app::commands`].
//!
//! # Layout
//!
//! The rooms, in the order a signup meets them. A visitor's request comes in through the web,
//! the door decides and records, storage keeps, outbound sends the confirmation, the subscribers'
//! room confirms and removes, the relays report back; the operator stands beside it all, and the
//! app puts it together. Each room imports only rooms below it in this list, and the leaves at
//! the end import nothing above them; `.ci/modcycles` fails CI on a circle, between rooms or
//! between modules side by side inside one.
//!
//! - [`web`]: where a request arrives — the routes (one file per endpoint family, one error enum
//!   each), the access log and security headers, the page frame, the [`web::state::AppState`]
//!   every handler shares and lends its parts of to the workers, and the operator's API tokens.
//!   It shapes answers; it decides nothing the rooms below decide.
//! - [`door`]: who may sign up — recording a request with its rate-limit counts in one writer
//!   command and the intake worker that applies the state table later ([`door::signup`]), who
//!   the client is and what it may ask ([`door::ratelimit`]), the email domains accepted
//!   ([`door::domain_policy`]), surge mode ([`door::surge`]). It answers no HTTP and sends no
//!   mail itself.
//! - [`storage`]: SQLite, and all the SQL of the program, in functions named for what they
//!   answer, one file per table family. **[`storage::writer`] is the one place SQLite is
//!   written**: one thread with the only read-write connection runs every write as a typed
//!   command, group-committed; everything else reads through the `query_only` pool
//!   [`storage::Db`]. The commands themselves live with the rooms that own them.
//! - [`outbound`]: everything signupd sends — mail and its workers, the relay's trust and
//!   refusals, the operator's alerts ([`outbound::mail`]); subscriber events, signed and
//!   delivered in order ([`outbound::webhooks`]); the operator's sender as a receiver of them
//!   ([`outbound::destinations`]). Durable in SQLite before anything leaves; it never decides
//!   who is subscribed.
//! - [`subscribers`]: confirming and removing ([`subscribers::subscription`]) and the
//!   preference page ([`subscribers::preferences`]), each change queuing its event in the same
//!   command; shared by the routes, the relays and the command line.
//! - [`relays`]: hearing back from the relay — whether an event really comes from it, what its
//!   payload or a report says, and what a believed bounce or complaint does (suppression, counts,
//!   the complaint breaker). It believes nothing it has not verified.
//! - [`operator`]: what the person running signupd reaches beside the server — the commands
//!   that work on a live database (export, import, remove, stats, backup, lookup, audit, backfill,
//!   ingest-mail, `doctor`), the operator API, the admin and status pages, the form snippets.
//!   Everything it changes goes through the same writer commands as the routes, audited.
//! - [`app`]: the assembly — the command line and one function per subcommand, the start-up
//!   checks that write nothing, logging, the hourly cleanup, the readiness probe, and the server
//!   with its workers' runtimes. It imports every room; no room imports it.
//!
//! The leaves, which every room may use:
//! - [`config`]: which file a command reads ([`config::source`]); defaults, TOML and
//!   environment into a checked `Config` whose errors name the key (a password in the file is
//!   one); the secrets and where credentials are found; the tokens derived from the secrets;
//!   how each list looks and speaks ([`config::presentation`]). Loading writes nothing.
//! - [`domain`]: types valid by construction (`ListId`, `EmailAddress`, `TrustedProxies`, …)
//!   and Cloudflare's published ranges; imports nothing.
//! - [`clock`]: injected time, so tests never sleep — the jittered ticks, the retry backoff,
//!   RFC 3339 — and the one loop every background worker runs ([`clock::background`]).
//! - [`metrics`]: the Prometheus metrics' names, help texts and labels, and recording them;
//!   imports nothing.

pub mod app;
pub mod clock;
pub mod config;
pub mod domain;
pub mod door;
pub mod metrics;
pub mod operator;
pub mod outbound;
pub mod relays;
pub mod storage;
pub mod subscribers;
pub mod web;
