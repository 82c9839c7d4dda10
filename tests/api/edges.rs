//! The hard edges (docs/http-api.md): consent that must say yes, every emitted URL under
//! `public_url`'s path, slow clients answered 408 and closed, and a `/readyz` that does not
//! write on every call.

use serde_json::{Value, json};

use crate::helpers::spawn_app_with;
use crate::signup::{
    RAISED_LIMITS, assert_json_accepted, assert_json_error, assert_nothing_saved, count, form_body, multipart_body,
    signup_request,
};

// ---------------------------------------------------------------------------------------------
// Consent must say yes

/// How a consent case is sent: the same fields as a form, multipart or JSON body.
enum Body {
    Form(Vec<(&'static str, &'static str)>),
    Multipart(Vec<(&'static str, &'static str)>),
    Json(Value),
}

/// A signup of `jane@example.com` to `news` whose consent is `consent` (repeated when it has
/// several values), as `kind` ("form", "multipart").
fn with_consent(kind: &str, consent: &[&'static str]) -> Body {
    let mut fields = vec![("email", "jane@example.com"), ("list", "news")];
    fields.extend(consent.iter().map(|value| ("consent", *value)));
    match kind {
        "form" => Body::Form(fields),
        _ => Body::Multipart(fields),
    }
}

fn json_with_consent(consent: Value) -> Body {
    Body::Json(json!({"email": "jane@example.com", "list": "news", "consent": consent}))
}

async fn post_as_json_client(app: &crate::helpers::TestApp, body: &Body) -> reqwest::Response {
    let request = signup_request(app).header("Accept", "application/json");
    let request = match body {
        Body::Form(fields) => {
            request.header("Content-Type", "application/x-www-form-urlencoded").body(form_body(fields))
        }
        Body::Multipart(fields) => {
            let (content_type, bytes) = multipart_body(fields);
            request.header("Content-Type", content_type).body(bytes)
        }
        Body::Json(value) => request.header("Content-Type", "application/json").body(value.to_string()),
    };
    request.send().await.unwrap()
}

#[actix_web::test]
async fn consent_that_says_yes_is_accepted_in_every_body_type() {
    let mut cases: Vec<(String, Body)> = Vec::new();
    for kind in ["form", "multipart"] {
        for value in ["yes", "on", "true", "1", "YES", "On", "True", " yes ", "\tON\n"] {
            cases.push((format!("{kind} consent={value:?}"), with_consent(kind, &[value])));
        }
        cases.push((format!("{kind}: the first of yes, no"), with_consent(kind, &["yes", "no"])));
    }
    for value in [json!(true), json!(1), json!("yes"), json!("on"), json!("TRUE"), json!("1"), json!(" Yes ")] {
        cases.push((format!("JSON consent {value}"), json_with_consent(value)));
    }
    let app = spawn_app_with(RAISED_LIMITS).await;

    for (case, body) in &cases {
        assert_json_accepted(post_as_json_client(&app, body).await, case).await;
    }

    let stored = count(&app, "intake");
    assert_eq!(stored, i64::try_from(cases.len()).unwrap(), "every accepted signup is queued");
}

#[actix_web::test]
async fn consent_that_does_not_say_yes_is_refused_and_nothing_is_stored() {
    let mut cases: Vec<(String, Body)> = Vec::new();
    for kind in ["form", "multipart"] {
        for value in ["no", "false", "0", "off", "", " ", "NO", "y", "ja", "yes please", "2", "01", "on;"] {
            cases.push((format!("{kind} consent={value:?}"), with_consent(kind, &[value])));
        }
        cases.push((format!("{kind}: no consent field"), with_consent(kind, &[])));
        cases.push((format!("{kind}: the first of no, yes"), with_consent(kind, &["no", "yes"])));
        cases.push((format!("{kind}: the first of empty, yes"), with_consent(kind, &["", "yes"])));
    }
    for value in [
        json!(false),
        json!(0),
        json!(2),
        json!(-1),
        json!(1.5),
        json!(null),
        json!("no"),
        json!("false"),
        json!("0"),
        json!(""),
        json!([true]),
        json!({"value": true}),
    ] {
        cases.push((format!("JSON consent {value}"), json_with_consent(value)));
    }
    let app = spawn_app_with(RAISED_LIMITS).await;

    for (case, body) in &cases {
        assert_json_error(post_as_json_client(&app, body).await, 400, "consent_required", case).await;
    }

    assert_nothing_saved(&app, false, "refused consent");
}
