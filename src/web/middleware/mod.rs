//! Middleware applied to every route: the access log and the security headers of HTML pages.

mod access_log;
mod security_headers;

pub use access_log::access_log;
pub use security_headers::{csp_with_form_targets, security_headers};
