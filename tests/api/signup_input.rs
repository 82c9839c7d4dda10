//! `POST /api/signup` with bad input (docs/http-api.md, the order of checks, steps 1 and 4): methods, content types,
//! sizes, malformed bodies, addresses, consent and lists. Every refusal is checked to have written nothing, counter
//! included, since all of these come before the rate limit.

use serde_json::{Value, json};

use crate::helpers::{spawn_app, spawn_app_with};
use crate::signup::{
    RAISED_LIMITS, assert_json_accepted, assert_json_error, assert_nothing_saved, count, drain, form_body, header,
    multipart_body, post_form_json, post_json, signup_request, strings, valid, valid_json,
};

// ---------------------------------------------------------------------------------------------
// Step 1: method, content type, size

#[actix_web::test]
async fn other_methods_get_405_with_allow() {
    let app = spawn_app().await;

    for method in ["GET", "PUT", "DELETE", "PATCH"] {
        let response = app
            .client
            .request(method.parse().unwrap(), app.url("/api/signup"))
            .header("Accept", "application/json")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form_body(&valid("jane@example.com")))
            .send()
            .await
            .unwrap();

        let allow = header(&response, "allow").unwrap_or_default();
        let mut allowed: Vec<String> = allow.split(',').map(|m| m.trim().to_ascii_uppercase()).collect();
        allowed.sort();
        assert_eq!(allowed, ["OPTIONS", "POST"], "{method}: Allow {allow:?}");
        assert_json_error(response, 405, "method_not_allowed", method).await;
    }
    assert_nothing_saved(&app, false, "other methods");
}

#[actix_web::test]
async fn other_content_types_get_415() {
    let body = form_body(&valid("jane@example.com"));
    let cases: [(&str, Option<&str>); 6] = [
        ("no Content-Type", None),
        ("text/plain", Some("text/plain")),
        ("application/xml", Some("application/xml")),
        ("application/octet-stream", Some("application/octet-stream")),
        ("a JSON look-alike", Some("application/jsonp")),
        ("garbage", Some("not a media type")),
    ];
    for (name, content_type) in cases {
        let app = spawn_app().await;
        let mut request = signup_request(&app).header("Accept", "application/json").body(body.clone());
        if let Some(content_type) = content_type {
            request = request.header("Content-Type", content_type);
        }

        let response = request.send().await.unwrap();

        assert_json_error(response, 415, "unsupported_media_type", name).await;
        assert_nothing_saved(&app, false, name);
    }
}

#[actix_web::test]
async fn a_browser_posting_another_content_type_also_gets_415() {
    let app = spawn_app().await;

    let response = signup_request(&app)
        .header("Content-Type", "text/plain")
        .body(form_body(&valid("jane@example.com")))
        .send()
        .await
        .unwrap();

    assert_eq!(response.status(), 415);
    assert_nothing_saved(&app, false, "text/plain from a browser");
}

/// `email` padded with leading spaces (trimmed away by the parser) to exactly `len` bytes of
/// urlencoded body.
fn padded_form(len: usize) -> String {
    let base = form_body(&valid("jane@example.com"));
    // Each space encodes as one `+`.
    let pad = len.checked_sub(base.len()).expect("len fits the fields");
    let body = form_body(&valid(&format!("{}jane@example.com", " ".repeat(pad))));
    assert_eq!(body.len(), len);
    body
}

#[actix_web::test]
async fn bodies_over_max_body_bytes_get_413() {
    let big_email = format!("{}@example.com", "a".repeat(5000));
    let (multipart_type, multipart) = multipart_body(&valid(&big_email));
    let cases = [
        ("form", "application/x-www-form-urlencoded".to_owned(), padded_form(4097).into_bytes()),
        ("JSON", "application/json".to_owned(), valid_json(&big_email).to_string().into_bytes()),
        ("multipart", multipart_type, multipart),
    ];
    for (name, content_type, body) in cases {
        let app = spawn_app().await;

        let response = signup_request(&app)
            .header("Accept", "application/json")
            .header("Content-Type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();

        assert_json_error(response, 413, "payload_too_large", name).await;
        assert_nothing_saved(&app, false, name);
    }
}

#[actix_web::test]
async fn a_body_of_exactly_max_body_bytes_is_accepted() {
    let app = spawn_app().await;

    let response = post_raw_form(&app, padded_form(4096)).await;

    assert_json_accepted(response, "4096-byte body").await;
    assert_eq!(strings(&app, "SELECT email FROM intake"), ["jane@example.com"]);
}

#[actix_web::test]
async fn max_body_bytes_is_configurable() {
    let app = spawn_app_with("[server]\nmax_body_bytes = 300\n").await;

    let over = post_raw_form(&app, padded_form(301)).await;
    assert_json_error(over, 413, "payload_too_large", "301 bytes, limit 300").await;
    assert_nothing_saved(&app, false, "301 bytes, limit 300");

    let at = post_raw_form(&app, padded_form(300)).await;
    assert_json_accepted(at, "300 bytes, limit 300").await;
}

async fn post_raw_form(app: &crate::helpers::TestApp, body: String) -> reqwest::Response {
    signup_request(app)
        .header("Accept", "application/json")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Malformed bodies

#[actix_web::test]
async fn malformed_bodies_are_invalid_requests() {
    let many_form_fields: Vec<(String, String)> = (0..101).map(|i| (format!("f{i}"), "1".into())).collect();
    let many_form_fields: Vec<(&str, &str)> = valid("jane@example.com")
        .into_iter()
        .chain(many_form_fields.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .collect();
    let mut many_json_fields = valid_json("jane@example.com");
    for i in 0..101 {
        many_json_fields[format!("f{i}")] = json!("1");
    }
    let (multipart_type, many_parts) = multipart_body(&many_form_fields);
    let (_, mut unterminated) = multipart_body(&valid("jane@example.com"));
    unterminated.truncate(unterminated.len() - 30);

    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        ("truncated JSON", "application/json", b"{\"email\": \"jane@exa".to_vec()),
        ("empty JSON body", "application/json", Vec::new()),
        ("JSON array", "application/json", b"[\"jane@example.com\"]".to_vec()),
        ("JSON string", "application/json", b"\"jane@example.com\"".to_vec()),
        ("JSON number", "application/json", b"42".to_vec()),
        ("JSON null", "application/json", b"null".to_vec()),
        (
            "invalid UTF-8 in JSON",
            "application/json",
            b"{\"email\":\"\xFF\xFE@example.com\",\"consent\":true,\"list\":\"news\"}".to_vec(),
        ),
        ("101 extra form fields", "application/x-www-form-urlencoded", form_body(&many_form_fields).into_bytes()),
        ("101 extra JSON fields", "application/json", many_json_fields.to_string().into_bytes()),
        ("101 extra multipart parts", &multipart_type, many_parts),
        ("unterminated multipart", &multipart_type, unterminated),
    ];
    for (name, content_type, body) in cases {
        // Room for 101 multipart parts, so the field count and not the size is what is refused.
        let app = spawn_app_with("[server]\nmax_body_bytes = 65536\n").await;

        let response = signup_request(&app)
            .header("Accept", "application/json")
            .header("Content-Type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();

        assert_json_error(response, 400, "invalid_request", name).await;
        assert_nothing_saved(&app, false, name);
    }
}

// ---------------------------------------------------------------------------------------------
// Step 4: addresses

#[actix_web::test]
async fn invalid_emails_are_refused_with_400_and_nothing_saved() {
    let long_local = format!("{}@example.com", "a".repeat(65));
    // 64 + 1 + 190 = 255 octets, every label within 63.
    let too_long = format!("{}@{}.{}.{}.com", "a".repeat(64), "b".repeat(63), "c".repeat(63), "d".repeat(58));
    assert_eq!(too_long.len(), 255);
    let long_label = format!("a@{}.com", "b".repeat(64));
    let cases: Vec<(&str, &str)> = vec![
        ("no @", "jane.example.com"),
        ("two @", "jane@doe@example.com"),
        ("quoted local part", "\"jane doe\"@example.com"),
        ("quoted local part without spaces", "\"jane\"@example.com"),
        ("IP literal", "a@[127.0.0.1]"),
        ("bare IPv4 domain", "a@127.0.0.1"),
        ("localhost", "a@localhost"),
        ("single-label domain", "a@example"),
        ("space inside", "jane doe@example.com"),
        ("tab", "jane\t@example.com"),
        ("header injection", "a@b.com\r\nBcc: x@y.com"),
        ("trailing CRLF", "a@b.com\r\n"),
        ("NUL", "jane\0@example.com"),
        ("65-char local part", &long_local),
        ("255 chars in total", &too_long),
        ("leading dot", ".jane@example.com"),
        ("trailing dot", "jane.@example.com"),
        ("double dot", "ja..ne@example.com"),
        ("empty local part", "@b.com"),
        ("empty domain", "a@"),
        ("domain label starting with a hyphen", "a@-b.com"),
        ("64-char domain label", &long_label),
        ("comma", "jane,doe@example.com"),
        ("two addresses", "jane@example.com,john@example.com"),
        ("angle brackets", "<jane@example.com>"),
        ("display name", "Jane <jane@example.com>"),
        ("non-ASCII local part", "jörg@example.com"),
        ("backslash", "ja\\ne@example.com"),
        ("comment", "jane(comment)@example.com"),
        ("empty", ""),
        ("whitespace only", "   "),
    ];
    let app = spawn_app().await;
    for (name, email) in &cases {
        let json = post_json(&app, json!({"email": email, "consent": true, "list": "news"})).await;
        assert_json_error(json, 400, "invalid_email", &format!("{name} (JSON)")).await;

        let form = post_form_json(&app, &valid(email)).await;
        assert_json_error(form, 400, "invalid_email", &format!("{name} (form)")).await;
    }
    assert_nothing_saved(&app, false, "invalid emails");
}

#[actix_web::test]
async fn a_missing_or_null_email_is_an_invalid_email() {
    let cases = [
        ("email missing", json!({"consent": true, "list": "news"})),
        ("email null", json!({"email": null, "consent": true, "list": "news"})),
    ];
    let app = spawn_app().await;
    for (name, body) in cases {
        let response = post_json(&app, body).await;

        assert_json_error(response, 400, "invalid_email", name).await;
    }
    let form = post_form_json(&app, &[("consent", "yes"), ("list", "news")]).await;
    assert_json_error(form, 400, "invalid_email", "email missing (form)").await;
    assert_nothing_saved(&app, false, "missing email");
}

#[actix_web::test]
async fn invalid_utf8_in_a_form_body_is_an_invalid_email() {
    let app = spawn_app().await;

    let response = signup_request(&app)
        .header("Accept", "application/json")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("email=%FF%FE@example.com&consent=yes&list=news")
        .send()
        .await
        .unwrap();

    assert_json_error(response, 400, "invalid_email", "%FF%FE in a form").await;
    assert_nothing_saved(&app, false, "%FF%FE in a form");
}

#[actix_web::test]
async fn valid_tricky_addresses_are_accepted_and_stored_normalised() {
    let longest_local = format!("{}@example.com", "a".repeat(64));
    // 64 + 1 + 189 = 254 octets: the longest address accepted.
    let longest = format!("{}@{}.{}.{}.com", "a".repeat(64), "b".repeat(63), "c".repeat(63), "d".repeat(57));
    assert_eq!(longest.len(), 254);
    let cases: Vec<(&str, &str, String)> = vec![
        ("plus tag and subdomain", "first.last+tag@example.co.uk", "first.last+tag@example.co.uk".into()),
        ("surrounding spaces and upper case", "  Mixed.Case@Example.COM  ", "mixed.case@example.com".into()),
        ("IDN domain", "a@bücher.de", "a@xn--bcher-kva.de".into()),
        ("upper-case IDN domain", "a@BÜCHER.de", "a@xn--bcher-kva.de".into()),
        ("WHATWG specials in the local part", "o'neil_{x}=y@example.com", "o'neil_{x}=y@example.com".into()),
        ("64-char local part", &longest_local, longest_local.clone()),
        ("254 chars in total", &longest, longest.clone()),
    ];
    for (name, input, stored) in cases {
        let app = spawn_app_with(RAISED_LIMITS).await;

        let json = post_json(&app, valid_json(input)).await;
        assert_json_accepted(json, &format!("{name} (JSON)")).await;
        let form = post_form_json(&app, &valid(input)).await;
        assert_json_accepted(form, &format!("{name} (form)")).await;
        drain(&app).await;

        assert_eq!(
            strings(&app, "SELECT email FROM subscribers"),
            [stored],
            "{name}: one normalised row for both spellings"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Step 4: consent and list

#[actix_web::test]
async fn consent_must_be_given() {
    let json_cases: [(&str, Value); 4] = [
        ("consent missing (JSON)", json!({"email": "jane@example.com", "list": "news"})),
        ("consent empty (JSON)", json!({"email": "jane@example.com", "consent": "", "list": "news"})),
        ("consent false (JSON)", json!({"email": "jane@example.com", "consent": false, "list": "news"})),
        ("consent null (JSON)", json!({"email": "jane@example.com", "consent": null, "list": "news"})),
    ];
    let form_cases: [(&str, Vec<(&str, &str)>); 2] = [
        ("consent missing (form)", vec![("email", "jane@example.com"), ("list", "news")]),
        ("consent empty (form)", vec![("email", "jane@example.com"), ("consent", ""), ("list", "news")]),
    ];
    let app = spawn_app().await;
    for (name, body) in json_cases {
        assert_json_error(post_json(&app, body).await, 400, "consent_required", name).await;
    }
    for (name, fields) in form_cases {
        assert_json_error(post_form_json(&app, &fields).await, 400, "consent_required", name).await;
    }
    assert_nothing_saved(&app, false, "consent");
}

#[actix_web::test]
async fn unknown_lists_are_refused() {
    let one_list = spawn_app().await;
    for (name, list) in [("unknown id", "nope"), ("empty id", ""), ("id in other case", "NEWS")] {
        let response = post_json(&one_list, json!({"email": "jane@example.com", "consent": true, "list": list})).await;
        assert_json_error(response, 400, "unknown_list", name).await;
    }
    assert_nothing_saved(&one_list, false, "unknown list, one list configured");

    let two_lists = spawn_app_with("[[lists]]\nid = \"news\"\n[[lists]]\nid = \"other\"\n").await;
    let omitted = post_json(&two_lists, json!({"email": "jane@example.com", "consent": true})).await;
    assert_json_error(omitted, 400, "unknown_list", "list omitted with two lists").await;
    let omitted_form = post_form_json(&two_lists, &[("email", "jane@example.com"), ("consent", "yes")]).await;
    assert_json_error(omitted_form, 400, "unknown_list", "list omitted with two lists (form)").await;
    assert_nothing_saved(&two_lists, false, "list omitted with two lists");
}

#[actix_web::test]
async fn the_second_of_two_lists_can_be_named() {
    let app = spawn_app_with("[[lists]]\nid = \"news\"\n[[lists]]\nid = \"other\"\n").await;

    let response = post_json(&app, json!({"email": "jane@example.com", "consent": true, "list": "other"})).await;

    assert_json_accepted(response, "list other").await;
    assert_eq!(strings(&app, "SELECT list_id FROM intake"), ["other"]);
}

#[actix_web::test]
async fn the_honeypot_is_checked_before_the_fields() {
    let app = spawn_app().await;

    let response = post_json(&app, json!({"email": "not an address", "website": "http://spam.example"})).await;

    assert_json_accepted(response, "honeypot with bad fields").await;
    assert_nothing_saved(&app, false, "honeypot with bad fields");
    assert_eq!(count(&app, "outbox"), 0);
}
