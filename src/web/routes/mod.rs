//! HTTP routes, one file per endpoint family, its GET pages and POST actions side by side. A
//! family that can fail in more than one way has one error enum, and one `impl` maps each of its
//! variants to a status and a page.
//!
//! - `signup.rs`: the form (`GET /`, `GET /signup`), `POST /api/signup` with its CORS preflight,
//!   and `GET /check-inbox`; refusals are a `Refusal`.
//! - `origin.rs`: what `signup.rs` and `send.rs` share about a request's origin: CORS for the
//!   lists' `allowed_origins`, and the `return_to` a list allows.
//! - `inbox.rs`: the "open your inbox" link of the check-inbox and surge pages.
//! - `send.rs`: surge mode's page with the button (`GET /check-inbox?…&send=TOKEN`) and `POST
//!   /api/send`.
//! - `confirm.rs`: `GET /confirm`, `POST /api/confirm` and `GET /confirmed`; failures are a
//!   `ConfirmError`.
//! - `manage.rs`: `GET /manage` (the preference page), `POST /api/manage`, `GET /saved`, `GET
//!   /removed`, and one-click `POST /api/unsubscribe` with its `GET` redirect; failures are a
//!   `ManageError`.
//! - `privacy.rs`: `GET /privacy`, the notice written from the configuration.
//! - `health.rs`: `GET /healthz` and `GET /readyz`.
//! - `relay.rs`: `POST /api/relay/<name>`, a relay's bounce and complaint events.
//! - `stylesheets.rs`: `GET /static/style.css`, `/static/list.css` and `/static/custom.css`.
//! - `error_pages.rs`: the failure answers more than one family gives (incomplete link, not found,
//!   database unavailable) and the `Retry-After` of every storage 503.
//! - `render.rs`: a page as an answer with its status, and the one-paragraph message page.
//! - [`form`]: reading the query string and request bodies, for every family.

mod confirm;
mod error_pages;
// Public for the fuzz targets (`fuzz/`), which read bodies exactly as the routes do.
#[doc(hidden)]
pub mod form;
mod health;
mod inbox;
mod manage;
mod origin;
mod privacy;
mod relay;
mod render;
mod send;
mod signup;
mod signup_fields;
mod stylesheets;

/// The `Retry-After` of every answer that the database could not give (the operator API's too).
pub use error_pages::STORAGE_RETRY_AFTER_SECS;
#[doc(hidden)]
pub use manage::is_one_click_body;
/// The pages' stylesheet, which the status page on the metrics listener links too, and the
/// answer every stylesheet is served in.
pub use stylesheets::{css, stylesheet};

use actix_web::{guard, web};

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    // Pages answer GET and HEAD (scanners and prefetchers send both) and never write.
    let read = || web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
    cfg.route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz))
        .route("/", read().to(signup::index))
        .route("/signup", read().to(signup::signup_form))
        .route("/check-inbox", read().to(signup::check_inbox))
        .route("/static/style.css", read().to(stylesheets::stylesheet))
        .route("/static/list.css", read().to(stylesheets::list_stylesheet))
        .route("/static/custom.css", read().to(stylesheets::custom_stylesheet))
        .route("/privacy", read().to(privacy::privacy_page))
        // Browsers ask for it on every first visit; an empty answer keeps 404s out of the log.
        .route("/favicon.ico", read().to(|| async { actix_web::HttpResponse::NoContent().finish() }))
        .route("/confirm", read().to(confirm::confirm_page))
        .route("/confirmed", read().to(confirm::confirmed_page))
        .route("/manage", read().to(manage::manage_page))
        .route("/removed", read().to(manage::removed_page))
        .route("/saved", read().to(manage::saved_page))
        .route("/api/confirm", web::post().to(confirm::confirm))
        .route("/api/manage", web::post().to(manage::manage))
        .route("/api/unsubscribe", web::post().to(manage::one_click))
        .route("/api/unsubscribe", read().to(manage::unsubscribe_redirect))
        .service(
            web::resource("/api/relay/{name}")
                .route(web::post().to(relay::relay))
                .default_service(web::to(relay::method_not_allowed)),
        )
        .service(
            web::resource("/api/send")
                .route(web::post().to(send::send))
                .route(web::route().method(actix_web::http::Method::OPTIONS).to(signup::preflight))
                .default_service(web::to(send::method_not_allowed)),
        )
        .service(
            web::resource("/api/signup")
                .route(web::post().to(signup::signup))
                .route(web::route().method(actix_web::http::Method::OPTIONS).to(signup::preflight))
                .default_service(web::to(signup::method_not_allowed)),
        );
}
