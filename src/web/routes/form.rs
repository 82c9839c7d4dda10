//! Reading request bodies: the three content types signupd accepts (the first check of a signup), the
//! size limit, and the fields of each form. Unknown fields are ignored; a body with more than
//! [`MAX_FIELDS`] fields is refused, so a flood of fields costs nothing to answer. Shared by the
//! signup, confirm, manage and one-click unsubscribe endpoints, like the readers of the query
//! string ([`query_param`], [`list_param`]).
//!
//! Consent must say yes: a form value (urlencoded, multipart or a JSON string) of `yes`, `on`,
//! `true` or `1` in any case, surrounding whitespace ignored, or in JSON `true` or the number
//! `1`. Everything else — `no`, `false`, `0`, `off`, empty, any other text, JSON `false`, `0`,
//! other numbers, arrays, objects — is no consent; JSON `null` counts as a missing field. Like
//! every other field, the first `consent` of a form counts and later ones are ignored, so
//! `consent=no&consent=yes` is refused: a form that sends a hidden "no" before its checkbox (a
//! pattern of some web frameworks) can never be read as a yes it did not mean.
//!
//! Slow clients: actix-web's `client_request_timeout` (set from `server.request_timeout` in
//! [`crate::app`]) bounds the head only; once the headers are in, a body that trickles would hold
//! the connection for as long as the client likes. [`body_deadline`] gives every body the same
//! `server.request_timeout`, counted from the moment the head is in, for whichever handler reads
//! it: a body not complete by then ends the read with an error, and the answer becomes `408
//! Request Timeout` with `Connection: close` — `{"ok":false,"error":"request_timeout"}` for a
//! JSON client of `/api/signup` (the answer keeps its CORS headers, so a page that posted with
//! `fetch` can read it), the operator API's own JSON error under `/api/v1/` (its handlers answer
//! a timed-out read with it), a one-line `text/plain` message on every other endpoint. Nothing is
//! written: every handler reads its whole body before anything else. An answer sent before the
//! body was read to its end (a `415`, say) also closes the connection, so the rest of a slow body
//! is never waited for.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::{ConnectionType, header};
use actix_web::middleware::Next;
use actix_web::web::{self, Bytes, BytesMut};
use actix_web::{HttpRequest, HttpResponse};
use futures_util::{Stream, StreamExt};

use crate::config::presentation::Language;
use crate::config::{Config, ListConfig};
use crate::door::ratelimit::{ClientNet, Neighbourhood, client_ip};
use crate::web::state::AppState;

/// More fields than any real form sends.
pub const MAX_FIELDS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    UrlEncoded,
    Multipart,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("unsupported content type")]
    UnsupportedMediaType,
    #[error("body larger than the limit")]
    TooLarge,
    #[error("malformed body")]
    Malformed,
    /// The body did not arrive within `server.request_timeout` ([`body_deadline`] answers 408).
    #[error("body not complete in time")]
    TimedOut,
}

/// The fields of a signup form. No `Debug`: it holds the typed address.
#[derive(Default)]
#[allow(missing_debug_implementations)]
pub struct SignupFields {
    pub email: Option<String>,
    /// Whether the first `consent` field said yes ([`says_yes`]).
    pub consent: bool,
    /// Every `list` field, in order (a form may name several lists).
    pub lists: Vec<String>,
    pub source: Option<String>,
    /// Every `tags` field, in order.
    pub tags: Vec<String>,
    /// The lists the hosted form offered (`offered`, repeated), to show the same choice again
    /// after an error; no other meaning.
    pub offered: Vec<String>,
    pub website: Option<String>,
    pub return_to: Option<String>,
    /// The page's language (`lang`), which the form's site knows.
    pub lang: Option<String>,
    /// Every other field, the first of each name: the values a list's `[[lists.fields]]` may
    /// ask for ([`Self::field`]); names no list declares are never read. At most
    /// [`MAX_FIELDS`], like the body.
    others: Vec<(String, String)>,
    /// Whether a `consent` field was seen: later ones are ignored.
    consent_seen: bool,
}

impl SignupFields {
    fn set(&mut self, name: &str, value: String) {
        // The first occurrence of a field wins; later duplicates are ignored, except for the
        // fields that may be repeated.
        let slot = match name {
            "list" => return self.lists.push(value),
            "tags" => return self.tags.push(value),
            "offered" => return self.offered.push(value),
            "email" => &mut self.email,
            "source" => &mut self.source,
            "website" => &mut self.website,
            "return_to" => &mut self.return_to,
            "lang" => &mut self.lang,
            "consent" => {
                self.set_consent(says_yes(&value));
                return;
            }
            _ => {
                if !self.others.iter().any(|(seen, _)| seen == name) {
                    self.others.push((name.to_owned(), value));
                }
                return;
            }
        };
        if slot.is_none() {
            *slot = Some(value);
        }
    }

    /// The value sent for the field `name`, if any (the first one sent).
    pub fn field(&self, name: &str) -> Option<&str> {
        self.others.iter().find(|(seen, _)| seen == name).map(|(_, value)| value.as_str())
    }

    fn set_consent(&mut self, yes: bool) {
        if !self.consent_seen {
            self.consent_seen = true;
            self.consent = yes;
        }
    }
}

/// Whether a form's `consent` value says yes: `yes`, `on` (a checkbox without a value), `true`
/// or `1`, in any case, surrounding whitespace ignored.
pub fn says_yes(value: &str) -> bool {
    let value = value.trim();
    ["yes", "on", "true", "1"].iter().any(|yes| value.eq_ignore_ascii_case(yes))
}

/// The body's kind from `Content-Type`, ignoring parameters and case.
pub fn body_kind(req: &HttpRequest) -> Result<BodyKind, BodyError> {
    let value = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "application/x-www-form-urlencoded" => Ok(BodyKind::UrlEncoded),
        "multipart/form-data" => Ok(BodyKind::Multipart),
        "application/json" => Ok(BodyKind::Json),
        _ => Err(BodyError::UnsupportedMediaType),
    }
}

/// Reads at most `limit` bytes; a larger body (declared or actual) is refused without reading it all.
pub async fn read_limited(req: &HttpRequest, mut payload: web::Payload, limit: usize) -> Result<Bytes, BodyError> {
    let declared =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut body = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|error| match error {
            PayloadError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => BodyError::TimedOut,
            _ => BodyError::Malformed,
        })?;
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

pub async fn parse(kind: BodyKind, req: &HttpRequest, body: Bytes) -> Result<SignupFields, BodyError> {
    match kind {
        BodyKind::UrlEncoded => parse_urlencoded(&body),
        BodyKind::Json => parse_json(&body),
        BodyKind::Multipart => parse_multipart(req, body).await,
    }
}

/// The fields of an urlencoded or multipart body, in order; JSON is not a form here.
pub async fn form_fields(kind: BodyKind, req: &HttpRequest, body: Bytes) -> Result<Vec<(String, String)>, BodyError> {
    match kind {
        BodyKind::UrlEncoded => {
            let fields: Vec<(String, String)> = url::form_urlencoded::parse(&body)
                .take(MAX_FIELDS + 1)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            if fields.len() > MAX_FIELDS { Err(BodyError::Malformed) } else { Ok(fields) }
        }
        BodyKind::Multipart => multipart_fields(req, body).await,
        BodyKind::Json => Err(BodyError::UnsupportedMediaType),
    }
}

/// The urlencoded or multipart fields of a small form body; `None` if unreadable.
pub async fn read_form(req: &HttpRequest, payload: web::Payload, limit: usize) -> Option<Vec<(String, String)>> {
    let kind = body_kind(req).ok().filter(|kind| *kind != BodyKind::Json)?;
    let body = read_limited(req, payload, limit).await.ok()?;
    form_fields(kind, req, body).await.ok()
}

/// How far a request body has been read, as seen by [`body_deadline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyProgress {
    Reading,
    Complete,
    TimedOut,
}

/// Middleware: every request body must be complete within `server.request_timeout` of its head,
/// or the answer is `408` and the connection is closed (the module documentation has the rules).
pub async fn body_deadline(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let timeout = req.app_data::<web::Data<AppState>>().map(|state| state.config.server.request_timeout);
    let (_, payload) = req.parts_mut();
    let (Some(timeout), false) = (timeout, matches!(payload, Payload::None)) else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    let held = Rc::new(RefCell::new(payload.take()));
    let progress = Rc::new(Cell::new(BodyProgress::Reading));
    req.set_payload(Payload::from(within(held.clone(), timeout, progress.clone())));
    let json_client = req.path() == "/api/signup" && wants_json(req.request());
    let operator_api = req.path().starts_with("/api/v1/");

    let response = next.call(req).await?;
    let response = match progress.get() {
        BodyProgress::Complete => return Ok(response.map_into_boxed_body()),
        BodyProgress::TimedOut => {
            tracing::debug!(timeout_secs = timeout.as_secs(), "request body not complete in time; answered 408");
            if operator_api {
                // The API's own 408, JSON like its every other error; only the connection closes.
                let mut response = response.map_into_boxed_body();
                response.response_mut().head_mut().set_connection_type(ConnectionType::Close);
                response
            } else {
                request_timeout(response, json_client)
            }
        }
        BodyProgress::Reading => {
            // Answered before the body was read to its end: the rest is never waited for.
            let mut response = response.map_into_boxed_body();
            response.response_mut().head_mut().set_connection_type(ConnectionType::Close);
            response
        }
    };
    // actix closes a connection whose unread body is still held when the answer has been sent,
    // but reads a dropped chunked body to its end, with no deadline: the answer holds it.
    Ok(response.map_body(|_, body| HoldingPayload { body, _payload: held }.boxed()))
}

/// `payload`, ending with an error once `timeout` has passed; `progress` tells how it ended.
/// The payload is shared, so that [`body_deadline`] can keep what was not read.
fn within(
    payload: Rc<RefCell<Payload>>,
    timeout: Duration,
    progress: Rc<Cell<BodyProgress>>,
) -> Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> {
    let deadline = tokio::time::Instant::now() + timeout;
    Box::pin(futures_util::stream::unfold(payload, move |payload| {
        let progress = progress.clone();
        async move {
            if progress.get() != BodyProgress::Reading {
                return None;
            }
            let next = futures_util::future::poll_fn(|cx| payload.borrow_mut().poll_next_unpin(cx));
            match tokio::time::timeout_at(deadline, next).await {
                Ok(Some(chunk)) => Some((chunk, payload)),
                Ok(None) => {
                    progress.set(BodyProgress::Complete);
                    None
                }
                Err(_) => {
                    progress.set(BodyProgress::TimedOut);
                    Some((Err(PayloadError::Io(std::io::ErrorKind::TimedOut.into())), payload))
                }
            }
        }
    }))
}

/// A response body that keeps the request's unread payload alive until the body has been sent.
struct HoldingPayload {
    body: BoxBody,
    _payload: Rc<RefCell<Payload>>,
}

impl MessageBody for HoldingPayload {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_next(cx)
    }
}

/// The `408` that replaces a handler's answer to a body that timed out.
fn request_timeout(
    handled: ServiceResponse<impl MessageBody + 'static>,
    json_client: bool,
) -> ServiceResponse<BoxBody> {
    let (req, handled) = handled.into_parts();
    let mut answer = HttpResponse::RequestTimeout();
    answer.force_close();
    for name in [header::ACCESS_CONTROL_ALLOW_ORIGIN, header::VARY] {
        if let Some(value) = handled.headers().get(&name) {
            answer.insert_header((name, value.clone()));
        }
    }
    let answer = if json_client {
        answer.json(serde_json::json!({"ok": false, "error": "request_timeout"}))
    } else {
        // One line of plain text in the request's language (its body, and any `lang` field in
        // it, never arrived): the `lang` parameter, else `Accept-Language`.
        let language = req
            .app_data::<web::Data<AppState>>()
            .map_or_else(Language::english, |state| request_language(&state.config, &req));
        answer
            .content_type("text/plain; charset=utf-8")
            .insert_header((header::CONTENT_LANGUAGE, language.code()))
            .body(language.messages().errors.timeout.to_string())
    };
    ServiceResponse::new(req, answer)
}

/// Whether the client of a signup gets JSON: it asks for it, or it sent JSON.
fn wants_json(req: &HttpRequest) -> bool {
    accepts_json(req) || body_kind(req) == Ok(BodyKind::Json)
}

/// Whether any `Accept` header of the request names `application/json`.
pub fn accepts_json(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(header::ACCEPT)
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.to_ascii_lowercase().contains("application/json"))
}

/// Who sent the request (behind the trusted proxies): the client's own network and its
/// neighbourhood.
pub fn client_of(req: &HttpRequest, config: &Config) -> (ClientNet, Neighbourhood) {
    let peer = req.peer_addr().map(|addr| addr.ip()).unwrap_or(std::net::Ipv4Addr::UNSPECIFIED.into());
    let ip = client_ip(peer, req.headers(), &config.server);
    (
        ClientNet::of(ip, config.server.ipv6_prefix),
        Neighbourhood::of(ip, config.signup.network_prefix_v4, config.signup.network_prefix_v6),
    )
}

/// The first value of `name` in the request's query string.
pub fn query_param(req: &HttpRequest, name: &str) -> Option<String> {
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// Every value of the query parameter `name`, in order.
pub fn query_params(req: &HttpRequest, name: &str) -> Vec<String> {
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .take(MAX_FIELDS)
        .filter(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
        .collect()
}

/// The `list` query parameter, if present.
pub fn list_param(req: &HttpRequest) -> Option<String> {
    query_param(req, "list")
}

/// The browser's `Accept-Language`, if it sent one that reads as text.
pub fn accept_language(req: &HttpRequest) -> Option<&str> {
    req.headers().get(actix_web::http::header::ACCEPT_LANGUAGE).and_then(|value| value.to_str().ok())
}

/// The language a page of `list` speaks to this request: its `lang` query parameter (the links
/// signupd makes carry it), else `Accept-Language`, each among the list's languages, else the
/// list's `language`.
pub fn page_language(req: &HttpRequest, list: &ListConfig) -> Language {
    list.visitor_language(query_param(req, "lang").as_deref(), accept_language(req))
}

/// The language of an answer that no row and no list speaks for: the only list's
/// [`page_language`]; with several lists, the `lang` parameter, else `Accept-Language`, among
/// the languages of every list, else the first list's `language` ([`Config::visitor_language`]).
pub fn request_language(config: &Config, req: &HttpRequest) -> Language {
    match config.default_list() {
        Some(list) => page_language(req, list),
        None => config.visitor_language(query_param(req, "lang").as_deref(), accept_language(req)),
    }
}

/// The first value of `name` among `fields`.
pub fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
}

/// Percent-decoded bytes that are not UTF-8 become U+FFFD, which no valid address contains,
/// so they end as `invalid_email` rather than a parse error.
fn parse_urlencoded(body: &[u8]) -> Result<SignupFields, BodyError> {
    let mut fields = SignupFields::default();
    for (count, (name, value)) in url::form_urlencoded::parse(body).enumerate() {
        if count >= MAX_FIELDS {
            return Err(BodyError::Malformed);
        }
        fields.set(&name, value.into_owned());
    }
    Ok(fields)
}

fn parse_json(body: &[u8]) -> Result<SignupFields, BodyError> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|_| BodyError::Malformed)?;
    let object = value.as_object().ok_or(BodyError::Malformed)?;
    if object.len() > MAX_FIELDS {
        return Err(BodyError::Malformed);
    }
    let mut fields = SignupFields::default();
    for (name, value) in object {
        match (name.as_str(), value) {
            ("consent", serde_json::Value::Bool(consented)) => fields.set_consent(*consented),
            ("consent", serde_json::Value::Number(number)) => fields.set_consent(number.as_u64() == Some(1)),
            // An array or object is no answer to a yes-or-no question.
            ("consent", serde_json::Value::Array(_) | serde_json::Value::Object(_)) => fields.set_consent(false),
            (_, serde_json::Value::String(text)) => fields.set(name, text.clone()),
            // The repeated fields may be arrays, of strings.
            ("list" | "tags", serde_json::Value::Array(items)) => {
                for item in items {
                    match item {
                        serde_json::Value::String(text) => fields.set(name, text.clone()),
                        other => fields.set(name, format!("\u{FFFD}{other}")),
                    }
                }
            }
            // A number or object where a string belongs reads as a value no check accepts.
            (_, serde_json::Value::Null) => {}
            (_, other) => fields.set(name, format!("\u{FFFD}{other}")),
        }
    }
    Ok(fields)
}

async fn parse_multipart(req: &HttpRequest, body: Bytes) -> Result<SignupFields, BodyError> {
    let mut fields = SignupFields::default();
    for (name, value) in multipart_fields(req, body).await? {
        fields.set(&name, value);
    }
    Ok(fields)
}

async fn multipart_fields(req: &HttpRequest, body: Bytes) -> Result<Vec<(String, String)>, BodyError> {
    let content_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let boundary = multer::parse_boundary(content_type).map_err(|_| BodyError::Malformed)?;
    let stream = futures_util::stream::once(async move { Ok::<Bytes, std::io::Error>(body) });
    let mut multipart = multer::Multipart::new(stream, boundary);
    let mut fields = Vec::new();
    while let Some(field) = multipart.next_field().await.map_err(|_| BodyError::Malformed)? {
        if fields.len() >= MAX_FIELDS {
            return Err(BodyError::Malformed);
        }
        let name = field.name().unwrap_or_default().to_owned();
        let bytes = field.bytes().await.map_err(|_| BodyError::Malformed)?;
        fields.push((name, String::from_utf8_lossy(&bytes).into_owned()));
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlencoded_first_value_wins_and_unknown_fields_are_ignored() {
        let fields = parse_urlencoded(b"email=a%40b.com&email=c%40d.com&consent=yes&x=1").unwrap();
        assert_eq!(fields.email.as_deref(), Some("a@b.com"));
        assert!(fields.consent);
    }

    #[test]
    fn consent_says_yes_only_with_a_yes() {
        for yes in ["yes", "on", "true", "1", "YES", "On", "TRUE", " yes ", "\tyes\n"] {
            assert!(says_yes(yes), "{yes:?} says yes");
        }
        for no in ["", " ", "no", "false", "0", "off", "y", "ja", "yes please", "1.0", "01", "\u{FFFD}"] {
            assert!(!says_yes(no), "{no:?} does not say yes");
        }
    }

    #[test]
    fn the_first_consent_field_counts() {
        assert!(!parse_urlencoded(b"consent=no&consent=yes").unwrap().consent);
        assert!(parse_urlencoded(b"consent=yes&consent=no").unwrap().consent);
        assert!(!parse_urlencoded(b"consent=&consent=yes").unwrap().consent);
    }

    #[test]
    fn list_and_tags_may_be_repeated_or_arrays() {
        let form = parse_urlencoded(b"list=a&list=b&tags=x&tags=y&source=s&source=t").unwrap();
        assert_eq!(form.lists, ["a", "b"]);
        assert_eq!(form.tags, ["x", "y"]);
        assert_eq!(form.source.as_deref(), Some("s"));
        let json = parse_json(br#"{"list":["a","b"],"tags":["x",1],"source":"s"}"#).unwrap();
        assert_eq!(json.lists, ["a", "b"]);
        assert_eq!(json.tags, ["x", "\u{FFFD}1"]);
        assert_eq!(parse_json(br#"{"list":"a","tags":"x"}"#).unwrap().lists, ["a"]);
    }

    #[test]
    fn too_many_fields_are_malformed() {
        let body = "a=1&".repeat(MAX_FIELDS + 1);
        assert_eq!(parse_urlencoded(body.as_bytes()).err(), Some(BodyError::Malformed));
    }

    #[test]
    fn json_consent_may_be_true_or_a_string() {
        assert!(parse_json(br#"{"email":"a@b.com","consent":true}"#).unwrap().consent);
        assert!(parse_json(br#"{"consent":"yes"}"#).unwrap().consent);
        assert!(!parse_json(br#"{"consent":false}"#).unwrap().consent);
        assert!(!parse_json(br#"{"consent":""}"#).unwrap().consent);
        assert!(parse_json(br#"{"consent":1}"#).unwrap().consent);
        assert!(parse_json(br#"{"consent":" True "}"#).unwrap().consent);
        for refused in [r#"0"#, r#"2"#, r#"1.0"#, r#"-1"#, r#"null"#, r#"[true]"#, r#"{"yes":true}"#, r#""no""#] {
            let body = format!(r#"{{"consent":{refused}}}"#);
            assert!(!parse_json(body.as_bytes()).unwrap().consent, "consent {refused}");
        }
        assert_eq!(parse_json(b"[1,2]").err(), Some(BodyError::Malformed));
        assert_eq!(parse_json(b"{\"email\":\"\xff\"}").err(), Some(BodyError::Malformed));
    }
}
