//! The stylesheets every page links ([`crate::web::frame`]): `GET /static/style.css`, built into the
//! binary; `GET /static/list.css?list=ID`, a list's accent colour, generated at start; `GET
//! /static/custom.css`, the operator's `server.custom_css_file`, read at start. Cacheable for an
//! hour; an unknown list or no custom file gets an empty `404` stylesheet. Nothing here reads the
//! disk or the database while serving.

use actix_web::{HttpRequest, HttpResponse, web};

use crate::web::routes::form::list_param;
use crate::web::state::AppState;

const STYLESHEET: &str = include_str!("../../../static/style.css");

/// A stylesheet answer; the same headers for all three, and for the status page's
/// (`crate::operator::status`) on the metrics listener.
pub fn css(body: impl actix_web::body::MessageBody + 'static) -> HttpResponse {
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
