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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::presentation::Language;

    /// A page whose template fails as it renders (what a template bug does).
    #[derive(Template)]
    #[template(source = "<p>{{ self.broken()? }}</p>", ext = "html")]
    struct Broken {
        t: &'static Messages,
    }

    impl Broken {
        fn broken(&self) -> askama::Result<String> {
            Err(askama::Error::Fmt)
        }
    }

    impl Page for Broken {
        fn messages(&self) -> &'static Messages {
            self.t
        }
    }

    #[actix_web::test]
    async fn a_page_that_cannot_be_rendered_is_a_plain_500_in_the_pages_language() {
        for (code, words) in [
            ("en", "Something went wrong on our side. Please try again in a minute."),
            ("de", "Bei uns ist etwas schiefgegangen. Bitte versuchen Sie es in einer Minute noch einmal."),
            ("fr", "Un problème est survenu de notre côté. Veuillez réessayer dans une minute."),
        ] {
            let page = Broken { t: Language::find(code).expect("a built-in language").messages() };

            let response = html(StatusCode::OK, &page);

            assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR, "{code}");
            let content_type = response.headers().get("content-type").and_then(|value| value.to_str().ok());
            assert_eq!(content_type, Some("text/plain; charset=utf-8"), "{code}");
            let body = actix_web::body::to_bytes(response.into_body()).await.unwrap();
            assert_eq!(std::str::from_utf8(&body).unwrap(), words, "{code}");
        }
    }
}
