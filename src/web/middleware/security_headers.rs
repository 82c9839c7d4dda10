//! The headers on every HTML response (`docs/http-api.md`). Pages carry tokens in their URL and forms, so
//! they must not be cached, leak a referrer, be indexed, framed, or load anything from elsewhere.
//! Applied by content type, so a page added later cannot forget them.
//!
//! One page widens its `Content-Security-Policy`: the confirm page's form posts to
//! `/api/confirm`, whose `303` may lead to a list's `confirmed_url` on the operator's own site,
//! and browsers hold that redirect to the page's `form-action` too (Chromium blocks the whole
//! submission otherwise). That page sets its own policy with [`csp_with_form_targets`] — the same
//! policy, with that one origin added to `form-action` — and the middleware keeps a policy a
//! handler set.

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;

/// The pages' policy; `{form_targets}` is where forms may post (and be redirected to).
const CSP_TEMPLATE: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'{form_targets}; base-uri 'none'; frame-ancestors 'none'";

/// The pages' `Content-Security-Policy` with `origins` (serialised `scheme://host[:port]`
/// origins, checked when the configuration was read) added to `form-action`.
pub fn csp_with_form_targets(origins: &[String]) -> String {
    let targets: String = origins.iter().map(|origin| format!(" {origin}")).collect();
    CSP_TEMPLATE.replace("{form_targets}", &targets)
}

pub const HTML_HEADERS: &[(&str, &str)] = &[
    ("cache-control", "no-store"),
    ("referrer-policy", "no-referrer"),
    ("x-robots-tag", "noindex, nofollow"),
    ("x-content-type-options", "nosniff"),
    (
        "content-security-policy",
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    ("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()"),
    ("cross-origin-opener-policy", "same-origin"),
];

pub async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let mut response = next.call(req).await?;
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/html"));
    if is_html {
        let headers = response.headers_mut();
        for (name, value) in HTML_HEADERS {
            let name = HeaderName::from_static(name);
            // A page that set its own policy set it from `csp_with_form_targets`.
            if name == header::CONTENT_SECURITY_POLICY && headers.contains_key(&name) {
                continue;
            }
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::middleware::from_fn;
    use actix_web::{App, HttpResponse, test, web};

    #[actix_web::test]
    async fn html_responses_get_every_header_and_others_none() {
        let app = test::init_service(
            App::new()
                .wrap(from_fn(security_headers))
                .route(
                    "/page",
                    web::get()
                        .to(|| async { HttpResponse::Ok().content_type("text/html; charset=utf-8").body("<p>hi</p>") }),
                )
                .route("/text", web::get().to(|| async { HttpResponse::Ok().content_type("text/plain").body("ok") })),
        )
        .await;

        let page = test::call_service(&app, test::TestRequest::get().uri("/page").to_request()).await;
        for (name, value) in HTML_HEADERS {
            assert_eq!(page.headers().get(*name).and_then(|v| v.to_str().ok()), Some(*value), "{name}");
        }
        let text = test::call_service(&app, test::TestRequest::get().uri("/text").to_request()).await;
        assert!(text.headers().get("content-security-policy").is_none());
    }

    #[std::prelude::v1::test]
    fn the_policy_template_is_the_pages_policy_and_only_form_action_widens() {
        let pages = HTML_HEADERS.iter().find(|(name, _)| *name == "content-security-policy").unwrap().1;
        assert_eq!(csp_with_form_targets(&[]), pages);
        assert_eq!(
            csp_with_form_targets(&["https://www.shop.example".to_owned()]),
            pages.replace("form-action 'self'", "form-action 'self' https://www.shop.example")
        );
    }
}
