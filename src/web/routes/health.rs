//! `/healthz` answers while the process runs; `/readyz` answers 200 only while the
//! database is migrated and writable, so a load balancer stops sending signups that could not be
//! stored. `/readyz` is public and its probe goes through the one writer thread, so the probe is
//! rationed ([`crate::storage::Writer::is_ready`]): at most one a second, however many ask, and
//! an answer is at most a second old.

use actix_web::{HttpResponse, web};

use crate::web::state::AppState;

pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("ok")
}

pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if state.writer.is_ready().await {
        HttpResponse::Ok().content_type("text/plain; charset=utf-8").body("ready")
    } else {
        HttpResponse::ServiceUnavailable()
            .content_type("text/plain; charset=utf-8")
            .insert_header(("Retry-After", "5"))
            .body("not ready: the database cannot be written")
    }
}
