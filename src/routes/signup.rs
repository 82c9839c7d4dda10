//! Signing up (`docs/http-api.md`): the hosted form (`GET /`, `GET /signup?list=ID`), `POST
//! /api/signup` with its CORS preflight, and "check your inbox" (`GET /check-inbox?list=ID`), where
//! a successful signup from a browser ends. The pages answer GET and HEAD and never write; with
//! several lists and none named, `GET /` offers a choice of lists.
//!
//! `POST /api/signup` checks in the contract's order, cheapest first; nothing is written before
//! step 6:
//!
//! 1. method (405 with `Allow`), content type (415), body size (413);
//! 2. `Origin` against the list's `allowed_origins` (403 `origin_not_allowed`);
//! 3. the honeypot: the normal success answer, nothing saved;
//! 4. email (400 `invalid_email`), consent (400 `consent_required`), list (400 `unknown_list`),
//!    then the address's domain ([`crate::domain_policy`]): blocked (400 `domain_not_allowed`),
//!    and with `check_mx`, no mail records (400 `invalid_email`);
//! 5. and 6. the rate limits of the client and of its neighbourhood (429 `rate_limited`) and
//!    the durable record, one command in the writer's group commit
//!    ([`crate::signup::record`]); 503 `storage_unavailable` if SQLite cannot write.
//!
//! Decisions the reference leaves to the code: a body that cannot be read (bad JSON, a JSON value that is
//! not an object, more than 100 fields) is 400 `invalid_request`; 405, 413 and 415 use the codes
//! `method_not_allowed`, `payload_too_large` and `unsupported_media_type`. An unparsable
//! `Origin` counts as absent, like `null`. A list without `allowed_origins` accepts posts from
//! any origin (the contract checks origins only for lists that name them). `return_to` must be
//! an absolute http(s) URL whose origin is in the list's `allowed_origins`; otherwise it is
//! ignored.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, web};
use askama::Template;
use url::Url;

use crate::config::{Config, ListConfig};
use crate::domain::EmailAddress;
use crate::domain_policy::Verdict;
use crate::frame::Chrome;
use crate::presentation::{Language, Messages, Text};
use crate::ratelimit::{ClientNet, Neighbourhood, client_ip};
use crate::routes::error_pages;
use crate::routes::form::{self as body, BodyError, BodyKind};
use crate::routes::render::html;
use crate::signup::{IntakeOutcome, SignupRequest};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "pages/signup.html")]
struct SignupPage<'a> {
    chrome: Chrome<'a>,
    list: &'a ListConfig,
    /// The address the visitor typed, shown again after an error (escaped by askama).
    email: &'a str,
    error: Option<&'a str>,
}

impl std::fmt::Debug for SignupPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignupPage").field("list", &self.list.id).finish_non_exhaustive()
    }
}

#[derive(Debug, Template)]
#[template(path = "pages/lists.html")]
struct ListsPage<'a> {
    chrome: Chrome<'a>,
    lists: &'a [ListConfig],
}

#[derive(Debug, Template)]
#[template(path = "pages/check_inbox.html")]
struct CheckInboxPage<'a> {
    chrome: Chrome<'a>,
    list_name: Option<&'a str>,
}

/// Every way a signup can be refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    MethodNotAllowed,
    UnsupportedMediaType,
    PayloadTooLarge,
    RequestTimeout,
    InvalidRequest,
    OriginNotAllowed,
    InvalidEmail,
    ConsentRequired,
    UnknownList,
    DomainNotAllowed,
    RateLimited { retry_after_secs: u64 },
    StorageUnavailable,
}

impl Refusal {
    fn status(self) -> StatusCode {
        match self {
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::InvalidRequest
            | Self::InvalidEmail
            | Self::ConsentRequired
            | Self::UnknownList
            | Self::DomainNotAllowed => StatusCode::BAD_REQUEST,
            Self::OriginNotAllowed => StatusCode::FORBIDDEN,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn code(self) -> &'static str {
        match self {
            Self::MethodNotAllowed => "method_not_allowed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::PayloadTooLarge => "payload_too_large",
            Self::RequestTimeout => "request_timeout",
            Self::InvalidRequest => "invalid_request",
            Self::OriginNotAllowed => "origin_not_allowed",
            Self::InvalidEmail => "invalid_email",
            Self::ConsentRequired => "consent_required",
            Self::UnknownList => "unknown_list",
            Self::DomainNotAllowed => "domain_not_allowed",
            Self::RateLimited { .. } => "rate_limited",
            Self::StorageUnavailable => "storage_unavailable",
        }
    }

    /// The plain-language message on the re-rendered form, in the list's language.
    fn message(self, t: &'static Messages) -> &'static Text {
        let s = &t.signup;
        match self {
            Self::MethodNotAllowed | Self::InvalidRequest | Self::RequestTimeout => &s.unreadable,
            Self::UnsupportedMediaType => &s.unsupported,
            Self::PayloadTooLarge => &s.too_large,
            Self::OriginNotAllowed => &s.origin_not_allowed,
            Self::InvalidEmail => &s.invalid_email,
            Self::ConsentRequired => &s.consent_required,
            Self::UnknownList => &s.unknown_list,
            Self::DomainNotAllowed => &s.domain_not_allowed,
            Self::RateLimited { .. } => &s.rate_limited,
            Self::StorageUnavailable => &s.storage_unavailable,
        }
    }

    fn retry_after(self) -> Option<u64> {
        match self {
            Self::RateLimited { retry_after_secs } => Some(retry_after_secs),
            Self::StorageUnavailable => Some(error_pages::STORAGE_RETRY_AFTER_SECS),
            _ => None,
        }
    }
}

/// How to answer this request: JSON or HTML, where to return to, which CORS origin to allow.
struct Answer<'a> {
    config: &'a Config,
    json: bool,
    list: Option<&'a ListConfig>,
    return_to: Option<Url>,
    cors_origin: Option<String>,
}

impl Answer<'_> {
    fn builder(&self, status: StatusCode) -> HttpResponseBuilder {
        let mut builder = HttpResponse::build(status);
        builder.insert_header((header::VARY, "Origin"));
        if let Some(origin) = &self.cors_origin {
            builder.insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.as_str()));
        }
        builder
    }

    /// The list label of the signup metric: a configured list id or `none`.
    fn list_label(&self) -> String {
        self.list.map_or_else(|| "none".to_owned(), |list| list.id.as_ref().to_owned())
    }

    /// The one success answer, identical for every state of the address.
    fn success(&self) -> HttpResponse {
        crate::metrics::signup(self.list_label(), "accepted");
        self.success_answer()
    }

    /// What a filled honeypot gets: the success answer, counted apart.
    fn honeypot(&self) -> HttpResponse {
        crate::metrics::signup(self.list_label(), "honeypot");
        self.success_answer()
    }

    fn success_answer(&self) -> HttpResponse {
        if self.json {
            return self.builder(StatusCode::ACCEPTED).json(serde_json::json!({"ok": true, "next": "confirm_email"}));
        }
        let location = match &self.return_to {
            Some(url) => with_query(url, &[("signup", "check-inbox")]),
            None => match self.list {
                Some(list) => crate::frame::href(self.config, &format!("/check-inbox?list={}", list.id)),
                None => crate::frame::href(self.config, "/check-inbox"),
            },
        };
        self.builder(StatusCode::SEE_OTHER).insert_header((header::LOCATION, location)).finish()
    }

    fn refuse(&self, refusal: Refusal, typed_email: &str) -> HttpResponse {
        crate::metrics::signup(self.list_label(), refusal.code());
        let mut builder = self.builder(refusal.status());
        if let Some(seconds) = refusal.retry_after() {
            builder.insert_header((header::RETRY_AFTER, seconds.to_string()));
        }
        if refusal == Refusal::MethodNotAllowed {
            builder.insert_header((header::ALLOW, "POST, OPTIONS"));
        }
        if self.json {
            return builder.json(serde_json::json!({"ok": false, "error": refusal.code()}));
        }
        if let Some(url) = &self.return_to {
            let location = with_query(url, &[("signup", "error"), ("reason", refusal.code())]);
            let mut redirect = self.builder(StatusCode::SEE_OTHER);
            return redirect.insert_header((header::LOCATION, location)).finish();
        }
        let Some(list) = self.list.or_else(|| self.config.default_list()).or(self.config.lists.first()) else {
            let english = Language::english().messages();
            return builder.content_type("text/plain; charset=utf-8").body(refusal.message(english).to_string());
        };
        let chrome = Chrome::for_list(self.config, list);
        let message = refusal.message(chrome.t).to_string();
        let page = html(refusal.status(), &SignupPage { chrome, list, email: typed_email, error: Some(&message) });
        // Keep the status, Retry-After, Allow and CORS headers decided above.
        let mut response = builder.content_type("text/html; charset=utf-8").body(page.into_body());
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// `url` with `pairs` appended to its query, keeping what it had.
fn with_query(url: &Url, pairs: &[(&str, &str)]) -> String {
    let mut url = url.clone();
    url.query_pairs_mut().extend_pairs(pairs);
    url.to_string()
}

/// The request's `Origin` as a serialised origin; `null`, absent and unparsable are `None`.
fn request_origin(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::ORIGIN)?.to_str().ok()?;
    let url = Url::parse(value).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    Some(url.origin().ascii_serialization())
}

fn public_origin(config: &Config) -> String {
    config.server.public_url.origin().ascii_serialization()
}

/// The origin of a page that may read answers with `fetch`: one in any list's `allowed_origins`.
fn cors_origin(config: &Config, origin: Option<&String>) -> Option<String> {
    let origin = origin?;
    config.lists.iter().any(|list| list.allowed_origins.contains(origin)).then(|| origin.clone())
}

/// `return_to`, if its origin is one the list allows. Never an open redirect: relative URLs,
/// `//host`, `javascript:` and other origins are all ignored.
fn allowed_return_to(list: &ListConfig, return_to: Option<&str>) -> Option<Url> {
    let url = Url::parse(return_to?).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    list.allowed_origins.contains(&url.origin().ascii_serialization()).then_some(url)
}

/// The empty form of `list`.
fn empty_form(config: &Config, list: &ListConfig) -> HttpResponse {
    html(StatusCode::OK, &SignupPage { chrome: Chrome::for_list(config, list), list, email: "", error: None })
}

/// `GET /`: the form of the only list, or a choice of lists.
pub async fn index(state: web::Data<AppState>) -> HttpResponse {
    let config = &state.config;
    match config.default_list() {
        Some(list) => empty_form(config, list),
        None => html(StatusCode::OK, &ListsPage { chrome: Chrome::general(config), lists: &config.lists }),
    }
}

/// `GET /signup?list=ID`.
pub async fn signup_form(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let Some(id) = body::list_param(&req) else {
        return index(state).await;
    };
    match state.config.list(&id) {
        Some(list) => empty_form(&state.config, list),
        None => error_pages::not_found(&state.config),
    }
}

/// `POST /api/signup`.
pub async fn signup(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    let config = &state.config;
    let origin = request_origin(&req);
    let mut answer = Answer {
        config,
        json: body::accepts_json(&req),
        list: None,
        return_to: None,
        cors_origin: cors_origin(config, origin.as_ref()),
    };

    // 1. Content type and size.
    let kind = match body::body_kind(&req) {
        Ok(kind) => kind,
        Err(_) => return answer.refuse(Refusal::UnsupportedMediaType, ""),
    };
    answer.json |= kind == BodyKind::Json;
    let fields = match body::read_limited(&req, payload, config.server.max_body_bytes).await {
        Ok(bytes) => body::parse(kind, &req, bytes).await,
        Err(error) => Err(error),
    };
    let fields = match fields {
        Ok(fields) => fields,
        Err(BodyError::TooLarge) => return answer.refuse(Refusal::PayloadTooLarge, ""),
        Err(BodyError::UnsupportedMediaType) => return answer.refuse(Refusal::UnsupportedMediaType, ""),
        Err(BodyError::Malformed) => return answer.refuse(Refusal::InvalidRequest, ""),
        // `form::body_deadline` turns this into the 408; the refusal counts it as what it is.
        Err(BodyError::TimedOut) => return answer.refuse(Refusal::RequestTimeout, ""),
    };
    let typed_email = fields.email.as_deref().unwrap_or("");
    answer.list = match fields.list.as_deref() {
        Some(id) => config.list(id),
        None => config.default_list(),
    };
    answer.return_to = answer.list.and_then(|list| allowed_return_to(list, fields.return_to.as_deref()));

    // 2. Origin.
    if let (Some(origin), Some(list)) = (&origin, answer.list)
        && !list.allowed_origins.is_empty()
        && *origin != public_origin(config)
        && !list.allowed_origins.contains(origin)
    {
        return answer.refuse(Refusal::OriginNotAllowed, typed_email);
    }

    // 3. The honeypot: a bot gets what a person would get, and nothing is saved.
    if fields.website.as_deref().is_some_and(|value| !value.is_empty()) {
        tracing::debug!("honeypot filled; answered as success, nothing saved");
        return answer.honeypot();
    }

    // 4. The fields themselves.
    let Ok(email) = EmailAddress::parse(typed_email) else {
        return answer.refuse(Refusal::InvalidEmail, typed_email);
    };
    if !fields.consent {
        return answer.refuse(Refusal::ConsentRequired, typed_email);
    }
    let Some(list) = answer.list else {
        return answer.refuse(Refusal::UnknownList, typed_email);
    };
    // The domain last: the DNS is the slowest check of the step, and none of it depends on
    // what the database knows about the address.
    if state.domains.is_blocked(email.domain()) {
        return answer.refuse(Refusal::DomainNotAllowed, typed_email);
    }
    if state.domains.mail_verdict(email.domain()).await == Verdict::NoMail {
        return answer.refuse(Refusal::InvalidEmail, typed_email);
    }

    // 5. and 6. Rate limit and durable record, in one group commit; answer after it.
    let peer = req.peer_addr().map(|addr| addr.ip()).unwrap_or(std::net::Ipv4Addr::UNSPECIFIED.into());
    let ip = client_ip(peer, req.headers(), &config.server);
    let client = ClientNet::of(ip, config.server.ipv6_prefix);
    let network = Neighbourhood::of(ip, config.signup.network_prefix_v4, config.signup.network_prefix_v6);
    let request = SignupRequest { list_id: list.id.clone(), email, client, network };
    match crate::signup::record(&state, request).await {
        Ok(IntakeOutcome::Accepted) => answer.success(),
        Ok(IntakeOutcome::RateLimited { retry_after_secs }) => {
            answer.refuse(Refusal::RateLimited { retry_after_secs }, typed_email)
        }
        Err(error) => {
            tracing::error!(error = %error, list = %list.id, "signup not stored");
            answer.refuse(Refusal::StorageUnavailable, typed_email)
        }
    }
}

/// `OPTIONS /api/signup`: the CORS preflight for pages on an allowed origin. Other origins get
/// an answer without CORS headers, which the browser treats as a refusal.
pub async fn preflight(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let mut response = HttpResponse::NoContent();
    response.insert_header((header::ALLOW, "POST, OPTIONS")).insert_header((header::VARY, "Origin"));
    if let Some(origin) = cors_origin(&state.config, request_origin(&req).as_ref()) {
        response
            .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, origin))
            .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, "POST"))
            .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, "Content-Type, Accept"))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, "86400"));
    }
    response.finish()
}

/// Any other method on `/api/signup`.
pub async fn method_not_allowed(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let answer = Answer {
        config: &state.config,
        json: body::accepts_json(&req),
        list: None,
        return_to: None,
        cors_origin: None,
    };
    answer.refuse(Refusal::MethodNotAllowed, "")
}

/// `GET /check-inbox?list=ID`: the same page for every address.
pub async fn check_inbox(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list = body::list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = Chrome::for_optional(&state.config, list);
    html(StatusCode::OK, &CheckInboxPage { chrome, list_name: list.map(|list| list.name.as_str()) })
}
