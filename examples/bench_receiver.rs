//! Benchmark webhook receiver: answers every POST with 204 at once and counts what it received,
//! so `bench/webhooks.sh` measures how fast signupd delivers, not how fast a receiver works.
//! `GET /count` answers the number of events received so far.
//!
//! Run: `cargo run --release --example bench_receiver [ADDR]` (default `127.0.0.1:18082`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::{App, HttpResponse, HttpServer, web};

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18082".to_owned());
    let received = web::Data::new(Arc::new(AtomicU64::new(0)));
    HttpServer::new(move || {
        App::new()
            .app_data(received.clone())
            .route(
                "/count",
                web::get().to(|received: web::Data<Arc<AtomicU64>>| async move {
                    HttpResponse::Ok().body(received.load(Ordering::SeqCst).to_string())
                }),
            )
            .default_service(web::post().to(|received: web::Data<Arc<AtomicU64>>, _body: web::Bytes| async move {
                received.fetch_add(1, Ordering::SeqCst);
                HttpResponse::NoContent().finish()
            }))
    })
    .bind(addr)?
    .run()
    .await
}
