//! The hosted pages of the signup flow: the form (`GET /`, `GET /signup?list=ID`), "check your
//! inbox", and the stylesheets. No JavaScript, no third-party resources; the security headers
//! come from the middleware. GET and HEAD only, and they never write. Every page carries a
//! [`Chrome`]: its language, brand and stylesheets.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::config::{Config, ListConfig};
use crate::frame::{Chrome, href};
use crate::state::AppState;

const STYLESHEET: &str = include_str!("../../static/style.css");

#[derive(Template)]
#[template(path = "pages/signup.html")]
pub struct SignupPage<'a> {
    pub chrome: Chrome<'a>,
    pub list: &'a ListConfig,
    /// The address the visitor typed, shown again after an error (escaped by askama).
    pub email: &'a str,
    pub error: Option<&'a str>,
}

impl std::fmt::Debug for SignupPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignupPage").field("list", &self.list.id).finish_non_exhaustive()
    }
}

#[derive(Debug, Template)]
#[template(path = "pages/check_inbox.html")]
struct CheckInboxPage<'a> {
    chrome: Chrome<'a>,
    list_name: Option<&'a str>,
}

#[derive(Debug, Template)]
#[template(path = "pages/lists.html")]
struct ListsPage<'a> {
    chrome: Chrome<'a>,
    lists: &'a [ListConfig],
}

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

/// The empty form of `list`.
fn empty_form(config: &Config, list: &ListConfig) -> HttpResponse {
    html(StatusCode::OK, &SignupPage { chrome: Chrome::for_list(config, list), list, email: "", error: None })
}

/// `GET /`: the form of the only list, or a choice of lists.
pub async fn index(state: web::Data<AppState>) -> HttpResponse {
    let config = &state.config;
    match config.default_list() {
        Some(list) => empty_form(config, list),
        None => html(StatusCode::OK, &ListsPage { chrome: Chrome::general(config), lists: &config.lists }),
    }
}

/// `GET /signup?list=ID`.
pub async fn signup_form(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let Some(id) = list_param(&req) else {
        return index(state).await;
    };
    match state.config.list(&id) {
        Some(list) => empty_form(&state.config, list),
        None => not_found(&state.config),
    }
}

/// `GET /check-inbox?list=ID`: the same page for every address.
pub async fn check_inbox(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list = list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = Chrome::for_optional(&state.config, list);
    html(StatusCode::OK, &CheckInboxPage { chrome, list_name: list.map(|list| list.name.as_str()) })
}

pub fn not_found(config: &Config) -> HttpResponse {
    let chrome = Chrome::general(config);
    let t = chrome.t;
    let page = MessagePage::new(chrome, &t.errors.not_found_title, &t.errors.not_found)
        .with_link(href(config, "/"), &t.errors.not_found_link);
    html(StatusCode::NOT_FOUND, &page)
}

/// A stylesheet answer; the same headers for all three.
fn css(body: impl actix_web::body::MessageBody + 'static) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header(("Cache-Control", "public, max-age=3600"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(body)
}

fn no_stylesheet() -> HttpResponse {
    HttpResponse::NotFound().content_type("text/css; charset=utf-8").body("")
}

/// `GET /static/style.css`, embedded in the binary.
pub async fn stylesheet() -> HttpResponse {
    css(STYLESHEET)
}

/// `GET /static/list.css?list=ID`: the list's accent colour, generated at start.
pub async fn list_stylesheet(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    match list_param(&req).and_then(|id| state.stylesheets.list(&id)) {
        Some(body) => css(body),
        None => no_stylesheet(),
    }
}

/// `GET /static/custom.css`: the operator's `server.custom_css_file`, read at start.
pub async fn custom_stylesheet(state: web::Data<AppState>) -> HttpResponse {
    match state.stylesheets.custom() {
        Some(body) => css(body),
        None => no_stylesheet(),
    }
}
