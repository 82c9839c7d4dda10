//! The failure answers that more than one route family gives, kept in one place so that they
//! cannot drift apart: the incomplete-link page (confirm and manage), the not-found page (the
//! signup form and the privacy notice) and the database-unavailable page (confirm and manage), and
//! the `Retry-After` that every storage `503` carries, page or not. A failure only one family
//! knows (an expired confirm link, a refused signup) is answered by that family's error enum.
//! The detail of a failure goes to the log, never to the visitor.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderValue, RETRY_AFTER};

use crate::config::Config;
use crate::web::frame::{Chrome, href};
use crate::web::routes::render::{MessagePage, html};

/// `Retry-After` of every 503 that says the database could not be written: long enough for a
/// lock holder or a full disk to be dealt with, short enough that a person tries again.
pub const STORAGE_RETRY_AFTER_SECS: u64 = 30;

/// `response` (a 503 for storage) with the `Retry-After` every such answer carries.
pub fn retry_storage_later(mut response: HttpResponse) -> HttpResponse {
    response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(STORAGE_RETRY_AFTER_SECS));
    response
}

/// 400: a token that cannot be one (cut off or changed on the way).
pub fn incomplete_link(config: &Config) -> HttpResponse {
    let chrome = Chrome::general(config);
    let t = chrome.t;
    html(StatusCode::BAD_REQUEST, &MessagePage::new(chrome, &t.errors.incomplete_title, &t.errors.incomplete))
}

/// 404: a list that is not configured, with the way to the signup page.
pub fn not_found(config: &Config) -> HttpResponse {
    let chrome = Chrome::general(config);
    let t = chrome.t;
    let page = MessagePage::new(chrome, &t.errors.not_found_title, &t.errors.not_found)
        .with_link(href(config, "/"), &t.errors.not_found_link);
    html(StatusCode::NOT_FOUND, &page)
}

/// 503: the database could not be reached; the detail goes to the log only.
pub fn storage_unavailable(config: &Config, error: &anyhow::Error) -> HttpResponse {
    tracing::error!(error = format!("{error:#}"), "database unavailable");
    let chrome = Chrome::general(config);
    let t = chrome.t;
    let page = MessagePage::new(chrome, &t.errors.unavailable_title, &t.errors.unavailable);
    retry_storage_later(html(StatusCode::SERVICE_UNAVAILABLE, &page))
}
