//! Removal, unsubscribe and the preference page (`docs/http-api.md`). `GET /manage` shows the
//! preference page ([`crate::subscribers::preferences`]: every list of the token's sender, ticked where the
//! address is confirmed) and never writes; `POST /api/manage` saves it (`save=preferences`, with
//! `list` once per ticked list; ends at `GET /saved?list=ID`), or removes the address from all
//! of the sender's lists (`all=remove`; ends at `GET /removed?list=ID`); `POST
//! /api/unsubscribe?token=T` with the body `List-Unsubscribe=One-Click` is RFC 8058 one-click
//! unsubscribe from the token's one list and acts at once; `GET /api/unsubscribe` only
//! redirects to the manage page. Every failure is a [`ManageError`], answered in one place.
//!
//! Both removal tokens (`<id>.<secret>`, looked up by primary key and checked against the stored
//! hash of the secret; or the 43-character form mailed before, looked up by its hash) and signed
//! unsubscribe tokens (verified by signature, naming list and row) are accepted. Removing
//! deletes the row, its queued mail and any intake item for the address in one transaction,
//! and records a suppression hash: `not_me` if the row was still pending, `unsubscribed` if it
//! was confirmed. A repeat, or a well-formed token that matches nothing, ends the same way
//! (`/removed`, whatever the POST asked): it reveals nothing. A link that names no row (any
//! more) shows the page from before the preference page: one button that removes the row.
//!
//! A POST with only the token (no `save`, no `all`: what the manage page posted before it
//! became the preference page, and what API clients send) keeps its meaning: it removes the
//! token's row, as above. The page's own form always carries `save=preferences`, so a save
//! with nothing ticked ("untick everything") is told apart from it. A body that is not an
//! urlencoded or multipart form is `415`, one over `server.max_body_bytes` `413`, one with more
//! than `form::MAX_FIELDS` fields `400`; none of them writes anything.
//!
//! **Languages.** `/saved` and `/removed` speak the language of the token's row: the POST's
//! redirect carries it as `lang=` (for a multilingual list). When the token names no row any
//! more, the POST's `lang` field, else its `Accept-Language`, decides among the list's languages,
//! as for every error page no row speaks for ([`error_pages::visitor_chrome`]). The one-click
//! answers stay English on purpose: see [`ManageError::plain`].

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::config::presentation::Language;
use crate::config::tokens::{TokenForm, sha256_hex};
use crate::subscribers::preferences::{Choice, Preferences};
use crate::subscribers::subscription::{ConfirmMethod, RemovalChannel, RemovalTarget, Removed};
use crate::web::frame::{Chrome, href};
use crate::web::routes::error_pages;
use crate::web::routes::form::{self, BodyError, BodyKind};
use crate::web::routes::render::{MessagePage, framed_pages, html};
use crate::web::state::AppState;

framed_pages!(ManagePage, PreferencesPage);

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

/// The preference page: the sender's lists, each with its box, and "remove me from all".
#[derive(Template)]
#[template(path = "pages/preferences.html")]
struct PreferencesPage<'a> {
    chrome: Chrome<'a>,
    /// The token's list's site name (or list name), for the introduction.
    site: &'a str,
    token: &'a str,
    choices: Vec<Choice<'a>>,
}

impl std::fmt::Debug for PreferencesPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreferencesPage").field("choices", &self.choices).finish_non_exhaustive()
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
    /// A manage POST whose body is no form this endpoint reads: 415 (another content type),
    /// 413 (over `server.max_body_bytes`), 400 (malformed, or too many fields), 408 (too slow;
    /// `form::body_deadline` answers it).
    Unreadable(BodyError),
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
    /// No row speaks for any of them: the request's language.
    fn page(self, state: &AppState, req: &HttpRequest) -> HttpResponse {
        let chrome = error_pages::visitor_chrome(&state.config, req, None);
        match self {
            // `NotOneClick` comes only from the one-click endpoint, which answers with `plain`.
            Self::MalformedToken | Self::NotOneClick => error_pages::incomplete_link(chrome),
            Self::Unreadable(error) => {
                let status = match error {
                    BodyError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
                    BodyError::Malformed => StatusCode::BAD_REQUEST,
                    BodyError::TimedOut => StatusCode::REQUEST_TIMEOUT,
                };
                let t = chrome.t;
                html(status, &MessagePage::new(chrome, &t.preferences.unreadable_title, &t.preferences.unreadable))
            }
            Self::StorageUnavailable(error) => error_pages::storage_unavailable(chrome, &error),
        }
    }

    /// For the one-click POST, which a mail provider sends without cookies or a browser (RFC 8058
    /// §3.1): one line of plain text. It stays English, outside the catalogues: no person reads
    /// it (the provider only looks at the status; RFC 8058 §3.2 wants no page), and the POST
    /// carries nothing that tells a language (no `Accept-Language` of the subscriber, no row
    /// before the token is read).
    fn plain(self) -> HttpResponse {
        match self {
            Self::MalformedToken => plain_text(StatusCode::BAD_REQUEST, "Invalid unsubscribe link."),
            // `Unreadable` comes only from the manage POST, which answers with `page`.
            Self::NotOneClick | Self::Unreadable(_) => {
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

fn preferences(state: &AppState) -> Preferences<'_> {
    Preferences::new(state.subscriptions())
}

/// Logs and counts a removal.
fn record_removal(removed: &Removed, via: RemovalChannel) {
    tracing::info!(list = %removed.list_id, reason = removed.reason.as_str(), via = via.as_str(), "address removed");
    crate::metrics::removal(&removed.list_id, removed.reason.as_str(), via.as_str());
}

/// Removes the row a token names; returns the list id to show, if known.
async fn remove(state: &AppState, form: &TokenForm, via: RemovalChannel) -> anyhow::Result<Option<String>> {
    let (target, claimed_list) = target(form);
    let Some(removed) = state.subscriptions().remove(&target, via, state.clock.now()).await? else {
        return Ok(claimed_list);
    };
    record_removal(&removed, via);
    Ok(Some(removed.list_id))
}

/// "Remove me from all": removes the address from every list of the token's sender; returns
/// the list id to show, if known, and the language of the token's row.
async fn remove_all(state: &AppState, form: &TokenForm) -> anyhow::Result<(Option<String>, Option<Language>)> {
    let (target, claimed_list) = target(form);
    let Some((list_id, language, removed)) = preferences(state).remove_all(&target, state.clock.now()).await? else {
        return Ok((claimed_list, None));
    };
    for removed in &removed {
        record_removal(removed, RemovalChannel::Manage);
    }
    Ok((Some(list_id), language))
}

/// Saves the preference page; returns where to send the visitor: `/saved?list=ID` in the row's
/// language, or `/removed` as for any other POST when the token names no row.
async fn save(
    state: &AppState,
    form: &TokenForm,
    fields: &[(String, String)],
    asked: &Asked<'_>,
) -> anyhow::Result<String> {
    let (target, claimed_list) = target(form);
    let ticked: Vec<String> =
        fields.iter().filter(|(name, _)| name == "list").map(|(_, value)| value.clone()).collect();
    let Some(saved) = preferences(state).save(&target, &ticked, state.clock.now()).await? else {
        return Ok(removed_path(state, claimed_list, None, asked));
    };
    let method = ConfirmMethod::Preferences.as_str();
    for (list, source) in &saved.confirmed {
        tracing::info!(list = %list, method, "signup confirmed");
        crate::metrics::confirmation(list, method, None, source.as_deref());
    }
    for removed in &saved.removed {
        record_removal(removed, RemovalChannel::Manage);
    }
    let lang = state.config.list(&saved.list_id).map(|list| list.lang_query(saved.language)).unwrap_or_default();
    Ok(format!("/saved?list={}{lang}", saved.list_id))
}

/// What a manage POST says of its visitor's language: its `lang` field and `Accept-Language`.
struct Asked<'a> {
    lang: Option<&'a str>,
    accept_language: Option<&'a str>,
}

/// `/removed`, naming the list when it is known, in `language` (the row's), else the one the
/// POST asks for among the list's.
fn removed_path(state: &AppState, list_id: Option<String>, language: Option<Language>, asked: &Asked<'_>) -> String {
    let Some(id) = list_id else {
        return "/removed".to_owned();
    };
    let lang = state.config.list(&id).map_or_else(String::new, |list| {
        list.lang_query(language.unwrap_or_else(|| list.visitor_language(asked.lang, asked.accept_language)))
    });
    format!("/removed?list={id}{lang}")
}

fn parse_token(state: &AppState, token: Option<&str>) -> Result<TokenForm, ManageError> {
    token.and_then(|token| TokenForm::parse(token, &state.keyring).ok()).ok_or(ManageError::MalformedToken)
}

/// `GET /manage?token=T`: reads, never writes.
pub async fn manage_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    try_manage_page(&req, &state).await.unwrap_or_else(|error| error.page(&state, &req))
}

async fn try_manage_page(req: &HttpRequest, state: &AppState) -> Result<HttpResponse, ManageError> {
    let raw = form::query_param(req, "token");
    let form = parse_token(state, raw.as_deref())?;
    let token = raw.as_deref().unwrap_or_default();
    let (target, claimed_list) = target(&form);
    if let Some(view) = preferences(state).view(&target).await? {
        let chrome = Chrome::for_list_in(&state.config, view.list, view.language);
        let page = PreferencesPage { chrome, site: view.list.site(), token, choices: view.choices };
        return Ok(html(StatusCode::OK, &page));
    }
    // The link names no row (any more): the page from before, whose button ends at `/removed`
    // like any POST of such a token, so the page says no more than the POST would.
    let list = claimed_list.and_then(|id| state.config.list(&id));
    let chrome = error_pages::visitor_chrome(&state.config, req, list);
    let list_name = list.map(|list| list.name.as_str());
    Ok(html(StatusCode::OK, &ManagePage { chrome, list_name, token }))
}

/// `POST /api/manage` with the form body `token=T`, and `save=preferences` with `list` once per
/// ticked list, or `all=remove`.
pub async fn manage(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    try_manage(&req, payload, &state).await.unwrap_or_else(|error| error.page(&state, &req))
}

async fn try_manage(req: &HttpRequest, payload: web::Payload, state: &AppState) -> Result<HttpResponse, ManageError> {
    let fields = read_fields(req, payload, state.config.server.max_body_bytes).await?;
    let form = parse_token(state, form::field(&fields, "token"))?;
    let asked = Asked { lang: form::field(&fields, "lang"), accept_language: form::accept_language(req) };
    let path = match (form::field(&fields, "all"), form::field(&fields, "save")) {
        (Some("remove"), _) => {
            let (list_id, language) = remove_all(state, &form).await?;
            removed_path(state, list_id, language, &asked)
        }
        (_, Some("preferences")) => save(state, &form, &fields, &asked).await?,
        _ => removed_path(state, remove(state, &form, RemovalChannel::Manage).await?, None, &asked),
    };
    let location = href(&state.config, &path);
    Ok(HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish())
}

/// The fields of a manage POST: an urlencoded or multipart form within the body limit.
async fn read_fields(
    req: &HttpRequest,
    payload: web::Payload,
    limit: usize,
) -> Result<Vec<(String, String)>, ManageError> {
    let kind = form::body_kind(req)
        .ok()
        .filter(|kind| *kind != BodyKind::Json)
        .ok_or(ManageError::Unreadable(BodyError::UnsupportedMediaType))?;
    let body = form::read_limited(req, payload, limit).await.map_err(ManageError::Unreadable)?;
    form::form_fields(kind, req, body).await.map_err(ManageError::Unreadable)
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
    let chrome = error_pages::visitor_chrome(&state.config, &req, list);
    let t = chrome.t;
    let message = list.map_or_else(|| t.manage.removed_any.to_string(), |list| t.manage.removed.with(&list.name));
    html(StatusCode::OK, &MessagePage::new(chrome, &t.manage.removed_title, message))
}

/// `GET /saved?list=ID`: the preference page was saved.
pub async fn saved_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list = form::list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = error_pages::visitor_chrome(&state.config, &req, list);
    let t = chrome.t;
    let message =
        list.map_or_else(|| t.preferences.saved_any.to_string(), |list| t.preferences.saved.with(list.site()));
    html(StatusCode::OK, &MessagePage::new(chrome, &t.preferences.saved_title, message))
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
