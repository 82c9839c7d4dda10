//! Removal and unsubscribe (`docs/http-api.md`). `GET /manage` shows one "Remove my address" button and
//! never writes; `POST /api/manage` removes and ends at `GET /removed?list=ID`; `POST
//! /api/unsubscribe?token=T` with the body `List-Unsubscribe=One-Click` is RFC 8058 one-click
//! unsubscribe and acts at once; `GET /api/unsubscribe` only redirects to the manage page. Every
//! failure is a [`ManageError`], answered in one place.
//!
//! Both removal tokens (`<id>.<secret>`, looked up by primary key and checked against the stored
//! hash of the secret; or the 43-character form mailed before, looked up by its hash) and signed
//! unsubscribe tokens (verified by signature, naming list and row) are accepted. Removing
//! deletes the row, its queued mail and any intake item for the address in one transaction,
//! and records a suppression hash: `not_me` if the row was still pending, `unsubscribed` if it
//! was confirmed. A repeat, or a well-formed token that matches nothing, ends the same way: it
//! reveals nothing.

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::config::Config;
use crate::frame::{Chrome, href};
use crate::routes::error_pages;
use crate::routes::form;
use crate::routes::render::{MessagePage, html};
use crate::state::AppState;
use crate::storage::subscribers::Removable;
use crate::subscription::{RemovalChannel, RemovalTarget};
use crate::tokens::{TokenForm, sha256_hex};

#[derive(Template)]
#[template(path = "pages/manage.html")]
struct ManagePage<'a> {
    chrome: Chrome<'a>,
    list_name: Option<&'a str>,
    token: &'a str,
}

impl std::fmt::Debug for ManagePage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagePage").field("list_name", &self.list_name).finish_non_exhaustive()
    }
}

/// Every way removing can fail, with its status and answer: a page for a person's browser
/// ([`ManageError::page`]), one line of plain text for a mail provider's one-click POST
/// ([`ManageError::plain`]).
#[derive(Debug)]
enum ManageError {
    /// 400: a token that is none of the accepted forms (cut off, changed, or a signature that does
    /// not verify), or a body that cannot be read.
    MalformedToken,
    /// 400: a one-click POST without the body `List-Unsubscribe=One-Click` (RFC 8058 §3.1).
    NotOneClick,
    /// 503 with `Retry-After`: the database could not be read or written.
    StorageUnavailable(anyhow::Error),
}

impl From<anyhow::Error> for ManageError {
    fn from(error: anyhow::Error) -> Self {
        Self::StorageUnavailable(error)
    }
}

impl ManageError {
    /// For a person's browser (`/manage`, `/api/manage`): the shared error pages.
    fn page(self, config: &Config) -> HttpResponse {
        match self {
            // `NotOneClick` comes only from the one-click endpoint, which answers with `plain`.
            Self::MalformedToken | Self::NotOneClick => error_pages::incomplete_link(config),
            Self::StorageUnavailable(error) => error_pages::storage_unavailable(config, &error),
        }
    }

    /// For the one-click POST, which a mail provider sends without cookies or a browser (RFC 8058
    /// §3.1): one line of plain text.
    fn plain(self) -> HttpResponse {
        match self {
            Self::MalformedToken => plain_text(StatusCode::BAD_REQUEST, "Invalid unsubscribe link."),
            Self::NotOneClick => {
                plain_text(StatusCode::BAD_REQUEST, "Expected the body List-Unsubscribe=One-Click (RFC 8058).")
            }
            Self::StorageUnavailable(error) => {
                tracing::error!(error = format!("{error:#}"), "one-click unsubscribe failed");
                error_pages::retry_storage_later(plain_text(StatusCode::SERVICE_UNAVAILABLE, "Please try again later."))
            }
        }
    }
}

fn plain_text(status: StatusCode, text: &'static str) -> HttpResponse {
    HttpResponse::build(status).content_type("text/plain; charset=utf-8").body(text)
}

/// Which row a token names, and the list id the token itself names (unsubscribe tokens).
fn target(form: &TokenForm) -> (RemovalTarget, Option<String>) {
    match form {
        TokenForm::Opaque(token) => (RemovalTarget::ByLegacyRemovalHash(sha256_hex(token.as_bytes())), None),
        TokenForm::Removal(token) => (RemovalTarget::ByRemovalToken(token.clone()), None),
        TokenForm::Unsubscribe(claims) => (
            RemovalTarget::ById { subscriber_id: claims.subscriber_id.clone(), list_id: claims.list_id.clone() },
            Some(claims.list_id.clone()),
        ),
    }
}

/// The row a token names, if any, and the list id the token itself names (unsubscribe tokens).
async fn lookup(state: &AppState, form: &TokenForm) -> anyhow::Result<(Option<Removable>, Option<String>)> {
    let (target, claimed_list) = target(form);
    let row = state.db.run(move |conn| Ok::<_, anyhow::Error>(target.find(conn)?)).await?;
    Ok((row, claimed_list))
}

/// Removes the row a token names; returns the list id to show, if known.
async fn remove(state: &AppState, form: &TokenForm, via: RemovalChannel) -> anyhow::Result<Option<String>> {
    let (target, claimed_list) = target(form);
    let Some(removed) = state.subscriptions().remove(&target, via, state.clock.now()).await? else {
        return Ok(claimed_list);
    };
    tracing::info!(list = %removed.list_id, reason = removed.reason.as_str(), via = via.as_str(), "address removed");
    crate::metrics::removal(&removed.list_id, removed.reason.as_str(), via.as_str());
    Ok(Some(removed.list_id))
}

fn parse_token(state: &AppState, token: Option<&str>) -> Result<TokenForm, ManageError> {
    token.and_then(|token| TokenForm::parse(token, &state.keyring).ok()).ok_or(ManageError::MalformedToken)
}

/// `GET /manage?token=T`: reads, never writes.
pub async fn manage_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    try_manage_page(&req, &state).await.unwrap_or_else(|error| error.page(&state.config))
}

async fn try_manage_page(req: &HttpRequest, state: &AppState) -> Result<HttpResponse, ManageError> {
    let raw = form::query_param(req, "token");
    let form = parse_token(state, raw.as_deref())?;
    let (row, claimed_list) = lookup(state, &form).await?;
    let list_id = row.map(|row| row.list_id).or(claimed_list);
    let list = list_id.and_then(|id| state.config.list(&id));
    let chrome = Chrome::for_optional(&state.config, list);
    let list_name = list.map(|list| list.name.as_str());
    Ok(html(StatusCode::OK, &ManagePage { chrome, list_name, token: raw.as_deref().unwrap_or_default() }))
}

/// `POST /api/manage` with the form body `token=T`.
pub async fn manage(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    try_manage(&req, payload, &state).await.unwrap_or_else(|error| error.page(&state.config))
}

async fn try_manage(req: &HttpRequest, payload: web::Payload, state: &AppState) -> Result<HttpResponse, ManageError> {
    let fields = form::read_form(req, payload, state.config.server.max_body_bytes).await.unwrap_or_default();
    let form = parse_token(state, form::field(&fields, "token"))?;
    let list_id = remove(state, &form, RemovalChannel::Manage).await?;
    let removed = list_id.map_or_else(|| "/removed".to_owned(), |id| format!("/removed?list={id}"));
    let location = href(&state.config, &removed);
    Ok(HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish())
}

/// `POST /api/unsubscribe?token=T` with `List-Unsubscribe=One-Click`: RFC 8058 one-click, which
/// acts at once and answers in plain text ([`ManageError::plain`]).
pub async fn one_click(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    try_one_click(&req, payload, &state).await.unwrap_or_else(ManageError::plain)
}

async fn try_one_click(
    req: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<HttpResponse, ManageError> {
    if !is_one_click_body(req, payload, state.config.server.max_body_bytes).await {
        return Err(ManageError::NotOneClick);
    }
    let form = parse_token(state, form::query_param(req, "token").as_deref())?;
    remove(state, &form, RemovalChannel::OneClick).await?;
    Ok(plain_text(StatusCode::OK, "Unsubscribed"))
}

/// Whether the body of a one-click POST reads `List-Unsubscribe=One-Click` (RFC 8058 §3.1), as an
/// urlencoded or multipart form of at most `limit` bytes. Public for the fuzz target only.
#[doc(hidden)]
pub async fn is_one_click_body(req: &HttpRequest, payload: web::Payload, limit: usize) -> bool {
    let fields = form::read_form(req, payload, limit).await.unwrap_or_default();
    form::field(&fields, "List-Unsubscribe") == Some("One-Click")
}

/// `GET /api/unsubscribe?token=T`: never acts; shows the manage page instead.
pub async fn unsubscribe_redirect(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let token = form::query_param(&req, "token").unwrap_or_default();
    let query: String = url::form_urlencoded::Serializer::new(String::new()).append_pair("token", &token).finish();
    let location = href(&state.config, &format!("/manage?{query}"));
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

/// `GET /removed?list=ID`.
pub async fn removed_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list = form::list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = Chrome::for_optional(&state.config, list);
    let t = chrome.t;
    let message = list.map_or_else(|| t.manage.removed_any.to_string(), |list| t.manage.removed.with(&list.name));
    html(StatusCode::OK, &MessagePage::new(chrome, &t.manage.removed_title, message))
}

#[cfg(test)]
mod tests {
    use actix_web::FromRequest;
    use actix_web::test::TestRequest;

    use super::*;

    /// `is_one_click_body` for a body sent with `content_type` (none if empty).
    async fn one_click_body(content_type: &str, body: &[u8]) -> bool {
        let mut request = TestRequest::post().uri("/api/unsubscribe");
        if !content_type.is_empty() {
            request = request.insert_header((header::CONTENT_TYPE, content_type));
        }
        let (req, mut payload) = request.set_payload(body.to_vec()).to_http_parts();
        let payload = web::Payload::from_request(&req, &mut payload).await.unwrap();
        is_one_click_body(&req, payload, 4096).await
    }

    #[actix_web::test]
    async fn only_the_rfc_8058_form_field_is_a_one_click_body() {
        let form = "application/x-www-form-urlencoded";
        let multipart = "multipart/form-data; boundary=b";
        let multipart_body: &[u8] =
            b"--b\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--b--\r\n";
        let cases: &[(&str, &str, &[u8], bool)] = &[
            ("urlencoded", form, b"List-Unsubscribe=One-Click", true),
            ("urlencoded, a later field", form, b"List-Unsubscribe=One-Click&x=1", true),
            ("multipart", multipart, multipart_body, true),
            ("first value wins", form, b"List-Unsubscribe=no&List-Unsubscribe=One-Click", false),
            ("another value", form, b"List-Unsubscribe=one-click", false),
            ("no content type", "", b"List-Unsubscribe=One-Click", false),
            ("JSON is not a form", "application/json", b"{\"List-Unsubscribe\":\"One-Click\"}", false),
            ("multipart without a boundary", "multipart/form-data", multipart_body, false),
            ("empty", form, b"", false),
            ("not UTF-8", form, b"List-Unsubscribe=One-Click\xff", false),
        ];
        for (case, content_type, body, expected) in cases {
            assert_eq!(one_click_body(content_type, body).await, *expected, "case: {case}");
        }
        let too_large = format!("List-Unsubscribe=One-Click&x={}", "a".repeat(5000));
        assert!(!one_click_body(form, too_large.as_bytes()).await, "a body over the limit");
    }
}
