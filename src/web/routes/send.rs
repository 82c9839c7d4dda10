//! Surge mode's second step (`docs/http-api.md`, `docs/operations.md` "Under attack"): while a
//! list is in surge, a signup ends on a page with one button, "Send my confirmation email"
//! (`GET /check-inbox?list=ID&send=TOKEN`), and only `POST /api/send` with that token lets its
//! mail go — first, before the mail nobody asked for. No JavaScript, no timer, no puzzle: a
//! person presses a button, which a flood of plain POSTs never does.
//!
//! The send token is signed (`crate::config::tokens`, purpose `send`): it names the list and the
//! signup's random send id, never the address. The press is idempotent, so a token used twice
//! acts once. A token that is not one (cut, changed, unsigned) is 400 `invalid_token` before
//! any database access; a good token that names nothing (the honeypot's, a confirmed
//! address's), one already used, or one older than `confirm_ttl` gets the same answer as a
//! fresh one and changes nothing.
//!
//! Decisions the reference leaves to the code: the token's list names the check-inbox page the
//! press ends on; a `return_to` given to the signup travels in the page's URL and form and is
//! checked again against that list's `allowed_origins`; the body may be a form or JSON
//! (`{"send": TOKEN}`), with `Accept: application/json` or a JSON body for a JSON answer; the
//! same CORS rules as `POST /api/signup`. The "open your inbox" link is not on this page but on
//! the check-inbox page the press ends on (the page carries the provider's id along): before the
//! press no mail is on its way, and a link away from the button would take people to an empty
//! inbox.

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use url::Url;

use crate::config::presentation::Language;
use crate::config::{Config, ListConfig};
use crate::door::domain_policy::Provider;
use crate::storage::{Batch, Command, intake, outbox};
use crate::web::frame::{Chrome, href};
use crate::web::middleware::csp_with_form_targets;
use crate::web::routes::error_pages;
use crate::web::routes::form::{self, BodyKind};
use crate::web::routes::inbox;
use crate::web::routes::origin::{allowed_return_to, cors_origin, request_origin, with_query};
use crate::web::routes::render::{MessagePage, framed_pages, html};
use crate::web::state::AppState;

framed_pages!(SurgePage);

#[derive(Debug, Template)]
#[template(path = "pages/surge.html")]
struct SurgePage<'a> {
    chrome: Chrome<'a>,
    token: &'a str,
    return_to: Option<&'a str>,
    /// The visitor's webmail provider, which the press carries on to the check-inbox page.
    inbox: Option<&'static str>,
    /// The page's language, which the press carries on too, for a list of several languages.
    lang: Option<&'static str>,
}

/// `GET /check-inbox?list=ID&send=TOKEN`: the page with the button, for a token that is one;
/// `None` for anything else (the plain check-inbox page answers).
pub fn surge_page(req: &HttpRequest, state: &AppState) -> Option<HttpResponse> {
    let token = form::query_param(req, "send")?;
    let claims = state.keyring.verify_send(&token).ok()?;
    let list = state.config.list(&claims.list_id)?;
    let return_to = allowed_return_to(list, form::query_param(req, "return_to").as_deref());
    let language = form::page_language(req, list);
    let page = SurgePage {
        chrome: Chrome::for_list_in(&state.config, list, language),
        lang: list.is_multilingual().then(|| language.code()),
        token: &token,
        return_to: return_to.as_ref().map(Url::as_str),
        inbox: inbox::requested(req).map(|provider| provider.id),
    };
    let mut response = html(StatusCode::OK, &page);
    if let Some(url) = &return_to {
        // The press ends there: the page's `form-action` must allow that origin too.
        let csp = csp_with_form_targets(&[url.origin().ascii_serialization()]);
        if let Ok(value) = header::HeaderValue::from_str(&csp) {
            response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
        }
    }
    Some(response)
}

/// `POST /api/send`.
pub async fn send(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    let config = &state.config;
    let json = form::accepts_json(&req) || form::body_kind(&req) == Ok(BodyKind::Json);
    let cors = cors_origin(config, request_origin(&req).as_ref());
    let fields = match read_fields(&req, payload, config.server.max_body_bytes).await {
        Ok(fields) => fields,
        Err(refusal) => return refuse(config, &req, refusal, json, cors),
    };
    let Some(claims) = form::field(&fields, "send").and_then(|token| state.keyring.verify_send(token).ok()) else {
        return refuse(config, &req, Refusal::InvalidToken, json, cors);
    };
    let Some(list) = config.list(&claims.list_id) else {
        return refuse(config, &req, Refusal::InvalidToken, json, cors);
    };
    let now = state.clock.now();
    let ttl = i64::try_from(config.signup.confirm_ttl.as_secs()).unwrap_or(i64::MAX);
    let live = claims.issued_at <= now && now.saturating_sub(claims.issued_at) <= ttl;
    if live {
        match state.writer.execute(Press { send_id: claims.send_id }).await {
            Ok(pressed) => {
                if pressed > 0 {
                    tracing::info!(list = %list.id, "a visitor pressed to send their confirmation");
                }
            }
            Err(error) => {
                tracing::error!(error = %error, list = %list.id, "a press to send was not stored");
                return refuse(config, &req, Refusal::StorageUnavailable, json, cors);
            }
        }
    }
    let provider = form::field(&fields, "inbox").and_then(Provider::by_id);
    let lang = form::field(&fields, "lang").and_then(|tag| list.served_language(tag));
    answer(config, list, form::field(&fields, "return_to"), (provider, lang), json, cors)
}

/// The one answer of a press, whatever the token named: go and check your inbox.
fn answer(
    config: &Config,
    list: &ListConfig,
    return_to: Option<&str>,
    (provider, lang): (Option<&'static Provider>, Option<Language>),
    json: bool,
    cors: Option<String>,
) -> HttpResponse {
    let mut builder = HttpResponse::build(if json { StatusCode::ACCEPTED } else { StatusCode::SEE_OTHER });
    builder.insert_header((header::VARY, "Origin"));
    if let Some(origin) = cors {
        builder.insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, origin));
    }
    if json {
        return builder.json(serde_json::json!({"ok": true, "next": "confirm_email"}));
    }
    let inbox: Vec<(&str, &str)> = provider.map(|provider| ("inbox", provider.id)).into_iter().collect();
    let location = match allowed_return_to(list, return_to) {
        Some(url) => with_query(&url, &[[("signup", "check-inbox")].as_slice(), &inbox].concat()),
        None => {
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("list", list.id.as_ref())
                .extend_pairs(lang.filter(|_| list.is_multilingual()).map(|language| ("lang", language.code())))
                .extend_pairs(inbox)
                .finish();
            href(config, &format!("/check-inbox?{query}"))
        }
    };
    builder.insert_header((header::LOCATION, location)).finish()
}

/// Any other method on `/api/send`.
pub async fn method_not_allowed(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let json = form::accepts_json(&req);
    let mut response = refuse(&state.config, &req, Refusal::MethodNotAllowed, json, None);
    response.headers_mut().insert(header::ALLOW, header::HeaderValue::from_static("POST, OPTIONS"));
    response
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    MethodNotAllowed,
    UnsupportedMediaType,
    PayloadTooLarge,
    InvalidToken,
    StorageUnavailable,
}

impl Refusal {
    fn status(self) -> StatusCode {
        match self {
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::InvalidToken => StatusCode::BAD_REQUEST,
            Self::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn code(self) -> &'static str {
        match self {
            Self::MethodNotAllowed => "method_not_allowed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::PayloadTooLarge => "payload_too_large",
            Self::InvalidToken => "invalid_token",
            Self::StorageUnavailable => "storage_unavailable",
        }
    }
}

/// A refusal: its JSON code for a JSON client, else a page in the request's language (no row
/// speaks for a press that is refused).
fn refuse(config: &Config, req: &HttpRequest, refusal: Refusal, json: bool, cors: Option<String>) -> HttpResponse {
    let mut response = if json {
        HttpResponse::build(refusal.status()).json(serde_json::json!({"ok": false, "error": refusal.code()}))
    } else {
        let chrome = error_pages::visitor_chrome(config, req, None);
        match refusal {
            Refusal::InvalidToken => error_pages::incomplete_link(chrome),
            Refusal::StorageUnavailable => {
                error_pages::storage_unavailable(chrome, &anyhow::anyhow!("a press to send was not stored"))
            }
            _ => {
                let t = chrome.t;
                html(refusal.status(), &MessagePage::new(chrome, &t.errors.refused_title, &t.errors.refused))
            }
        }
    };
    if refusal == Refusal::StorageUnavailable {
        response = error_pages::retry_storage_later(response);
    }
    response.headers_mut().insert(header::VARY, header::HeaderValue::from_static("Origin"));
    if let Some(value) = cors.and_then(|origin| header::HeaderValue::from_str(&origin).ok()) {
        response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, value);
    }
    response
}

/// The body's fields: a form (urlencoded or multipart) or a JSON object of strings.
async fn read_fields(req: &HttpRequest, payload: web::Payload, limit: usize) -> Result<Vec<(String, String)>, Refusal> {
    let kind = form::body_kind(req).map_err(|_| Refusal::UnsupportedMediaType)?;
    let body = form::read_limited(req, payload, limit).await.map_err(|error| match error {
        form::BodyError::TooLarge => Refusal::PayloadTooLarge,
        _ => Refusal::InvalidToken,
    })?;
    if kind != BodyKind::Json {
        return form::form_fields(kind, req, body).await.map_err(|_| Refusal::InvalidToken);
    }
    let value: serde_json::Value = serde_json::from_slice(&body).map_err(|_| Refusal::InvalidToken)?;
    let object = value.as_object().ok_or(Refusal::InvalidToken)?;
    Ok(object.iter().filter_map(|(key, value)| value.as_str().map(|value| (key.clone(), value.to_owned()))).collect())
}

/// The press, in one writer command: the signup's items still waiting for the intake worker
/// are marked pressed, and the confirmations it was already queued into are released and go
/// first. Returns how many items it found (0 for a token that names nothing, or already sent).
#[derive(Debug)]
struct Press {
    send_id: i64,
}

impl Command for Press {
    type Output = usize;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<usize> {
        let conn = batch.conn();
        Ok(intake::press(conn, self.send_id)? + outbox::press(conn, self.send_id)?)
    }
}
