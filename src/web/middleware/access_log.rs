//! One line per request: method, path **without the query string**, status, latency and a
//! request id (also sent back as `X-Request-Id`, so an operator can find the line for a visitor's
//! report). Query strings carry tokens, so they are never logged; neither are bodies,
//! headers or the client address.

use std::time::{Duration, Instant};

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
/// Long junk paths from scanners are cut so one request cannot flood the log.
const MAX_LOGGED_PATH: usize = 256;

pub async fn access_log(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let request_id = new_request_id();
    let method = req.method().clone();
    let path = loggable_path(req.path());
    // The metric's label is the route's pattern, never the raw path: a scanner's junk paths must
    // not each become a series.
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".to_owned());

    let result = next.call(req).await;
    let status = match &result {
        Ok(response) => response.status().as_u16(),
        Err(error) => error.as_response_error().status_code().as_u16(),
    };
    record(method.as_str(), &path, route, status, started.elapsed(), &request_id);
    result.map(|mut response| {
        if let Ok(value) = HeaderValue::from_str(&request_id) {
            response.headers_mut().insert(REQUEST_ID, value);
        }
        response
    })
}

/// A new request id, as sent back in `X-Request-Id`.
pub(super) fn new_request_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The access-log line of one request and its duration in the metrics, labelled by `route` (a
/// route's pattern, or `unmatched`). Also written for the requests the HTTP layer refused before
/// any route saw them (`super::connection`).
pub(super) fn record(method: &str, path: &str, route: String, status: u16, elapsed: Duration, request_id: &str) {
    crate::metrics::http_request(route, elapsed);
    let latency_ms = elapsed.as_secs_f64() * 1000.0;
    tracing::info!(
        target: "signupd::access",
        method = %method,
        path = %path,
        status,
        latency_ms = format_args!("{latency_ms:.2}"),
        request_id = %request_id,
        "request"
    );
}

/// The path as logged: `req.path()` never includes the query; control characters are escaped by
/// tracing's `Display`, and the length is capped.
fn loggable_path(path: &str) -> String {
    if path.len() <= MAX_LOGGED_PATH {
        return path.to_owned();
    }
    let mut end = MAX_LOGGED_PATH;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &path[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_paths_are_cut_on_a_char_boundary() {
        let long = "é".repeat(300);
        let logged = loggable_path(&long);
        assert!(logged.len() <= MAX_LOGGED_PATH + '…'.len_utf8());
        assert!(logged.ends_with('…'));
        assert_eq!(loggable_path("/healthz"), "/healthz");
    }
}
