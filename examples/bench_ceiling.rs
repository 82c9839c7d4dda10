//! Benchmark ceiling: the cheapest actix-web handler of the same shape as
//! `POST /api/signup` — parse a small urlencoded form, answer 303 with a
//! `Location` header. `bench/signup.sh` drives it with the same wrk command as
//! signupd so that `BENCHMARKS.md` can report signupd's throughput as a
//! fraction of what this machine can do at all.
//!
//! Run: `cargo run --release --example bench_ceiling [ADDR]`
//! (default `127.0.0.1:18081`).

use std::collections::HashMap;

use actix_web::http::header;
use actix_web::{App, HttpResponse, HttpServer, web};

async fn signup(form: web::Form<HashMap<String, String>>) -> HttpResponse {
    // Touch the fields the way a real handler would, so the parse is not
    // optimised into nothing.
    let ok = form.get("email").is_some_and(|e| e.contains('@')) && form.get("consent").is_some_and(|c| !c.is_empty());
    if !ok {
        return HttpResponse::BadRequest().finish();
    }
    let list = form.get("list").map_or("default", String::as_str);
    HttpResponse::SeeOther().insert_header((header::LOCATION, format!("/check-inbox?list={list}"))).finish()
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18081".to_owned());
    HttpServer::new(|| App::new().route("/api/signup", web::post().to(signup))).bind(addr)?.run().await
}
