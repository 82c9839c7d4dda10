//! `POST /api/relay/<name>`: a configured relay's bounce and complaint events
//! (`docs/http-api.md`, "Relay events"). The work is `relays::hear`'s; this maps its outcome to
//! an answer a relay understands — 2xx stops its retries, 401 says the request was not its, 503
//! asks it to try again later.
//!
//! | status | when |
//! |---|---|
//! | 200 | heard: acted on, a duplicate, an unknown event type, an SNS (un)subscription |
//! | 400 | authenticated, but not the kind's JSON |
//! | 401 | the signature or credentials do not verify, the event is stale, the SNS topic or URL is not allowed |
//! | 404 | no relay of that name |
//! | 405 | not a POST |
//! | 408 | the body did not arrive within `server.request_timeout` |
//! | 413 | the body is over 256 KiB |
//! | 503 | the database cannot be written, an SNS certificate or subscription URL cannot be fetched |

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;

use super::error_pages::retry_storage_later;
use super::form::{BodyError, read_limited};
use crate::relays::configured::Credential;
use crate::relays::hear::{self, NotHeard};
use crate::web::state::AppState;

/// The largest request body a relay may send (SendGrid batches events; a batch of a thousand
/// small events fits).
pub const MAX_RELAY_BODY: usize = 256 * 1024;

pub async fn relay(
    req: HttpRequest,
    payload: web::Payload,
    name: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let Some(relay) = state.relays.get(&name) else {
        return answer(StatusCode::NOT_FOUND, "unknown_relay");
    };
    let body = match read_limited(&req, payload, MAX_RELAY_BODY).await {
        Ok(body) => body,
        Err(BodyError::TooLarge) => return answer(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        Err(BodyError::TimedOut) => return answer(StatusCode::REQUEST_TIMEOUT, "request_timeout"),
        Err(_) => return answer(StatusCode::BAD_REQUEST, "invalid_request"),
    };
    let headers = |name: &str| req.headers().get(name).and_then(|value| value.to_str().ok());
    let relay_name = relay.config.name.as_str();
    match hear::relay_request(state.hearing(), relay, &state.relays.certificates, headers, &body).await {
        Ok(heard) => HttpResponse::Ok().json(json!({
            "acted": heard.acted,
            "duplicates": heard.duplicates,
            "subscribed": heard.subscribed,
        })),
        Err(NotHeard::Refused(refusal)) => {
            tracing::warn!(relay = relay_name, refusal = %refusal, "a relay request was refused");
            let mut response = answer(StatusCode::UNAUTHORIZED, "unauthorized");
            if matches!(relay.credential, Credential::Postmark(_)) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"signupd relay\""));
            }
            response
        }
        Err(NotHeard::Unreadable(why)) => {
            tracing::warn!(relay = relay_name, why = %why, "an authenticated relay request could not be read");
            answer(StatusCode::BAD_REQUEST, "invalid_payload")
        }
        Err(NotHeard::Unavailable(error)) => {
            tracing::error!(relay = relay_name, error = format!("{error:#}"), "a relay event could not be recorded");
            retry_storage_later(answer(StatusCode::SERVICE_UNAVAILABLE, "unavailable"))
        }
        Err(NotHeard::Fetch(error)) => {
            // Not the database: Amazon's host could not be reached, or answered an error.
            tracing::warn!(
                relay = relay_name,
                error = format!("{error:#}"),
                "an SNS message of an allowed topic needs a fetch from Amazon that failed; answered 503, so SNS sends \
                 it again"
            );
            answer(StatusCode::SERVICE_UNAVAILABLE, "unavailable")
        }
    }
}

/// Anything but POST.
pub async fn method_not_allowed() -> HttpResponse {
    let mut response = answer(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

fn answer(status: StatusCode, error: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({ "error": error }))
}
