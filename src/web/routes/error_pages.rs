//! The failure answers that more than one route family gives, kept in one place so that they
//! cannot drift apart: the incomplete-link page (confirm and manage), the not-found page (the
//! signup form and the privacy notice) and the database-unavailable page (confirm and manage), and
//! the `Retry-After` that every storage `503` carries, page or not. A failure only one family
//! knows (an expired confirm link, a refused signup) is answered by that family's error enum.
//! The detail of a failure goes to the log, never to the visitor.
//!
//! An error page tied to a row speaks the row's language (its route builds that [`Chrome`]);
//! one no row speaks for takes the request's: [`visitor_chrome`].

use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderValue, RETRY_AFTER};
use actix_web::{HttpRequest, HttpResponse};

use crate::config::{Config, ListConfig};
use crate::web::frame::{Chrome, href};
use crate::web::routes::form;
use crate::web::routes::render::{MessagePage, html};

/// `Retry-After` of every 503 that says the database could not be written: long enough for a
/// lock holder or a full disk to be dealt with, short enough that a person tries again.
pub const STORAGE_RETRY_AFTER_SECS: u64 = 30;

/// `response` (a 503 for storage) with the `Retry-After` every such answer carries.
pub fn retry_storage_later(mut response: HttpResponse) -> HttpResponse {
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(STORAGE_RETRY_AFTER_SECS));
    response
}

/// The frame of a page no row speaks for (an unknown or expired token, an unreadable body):
/// `list` (or the only list), in the request's `lang` parameter, else its `Accept-Language`,
/// among the list's languages ([`form::page_language`]), else the list's `language`. Without a
/// list, the general frame, in the request's language among every list's
/// ([`form::request_language`]).
pub fn visitor_chrome<'a>(config: &'a Config, req: &HttpRequest, list: Option<&'a ListConfig>) -> Chrome<'a> {
    match list.or_else(|| config.default_list()) {
        Some(list) => Chrome::for_list_in(config, list, form::page_language(req, list)),
        None => Chrome::general_in(config, form::request_language(config, req)),
    }
}

/// 400: a token that cannot be one (cut off or changed on the way).
pub fn incomplete_link(chrome: Chrome<'_>) -> HttpResponse {
    let t = chrome.t;
    html(StatusCode::BAD_REQUEST, &MessagePage::new(chrome, &t.errors.incomplete_title, &t.errors.incomplete))
}

/// 404: a list that is not configured, with the way to the signup page.
pub fn not_found(config: &Config, req: &HttpRequest) -> HttpResponse {
    let chrome = visitor_chrome(config, req, None);
    let t = chrome.t;
    let page = MessagePage::new(chrome, &t.errors.not_found_title, &t.errors.not_found)
        .with_link(href(config, "/"), &t.errors.not_found_link);
    html(StatusCode::NOT_FOUND, &page)
}

/// 503: the database could not be reached; the detail goes to the log only.
pub fn storage_unavailable(chrome: Chrome<'_>, error: &anyhow::Error) -> HttpResponse {
    tracing::error!(error = format!("{error:#}"), "database unavailable");
    let t = chrome.t;
    let page = MessagePage::new(chrome, &t.errors.unavailable_title, &t.errors.unavailable);
    retry_storage_later(html(StatusCode::SERVICE_UNAVAILABLE, &page))
}
