//! HTTP routes, one file per endpoint family (GET page and POST action side by side).

mod health;
pub mod pages;
mod signup;

use actix_web::{guard, web};

/// Registers every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    // Pages answer GET and HEAD (scanners and prefetchers send both) and never write.
    let read = || web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
    cfg.route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz))
        .route("/", read().to(pages::index))
        .route("/signup", read().to(pages::signup_form))
        .route("/check-inbox", read().to(pages::check_inbox))
        .route("/static/style.css", read().to(pages::stylesheet))
        .service(
            web::resource("/api/signup")
                .route(web::post().to(signup::signup))
                .route(
                    web::route()
                        .method(actix_web::http::Method::OPTIONS)
                        .to(signup::preflight),
                )
                .default_service(web::to(signup::method_not_allowed)),
        );
}
