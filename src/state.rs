//! The shared state every part of a running signupd works with: request handlers, the
//! background workers and the scheduler. [`crate::app`] builds it once at start; everything
//! else receives it, so nothing depends on the assembly module.
//!
//! [`AppState::writer`] is the only way to write to SQLite; [`AppState::db`] only reads.

use std::sync::Arc;

use crate::clock::Clock;
use crate::config::Config;
use crate::domain_policy::DomainPolicy;
use crate::frame::Stylesheets;
use crate::mail::Transport;
use crate::ratelimit::RateLimiter;
use crate::secrets::Secrets;
use crate::storage::{Db, Writer};
use crate::tokens::Keyring;
use crate::webhooks::Webhooks;

/// Everything a request handler or background task needs; built once, cloned cheaply.
#[derive(Debug, Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    /// Reads (a pool of `query_only` connections).
    pub db: Db,
    /// Writes: the one thread with the read-write connection.
    pub writer: Writer,
    pub secrets: Arc<Secrets>,
    pub clock: Arc<dyn Clock>,
    /// The per-client signup limits; keys are computed by the caller, counted by the writer.
    pub limiter: Arc<RateLimiter>,
    /// Where mail goes (SMTP or files); built once, its connections kept.
    pub transport: Transport,
    /// For the alert webhook.
    pub http_client: reqwest::Client,
    /// Signs and verifies unsubscribe tokens.
    pub keyring: Arc<Keyring>,
    /// The webhook endpoints, their keys and HTTP client.
    pub webhooks: Webhooks,
    /// The lists' accent stylesheets and the operator's own, made or read at start.
    pub stylesheets: Arc<Stylesheets>,
    /// Blocked domains (reloaded on SIGHUP) and the MX check, asked at the end of step 4 of a
    /// signup.
    pub domains: DomainPolicy,
}
