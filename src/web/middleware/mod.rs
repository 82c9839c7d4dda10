//! Middleware applied to every request: the access log, the security headers of HTML pages, and
//! the connection under the HTTP layer, for the requests it refuses itself.
//!
//! # What reaches no middleware: a head the HTTP layer refused
//!
//! actix-http answers a head it cannot parse (or one too large, or too slow) in its connection
//! dispatcher, before any service runs. [`connection::Connection`], wrapped around every
//! accepted stream by the server's assembly (`crate::app`), rewrites that bare answer into
//! signupd's JSON error with an `X-Request-Id` and writes its access-log line; its module doc
//! says how.

mod access_log;
pub mod connection;
mod security_headers;

pub use access_log::access_log;
pub use security_headers::{csp_with_form_targets, security_headers};
