//! The body of `POST /api/signup` as the route reads it: the kind from `Content-Type`
//! (`form::body_kind`), the size limit (`form::read_limited`), then the urlencoded, multipart or
//! JSON parser (`form::parse`), and the typed address through `EmailAddress::parse`.
//!
//! Input: the `Content-Type` value, a newline, the body (see `common::request`).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use signupd::domain::EmailAddress;
use signupd::web::routes::form::{self, BodyError, BodyKind, MAX_FIELDS};

/// The default `server.max_body_bytes`.
const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let (req, payload, body_len) = common::request(data);
    let kind = form::body_kind(&req);
    let Ok(kind) = kind else {
        return;
    };
    let fields = common::block_on(async {
        let bytes = form::read_limited(&req, payload, LIMIT).await?;
        form::parse(kind, &req, bytes).await
    });
    if body_len > LIMIT {
        assert_eq!(fields.err(), Some(BodyError::TooLarge), "a body over the limit was read");
        return;
    }
    let fields = match fields {
        Ok(fields) => fields,
        Err(error) => {
            assert_ne!(error, BodyError::TooLarge, "a body within the limit was refused as too large");
            assert_ne!(error, BodyError::UnsupportedMediaType);
            return;
        }
    };
    // An empty body of any form kind has no fields.
    if body_len == 0 && kind != BodyKind::Json {
        assert!(fields.email.is_none() && !fields.consent);
    }
    // The route's next step: the typed address.
    if let Some(email) = &fields.email {
        let _ = EmailAddress::parse(email);
    }
    // Every field value came out of the body, so none can be longer than it.
    let single = [&fields.email, &fields.source, &fields.website, &fields.return_to].into_iter().flatten();
    let repeated = fields.lists.iter().chain(&fields.tags).chain(&fields.offered);
    for value in single.chain(repeated.clone()) {
        assert!(value.len() <= body_len.max(MAX_FIELDS) * 3, "a field longer than its body");
    }
    // Repeated fields (`list`, `tags`, `offered`) each took at least one byte of the body.
    assert!(repeated.count() <= body_len, "more repeated values than bytes in the body");
});
