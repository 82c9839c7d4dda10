//! What the signup and the send routes share about where a request came from and where the
//! visitor goes next: the request's `Origin`, whose pages may read the answers with `fetch`
//! (CORS: a list's `allowed_origins`), and the `return_to` a list allows — never an open
//! redirect.

use actix_web::HttpRequest;
use actix_web::http::header;
use url::Url;

use crate::config::{Config, ListConfig};

/// `url` with `pairs` appended to its query, keeping what it had.
pub fn with_query(url: &Url, pairs: &[(&str, &str)]) -> String {
    let mut url = url.clone();
    url.query_pairs_mut().extend_pairs(pairs);
    url.to_string()
}

/// The request's `Origin` as a serialised origin; `null`, absent and unparsable are `None`.
pub fn request_origin(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(header::ORIGIN)?.to_str().ok()?;
    let url = Url::parse(value).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    Some(url.origin().ascii_serialization())
}

/// The origin of a page that may read answers with `fetch`: one in any list's `allowed_origins`.
pub fn cors_origin(config: &Config, origin: Option<&String>) -> Option<String> {
    let origin = origin?;
    config.lists.iter().any(|list| list.allowed_origins.contains(origin)).then(|| origin.clone())
}

/// `return_to`, if its origin is one the list allows. Never an open redirect: relative URLs,
/// `//host`, `javascript:` and other origins are all ignored.
pub fn allowed_return_to(list: &ListConfig, return_to: Option<&str>) -> Option<Url> {
    let url = Url::parse(return_to?).ok()?;
    list.allows_return_to(&url).then_some(url)
}
