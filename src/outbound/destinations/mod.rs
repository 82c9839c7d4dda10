//! Destinations (`docs/operations.md`, "Handing subscribers to your sender"): confirmed
//! subscribers handed straight to the sender the operator already uses — listmonk, Buttondown,
//! Mailchimp or Brevo — and unsubscribed there when they leave.
//!
//! - **The same queue as webhooks.** A destination is one more receiver of the subscriber events
//!   `crate::outbound::webhooks` prepares: the event is queued in the transaction of the change, under the
//!   destination's name (names are unique among webhooks and destinations), and delivered by a
//!   worker of its own (`crate::outbound::webhooks::worker`), in order per subscriber, at least once. The
//!   queued body is the webhook event; this module turns it into the vendor's calls at delivery
//!   time, so the address lives only in the queue until the call succeeded or was given up.
//! - **Subscribers from before.** A destination added to a list that has subscribers hears only
//!   of those who confirm from then on; `signupd backfill` (`crate::operator::backfill`) queues a
//!   `subscriber.confirmed` for each earlier one, on this same queue, for this destination alone.
//!   A repeat is harmless because a duplicate is success (below).
//! - **Already confirmed.** `subscriber.confirmed` creates or updates the address *as confirmed*,
//!   so the sender never mails its own opt-in; `subscriber.unsubscribed` unsubscribes it there.
//!   Nothing the sender holds is ever deleted. One module per kind says how ([`listmonk`],
//!   [`buttondown`], [`mailchimp`], [`brevo`]).
//! - **What is retried.** A duplicate is success. 429 waits for `Retry-After` (or the vendor's
//!   reset header); 5xx, 408, timeouts and network failures retry with the mail backoff, and so
//!   do 401 and 403: a wrong credential is fixed by the operator, and the events should still be
//!   there when it is. Any other 4xx is a refusal of this very request and will not change: given
//!   up at once, with the alert. Everything is given up after `mail.webhook_max_age`.
//! - **Secrets.** The credential comes from `credential_file`, else the credential
//!   `destination_<name>` (the packaged unit loads the directory `destination/`); it prints as
//!   `[redacted]`, and no error, log line or stored `last_error` carries it, the address, or a
//!   vendor's message (which may quote the address) — only status codes and vendor code words.

pub mod brevo;
pub mod buttondown;
pub mod listmonk;
pub mod mailchimp;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use url::Url;

use crate::config::{Config, DestinationConfig, DestinationKind};
use crate::domain::FieldValues;
use crate::outbound::delivery::{DeliveryFailure, Failed, Retry};

/// What is percent-encoded in a path segment: everything but RFC 3986's unreserved characters.
const PATH_SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The most of an answer's body read: the vendors' answers to these calls are small, and an
/// endless body must not hold the worker.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// A configured destination with its credential and API root.
pub struct Destination {
    pub config: DestinationConfig,
    /// The API root the kind's paths are joined to (listmonk: its base URL).
    base: Url,
    credential: Credential,
    /// Brevo: whether the account keeps the subscriber's language ([`brevo::LanguageAttribute`]).
    language_attribute: brevo::LanguageAttribute,
}

impl std::fmt::Debug for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Destination")
            .field("name", &self.config.name)
            .field("kind", &self.config.kind)
            .field("credential", &"[redacted]")
            .finish()
    }
}

/// A destination's API credential. Prints as `[redacted]`.
#[derive(Clone)]
pub struct Credential(String);

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl Credential {
    fn expose(&self) -> &str {
        &self.0
    }
}

/// What one call of a destination needs: the shared HTTP client (no redirects) and the timeout.
#[derive(Debug, Clone, Copy)]
pub struct Http<'a> {
    pub client: &'a reqwest::Client,
    pub timeout: Duration,
}

/// An answer as read: the status, the headers and at most `MAX_ANSWER_BYTES` (256 KiB) of the body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON, or `Unexpected` (for a 2xx whose answer a call needs).
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, Failed> {
        serde_json::from_slice(&self.body).map_err(|_| Failed::backoff(DeliveryFailure::Unexpected(self.status)))
    }

    /// A string field of a JSON error body, if it is a code word (see [`code_word`]).
    pub fn code(&self, field: &str) -> Option<String> {
        let body: serde_json::Value = serde_json::from_slice(&self.body).ok()?;
        code_word(body.get(field)?.as_str()?)
    }

    /// Whether a string field of a JSON error body contains `word` (any case). The text itself
    /// (which may quote the address) is only looked at, never kept.
    pub fn mentions(&self, field: &str, word: &str) -> bool {
        let body: Option<serde_json::Value> = serde_json::from_slice(&self.body).ok();
        let text = body.as_ref().and_then(|body| body.get(field)?.as_str());
        text.is_some_and(|text| text.to_lowercase().contains(&word.to_lowercase()))
    }
}

impl Http<'_> {
    /// Sends `request` with the timeout; a failure before an answer is retried after the backoff.
    pub async fn send(&self, request: reqwest::RequestBuilder) -> Result<Answer, Failed> {
        let failed = |error: &reqwest::Error| Failed::backoff(DeliveryFailure::from_error(error, self.timeout));
        let mut response = request.timeout(self.timeout).send().await.map_err(|error| failed(&error))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| failed(&error))? {
            body.extend_from_slice(&chunk[..chunk.len().min(MAX_ANSWER_BYTES - body.len())]);
            if body.len() == MAX_ANSWER_BYTES {
                break;
            }
        }
        Ok(Answer { status, headers, body })
    }
}

/// The failure a non-2xx answer is, and when to try again (module docs): `code` is the vendor's
/// error code word, if its body had one.
pub fn refusal(answer: &Answer, code: Option<String>) -> Failed {
    let status = answer.status;
    let failure = match code {
        Some(code) => DeliveryFailure::Vendor { status, code },
        None if (300..400).contains(&status) => DeliveryFailure::Redirect(status),
        None => DeliveryFailure::Status(status),
    };
    let retry = match status {
        429 => retry_after(&answer.headers).map_or(Retry::Backoff, Retry::After),
        300..=399 | 401 | 403 | 408 | 500..=599 => Retry::Backoff,
        _ => Retry::Never,
    };
    Failed { failure, retry }
}

/// How long a 429 asks to wait: `Retry-After` (seconds or an HTTP date), else Brevo's
/// `x-sib-ratelimit-reset` (seconds). At least a second.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    let wait = match header("retry-after") {
        Some(value) => match value.parse::<u64>() {
            Ok(seconds) => Duration::from_secs(seconds),
            Err(_) => {
                httpdate::parse_http_date(value).ok()?.duration_since(std::time::SystemTime::now()).unwrap_or_default()
            }
        },
        None => Duration::from_secs(header("x-sib-ratelimit-reset")?.parse().ok()?),
    };
    Some(wait.max(Duration::from_secs(1)))
}

/// `text` if it is a short code word (`duplicate_parameter`, `Member Exists`): letters, digits,
/// spaces, `_`, `-` and `.`, at most 64 characters. Anything else — a message that may quote the
/// address — is not kept.
pub fn code_word(text: &str) -> Option<String> {
    let text = text.trim();
    let fits = !text.is_empty()
        && text.len() <= 64
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.'));
    fits.then(|| text.to_owned())
}

/// A subscriber event as queued (the webhook body, `crate::outbound::webhooks`), as far as a destination
/// reads it. Holds an address: no `Debug`.
#[allow(missing_debug_implementations)]
pub enum Event {
    Confirmed(Subscriber),
    Unsubscribed(Subscriber),
}

/// The subscriber an event is about. Holds an address: no `Debug`.
#[allow(missing_debug_implementations)]
#[derive(Deserialize)]
pub struct Subscriber {
    pub list: String,
    pub email: String,
    /// When the address signed up (RFC 3339); `subscriber.confirmed` only.
    #[serde(default)]
    pub created_at: Option<String>,
    /// When it confirmed (RFC 3339); `subscriber.confirmed` only.
    #[serde(default)]
    pub confirmed_at: Option<String>,
    #[serde(default)]
    pub confirm_method: Option<String>,
    #[serde(default)]
    pub consent_version: Option<String>,
    #[serde(default)]
    pub consent_text: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// The values of the list's `[[lists.fields]]`; `subscriber.confirmed` only.
    #[serde(default)]
    pub fields: FieldValues,
    /// The code of the language the subscriber signed up in (`fr`, `pt-BR`);
    /// `subscriber.confirmed` only (events queued before there was one have none).
    #[serde(default)]
    pub language: Option<String>,
}

impl Subscriber {
    /// The consent evidence and attribution signupd holds, as flat JSON fields for a kind that
    /// keeps free-form data on a subscriber (listmonk `attribs`, Buttondown `metadata`), and
    /// each form field under its own name (`first_name`), where it does not clash with one of
    /// the evidence's names (the evidence wins).
    pub fn evidence(&self) -> serde_json::Value {
        let mut evidence = serde_json::json!({
            "signupd_list": self.list,
            "signed_up_at": self.created_at,
            "confirmed_at": self.confirmed_at,
            "confirm_method": self.confirm_method,
            "consent_version": self.consent_version,
            "consent_text": self.consent_text,
            "signup_source": self.source,
            "signup_tags": self.tags.join(","),
            "language": self.language,
        });
        if let Some(object) = evidence.as_object_mut() {
            for (name, value) in self.fields.iter() {
                object.entry(name).or_insert_with(|| value.into());
            }
        }
        evidence
    }
}

impl Event {
    /// Reads a queued body; a body that is not a subscriber event is refused for good (nothing
    /// will ever make it one).
    pub fn parse(payload: &str) -> Result<Self, Failed> {
        #[derive(Deserialize)]
        struct Queued {
            #[serde(rename = "type")]
            kind: String,
            data: Subscriber,
        }
        let never = || Failed { failure: DeliveryFailure::Unexpected(0), retry: Retry::Never };
        let queued: Queued = serde_json::from_str(payload).map_err(|_| never())?;
        match queued.kind.as_str() {
            "subscriber.confirmed" => Ok(Self::Confirmed(queued.data)),
            "subscriber.unsubscribed" => Ok(Self::Unsubscribed(queued.data)),
            _ => Err(never()),
        }
    }
}

impl Destination {
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Makes the vendor's calls for one queued event (`event_id` is its webhook id, for the
    /// vendors that take an idempotency key).
    pub async fn deliver(&self, http: Http<'_>, event_id: &str, payload: &str) -> Result<(), Failed> {
        let event = Event::parse(payload)?;
        let call = Call { http, destination: self };
        match (self.config.kind, &event) {
            (DestinationKind::Listmonk, Event::Confirmed(who)) => listmonk::confirmed(call, who).await,
            (DestinationKind::Listmonk, Event::Unsubscribed(who)) => listmonk::unsubscribed(call, who).await,
            (DestinationKind::Buttondown, Event::Confirmed(who)) => buttondown::confirmed(call, who, event_id).await,
            (DestinationKind::Buttondown, Event::Unsubscribed(who)) => buttondown::unsubscribed(call, who).await,
            (DestinationKind::Mailchimp, Event::Confirmed(who)) => mailchimp::confirmed(call, who).await,
            (DestinationKind::Mailchimp, Event::Unsubscribed(who)) => mailchimp::unsubscribed(call, who).await,
            (DestinationKind::Brevo, Event::Confirmed(who)) => brevo::confirmed(call, who).await,
            (DestinationKind::Brevo, Event::Unsubscribed(who)) => brevo::unsubscribed(call, who).await,
        }
    }

    /// `send-test-destination`: one read-only call that proves the URL, the credential and the
    /// target; what the sender said about the target.
    pub async fn probe(&self, http: Http<'_>) -> Result<String, Failed> {
        let call = Call { http, destination: self };
        match self.config.kind {
            DestinationKind::Listmonk => listmonk::probe(call).await,
            DestinationKind::Buttondown => buttondown::probe(call).await,
            DestinationKind::Mailchimp => mailchimp::probe(call).await,
            DestinationKind::Brevo => brevo::probe(call).await,
        }
    }

    /// Where its calls go, as `host:port`: never the path or the query, which may carry a token.
    pub fn host_port(&self) -> String {
        let host = self.base.host_str().unwrap_or_default();
        let port = self.base.port_or_known_default().unwrap_or_default();
        format!("{host}:{port}")
    }

    /// `failure` in the operator's words (`send-test-destination`): one before any answer names
    /// the host and port that were tried, since "connection refused" alone does not say whether
    /// the URL or the sender is wrong.
    pub fn failure_words(&self, failure: &DeliveryFailure) -> String {
        let at = self.host_port();
        match failure {
            DeliveryFailure::Refused => format!("connection refused by {at}"),
            DeliveryFailure::Connect => format!("could not connect to {at} (DNS, TLS or the network)"),
            DeliveryFailure::Closed => format!("{at} closed the connection before an answer"),
            DeliveryFailure::Timeout(timeout) => format!("no answer from {at} within {}s", timeout.as_secs()),
            answered => answered.to_string(),
        }
    }

    /// What the operator can do about `failure` (`send-test-destination`, the alert).
    pub fn hint(&self, failure: &DeliveryFailure) -> String {
        let credential = match &self.config.credential_file {
            Some(path) => path.display().to_string(),
            None => format!("the credential destination_{}", self.config.name),
        };
        match failure {
            DeliveryFailure::Status(401 | 403) | DeliveryFailure::Vendor { status: 401 | 403, .. } => {
                format!(
                    "the sender refused the credential: check {credential} ({})",
                    self.config.kind.credential_form()
                )
            }
            DeliveryFailure::Status(404) | DeliveryFailure::Vendor { status: 404, .. } => {
                "the sender has no such target: check target (and url)".to_owned()
            }
            other => other.hint().replace("the receiver", "the sender"),
        }
    }
}

impl DestinationKind {
    /// What the credential file holds, in the operator's words.
    pub fn credential_form(self) -> &'static str {
        match self {
            Self::Listmonk => "API user and token as user:token",
            Self::Buttondown => "the API key",
            Self::Mailchimp => "the API key, ending in -us6 or your data centre",
            Self::Brevo => "the API v3 key",
        }
    }
}

/// One destination's call in the making: its HTTP client and its configuration.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub http: Http<'a>,
    pub destination: &'a Destination,
}

impl Call<'_> {
    /// The API root with `segments` appended, each percent-encoded as one path segment (every
    /// byte but the unreserved ones, so an address's `+` or `/` reaches the API as itself).
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.destination.base.clone();
        let mut path = url.path().trim_end_matches('/').to_owned();
        for segment in segments {
            path.push('/');
            path.extend(percent_encoding::utf8_percent_encode(segment, PATH_SEGMENT));
        }
        url.set_path(&path);
        url
    }

    pub fn target(&self) -> &str {
        self.destination.config.target.as_deref().unwrap_or_default()
    }

    pub fn tags(&self) -> &[String] {
        &self.destination.config.tags
    }

    pub fn credential(&self) -> &str {
        self.destination.credential.expose()
    }

    pub fn client(&self) -> &reqwest::Client {
        self.http.client
    }

    pub async fn send(&self, request: reqwest::RequestBuilder) -> Result<Answer, Failed> {
        self.http.send(request).await
    }
}

/// Every configured destination with its credential; an error names the key
/// (`destinations[0].credential_file`).
pub fn load_destinations(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Vec<Arc<Destination>>> {
    config
        .destinations
        .iter()
        .enumerate()
        .map(|(i, destination)| {
            let credential = read_credential(destination, credentials_dir)
                .with_context(|| format!("destinations[{i}].credential_file"))?;
            let base = match &destination.url {
                Some(url) => url.clone(),
                None => {
                    default_base(destination.kind, &credential).with_context(|| format!("destinations[{i}].url"))?
                }
            };
            Ok(Arc::new(Destination {
                config: destination.clone(),
                base,
                credential,
                language_attribute: brevo::LanguageAttribute::default(),
            }))
        })
        .collect()
}

/// The vendor's API when `url` is not set.
fn default_base(kind: DestinationKind, credential: &Credential) -> anyhow::Result<Url> {
    let url = match kind {
        DestinationKind::Listmonk => anyhow::bail!("listmonk needs its base URL"),
        DestinationKind::Buttondown => "https://api.buttondown.com/v1".to_owned(),
        DestinationKind::Brevo => "https://api.brevo.com/v3".to_owned(),
        DestinationKind::Mailchimp => {
            let datacenter = mailchimp::datacenter(credential.expose()).ok_or_else(|| {
                anyhow::anyhow!(
                    "not set, and the API key does not end in its data centre (-us6 or the like); set url to \
                     https://<dc>.api.mailchimp.com/3.0"
                )
            })?;
            format!("https://{datacenter}.api.mailchimp.com/3.0")
        }
    };
    Ok(Url::parse(&url)?)
}

fn read_credential(destination: &DestinationConfig, credentials_dir: Option<&Path>) -> anyhow::Result<Credential> {
    let name = &destination.name;
    let path: PathBuf = match &destination.credential_file {
        Some(path) => path.clone(),
        None => {
            let credential = format!("destination_{name}");
            let found = credentials_dir
                .map(|dir| crate::config::secrets::find_credential(dir, &credential))
                .transpose()?
                .flatten();
            found.ok_or_else(|| {
                anyhow::anyhow!(
                    "not set, and {}: set it to a file holding {}, or put that file at destination/{name} in the \
                     credentials directory",
                    crate::config::secrets::missing_credential(credentials_dir, &credential),
                    destination.kind.credential_form()
                )
            })?
        }
    };
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let credential = text.trim_end_matches(['\r', '\n']);
    let well_formed = !credential.is_empty()
        && credential.chars().all(|c| c.is_ascii_graphic())
        && (destination.kind != DestinationKind::Listmonk || credential.contains(':'));
    if !well_formed {
        anyhow::bail!("{} does not hold {} (one line, no spaces)", path.display(), destination.kind.credential_form());
    }
    Ok(Credential(credential.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(destination: &str) -> Config {
        Config::from_toml(&format!("[[lists]]\nid = \"news\"\n[[destinations]]\nname = \"out\"\n{destination}"))
            .unwrap()
    }

    fn answer(status: u16, headers: &[(&'static str, &str)]) -> Answer {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, value.parse().unwrap());
        }
        Answer { status, headers: map, body: Vec::new() }
    }

    #[test]
    fn refusals_are_retried_unless_the_answer_will_not_change() {
        let retry = |status: u16| refusal(&answer(status, &[]), None).retry;
        for status in [301, 401, 403, 408, 429, 500, 502, 503] {
            assert_eq!(retry(status), Retry::Backoff, "{status}");
        }
        for status in [400, 404, 405, 409, 410, 422] {
            assert_eq!(retry(status), Retry::Never, "{status}");
        }
        let coded = refusal(&answer(400, &[]), Some("invalid_parameter".into()));
        assert_eq!(coded.failure.to_string(), "HTTP 400 (invalid_parameter)");
    }

    #[test]
    fn a_429_waits_for_retry_after_or_brevos_reset_header() {
        let wait = |headers: &[(&'static str, &str)]| refusal(&answer(429, headers), None).retry;
        assert_eq!(wait(&[("retry-after", "120")]), Retry::After(Duration::from_secs(120)));
        assert_eq!(wait(&[("x-sib-ratelimit-reset", "7")]), Retry::After(Duration::from_secs(7)));
        assert_eq!(wait(&[("retry-after", "0")]), Retry::After(Duration::from_secs(1)), "at least a second");
        let in_a_minute = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(61));
        let Retry::After(until) = wait(&[("retry-after", &in_a_minute)]) else { panic!("an HTTP date is a wait") };
        assert!((Duration::from_secs(58)..=Duration::from_secs(61)).contains(&until), "{until:?}");
        assert_eq!(wait(&[("retry-after", "soon")]), Retry::Backoff, "unreadable: the backoff");
        assert_eq!(wait(&[]), Retry::Backoff);
    }

    #[test]
    fn code_words_are_kept_and_messages_that_may_quote_an_address_are_not() {
        assert_eq!(code_word("duplicate_parameter").as_deref(), Some("duplicate_parameter"));
        assert_eq!(code_word(" Member In Compliance State ").as_deref(), Some("Member In Compliance State"));
        assert_eq!(code_word("jane@example.com is already a list member"), None);
        assert_eq!(code_word(&"x".repeat(65)), None);
        assert_eq!(code_word(""), None);
    }

    #[test]
    fn a_credential_is_found_in_either_form_and_never_printed() {
        let config = config("kind = \"brevo\"\ntarget = \"7\"");
        for form in ["destination_out", "destination/out"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(form);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "xkeysib-secret-key\n").unwrap();
            let loaded = load_destinations(&config, Some(dir.path())).unwrap();
            assert_eq!(loaded.len(), 1, "{form}");
            assert_eq!(loaded[0].base.as_str(), "https://api.brevo.com/v3", "{form}");
            assert!(!format!("{loaded:?}").contains("secret-key"), "{form}");
        }
        let empty = tempfile::tempdir().unwrap();
        let error = format!("{:#}", load_destinations(&config, Some(empty.path())).unwrap_err());
        assert!(error.starts_with("destinations[0].credential_file: not set"), "{error}");
        assert!(error.contains(&empty.path().join("destination/out").display().to_string()), "{error}");
    }

    #[test]
    fn a_malformed_credential_is_refused_without_being_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        let toml = |kind: &str, extra: &str| {
            format!("kind = \"{kind}\"\ncredential_file = {:?}\n{extra}", path.display().to_string())
        };
        for (kind, extra, content) in [
            ("listmonk", "url = \"https://lists.bakery.test\"\ntarget = \"3\"", "only-a-token-secret"),
            ("buttondown", "", "two words-secret"),
            ("brevo", "target = \"7\"", "\n"),
        ] {
            std::fs::write(&path, content).unwrap();
            let error = format!("{:#}", load_destinations(&config(&toml(kind, extra)), None).unwrap_err());
            assert!(error.contains("does not hold"), "{kind}: {error}");
            assert!(!error.contains("secret"), "{kind}: the credential is quoted: {error}");
        }
    }

    #[test]
    fn mailchimp_finds_its_data_centre_in_the_key_unless_url_is_set() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        let toml =
            format!("kind = \"mailchimp\"\ntarget = \"a1b2c3\"\ncredential_file = {:?}", path.display().to_string());
        std::fs::write(&path, "0123456789abcdef-us6\n").unwrap();
        let loaded = load_destinations(&config(&toml), None).unwrap();
        assert_eq!(loaded[0].base.as_str(), "https://us6.api.mailchimp.com/3.0");
        std::fs::write(&path, "0123456789abcdef\n").unwrap();
        let error = format!("{:#}", load_destinations(&config(&toml), None).unwrap_err());
        assert!(error.starts_with("destinations[0].url: not set"), "{error}");
        let with_url = format!("{toml}\nurl = \"http://127.0.0.1:9/3.0\"");
        assert_eq!(load_destinations(&config(&with_url), None).unwrap()[0].base.as_str(), "http://127.0.0.1:9/3.0");
    }

    #[test]
    fn paths_are_joined_one_encoded_segment_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, "key").unwrap();
        let toml = format!(
            "kind = \"brevo\"\ntarget = \"7\"\nurl = \"http://127.0.0.1:9/v3/\"\ncredential_file = {:?}",
            path.display().to_string()
        );
        let loaded = load_destinations(&config(&toml), None).unwrap();
        let client = reqwest::Client::new();
        let call = Call { http: Http { client: &client, timeout: Duration::from_secs(1) }, destination: &loaded[0] };
        assert_eq!(
            call.url(&["contacts", "o'brien+news/x@example.com"]).as_str(),
            "http://127.0.0.1:9/v3/contacts/o%27brien%2Bnews%2Fx%40example.com"
        );
    }
}
