//! Confirmation (`docs/http-api.md`). Mail scanners open every link with GET and HEAD, some render it and
//! a few press buttons, so: `GET /confirm` only reads (to say "confirm", "already confirmed" or
//! "expired") and shows one button; only `POST /api/confirm`, with the token in its body (a token
//! in the query string is ignored), changes anything — in one atomic
//! `UPDATE … WHERE status = 'pending' AND confirm_hash = ? AND confirm_expires_at >= now
//! RETURNING …`. With `confirm_mode = "retype"` the POST must also carry the address, which a
//! scanner cannot know.
//!
//! A repeat POST of a token that already confirmed its row, within the link's lifetime, ends at
//! the same `/confirmed` page (`GET /confirmed?list=ID`): a person who clicks after a scanner
//! did sees success. Every failure, GET or POST, is a [`ConfirmError`], answered in one place.

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::clock::UnixSeconds;
use crate::config::{Config, ConfirmMode, ListConfig};
use crate::domain::EmailAddress;
use crate::frame::{Chrome, href};
use crate::routes::error_pages;
use crate::routes::form;
use crate::routes::render::{MessagePage, html};
use crate::state::AppState;
use crate::storage::subscribers::{self, ConfirmView, Status};
use crate::subscription::ConfirmMethod;
use crate::tokens::{TokenHash, is_opaque};

#[derive(Template)]
#[template(path = "pages/confirm.html")]
struct ConfirmPage<'a> {
    chrome: Chrome<'a>,
    list: &'a ListConfig,
    token: &'a str,
    retype: bool,
    error: Option<&'a str>,
}

impl std::fmt::Debug for ConfirmPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfirmPage").field("list", &self.list.id).finish_non_exhaustive()
    }
}

/// Every way a confirm link can fail, GET or POST, each with its status and page
/// ([`ConfirmError::answer`]). No `Debug`: `WrongAddress` holds the raw token, which no log may
/// show.
enum ConfirmError<'a> {
    /// 400, the shared incomplete-link page: a token that cannot be one (cut off or changed on
    /// the way), or a POST body that cannot be read.
    MalformedToken,
    /// 410: no row has the token, its link's lifetime is over, or its list is no longer
    /// configured. The page offers to sign up again, for `list` when it is known.
    Expired { list: Option<&'a ListConfig> },
    /// 400, the confirm page again (`confirm_mode = "retype"`): the typed address is not the
    /// row's, and nothing changed.
    WrongAddress { list: &'a ListConfig, token: String },
    /// 503 with `Retry-After`, the shared page: the database could not be read or written.
    StorageUnavailable(anyhow::Error),
}

impl From<anyhow::Error> for ConfirmError<'_> {
    fn from(error: anyhow::Error) -> Self {
        Self::StorageUnavailable(error)
    }
}

impl ConfirmError<'_> {
    /// The page for the visitor; the detail of a storage failure goes to the log only.
    fn answer(self, config: &Config) -> HttpResponse {
        match self {
            Self::MalformedToken => error_pages::incomplete_link(config),
            Self::Expired { list } => {
                let signup =
                    href(config, &list.map_or_else(|| "/".to_owned(), |list| format!("/signup?list={}", list.id)));
                let chrome = Chrome::for_optional(config, list);
                let t = chrome.t;
                let page = MessagePage::new(chrome, &t.confirm.expired_title, &t.confirm.expired)
                    .with_link(signup, &t.confirm.sign_up_again);
                html(StatusCode::GONE, &page)
            }
            Self::WrongAddress { list, token } => {
                let chrome = Chrome::for_list(config, list);
                let error = chrome.t.confirm.wrong_address.to_string();
                let page = ConfirmPage { chrome, list, token: &token, retype: true, error: Some(&error) };
                html(StatusCode::BAD_REQUEST, &page)
            }
            Self::StorageUnavailable(error) => error_pages::storage_unavailable(config, &error),
        }
    }
}

fn confirmed_redirect(config: &Config, list_id: &str) -> HttpResponse {
    let location = href(config, &format!("/confirmed?list={list_id}"));
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

/// Whether a view's link still works at `now`.
fn live(view: &ConfirmView, now: UnixSeconds) -> bool {
    view.expires_at.is_some_and(|expires| expires >= now)
}

async fn view(state: &AppState, hash: TokenHash) -> anyhow::Result<Option<ConfirmView>> {
    state.db.run(move |conn| Ok::<_, anyhow::Error>(subscribers::find_by_confirm_hash(conn, hash.as_str())?)).await
}

/// The row whose confirm hash is `hash`, and its list. No row, or a row of a list that is no
/// longer configured, is an expired link.
async fn find(state: &AppState, hash: TokenHash) -> Result<(ConfirmView, &ListConfig), ConfirmError<'_>> {
    let found = view(state, hash).await?;
    found
        .and_then(|view| state.config.list(&view.list_id).map(|list| (view, list)))
        .ok_or(ConfirmError::Expired { list: None })
}

/// `GET /confirm?token=T`: reads, never writes.
pub async fn confirm_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    try_confirm_page(&req, &state).await.unwrap_or_else(|error| error.answer(&state.config))
}

async fn try_confirm_page<'a>(req: &HttpRequest, state: &'a AppState) -> Result<HttpResponse, ConfirmError<'a>> {
    let token = form::query_param(req, "token").filter(|token| is_opaque(token)).ok_or(ConfirmError::MalformedToken)?;
    let config = &state.config;
    let now = state.clock.now();
    let (view, list) = find(state, TokenHash::of(&token)).await?;
    let chrome = Chrome::for_list(config, list);
    let t = chrome.t;
    match view.status {
        Status::Pending if live(&view, now) => Ok(html(
            StatusCode::OK,
            &ConfirmPage { chrome, list, token: &token, retype: list.confirm_mode == ConfirmMode::Retype, error: None },
        )),
        Status::Confirmed if live(&view, now) => Ok(html(
            StatusCode::OK,
            &MessagePage::new(chrome, &t.confirm.already_title, t.confirm.already.with(&list.name)),
        )),
        _ => Err(ConfirmError::Expired { list: Some(list) }),
    }
}

/// `POST /api/confirm` with the form body `token=T` (and `email` in retype mode).
pub async fn confirm(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    try_confirm(&req, payload, &state).await.unwrap_or_else(|error| error.answer(&state.config))
}

async fn try_confirm<'a>(
    req: &HttpRequest,
    payload: web::Payload,
    state: &'a AppState,
) -> Result<HttpResponse, ConfirmError<'a>> {
    let fields =
        form::read_form(req, payload, state.config.server.max_body_bytes).await.ok_or(ConfirmError::MalformedToken)?;
    let token = form::field(&fields, "token")
        .filter(|token| is_opaque(token))
        .map(str::to_owned)
        .ok_or(ConfirmError::MalformedToken)?;
    let config = &state.config;
    let hash = TokenHash::of(&token);
    let now = state.clock.now();
    let (before, list) = find(state, hash.clone()).await?;
    if before.status == Status::Confirmed && live(&before, now) {
        return Ok(confirmed_redirect(config, list.id.as_ref()));
    }
    let retype = list.confirm_mode == ConfirmMode::Retype;
    let retyped = if retype {
        match form::field(&fields, "email").map(EmailAddress::parse) {
            Some(Ok(email)) => Some(email),
            _ => return Err(ConfirmError::WrongAddress { list, token }),
        }
    } else {
        None
    };

    let method = if retype { ConfirmMethod::Retype } else { ConfirmMethod::Button };
    if let Some(confirmed) = state.subscriptions().confirm(&hash, method, retyped.as_ref(), now).await? {
        tracing::info!(list = %confirmed.list_id, method = method.as_str(), "signup confirmed");
        crate::metrics::confirmation(&confirmed.list_id, method.as_str(), confirmed.delay_secs);
        return Ok(confirmed_redirect(config, &confirmed.list_id));
    }
    // Lost a race with a concurrent POST, a wrong retyped address, or an expired link.
    match view(state, hash).await? {
        Some(after) if after.status == Status::Confirmed && live(&after, now) => {
            Ok(confirmed_redirect(config, list.id.as_ref()))
        }
        Some(after) if retype && after.status == Status::Pending && live(&after, now) => {
            Err(ConfirmError::WrongAddress { list, token })
        }
        _ => Err(ConfirmError::Expired { list: Some(list) }),
    }
}

/// `GET /confirmed?list=ID`: thanks, and the way back to the site when the list has one.
pub async fn confirmed_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list = form::list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = Chrome::for_optional(&state.config, list);
    let t = chrome.t;
    let message = list.map_or_else(|| t.confirm.done_any.to_string(), |list| t.confirm.done.with(&list.name));
    html(StatusCode::OK, &MessagePage::new(chrome, &t.confirm.done_title, message))
}
