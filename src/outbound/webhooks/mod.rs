//! Webhooks (`docs/operations.md`): subscriber events delivered to the operator's own systems, signed with
//! the Standard Webhooks scheme, durable and in order. The same events, through the same queue,
//! are handed to the configured destinations (`crate::outbound::destinations`): a destination receives
//! both events for its lists, and turns each into its sender's API calls when it is delivered.
//!
//! - **Queued with the change.** [`Webhooks::confirmed`] and [`Webhooks::unsubscribed`] build
//!   the event before the command that confirms or removes reaches the writer
//!   (`crate::subscribers::subscription`); the command queues it ([`PreparedEvent::queue`]) in its own
//!   transaction, so the event commits with the change it reports or not at all. A
//!   pending address that is removed or expires produces nothing: the receiver never knew it.
//! - **Attributed.** `subscriber.confirmed` carries the row's `source` (a string, or `null` when
//!   the form sent none), `tags` (an array, empty when none) and `fields` (the values of the
//!   list's `[[lists.fields]]`, an object of strings, empty when none), as the first signup
//!   stored them, and `language` (the code of the language the subscriber signed up in).
//! - **Signed** per Standard Webhooks: `webhook-id` (the event id, the same on every retry),
//!   `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature: v1,<base64 of
//!   HMAC-SHA256(secret, id + "." + timestamp + "." + body)>`, where the secret is the base64
//!   after `whsec_` ([`sign`]). Any of the scheme's libraries verifies it.
//! - **Delivered** by one worker per endpoint ([`worker`]), so a slow or dead endpoint holds up
//!   no other; at least once, in order per subscriber, retried with the mail backoff until
//!   `mail.webhook_max_age`, then dropped with an alert that names the endpoint and event type.
//!
//! A secret comes from `secret_file`, else the credential `webhook_<name>` (the packaged unit
//! loads it from `webhook/<name>` in the credentials directory; [`crate::config::secrets::find_credential`]
//! finds either form): `whsec_` followed by the standard base64 of at least 24 random bytes. It
//! prints as `[redacted]`.

mod consent;
pub mod worker;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::hmac;
use rusqlite::Connection;
use serde::Serialize;

use crate::clock::{UnixSeconds, rfc3339};
use crate::config::tokens::Keyring;
use crate::config::{Config, WebhookConfig, WebhookEvent};
use crate::domain::{FieldValues, Tag};
use crate::outbound::destinations::Destination;
use crate::outbound::mail::message::Links;
use crate::storage::subscribers;
use crate::storage::webhooks::{self, NewDelivery};

/// The shortest secret accepted, in decoded bytes.
const MIN_SECRET_BYTES: usize = 24;

/// An endpoint with its signing key.
pub struct Endpoint {
    pub config: WebhookConfig,
    key: hmac::Key,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("name", &self.config.name).field("secret", &"[redacted]").finish()
    }
}

impl Endpoint {
    /// The `webhook-signature` header value for one attempt.
    pub fn sign(&self, event_id: &str, timestamp: UnixSeconds, body: &str) -> String {
        sign(&self.key, event_id, timestamp, body)
    }
}

/// Standard Webhooks: `v1,` + base64(HMAC-SHA256(key, `{id}.{timestamp}.{body}`)).
pub fn sign(key: &hmac::Key, event_id: &str, timestamp: UnixSeconds, body: &str) -> String {
    let signed = format!("{event_id}.{timestamp}.{body}");
    format!("v1,{}", STANDARD.encode(hmac::sign(key, signed.as_bytes()).as_ref()))
}

/// POSTs `body` to `endpoint`, signed for `event_id` at `timestamp`; the answer's status.
pub async fn send(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    event_id: &str,
    body: &str,
    timestamp: UnixSeconds,
    timeout: std::time::Duration,
) -> Result<reqwest::StatusCode, reqwest::Error> {
    let response = client
        .post(endpoint.config.url.as_str())
        .timeout(timeout)
        .header("content-type", "application/json")
        .header("webhook-id", event_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", endpoint.sign(event_id, timestamp, body))
        .body(body.to_owned())
        .send()
        .await?;
    Ok(response.status())
}

/// Parses a `whsec_…` secret into its HMAC key.
pub fn parse_secret(text: &str) -> Result<hmac::Key, String> {
    let encoded = text
        .trim_end_matches(['\r', '\n'])
        .strip_prefix("whsec_")
        .ok_or("must start with \"whsec_\" (Standard Webhooks format)")?;
    let bytes = STANDARD.decode(encoded).map_err(|_| "the part after \"whsec_\" is not standard base64".to_owned())?;
    if bytes.len() < MIN_SECRET_BYTES {
        return Err(format!("is {} bytes decoded; at least {MIN_SECRET_BYTES} are needed", bytes.len()));
    }
    Ok(hmac::Key::new(hmac::HMAC_SHA256, &bytes))
}

/// The configured endpoints and what queuing their events needs; cheap to clone.
#[derive(Clone)]
pub struct Webhooks {
    inner: Arc<Inner>,
}

struct Inner {
    endpoints: Vec<Arc<Endpoint>>,
    destinations: Vec<Arc<Destination>>,
    keyring: Arc<Keyring>,
    links: Links,
    /// Never follows redirects: a redirect is a failed delivery (`docs/operations.md`).
    client: reqwest::Client,
    timeout: std::time::Duration,
    consent_texts: consent::ConsentTexts,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("endpoints", &self.inner.endpoints)
            .field("destinations", &self.inner.destinations)
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    /// Reads every endpoint's secret and destination's credential; an error names the key
    /// (`webhooks[0].secret_file`).
    pub fn load(config: &Config, credentials_dir: Option<&Path>, keyring: Arc<Keyring>) -> anyhow::Result<Self> {
        let endpoints = load_endpoints(config, credentials_dir)?;
        let destinations = crate::outbound::destinations::load_destinations(config, credentials_dir)?;
        Self::with_sinks(config, endpoints, destinations, keyring)
    }

    /// The endpoints [`load_endpoints`] and the destinations
    /// [`crate::outbound::destinations::load_destinations`] read (start-up reads them once, before
    /// anything is written), ready to queue and deliver.
    pub fn with_sinks(
        config: &Config,
        endpoints: Vec<Arc<Endpoint>>,
        destinations: Vec<Arc<Destination>>,
        keyring: Arc<Keyring>,
    ) -> anyhow::Result<Self> {
        let client = client()?;
        Ok(Self {
            inner: Arc::new(Inner {
                endpoints,
                destinations,
                keyring,
                links: Links::new(config),
                client,
                timeout: config.mail.webhook_timeout,
                consent_texts: consent::ConsentTexts::default(),
            }),
        })
    }

    pub fn endpoints(&self) -> &[Arc<Endpoint>] {
        &self.inner.endpoints
    }

    pub fn destinations(&self) -> &[Arc<Destination>] {
        &self.inner.destinations
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.inner.client
    }

    /// How long an endpoint may take to answer.
    pub fn timeout(&self) -> std::time::Duration {
        self.inner.timeout
    }

    /// Whether any endpoint wants `subscriber.confirmed` for `list` (so the consent text is
    /// read only when it will be sent).
    pub fn wants_confirmed(&self, list: &str) -> bool {
        self.any_wants(WebhookEvent::Confirmed, list)
    }

    /// The consent text a row of `list_id` created at `created_at` agreed to, for
    /// `subscriber.confirmed`: read once per list and version (`webhooks::consent`).
    pub fn consent_text(
        &self,
        conn: &Connection,
        list_id: &str,
        consent_version: &str,
        created_at: UnixSeconds,
    ) -> rusqlite::Result<Option<String>> {
        self.inner.consent_texts.agreed(conn, list_id, consent_version, created_at)
    }

    /// `subscriber.confirmed` for every endpoint that wants it, ready for the confirm command to
    /// queue; `None` when no endpoint wants it. Built before the command reaches the writer:
    /// the body and the signed unsubscribe link are work the writer's thread should not do.
    pub fn confirmed(
        &self,
        confirmed: &ConfirmedEvent<'_>,
        consent_text: Option<&str>,
    ) -> anyhow::Result<Option<PreparedEvent>> {
        if !self.wants_confirmed(confirmed.list) {
            return Ok(None);
        }
        // Signed only for a webhook endpoint: a destination's sender has its own unsubscribe.
        let endpoint_wants = |endpoint: &Arc<Endpoint>| endpoint.config.wants(WebhookEvent::Confirmed, confirmed.list);
        let unsubscribe_url = self.inner.endpoints.iter().any(endpoint_wants).then(|| {
            let token = self.inner.keyring.sign_unsubscribe(confirmed.list, confirmed.subscriber_id, confirmed.now);
            self.inner.links.unsubscribe(&token)
        });
        let data = ConfirmedData::of(confirmed, confirmed.now, consent_text, unsubscribe_url)?;
        self.prepare(WebhookEvent::Confirmed, confirmed.list, confirmed.subscriber_id, data, confirmed.now).map(Some)
    }

    /// `subscriber.unsubscribed` (a confirmed subscriber left) for every endpoint that wants
    /// it, ready for the removal command to queue; `None` when no endpoint wants it.
    pub fn unsubscribed(&self, left: &UnsubscribedEvent<'_>) -> anyhow::Result<Option<PreparedEvent>> {
        if !self.any_wants(WebhookEvent::Unsubscribed, left.list) {
            return Ok(None);
        }
        let data = UnsubscribedData {
            email: left.email,
            list: left.list,
            reason: left.reason,
            subscriber_id: left.subscriber_id,
            via: left.via,
        };
        self.prepare(WebhookEvent::Unsubscribed, left.list, left.subscriber_id, data, left.now).map(Some)
    }

    fn any_wants(&self, event: WebhookEvent, list: &str) -> bool {
        self.receivers(event, list).next().is_some()
    }

    /// The names of the endpoints and destinations that want `event` about a subscriber of
    /// `list`: a destination takes both events of the lists it hands on.
    fn receivers(&self, event: WebhookEvent, list: &str) -> impl Iterator<Item = &str> {
        let endpoints = self.inner.endpoints.iter().filter(move |endpoint| endpoint.config.wants(event, list));
        let destinations = self.inner.destinations.iter().filter(move |destination| destination.config.wants(list));
        endpoints
            .map(|endpoint| endpoint.config.name.as_str())
            .chain(destinations.map(|destination| destination.name()))
    }

    fn prepare(
        &self,
        event: WebhookEvent,
        list: &str,
        subscriber_id: &str,
        data: impl Serialize,
        now: UnixSeconds,
    ) -> anyhow::Result<PreparedEvent> {
        prepared(event, subscriber_id, data, now, self.receivers(event, list).map(str::to_owned).collect())
    }
}

/// `event` about `subscriber_id` with `data`, made at `now`, for `endpoints` (names of webhook
/// endpoints or destinations): a new event id, and the body serialized once.
fn prepared(
    event: WebhookEvent,
    subscriber_id: &str,
    data: impl Serialize,
    now: UnixSeconds,
    endpoints: Vec<String>,
) -> anyhow::Result<PreparedEvent> {
    Ok(PreparedEvent {
        event_id: format!("evt_{}", uuid::Uuid::now_v7().simple()),
        event_type: event.as_str(),
        subscriber_id: subscriber_id.to_owned(),
        payload: serde_json::to_string(&Envelope { data, timestamp: rfc3339(now)?, kind: event.as_str() })?,
        endpoints,
        now,
    })
}

// The payloads as serde writes them, without a `serde_json::Value` built first: each confirm
// with an endpoint or destination builds one (BENCHMARKS.md, "Destinations"). The fields are in
// the alphabetical order the `Value` maps wrote, so the bodies are byte for byte the same.

/// The body of every event.
#[derive(Serialize)]
struct Envelope<D> {
    data: D,
    timestamp: String,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// `subscriber.confirmed`'s `data`.
#[derive(Serialize)]
struct ConfirmedData<'a> {
    confirm_method: &'a str,
    confirmed_at: String,
    consent_text: Option<&'a str>,
    consent_version: &'a str,
    created_at: String,
    email: &'a str,
    language: &'a str,
    list: &'a str,
    source: Option<&'a str>,
    subscriber_id: &'a str,
    tags: Vec<String>,
    fields: FieldValues,
    #[serde(skip_serializing_if = "Option::is_none")]
    unsubscribe_url: Option<String>,
}

impl<'a> ConfirmedData<'a> {
    /// The `data` of `confirmed`, confirmed at `confirmed_at` (the moment itself, or a row's
    /// stored one for a backfill).
    fn of(
        confirmed: &ConfirmedEvent<'a>,
        confirmed_at: UnixSeconds,
        consent_text: Option<&'a str>,
        unsubscribe_url: Option<String>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            confirm_method: confirmed.method,
            confirmed_at: rfc3339(confirmed_at)?,
            consent_text,
            consent_version: confirmed.consent_version,
            created_at: rfc3339(confirmed.created_at)?,
            email: confirmed.email,
            language: confirmed.language,
            list: confirmed.list,
            source: confirmed.source,
            subscriber_id: confirmed.subscriber_id,
            tags: Tag::split(confirmed.tags),
            fields: FieldValues::from_column(confirmed.fields),
            unsubscribe_url,
        })
    }
}

/// `subscriber.unsubscribed`'s `data`.
#[derive(Serialize)]
struct UnsubscribedData<'a> {
    email: &'a str,
    list: &'a str,
    reason: &'a str,
    subscriber_id: &'a str,
    via: &'a str,
}

/// An event with its body, and the endpoints and destinations to deliver it to: what a writer
/// command queues.
/// No `Debug`: the body holds an address.
#[allow(missing_debug_implementations)]
pub struct PreparedEvent {
    event_id: String,
    event_type: &'static str,
    subscriber_id: String,
    payload: String,
    endpoints: Vec<String>,
    now: UnixSeconds,
}

impl PreparedEvent {
    /// Queues one delivery per endpoint and destination; runs inside the command that made the
    /// change the event reports, so both commit together or not at all. An unsubscribed event
    /// must be queued while its subscriber row still exists: each of its rows waits for the
    /// row of the confirmed event for the same endpoint, if that is still queued
    /// (`storage::webhooks`).
    pub fn queue(&self, conn: &Connection) -> rusqlite::Result<()> {
        let confirmed = self.event_type == WebhookEvent::Confirmed.as_str();
        let waiting_for = match confirmed {
            true => Vec::new(),
            false => queued_confirmed_rows(conn, &self.subscriber_id)?,
        };
        let first = self.insert_rows(conn, |endpoint| {
            waiting_for.iter().find(|(queued, _)| queued == endpoint).map(|&(_, id)| id)
        })?;
        if let (true, Some(first)) = (confirmed, first) {
            subscribers::set_confirmed_event(conn, &self.subscriber_id, first)?;
        }
        Ok(())
    }

    /// One delivery row per endpoint, each after the row `after_id(endpoint)` names; returns the
    /// first row's id.
    fn insert_rows(&self, conn: &Connection, after_id: impl Fn(&str) -> Option<i64>) -> rusqlite::Result<Option<i64>> {
        let mut first = None;
        for endpoint in &self.endpoints {
            let id = webhooks::insert(
                conn,
                &NewDelivery {
                    endpoint,
                    event_id: &self.event_id,
                    event_type: self.event_type,
                    subscriber_id: &self.subscriber_id,
                    payload: &self.payload,
                    now: self.now,
                    after_id: after_id(endpoint),
                },
            )?;
            first.get_or_insert(id);
        }
        Ok(first)
    }
}

/// The still-queued rows (sink, id) of `subscriber_id`'s `subscriber.confirmed` event.
fn queued_confirmed_rows(conn: &Connection, subscriber_id: &str) -> rusqlite::Result<Vec<(String, i64)>> {
    match subscribers::confirmed_event(conn, subscriber_id)? {
        Some(first) => webhooks::queued_confirmed(conn, first, subscriber_id),
        None => Ok(Vec::new()),
    }
}

/// `subscriber.confirmed` of a subscriber confirmed before `destination` handed its list on, for
/// that destination alone (`signupd backfill`): the body the confirmation would have queued, with
/// the row's own `confirmed_at` and `confirm_method`, and no `unsubscribe_url` (only a webhook
/// endpoint gets one; a destination's sender has its own). `confirmed.now` is the envelope's
/// `timestamp`, when the event was made.
pub fn backfilled(
    destination: &str,
    confirmed: &ConfirmedEvent<'_>,
    confirmed_at: UnixSeconds,
    consent_text: Option<&str>,
) -> anyhow::Result<PreparedEvent> {
    let data = ConfirmedData::of(confirmed, confirmed_at, consent_text, None)?;
    prepared(WebhookEvent::Confirmed, confirmed.subscriber_id, data, confirmed.now, vec![destination.to_owned()])
}

/// What [`PreparedEvent::queue_backfill`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backfilled {
    Queued,
    /// The subscriber's own `subscriber.confirmed` still waits in the destination's queue.
    AlreadyWaiting,
    /// The row was removed (or is no longer confirmed) since it was read: nothing to hand on.
    Gone,
}

impl PreparedEvent {
    /// Queues a [`backfilled`] event, inside the writer's transaction, where what was read before
    /// is checked again: a row removed meanwhile is not handed on (its address must not reach
    /// the sender after it left), and a row whose own confirmation event still waits for the
    /// destination is not queued twice.
    ///
    /// Order: an unsubscribed event waits for the queued rows of the subscriber's confirmed event
    /// ([`Self::queue`]), found through `subscribers.confirmed_event`. When none of them is still
    /// queued, that now names the backfilled row, so a later unsubscribed event waits for it. When
    /// the original event still waits for another sink (an endpoint that is down), the mark stays
    /// on the original, whose order the other sinks need: the destination's unsubscribed event
    /// then does not wait for the backfilled one. Its worker still takes the older row first
    /// (due time, then id), so only a backfilled row that is being retried could be overtaken.
    pub fn queue_backfill(&self, conn: &Connection) -> rusqlite::Result<Backfilled> {
        if !subscribers::is_confirmed(conn, &self.subscriber_id)? {
            return Ok(Backfilled::Gone);
        }
        let still_queued = queued_confirmed_rows(conn, &self.subscriber_id)?;
        if still_queued.iter().any(|(sink, _)| self.endpoints.contains(sink)) {
            return Ok(Backfilled::AlreadyWaiting);
        }
        let first = self.insert_rows(conn, |_| None)?;
        if let (true, Some(first)) = (still_queued.is_empty(), first) {
            subscribers::set_confirmed_event(conn, &self.subscriber_id, first)?;
        }
        Ok(Backfilled::Queued)
    }
}

/// Every configured endpoint with its key; an error names the key (`webhooks[0].secret_file`).
pub fn load_endpoints(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Vec<Arc<Endpoint>>> {
    config
        .webhooks
        .iter()
        .enumerate()
        .map(|(i, hook)| {
            let key = read_secret(hook, credentials_dir).with_context(|| format!("webhooks[{i}].secret_file"))?;
            Ok(Arc::new(Endpoint { config: hook.clone(), key }))
        })
        .collect()
}

/// The webhook HTTP client: never follows redirects (a redirect is a failed delivery).
pub fn client() -> anyhow::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("signupd/", env!("CARGO_PKG_VERSION")))
        .build()
        .context("cannot build the webhook HTTP client")
}

/// What `subscriber.confirmed` reports. Holds an address: no `Debug`.
#[allow(missing_debug_implementations)]
pub struct ConfirmedEvent<'a> {
    pub list: &'a str,
    pub email: &'a str,
    pub subscriber_id: &'a str,
    pub created_at: UnixSeconds,
    pub method: &'a str,
    pub consent_version: &'a str,
    /// Where the signup came from; `null` in the payload when the form sent none.
    pub source: Option<&'a str>,
    /// The stored, comma-joined column; an array in the payload (empty when none).
    pub tags: Option<&'a str>,
    /// The stored field values (a JSON object); an object in the payload (empty when none).
    pub fields: Option<&'a str>,
    /// The language code the subscriber reads (`Config::row_language_code`).
    pub language: &'a str,
    pub now: UnixSeconds,
}

/// What `subscriber.unsubscribed` reports. Holds an address: no `Debug`.
#[allow(missing_debug_implementations)]
pub struct UnsubscribedEvent<'a> {
    pub list: &'a str,
    pub email: &'a str,
    pub subscriber_id: &'a str,
    /// `unsubscribed` or `not_me`.
    pub reason: &'a str,
    /// `one_click`, `manage` or `cli`.
    pub via: &'a str,
    pub now: UnixSeconds,
}

fn read_secret(hook: &WebhookConfig, credentials_dir: Option<&Path>) -> anyhow::Result<hmac::Key> {
    let path: PathBuf = match &hook.secret_file {
        Some(path) => path.clone(),
        None => {
            let credential = format!("webhook_{}", hook.name);
            let found = credentials_dir
                .map(|dir| crate::config::secrets::find_credential(dir, &credential))
                .transpose()?
                .flatten();
            found.ok_or_else(|| {
                anyhow::anyhow!(
                    "not set, and {}: set it to a file holding a whsec_ secret, or put that file at webhook/{} in the \
                     credentials directory",
                    crate::config::secrets::missing_credential(credentials_dir, &credential),
                    hook.name
                )
            })?
        }
    };
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    parse_secret(&text).map_err(|problem| anyhow::anyhow!("the secret in {} {problem}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_standard_webhooks_layout() {
        // The scheme's published test vector (standard-webhooks, libraries' shared tests).
        let key = parse_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let signature = sign(&key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, r#"{"test": 2432232314}"#);
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn an_endpoint_secret_is_found_in_either_form_of_the_credential() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n";
        let toml = "[[lists]]\nid = \"news\"\n[[webhooks]]\nname = \"crm\"\nurl = \"http://127.0.0.1:9/\"";
        let config = Config::from_toml(toml).unwrap();
        for form in ["webhook_crm", "webhook/crm"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(form);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, secret).unwrap();
            assert_eq!(load_endpoints(&config, Some(dir.path())).unwrap().len(), 1, "{form}");
        }
        let empty = tempfile::tempdir().unwrap();
        let error = format!("{:#}", load_endpoints(&config, Some(empty.path())).unwrap_err());
        assert!(error.starts_with("webhooks[0].secret_file: not set"), "{error}");
        assert!(error.contains(&empty.path().join("webhook/crm").display().to_string()), "{error}");
    }

    #[test]
    fn bad_secrets_are_refused_with_the_reason() {
        for (secret, problem) in [
            ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_"),
            ("whsec_not base64!", "base64"),
            ("whsec_c2hvcnQ=", "at least 24"),
        ] {
            let error = parse_secret(secret).err().unwrap_or_default();
            assert!(error.contains(problem), "{secret}: {error}");
        }
    }
}
