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
//!
//! **Several lists.** One confirmation mail may confirm several lists of one sender: their rows
//! share the token's hash, and one POST confirms them all at once. The page names them all; it
//! asks for the address when any of them is in `confirm_mode = "retype"`. Where the visitor
//! ends is decided by the *first* of the lists in the configuration's order (the page's
//! language, colours and way back are that list's too): its `confirmed_url`, with
//! `signup=confirmed` added to the query, or else the hosted `/confirmed?list=ID`. A repeat POST
//! ends at the same place.

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::clock::UnixSeconds;
use crate::config::presentation::Language;
use crate::config::tokens::{TokenHash, is_opaque};
use crate::config::{Config, ConfirmMode, ListConfig};
use crate::domain::EmailAddress;
use crate::storage::subscribers::{self, ConfirmView, Status};
use crate::subscribers::subscription::ConfirmMethod;
use crate::web::frame::{Chrome, href};
use crate::web::middleware::csp_with_form_targets;
use crate::web::routes::error_pages;
use crate::web::routes::form;
use crate::web::routes::render::{MessagePage, framed_pages, html};
use crate::web::state::AppState;

framed_pages!(ConfirmPage);

#[derive(Template)]
#[template(path = "pages/confirm.html")]
struct ConfirmPage<'a> {
    chrome: Chrome<'a>,
    /// The names of the lists the token confirms ("A and B").
    names: String,
    token: &'a str,
    retype: bool,
    error: Option<&'a str>,
}

impl<'a> ConfirmPage<'a> {
    /// The page, as an answer with `status`. Its form may end at the first list's
    /// `confirmed_url`, so that origin is added to the page's `form-action`
    /// ([`crate::web::middleware::security_headers`]).
    fn answer(&self, status: StatusCode, lists: &Lists<'_>) -> HttpResponse {
        let mut response = html(status, self);
        if let Some(url) = &lists.first.confirmed_url {
            let csp = csp_with_form_targets(&[url.origin().ascii_serialization()]);
            if let Ok(value) = header::HeaderValue::from_str(&csp) {
                response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
            }
        }
        response
    }

    fn new(config: &'a Config, lists: &Lists<'a>, token: &'a str) -> Self {
        let chrome = Chrome::for_list_in(config, lists.first, lists.language);
        let names: Vec<String> = lists.all.iter().map(|list| list.name.clone()).collect();
        Self { names: chrome.t.and_list(&names), chrome, token, retype: lists.retype(), error: None }
    }
}

impl std::fmt::Debug for ConfirmPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfirmPage").field("names", &self.names).finish_non_exhaustive()
    }
}

/// The configured lists a token's rows belong to, in the configuration's order.
#[derive(Debug, Clone)]
struct Lists<'a> {
    /// Decides the page's look and where a confirmation ends.
    first: &'a ListConfig,
    all: Vec<&'a ListConfig>,
    /// The language the first list's row was signed up in: the page's, and the next page's.
    language: Language,
}

impl Lists<'_> {
    fn retype(&self) -> bool {
        self.all.iter().any(|list| list.confirm_mode == ConfirmMode::Retype)
    }
}

/// What the rows of one token say together: pending while any row still is, confirmed once
/// all are; live while the link's lifetime lasts (the rows of one mail share it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TokenState {
    status: Status,
    live: bool,
}

impl TokenState {
    fn of(views: &[ConfirmView], now: UnixSeconds) -> Self {
        let pending = views.iter().any(|view| view.status == Status::Pending);
        Self {
            status: if pending { Status::Pending } else { Status::Confirmed },
            live: views.iter().all(|view| view.expires_at.is_some_and(|expires| expires >= now)),
        }
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
    /// configured. The page offers to sign up again, for `list` when it is known, and speaks
    /// the row's language; without a row, the request's ([`error_pages::visitor_chrome`]).
    Expired { list: Option<(&'a ListConfig, Language)> },
    /// 400, the confirm page again (`confirm_mode = "retype"`): the typed address is not the
    /// row's, and nothing changed.
    WrongAddress { lists: Lists<'a>, token: String },
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
    fn answer(self, config: &Config, req: &HttpRequest) -> HttpResponse {
        match self {
            Self::MalformedToken => error_pages::incomplete_link(error_pages::visitor_chrome(config, req, None)),
            Self::Expired { list } => {
                let (signup, chrome) = match list {
                    Some((list, language)) => (
                        href(config, &format!("/signup?list={}{}", list.id, list.lang_query(language))),
                        Chrome::for_list_in(config, list, language),
                    ),
                    None => (href(config, "/"), error_pages::visitor_chrome(config, req, None)),
                };
                let t = chrome.t;
                let page = MessagePage::new(chrome, &t.confirm.expired_title, &t.confirm.expired)
                    .with_link(signup, &t.confirm.sign_up_again);
                html(StatusCode::GONE, &page)
            }
            Self::WrongAddress { lists, token } => {
                let mut page = ConfirmPage::new(config, &lists, &token);
                let error = page.chrome.t.confirm.wrong_address.to_string();
                page.error = Some(&error);
                page.answer(StatusCode::BAD_REQUEST, &lists)
            }
            Self::StorageUnavailable(error) => {
                error_pages::storage_unavailable(error_pages::visitor_chrome(config, req, None), &error)
            }
        }
    }
}

/// Where a confirmation of `list` ends: its `confirmed_url` with `signup=confirmed`, or the
/// hosted page.
fn confirmed_redirect(config: &Config, lists: &Lists<'_>) -> HttpResponse {
    let list = lists.first;
    let location = match &list.confirmed_url {
        Some(url) => {
            let mut url = url.clone();
            url.query_pairs_mut().append_pair("signup", "confirmed");
            url.to_string()
        }
        None => href(config, &format!("/confirmed?list={}{}", list.id, list.lang_query(lists.language))),
    };
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

async fn views(state: &AppState, hash: TokenHash) -> anyhow::Result<Vec<ConfirmView>> {
    state.db.run(move |conn| Ok::<_, anyhow::Error>(subscribers::find_by_confirm_hash(conn, hash.as_str())?)).await
}

/// The rows whose confirm hash is `hash`, and their lists. No row, or only rows of lists that
/// are no longer configured, is an expired link; a row of a list no longer configured is left
/// out.
async fn find(
    state: &AppState,
    hash: TokenHash,
    now: UnixSeconds,
) -> Result<(TokenState, Lists<'_>), ConfirmError<'_>> {
    let views: Vec<ConfirmView> =
        views(state, hash).await?.into_iter().filter(|view| state.config.list(&view.list_id).is_some()).collect();
    let all: Vec<&ListConfig> =
        state.config.lists.iter().filter(|list| views.iter().any(|view| view.list_id == list.id.as_ref())).collect();
    let first = *all.first().ok_or(ConfirmError::Expired { list: None })?;
    let stored = views.iter().find(|view| view.list_id == first.id.as_ref()).and_then(|view| view.language.as_deref());
    let language = first.row_language(stored);
    Ok((TokenState::of(&views, now), Lists { first, all, language }))
}

/// `GET /confirm?token=T`: reads, never writes.
pub async fn confirm_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    try_confirm_page(&req, &state).await.unwrap_or_else(|error| error.answer(&state.config, &req))
}

async fn try_confirm_page<'a>(req: &HttpRequest, state: &'a AppState) -> Result<HttpResponse, ConfirmError<'a>> {
    let token = form::query_param(req, "token").filter(|token| is_opaque(token)).ok_or(ConfirmError::MalformedToken)?;
    let config = &state.config;
    let now = state.clock.now();
    let (token_state, lists) = find(state, TokenHash::of(&token), now).await?;
    match token_state {
        TokenState { status: Status::Pending, live: true } => {
            Ok(ConfirmPage::new(config, &lists, &token).answer(StatusCode::OK, &lists))
        }
        TokenState { status: Status::Confirmed, live: true } => {
            let page = ConfirmPage::new(config, &lists, &token);
            let t = page.chrome.t;
            let message = t.confirm.already.with(&page.names);
            Ok(html(StatusCode::OK, &MessagePage::new(page.chrome, &t.confirm.already_title, message)))
        }
        _ => Err(ConfirmError::Expired { list: Some((lists.first, lists.language)) }),
    }
}

/// `POST /api/confirm` with the form body `token=T` (and `email` in retype mode).
pub async fn confirm(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    try_confirm(&req, payload, &state).await.unwrap_or_else(|error| error.answer(&state.config, &req))
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
    let (before, lists) = find(state, hash.clone(), now).await?;
    if before == (TokenState { status: Status::Confirmed, live: true }) {
        return Ok(confirmed_redirect(config, &lists));
    }
    let retype = lists.retype();
    let retyped = if retype {
        match form::field(&fields, "email").map(EmailAddress::parse) {
            Some(Ok(email)) => Some(email),
            _ => return Err(ConfirmError::WrongAddress { lists, token }),
        }
    } else {
        None
    };

    let method = if retype { ConfirmMethod::Retype } else { ConfirmMethod::Button };
    // Where the confirmation came from, for the mail order's reputation (a keyed hash only).
    let network = (config.signup.reputation_days > 0).then(|| {
        let (_, neighbourhood) = form::client_of(req, config);
        state.limiter.network_tag(&neighbourhood)
    });
    let confirmed = state.subscriptions().confirm(&hash, method, retyped.as_ref(), network, now).await?;
    for row in &confirmed {
        tracing::info!(list = %row.list_id, method = method.as_str(), "signup confirmed");
        crate::metrics::confirmation(&row.list_id, method.as_str(), row.delay_secs, row.source.as_deref());
    }
    if !confirmed.is_empty() {
        return Ok(confirmed_redirect(config, &lists));
    }
    // Lost a race with a concurrent POST, a wrong retyped address, or an expired link.
    let views = views(state, hash).await?;
    match TokenState::of(&views, now) {
        _ if views.is_empty() => Err(ConfirmError::Expired { list: Some((lists.first, lists.language)) }),
        TokenState { status: Status::Confirmed, live: true } => Ok(confirmed_redirect(config, &lists)),
        TokenState { status: Status::Pending, live: true } if retype => {
            Err(ConfirmError::WrongAddress { lists, token })
        }
        _ => Err(ConfirmError::Expired { list: Some((lists.first, lists.language)) }),
    }
}

/// `GET /confirmed?list=ID`: thanks, and the way back to the site when the list has one.
pub async fn confirmed_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list = form::list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = match list {
        Some(list) => Chrome::for_list_in(&state.config, list, form::page_language(&req, list)),
        None => Chrome::general(&state.config),
    };
    let t = chrome.t;
    let message = list.map_or_else(|| t.confirm.done_any.to_string(), |list| t.confirm.done.with(&list.name));
    html(StatusCode::OK, &MessagePage::new(chrome, &t.confirm.done_title, message))
}
