//! What the pages of more than one route family use: [`html`], which answers with a rendered
//! page, the one-paragraph [`MessagePage`], the `list` query parameter and the not-found page.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use crate::config::Config;
use crate::frame::{Chrome, href};

#[derive(Debug, Template)]
#[template(path = "pages/message.html")]
pub struct MessagePage<'a> {
    pub chrome: Chrome<'a>,
    pub title: String,
    pub message: String,
    pub link: Option<String>,
    pub link_text: String,
}

impl<'a> MessagePage<'a> {
    /// A page with a title and one paragraph.
    pub fn new(chrome: Chrome<'a>, title: impl ToString, message: impl ToString) -> Self {
        Self { chrome, title: title.to_string(), message: message.to_string(), link: None, link_text: String::new() }
    }

    pub fn with_link(mut self, href: String, text: impl ToString) -> Self {
        self.link = Some(href);
        self.link_text = text.to_string();
        self
    }
}

/// Renders a page with `status`. Rendering only fails on a template bug; the visitor then gets
/// a plain 500 and the log gets the detail.
pub fn html(status: StatusCode, page: &impl Template) -> HttpResponse {
    match page.render() {
        Ok(body) => HttpResponse::build(status).content_type("text/html; charset=utf-8").body(body),
        Err(error) => {
            tracing::error!(error = %error, "cannot render a page");
            HttpResponse::InternalServerError().content_type("text/plain; charset=utf-8").body("internal error")
        }
    }
}

/// The `list` query parameter, if present.
pub fn list_param(req: &HttpRequest) -> Option<String> {
    super::form::query_param(req, "list")
}

pub fn not_found(config: &Config) -> HttpResponse {
    let chrome = Chrome::general(config);
    let t = chrome.t;
    let page = MessagePage::new(chrome, &t.errors.not_found_title, &t.errors.not_found)
        .with_link(href(config, "/"), &t.errors.not_found_link);
    html(StatusCode::NOT_FOUND, &page)
}
