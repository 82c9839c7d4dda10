//! Confirmation (`docs/http-api.md`). Mail scanners open every link with GET and HEAD, some render it and
//! a few press buttons, so: `GET /confirm` only reads (to say "confirm", "already confirmed" or
//! "expired") and shows one button; only `POST /api/confirm`, with the token in its body (a token
//! in the query string is ignored), changes anything — in one atomic
//! `UPDATE … WHERE status = 'pending' AND confirm_hash = ? AND confirm_expires_at >= now
//! RETURNING …`. With `confirm_mode = "retype"` the POST must also carry the address, which a
//! scanner cannot know.
//!
//! A repeat POST of a token that already confirmed its row, within the link's lifetime, ends at
//! the same `/confirmed` page: a person who clicks after a scanner did sees success.

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
use crate::subscription::Confirm;
use crate::tokens::{is_opaque, sha256_hex};

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

fn expired(config: &Config, list: Option<&ListConfig>) -> HttpResponse {
    let signup = href(config, &list.map_or_else(|| "/".to_owned(), |list| format!("/signup?list={}", list.id)));
    let chrome = Chrome::for_optional(config, list);
    let t = chrome.t;
    let page = MessagePage::new(chrome, &t.confirm.expired_title, &t.confirm.expired)
        .with_link(signup, &t.confirm.sign_up_again);
    html(StatusCode::GONE, &page)
}

fn confirmed_redirect(config: &Config, list_id: &str) -> HttpResponse {
    let location = href(config, &format!("/confirmed?list={list_id}"));
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

/// Whether a view's link still works at `now`.
fn live(view: &ConfirmView, now: UnixSeconds) -> bool {
    view.expires_at.is_some_and(|expires| expires >= now)
}

async fn view(state: &AppState, hash: String) -> anyhow::Result<Option<ConfirmView>> {
    state.db.run(move |conn| Ok::<_, anyhow::Error>(subscribers::find_by_confirm_hash(conn, &hash)?)).await
}

/// `GET /confirm?token=T`: reads, never writes.
pub async fn confirm_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let Some(token) = form::query_param(&req, "token").filter(|token| is_opaque(token)) else {
        return error_pages::incomplete_link(&state.config);
    };
    let config = &state.config;
    let now = state.clock.now();
    let found = match view(&state, sha256_hex(token.as_bytes())).await {
        Ok(found) => found,
        Err(error) => return error_pages::storage_unavailable(config, &error),
    };
    let Some((view, list)) = found.and_then(|view| config.list(&view.list_id).map(|list| (view, list))) else {
        return expired(config, None);
    };
    let chrome = Chrome::for_list(config, list);
    let t = chrome.t;
    match view.status {
        Status::Pending if live(&view, now) => html(
            StatusCode::OK,
            &ConfirmPage { chrome, list, token: &token, retype: list.confirm_mode == ConfirmMode::Retype, error: None },
        ),
        Status::Confirmed if live(&view, now) => html(
            StatusCode::OK,
            &MessagePage::new(chrome, &t.confirm.already_title, t.confirm.already.with(&list.name)),
        ),
        _ => expired(config, Some(list)),
    }
}

/// `POST /api/confirm` with the form body `token=T` (and `email` in retype mode).
pub async fn confirm(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    let fields = match form::read_form(&req, payload, state.config.server.max_body_bytes).await {
        Some(fields) => fields,
        None => return error_pages::incomplete_link(&state.config),
    };
    let Some(token) = form::field(&fields, "token").filter(|token| is_opaque(token)).map(str::to_owned) else {
        return error_pages::incomplete_link(&state.config);
    };
    let config = &state.config;
    let hash = sha256_hex(token.as_bytes());
    let now = state.clock.now();
    let before = match view(&state, hash.clone()).await {
        Ok(before) => before,
        Err(error) => return error_pages::storage_unavailable(config, &error),
    };
    let Some((before, list)) = before.and_then(|view| config.list(&view.list_id).map(|list| (view, list))) else {
        return expired(config, None);
    };
    if before.status == Status::Confirmed && live(&before, now) {
        return confirmed_redirect(config, list.id.as_ref());
    }
    let retype = list.confirm_mode == ConfirmMode::Retype;
    let retyped = if retype {
        match form::field(&fields, "email").map(EmailAddress::parse) {
            Some(Ok(email)) => Some(email.as_ref().to_owned()),
            _ => return retype_again(config, list, &token),
        }
    } else {
        None
    };

    let command = Confirm {
        config: state.config.clone(),
        hash_key: state.secrets.hash_key.clone(),
        webhooks: state.webhooks.clone(),
        confirm_hash: hash,
        method: if retype { "retype" } else { "button" },
        retyped_email: retyped,
        now,
    };
    let method = command.method;
    let result = state.writer.execute(command).await.map_err(anyhow::Error::from);
    match result {
        Ok(Some(confirmed)) => {
            tracing::info!(list = %confirmed.list_id, method, "signup confirmed");
            crate::metrics::confirmation(&confirmed.list_id, method, confirmed.delay_secs);
            confirmed_redirect(config, &confirmed.list_id)
        }
        Ok(None) => {
            // Lost a race with a concurrent POST, a wrong retyped address, or an expired link.
            match view(&state, sha256_hex(token.as_bytes())).await {
                Ok(Some(after)) if after.status == Status::Confirmed && live(&after, now) => {
                    confirmed_redirect(config, list.id.as_ref())
                }
                Ok(Some(after)) if retype && after.status == Status::Pending && live(&after, now) => {
                    retype_again(config, list, &token)
                }
                Ok(_) => expired(config, Some(list)),
                Err(error) => error_pages::storage_unavailable(config, &error),
            }
        }
        Err(error) => error_pages::storage_unavailable(config, &error),
    }
}

fn retype_again(config: &Config, list: &ListConfig, token: &str) -> HttpResponse {
    let chrome = Chrome::for_list(config, list);
    let error = chrome.t.confirm.wrong_address.to_string();
    html(StatusCode::BAD_REQUEST, &ConfirmPage { chrome, list, token, retype: true, error: Some(&error) })
}

/// `GET /confirmed?list=ID`: thanks, and the way back to the site when the list has one.
pub async fn confirmed_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list = form::list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = Chrome::for_optional(&state.config, list);
    let t = chrome.t;
    let message = list.map_or_else(|| t.confirm.done_any.to_string(), |list| t.confirm.done.with(&list.name));
    html(StatusCode::OK, &MessagePage::new(chrome, &t.confirm.done_title, message))
}
