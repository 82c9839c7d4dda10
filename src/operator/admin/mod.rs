//! The admin page, `GET /admin` on the metrics listener only (`docs/operations.md`, "The admin
//! page"): search an address, see its record as `signupd lookup` shows it, remove it, re-send a
//! pending confirmation. Served only when an `[[api_tokens]]` entry exists, like `/api/v1/`.
//!
//! **Who may use it.** HTTP Basic, so a browser asks by itself and keeps nothing but what it
//! always keeps for Basic (no cookie, no JavaScript): any user name, and as the password a token
//! with the `admin` scope. It is checked as the API checks a bearer token
//! ([`crate::operator::api::authorize_presented`]): the token first, so a valid one is never refused for
//! another client's failures on the same network; then its window and the scope. A wrong or
//! missing password is `401` with a Basic challenge (`429` once the client's failures fill their
//! minute; counted in `signupd_api_auth_failures_total{surface="admin"}`, not audited), a token
//! without `admin` is `403` and audited: `admin_forbidden` for the page itself,
//! `lookup_forbidden`, `remove_forbidden` or `resend_forbidden` for a form.
//!
//! **Forged posts.** A browser sends Basic credentials with any request to the page's origin,
//! also one another site makes it send, so every POST must carry the form token the page put in
//! it — an HMAC bound to the credential and to the form's purpose
//! ([`crate::web::api_tokens::ApiToken::bound`]), which another site cannot read — and is refused
//! (`403`, nothing done) when its `Origin` is not the page's own or `Sec-Fetch-Site` says it
//! came from elsewhere. Reads use POST too: a search names the address, which must not sit in a
//! URL, a history or a log line.
//!
//! **What it does.** A search is a `lookup` (audited as one, actor the token's name); a removal is
//! `signupd remove`'s, one list or all, `unsubscribed` or `not_me` (audited `remove`, counted
//! `via="api"` like the API's); a re-send queues a new confirmation through [`mod@resend`] (audited
//! `resend`). After a change the page shows the address's record again; that reading is part of
//! the change's audit entry, not a lookup of its own. Answers are pages, never redirects: a
//! redirect would have to carry the address in its URL.
//!
//! - `page`: the template and its view of a record.
//! - [`mod@resend`]: the re-send's writer command.

mod page;
pub mod resend;

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, guard, web};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::hmac;

use crate::config::Scope;
use crate::domain::{EmailAddress, ListId};
use crate::operator::api::limits::Limits;
use crate::operator::api::{ApiError, Surface, authorize_presented, record};
use crate::operator::lookup::{self, Document};
use crate::storage::suppressions::Reason;
use crate::subscribers::subscription::{RemovalChannel, Removed};
use crate::web::api_tokens::ApiToken;
use crate::web::state::AppState;
use page::Page;
use resend::{ResendConfirmation, Resent};

/// The largest form body: an address, a list, a reason and a form token.
const MAX_FORM_BODY: usize = 4096;

/// The forms, each with a token of its own.
const SEARCH: &str = "admin:search";
const REMOVE: &str = "admin:remove";
const RESEND: &str = "admin:resend";

/// Registers `/admin` and its forms on the metrics listener's app.
pub fn configure(cfg: &mut web::ServiceConfig) {
    let read = || web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
    cfg.service(
        web::scope("/admin")
            .app_data(web::PayloadConfig::new(MAX_FORM_BODY))
            .service(web::resource("").route(read().to(show)).default_service(web::to(|| not_allowed("GET, HEAD"))))
            .service(
                web::resource("/search").route(web::post().to(search)).default_service(web::to(|| not_allowed("POST"))),
            )
            .service(
                web::resource("/remove").route(web::post().to(remove)).default_service(web::to(|| not_allowed("POST"))),
            )
            .service(
                web::resource("/resend").route(web::post().to(resend)).default_service(web::to(|| not_allowed("POST"))),
            ),
    );
}

async fn not_allowed(allowed: &'static str) -> HttpResponse {
    HttpResponse::MethodNotAllowed()
        .insert_header((header::ALLOW, allowed))
        .content_type("text/plain; charset=utf-8")
        .body("Method Not Allowed")
}

/// Why a request was not served, as the page answers it.
#[derive(Debug)]
enum Refusal {
    Api(ApiError),
    /// A POST from another origin, or without its form token.
    Forged,
    /// The body was not a form.
    BadForm,
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Self::Api(error)
    }
}

impl Refusal {
    fn response(self) -> HttpResponse {
        let text = |status: StatusCode, body: &str| {
            HttpResponse::build(status).content_type("text/plain; charset=utf-8").body(body.to_owned())
        };
        match self {
            Self::Api(ApiError::Unauthenticated) => HttpResponse::Unauthorized()
                .insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"signupd admin\", charset=\"UTF-8\""))
                .content_type("text/plain; charset=utf-8")
                .body("Sign in with any user name and a token with the admin scope as the password.\n"),
            Self::Api(ApiError::Forbidden(_)) => {
                text(StatusCode::FORBIDDEN, "This token does not have the admin scope.\n")
            }
            Self::Api(ApiError::RateLimited(seconds)) => {
                let mut response = text(StatusCode::TOO_MANY_REQUESTS, "Too many requests; try again shortly.\n");
                response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                response
            }
            Self::Api(ApiError::Unavailable(error)) => {
                tracing::error!(error = format!("{error:#}"), "admin page: the database is unavailable");
                let mut response = text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The database is unavailable; nothing was done. Try again.\n",
                );
                let retry = HeaderValue::from(crate::web::routes::STORAGE_RETRY_AFTER_SECS);
                response.headers_mut().insert(header::RETRY_AFTER, retry);
                response
            }
            Self::Api(_) | Self::BadForm => text(StatusCode::BAD_REQUEST, "The form could not be read.\n"),
            Self::Forged => text(
                StatusCode::FORBIDDEN,
                "This form did not come from the admin page (another origin, or no valid form token); nothing was done.\n",
            ),
        }
    }
}

/// The password of an `Authorization: Basic …` header (the scheme in any case).
fn basic_password(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim_start().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    decoded.split_once(':').map(|(_, password)| password.to_owned())
}

/// The token the page was opened with, checked as the API checks one; `action` is what a `403`
/// is audited as (`{action}_forbidden`).
async fn signed_in(
    req: &HttpRequest,
    state: &AppState,
    limits: &Limits,
    action: &str,
) -> Result<Arc<ApiToken>, Refusal> {
    let password = basic_password(req);
    Ok(authorize_presented(req, state, limits, Surface::Admin, Scope::Admin, action, password.as_deref()).await?)
}

/// Whether a POST came from the page itself: `Sec-Fetch-Site`, where the browser sends it, says
/// so, and an `Origin` (browsers send one with every form POST) names the host the request was
/// sent to. The page's `Referrer-Policy: no-referrer` makes Chromium send `Origin: null` with its
/// own forms, so `null` passes only where `Sec-Fetch-Site` vouches for the page (a sandboxed
/// frame elsewhere also sends `null`, and is cross-site). A client that sends neither (curl)
/// still needs the form token.
fn from_the_page(req: &HttpRequest) -> bool {
    let header = |name: header::HeaderName| req.headers().get(name).and_then(|value| value.to_str().ok());
    let site = header(header::HeaderName::from_static("sec-fetch-site"));
    if site.is_some_and(|site| site != "same-origin") {
        return false;
    }
    match (header(header::ORIGIN), header(header::HOST)) {
        (None, _) => true,
        (Some("null"), _) => site == Some("same-origin"),
        (Some(origin), Some(host)) => {
            origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) == Some(host)
        }
        (Some(_), None) => false,
    }
}

/// The form token of `purpose` for `token`, as the page writes it.
fn form_token(state: &AppState, token: &ApiToken, purpose: &str) -> String {
    URL_SAFE_NO_PAD.encode(token.bound(&state.api_tokens, purpose).as_ref())
}

/// A POST's fields (the first of each name), once its origin and form token are checked.
fn checked_form(
    req: &HttpRequest,
    state: &AppState,
    token: &ApiToken,
    purpose: &str,
    body: &[u8],
) -> Result<HashMap<String, String>, Refusal> {
    if !from_the_page(req) {
        return Err(Refusal::Forged);
    }
    let declared = req.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
    if !declared
        .split(';')
        .next()
        .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"))
    {
        return Err(Refusal::BadForm);
    }
    let mut fields = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(body) {
        fields.entry(name.into_owned()).or_insert_with(|| value.into_owned());
    }
    let presented = fields.get("form").and_then(|value| URL_SAFE_NO_PAD.decode(value).ok());
    match presented {
        Some(tag) if state.api_tokens.verify_bound(token, purpose, &tag) => Ok(fields),
        _ => Err(Refusal::Forged),
    }
}

/// The page for `token`, with its form tokens.
fn page<'a>(state: &'a AppState, token: &'a ApiToken) -> Page<'a> {
    Page::new(
        &state.config,
        token.name(),
        form_token(state, token, SEARCH),
        form_token(state, token, REMOVE),
        form_token(state, token, RESEND),
    )
}

async fn look_up(state: &AppState, email: &EmailAddress) -> Result<Document, Refusal> {
    let now = state.clock.now();
    let (config, secrets, address) = (state.config.clone(), state.secrets.clone(), email.clone());
    Ok(state
        .db
        .run(move |conn| lookup::look_up(&config, &secrets.hash_key, conn, &address, now))
        .await
        .map_err(ApiError::Unavailable)?)
}

fn answer(result: Result<HttpResponse, Refusal>) -> HttpResponse {
    result.unwrap_or_else(Refusal::response)
}

/// `GET /admin`: the search form.
async fn show(req: HttpRequest, state: web::Data<AppState>, limits: web::Data<Limits>) -> HttpResponse {
    answer(signed_in(&req, &state, &limits, "admin").await.map(|token| page(&state, &token).respond(StatusCode::OK)))
}

/// `POST /admin/search`: the address's record.
async fn search(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> HttpResponse {
    answer(
        async {
            let token = signed_in(&req, &state, &limits, "lookup").await?;
            let fields = checked_form(&req, &state, &token, SEARCH, &body)?;
            let typed = fields.get("email").map(String::as_str).unwrap_or("");
            let email = match EmailAddress::parse(typed) {
                Ok(email) => email,
                Err(error) => {
                    let page = page(&state, &token).typed(typed).problem(format!("Not an email address: {error}."));
                    return Ok(page.respond(StatusCode::BAD_REQUEST));
                }
            };
            let document = look_up(&state, &email).await?;
            let rows = document.held.rows.len() as u64;
            record(&state, &token, "lookup", None, Some(rows), Some(&email)).await?;
            Ok(page(&state, &token).record(document).respond(StatusCode::OK))
        }
        .await,
    )
}

/// The address and list of a removal or a re-send; a list must be configured, `""` is every list.
fn address_and_list<'a>(
    state: &'a AppState,
    fields: &HashMap<String, String>,
) -> Result<(EmailAddress, Option<&'a crate::config::ListConfig>), Refusal> {
    let email = fields.get("email").and_then(|email| EmailAddress::parse(email).ok()).ok_or(Refusal::BadForm)?;
    let list = match fields.get("list").map(String::as_str).unwrap_or("") {
        "" => None,
        id => Some(state.config.list(id).ok_or(Refusal::BadForm)?),
    };
    Ok((email, list))
}

/// `POST /admin/remove`: as `signupd remove`, then the record again.
async fn remove(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> HttpResponse {
    answer(
        async {
            let token = signed_in(&req, &state, &limits, "remove").await?;
            let fields = checked_form(&req, &state, &token, REMOVE, &body)?;
            let (email, list) = address_and_list(&state, &fields)?;
            let reason = match fields.get("reason").map(String::as_str) {
                None | Some("unsubscribed") => Reason::Unsubscribed,
                Some("not_me") => Reason::NotMe,
                Some(_) => return Err(Refusal::BadForm),
            };
            let lists: Vec<ListId> = match list {
                Some(list) => vec![list.id.clone()],
                None => state.config.lists.iter().map(|list| list.id.clone()).collect(),
            };
            let now = state.clock.now();
            let removed = state
                .subscriptions()
                .remove_from_lists(&lists, email.as_ref(), Some(reason), RemovalChannel::Api, now)
                .await
                .map_err(ApiError::Unavailable)?;
            for removal in &removed {
                crate::metrics::removal(&removal.list_id, removal.reason.as_str(), RemovalChannel::Api.as_str());
            }
            let list_id = list.map(|list| list.id.as_ref());
            record(&state, &token, "remove", list_id, Some(removed.len() as u64), Some(&email)).await?;
            let document = look_up(&state, &email).await?;
            Ok(page(&state, &token).notice(removal_notice(&removed, reason)).record(document).respond(StatusCode::OK))
        }
        .await,
    )
}

fn removal_notice(removed: &[Removed], reason: Reason) -> String {
    if removed.is_empty() {
        return "Nothing to remove: the address has no row there. Its suppressions stay as they were.".to_owned();
    }
    let lists: Vec<&str> = removed.iter().map(|removal| removal.list_id.as_str()).collect();
    let after = match reason {
        Reason::NotMe => "it is never mailed again, even after a new signup",
        _ => "a new signup starts a new double opt-in",
    };
    format!("Removed from {} ({}); {after}.", lists.join(", "), reason.as_str())
}

/// `POST /admin/resend`: a new confirmation for a pending row, then the record again.
async fn resend(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    limits: web::Data<Limits>,
) -> HttpResponse {
    answer(
        async {
            let token = signed_in(&req, &state, &limits, "resend").await?;
            let fields = checked_form(&req, &state, &token, RESEND, &body)?;
            let (email, list) = address_and_list(&state, &fields)?;
            let list = list.ok_or(Refusal::BadForm)?;
            let signup = &state.config.signup;
            let command = ResendConfirmation {
                list_id: list.id.as_ref().to_owned(),
                email: email.as_ref().to_owned(),
                now: state.clock.now(),
                cooldown_secs: i64::try_from(signup.resend_cooldown.as_secs()).unwrap_or(i64::MAX),
                cap: signup.max_mails_per_address_per_day,
                address_key: hmac::Key::new(hmac::HMAC_SHA256, state.secrets.hash_key.expose()),
            };
            let resent = state.writer.execute(command).await.map_err(|error| ApiError::Unavailable(anyhow::Error::from(error)))?;
            let queued = u64::from(resent == Resent::Queued);
            record(&state, &token, "resend", Some(list.id.as_ref()), Some(queued), Some(&email)).await?;
            let document = look_up(&state, &email).await?;
            let notice = match resent {
                Resent::Queued => format!(
                    "A new confirmation for {} is queued; it goes out first, within the hourly mail budget.",
                    list.id.as_ref()
                ),
                Resent::NotPending => format!("Nothing sent: the address has no pending row on {}.", list.id.as_ref()),
                Resent::TooSoon(next) => format!(
                    "Nothing sent: a confirmation went out less than signup.resend_cooldown ago; the next may go at {}.",
                    page::time(next)
                ),
                Resent::AtDailyCap => "Nothing sent: the address had its confirmations for the day \
                                       (signup.max_mails_per_address_per_day); try again tomorrow."
                    .to_owned(),
            };
            Ok(page(&state, &token).notice(notice).record(document).respond(StatusCode::OK))
        }
        .await,
    )
}

impl Page<'_> {
    fn respond(&self, status: StatusCode) -> HttpResponse {
        match self.html() {
            Ok(html) => HttpResponse::build(status).content_type("text/html; charset=utf-8").body(html),
            Err(error) => {
                tracing::error!(error = %error, "admin page: cannot render");
                HttpResponse::InternalServerError().finish()
            }
        }
    }
}

/// `GET /static/admin.css` on the metrics listener.
pub async fn stylesheet() -> HttpResponse {
    crate::web::routes::css(include_str!("../../../static/admin.css"))
}
