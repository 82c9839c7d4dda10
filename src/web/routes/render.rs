//! How a route answers with a page: [`html`] renders an askama page with its status, and
//! [`MessagePage`] is the page of a title, one paragraph and perhaps a link (confirmed, removed,
//! and most error pages). Pages have no JavaScript and no third-party resources; the security
//! headers come from [`crate::web::middleware`]; every page carries a [`Chrome`]: its language, brand
//! and stylesheets.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use askama::Template;

use crate::config::presentation::Messages;
use crate::web::frame::Chrome;

/// A visitor's page: a template with its [`Chrome`], whose language [`html`] also answers in
/// when the page cannot be rendered.
pub trait Page: Template {
    /// The catalogue of the page's language.
    fn messages(&self) -> &'static Messages;
}

/// [`Page`] for page structs whose frame is their `chrome` field.
macro_rules! framed_pages {
    ($($page:ident),* $(,)?) => {
        $(impl $crate::web::routes::render::Page for $page<'_> {
            fn messages(&self) -> &'static $crate::config::presentation::Messages {
                self.chrome.t
            }
        })*
    };
}
pub(crate) use framed_pages;

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

framed_pages!(MessagePage);

/// Renders a page with `status`. Rendering only fails on a template bug; the visitor then gets
/// a plain 500 in the page's language and the log gets the detail.
pub fn html(status: StatusCode, page: &impl Page) -> HttpResponse {
    match page.render() {
        Ok(body) => HttpResponse::build(status).content_type("text/html; charset=utf-8").body(body),
        Err(error) => {
            tracing::error!(error = %error, "cannot render a page");
            HttpResponse::InternalServerError()
                .content_type("text/plain; charset=utf-8")
                .body(page.messages().errors.internal.to_string())
        }
    }
}
