//! The hosted pages of the signup flow (SPEC §4.1): the form (`GET /`, `GET /signup?list=ID`),
//! "check your inbox", and the stylesheet. No JavaScript, no third-party resources; the security
//! headers come from the middleware. GET and HEAD only, and they never write.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::config::{Config, ListConfig};
use crate::state::AppState;

const STYLESHEET: &str = include_str!("../../static/style.css");

#[derive(Template)]
#[template(path = "pages/signup.html")]
pub struct SignupPage<'a> {
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
    list_name: Option<&'a str>,
}

#[derive(Debug, Template)]
#[template(path = "pages/lists.html")]
struct ListsPage<'a> {
    lists: &'a [ListConfig],
}

#[derive(Debug, Template)]
#[template(path = "pages/message.html")]
pub struct MessagePage<'a> {
    pub title: &'a str,
    pub message: &'a str,
    pub link: Option<&'a str>,
    pub link_text: &'a str,
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

/// The list a form is for when none is named: the only list, if there is exactly one.
pub fn default_list(config: &Config) -> Option<&ListConfig> {
    match config.lists.as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

/// `GET /`: the form of the only list, or a choice of lists.
pub async fn index(state: web::Data<AppState>) -> HttpResponse {
    match default_list(&state.config) {
        Some(list) => html(StatusCode::OK, &SignupPage { list, email: "", error: None }),
        None => html(StatusCode::OK, &ListsPage { lists: &state.config.lists }),
    }
}

/// `GET /signup?list=ID`.
pub async fn signup_form(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let Some(id) = list_param(&req) else {
        return index(state).await;
    };
    match state.config.list(&id) {
        Some(list) => html(StatusCode::OK, &SignupPage { list, email: "", error: None }),
        None => not_found(),
    }
}

/// `GET /check-inbox?list=ID`: the same page for every address.
pub async fn check_inbox(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let list_name = list_param(&req).and_then(|id| state.config.list(&id)).map(|list| list.name.as_str());
    html(StatusCode::OK, &CheckInboxPage { list_name })
}

pub fn not_found() -> HttpResponse {
    html(
        StatusCode::NOT_FOUND,
        &MessagePage {
            title: "Not found",
            message: "There is no signup form here.",
            link: Some("/"),
            link_text: "Go to the signup form",
        },
    )
}

/// `GET /static/style.css`, embedded in the binary.
pub async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header(("Cache-Control", "public, max-age=3600"))
        .insert_header(("X-Content-Type-Options", "nosniff"))
        .body(STYLESHEET)
}
