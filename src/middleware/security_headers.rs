//! The headers on every HTML response (`docs/http-api.md`). Pages carry tokens in their URL and forms, so
//! they must not be cached, leak a referrer, be indexed, framed, or load anything from elsewhere.
//! Applied by content type, so a page added later cannot forget them.

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::middleware::Next;

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
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
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
}
