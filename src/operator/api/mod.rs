//! The operator's API under `/api/v1/` (`docs/http-api.md`, "Operator API";
//! `docs/openapi.yaml`) and the admin page on the metrics listener (`admin`). Both answer only
//! to a configured `[[api_tokens]]` entry ([`crate::web::api_tokens`]); with none configured,
//! `/api/v1/` is not served at all (every path 404) and neither is `/admin`.
//!
//! Every call goes through [`authorize`], in this order: the token (`Authorization: Bearer`;
//! missing, malformed or wrong is `401` with `WWW-Authenticate: Bearer` and nothing else, or
//! `429` once the client's failed authentications fill their window, [`limits`]), the token's
//! window, the scope (`403`, audited). A valid token never meets the client's failures: tools
//! share egress addresses. Then the endpoint does what the matching command does —
//! the same functions of [`crate::operator`] and [`crate::subscribers::subscription`] — through the server's
//! own readers and writer, and appends its audit entry (actor: the token's name). A read is
//! answered only once its entry is written; a change's entry is written right after the change.
//!
//! - `subscribers.rs`: `GET` and `DELETE /api/v1/subscribers`, `POST /api/v1/suppressions`.
//! - `export.rs`: `GET /api/v1/export` (streamed JSON lines) and `GET /api/v1/stats`.
//! - `import.rs`: `POST /api/v1/import` (JSON lines, as `signupd import`).
//! - [`limits`]: the windows.
//!
//! Answers are JSON. An error is `{"ok": false, "error": CODE, "message": TEXT}`, where the text
//! never repeats an address, a token or a query string.

pub mod limits;

mod export;
mod import;
mod subscribers;

use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::DefaultHeaders;
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};

use crate::config::Scope;
use crate::domain::EmailAddress;
use crate::operator::audit;
use crate::storage::audit::Entry;
use crate::web::api_tokens::ApiToken;
use crate::web::routes::form::{BodyError, client_of};
use crate::web::state::AppState;
use limits::Limits;

/// Registers `/api/v1/` when `enabled` (at least one `[[api_tokens]]` entry).
pub fn configure(cfg: &mut web::ServiceConfig, enabled: bool) {
    if !enabled {
        return;
    }
    cfg.service(
        web::scope("/api/v1")
            // Answers name addresses: nothing on the way may keep a copy.
            .wrap(DefaultHeaders::new().add((header::CACHE_CONTROL, "no-store")))
            .service(
                web::resource("/subscribers")
                    .route(web::get().to(subscribers::look_up))
                    .route(web::delete().to(subscribers::remove))
                    .default_service(web::to(|| method_not_allowed("GET, DELETE"))),
            )
            .service(
                web::resource("/suppressions")
                    .route(web::post().to(subscribers::suppress))
                    .default_service(web::to(|| method_not_allowed("POST"))),
            )
            .service(
                web::resource("/export")
                    .route(web::get().to(export::export))
                    .default_service(web::to(|| method_not_allowed("GET"))),
            )
            .service(
                web::resource("/stats")
                    .route(web::get().to(export::stats))
                    .default_service(web::to(|| method_not_allowed("GET"))),
            )
            .service(
                web::resource("/import")
                    .route(web::post().to(import::import))
                    .default_service(web::to(|| method_not_allowed("POST"))),
            )
            .default_service(web::to(|| async { ApiError::NotFound.error_response() })),
    );
}

/// Why a call was not answered as asked.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("not authenticated")]
    Unauthenticated,
    #[error("this token does not have the {} scope", .0.as_str())]
    Forbidden(Scope),
    #[error("too many requests; try again in {0} s")]
    RateLimited(u64),
    #[error("{1}")]
    BadRequest(&'static str, String),
    #[error("no list with that id is configured")]
    UnknownList,
    #[error("the body is larger than {0} bytes")]
    TooLarge(usize),
    #[error("the body must be {0}")]
    UnsupportedMediaType(&'static str),
    #[error("the request did not arrive in time")]
    Timeout,
    #[error("no such endpoint")]
    NotFound,
    #[error("method not allowed")]
    /// The methods the path allows, for `Allow`.
    MethodNotAllowed(&'static str),
    #[error("the database is unavailable; try again later")]
    Unavailable(#[source] anyhow::Error),
}

impl ApiError {
    fn code(&self) -> &'static str {
        match self {
            Self::Unauthenticated => "unauthorized",
            Self::Forbidden(_) => "forbidden",
            Self::RateLimited(_) => "rate_limited",
            Self::BadRequest(code, _) => code,
            Self::UnknownList => "unknown_list",
            Self::TooLarge(_) => "payload_too_large",
            Self::UnsupportedMediaType(_) => "unsupported_media_type",
            Self::Timeout => "request_timeout",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed(_) => "method_not_allowed",
            Self::Unavailable(_) => "storage_unavailable",
        }
    }

    /// A 400 for a query or body field: `code` and what is wrong, without the value.
    fn bad(code: &'static str, message: impl Into<String>) -> Self {
        Self::BadRequest(code, message.into())
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Unauthenticated => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::RateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::BadRequest(..) | Self::UnknownList => StatusCode::BAD_REQUEST,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Timeout => StatusCode::REQUEST_TIMEOUT,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        match self {
            // Nothing else said: not which part was wrong, not whether tokens exist.
            Self::Unauthenticated => {
                return response.insert_header((header::WWW_AUTHENTICATE, "Bearer realm=\"signupd\"")).finish();
            }
            Self::MethodNotAllowed(allowed) => {
                response.insert_header((header::ALLOW, *allowed));
            }
            Self::RateLimited(seconds) => {
                response.insert_header((header::RETRY_AFTER, HeaderValue::from(*seconds)));
            }
            Self::Unavailable(error) => {
                tracing::error!(error = format!("{error:#}"), "operator API: the database is unavailable");
                response.insert_header((
                    header::RETRY_AFTER,
                    HeaderValue::from(crate::web::routes::STORAGE_RETRY_AFTER_SECS),
                ));
            }
            _ => {}
        }
        response.json(serde_json::json!({"ok": false, "error": self.code(), "message": self.to_string()}))
    }
}

impl From<BodyError> for ApiError {
    fn from(error: BodyError) -> Self {
        match error {
            BodyError::TooLarge => Self::TooLarge(0),
            BodyError::TimedOut => Self::Timeout,
            BodyError::UnsupportedMediaType => Self::UnsupportedMediaType("application/json"),
            _ => Self::bad("invalid_body", "the body cannot be read"),
        }
    }
}

async fn method_not_allowed(allowed: &'static str) -> HttpResponse {
    ApiError::MethodNotAllowed(allowed).error_response()
}

/// Where a call came in: `/api/v1/` or the admin page. The `surface` label of
/// `signupd_api_auth_failures_total`, and the word the log line about failures uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Api,
    Admin,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Api => "api",
            Self::Admin => "admin",
        }
    }
}

/// The caller of one request to `/api/v1/`, checked against the windows and the scope; `action`
/// is the audit log's word for the call, which a `403` is recorded under too.
pub async fn authorize(
    req: &HttpRequest,
    state: &AppState,
    limits: &Limits,
    scope: Scope,
    action: &str,
) -> Result<Arc<ApiToken>, ApiError> {
    let presented =
        req.headers().get(header::AUTHORIZATION).and_then(|value| value.to_str().ok()).and_then(bearer_credentials);
    authorize_presented(req, state, limits, Surface::Api, scope, action, presented).await
}

/// [`authorize`] for a token that came some other way (the admin page's HTTP Basic password).
///
/// The token is checked first. A valid one meets only its own window and the scope: failures
/// from its network are someone else's (automation tools share egress addresses), so they
/// never refuse it. A call without a valid token is counted against its client's failures,
/// `401` until they are full and `429` after, and in `signupd_api_auth_failures_total`; it is
/// not audited (a flood would fill the table), and logged once a minute per client at most.
/// A `403` is audited as `{action}_forbidden`: the token's holder tried what it may not.
pub async fn authorize_presented(
    req: &HttpRequest,
    state: &AppState,
    limits: &Limits,
    surface: Surface,
    scope: Scope,
    action: &str,
    presented: Option<&str>,
) -> Result<Arc<ApiToken>, ApiError> {
    let now = state.clock.now();
    let Some(token) = presented.and_then(|presented| state.api_tokens.authenticate(presented.as_bytes())) else {
        return Err(failed_authentication(req, state, limits, surface, now));
    };
    limits.take_token(token.name(), now).map_err(ApiError::RateLimited)?;
    if !token.allows(scope) {
        record(state, &token, &format!("{action}_forbidden"), None, None, None).await?;
        return Err(ApiError::Forbidden(scope));
    }
    Ok(token)
}

/// Counts a call without a valid token and says how it is answered: `401`, or `429` once its
/// client's failures fill their window.
fn failed_authentication(
    req: &HttpRequest,
    state: &AppState,
    limits: &Limits,
    surface: Surface,
    now: crate::clock::UnixSeconds,
) -> ApiError {
    crate::metrics::api_auth_failure(surface.as_str());
    let (client, _) = client_of(req, &state.config);
    let client = client.to_string();
    let failed = limits.fail(&client, now);
    if failed.log {
        // Principle 4: no IP in the log. The keyed tag tells one client's lines from another's.
        tracing::warn!(
            surface = surface.as_str(),
            client = client_tag(state, &client),
            "operator API: a call without a valid token (a missing, wrong or rotated-out token); further ones \
             from this client within the minute are counted in signupd_api_auth_failures_total, not logged"
        );
    }
    match failed.answer {
        Ok(()) => ApiError::Unauthenticated,
        Err(seconds) => ApiError::RateLimited(seconds),
    }
}

/// A client network's keyed tag for the log: 16 hex digits, the same for the same network
/// while the hash key stays, and no way back to the address.
fn client_tag(state: &AppState, client: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, state.secrets.hash_key.expose());
    let tag = ring::hmac::sign(&key, format!("signupd/api-client/v1\n{client}").as_bytes());
    hex::encode(&tag.as_ref()[..8])
}

/// The credentials of an `Authorization: Bearer …` value: the scheme is case-insensitive (RFC
/// 9110 §11.1), spaces around the token are not part of it.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| credentials.trim())
}

/// Appends the audit entry of a call by `token`.
pub(crate) async fn record(
    state: &AppState,
    token: &ApiToken,
    action: &str,
    list: Option<&str>,
    count: Option<u64>,
    email: Option<&EmailAddress>,
) -> Result<(), ApiError> {
    let entry = Entry {
        at: state.clock.now(),
        actor: token.name().to_owned(),
        action: action.to_owned(),
        list_id: list.map(str::to_owned),
        count: count.map(|count| i64::try_from(count).unwrap_or(i64::MAX)),
        address_hash: email
            .map(|email| crate::storage::suppressions::every_list_hash(&state.secrets.hash_key, email.as_ref())),
    };
    audit::record(&state.writer, entry).await.map_err(ApiError::Unavailable)
}

/// The `email` query parameter or field, parsed; the error never repeats it.
fn email(value: Option<&str>) -> Result<EmailAddress, ApiError> {
    let value = value.ok_or_else(|| ApiError::bad("invalid_email", "email is required"))?;
    EmailAddress::parse(value).map_err(|error| ApiError::bad("invalid_email", format!("email: {error}")))
}

/// The configured list `id` names; `None` when not given.
fn list<'a>(state: &'a AppState, id: Option<&str>) -> Result<Option<&'a crate::config::ListConfig>, ApiError> {
    id.map(|id| state.config.list(id).ok_or(ApiError::UnknownList)).transpose()
}
