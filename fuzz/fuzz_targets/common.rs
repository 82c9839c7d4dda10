//! What the body targets share: a request built from fuzz input, and a runtime to await the
//! async readers on.

use std::sync::OnceLock;

use actix_web::FromRequest;
use actix_web::HttpRequest;
use actix_web::test::TestRequest;
use actix_web::web;

/// Splits the input at its first newline: the `Content-Type` header value before it, the body
/// after it. A human-readable layout, so the seed files can be written by hand. Input without a
/// newline, or whose first line is not a valid header value, is a request without `Content-Type`.
pub fn request(data: &[u8]) -> (HttpRequest, web::Payload, usize) {
    let (content_type, body) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (Some(&data[..at]), &data[at + 1..]),
        None => (None, data),
    };
    let mut test = TestRequest::post().uri("/api/signup");
    if let Some(value) = content_type.and_then(|v| actix_web::http::header::HeaderValue::from_bytes(v).ok()) {
        test = test.insert_header((actix_web::http::header::CONTENT_TYPE, value));
    }
    let body_len = body.len();
    let (req, mut payload) = test.set_payload(body.to_vec()).to_http_parts();
    let payload = block_on(web::Payload::from_request(&req, &mut payload)).expect("a payload is always extractable");
    (req, payload, body_len)
}

/// Runs a future to completion on one current-thread runtime, built once per process.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| tokio::runtime::Builder::new_current_thread().build().expect("a current-thread runtime"))
        .block_on(future)
}
