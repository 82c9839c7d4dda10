//! The body check of RFC 8058 one-click unsubscribe (`POST /api/unsubscribe`):
//! `routes::is_one_click_body`, the function the route calls.
//!
//! Input: the `Content-Type` value, a newline, the body (see `common::request`).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

/// The default `server.max_body_bytes`.
const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let (req, payload, body_len) = common::request(data);
    let content_type = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    let one_click = common::block_on(signupd::web::routes::is_one_click_body(&req, payload, LIMIT));
    if one_click {
        // Only a form within the limit can say it; JSON is not a form here.
        assert!(body_len <= LIMIT);
        assert!(
            matches!(content_type.as_deref(), Some("application/x-www-form-urlencoded" | "multipart/form-data")),
            "accepted as {content_type:?}"
        );
    }
    // The exact RFC 8058 body, as the only field or the first of a few, is always accepted.
    let body = data.iter().position(|&b| b == b'\n').map(|at| &data[at + 1..]).unwrap_or_default();
    let first_field = body.split(|&b| b == b'&').next().unwrap_or_default();
    let few_fields = body.iter().filter(|&&b| b == b'&').count() < signupd::web::routes::form::MAX_FIELDS;
    if content_type.as_deref() == Some("application/x-www-form-urlencoded")
        && first_field == b"List-Unsubscribe=One-Click"
        && few_fields
        && body.len() <= LIMIT
    {
        assert!(one_click, "the RFC 8058 body was refused");
    }
});
