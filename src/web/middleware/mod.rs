//! Middleware applied to every route: the access log and the security headers of HTML pages.
//!
//! # What never reaches it: a head the HTTP layer cannot parse
//!
//! actix-http decodes each request head in its connection dispatcher (`h1::dispatcher`, with
//! httparse) before any service runs. A head httparse refuses — a NUL byte or another control
//! character in a header value, a broken request line — is answered there with a bare
//! `400 Bad Request` (no body, no `X-Request-Id`) and the connection closed; no route and no
//! middleware ever sees it, so it has no access-log line. actix-http then logs
//! `stream error: Request parse error: …` at `ERROR`, though any client can cause it.
//!
//! What was possible, and the decision:
//!
//! - actix-web offers no hook between the socket and the dispatcher's parser (`on_connect`
//!   runs before any byte is read and cannot answer), and httparse's lenient options are not
//!   reachable through actix-http.
//! - Answering such a request with signupd's JSON 400, a request id and an access-log line
//!   would take serving without `HttpServer`: an `actix-server` service in front of
//!   `HttpService` that peeks at each connection's first head, parses it with httparse and
//!   answers a refused one itself. It would see only the first head of a connection (a later
//!   one on a kept-alive connection is past the point of peeking), and it replaces the server
//!   assembly every route depends on. Not done.
//! - Done: the line is written at `WARN` (`crate::app::telemetry` rewrites the level of
//!   actix-http's `stream error` line, which only a client's failure produces), so a scanner's
//!   junk cannot page anyone. The bare 400 stays actix-http's.

mod access_log;
mod security_headers;

pub use access_log::access_log;
pub use security_headers::{csp_with_form_targets, security_headers};
