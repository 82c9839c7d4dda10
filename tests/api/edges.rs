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

// ---------------------------------------------------------------------------------------------
// Every URL signupd emits stays under `public_url`'s path

/// The proxy serves signupd at `/join` and strips the prefix: the test talks to signupd at `/`.
const PREFIX: &str = "/join";
const PREFIXED_URL: &str = "http://127.0.0.1:8080/join";

/// Two lists (so `/` is the chooser); `news` has a brand, an accent and a way back to its site.
fn prefixed_config(custom_css: &std::path::Path) -> String {
    format!(
        "[server]\npublic_url = \"{PREFIXED_URL}\"\ncustom_css_file = {:?}\n{RAISED_LIMITS}\
         [[lists]]\nid = \"news\"\nname = \"News\"\nsite_name = \"Site\"\nsite_url = \"https://site.test/\"\n\
         accent_color = \"#0b5fff\"\n\
         [[lists]]\nid = \"other\"\nname = \"Other\"\n",
        custom_css.display().to_string()
    )
}

/// The values of every `attribute="…"` in `html`, HTML entities for `&` undone.
fn attribute_values(html: &str, attribute: &str) -> Vec<String> {
    let needle = format!(" {attribute}=\"");
    html.match_indices(&needle)
        .map(|(at, _)| {
            let rest = &html[at + needle.len()..];
            rest[..rest.find('"').unwrap()].replace("&amp;", "&").replace("&#x3d;", "=").replace("&#61;", "=")
        })
        .collect()
}

/// Every link, stylesheet and form action of a page: the site's own URL aside, each starts with
/// the prefix; the links and stylesheets, with the prefix stripped as the proxy would, are real
/// pages. Returns the form actions.
async fn assert_urls_under_prefix(app: &crate::helpers::TestApp, case: &str, html: &str) -> Vec<String> {
    let hrefs = attribute_values(html, "href");
    assert!(hrefs.iter().any(|href| href == "/join/static/style.css"), "{case}: the stylesheet in\n{html}");
    for href in &hrefs {
        if href == "https://site.test/" {
            continue;
        }
        let Some(path) = href.strip_prefix(PREFIX).filter(|path| path.starts_with('/')) else {
            panic!("{case}: {href:?} is not under {PREFIX}/ in\n{html}");
        };
        let status = app.client.get(app.url(path)).send().await.unwrap().status().as_u16();
        assert_eq!(status, 200, "{case}: {href} (as {path} behind the proxy)");
    }
    let actions = attribute_values(html, "action");
    for action in &actions {
        assert!(action.starts_with("/join/api/"), "{case}: form action {action:?} in\n{html}");
    }
    for attribute in ["src", "formaction"] {
        assert!(attribute_values(html, attribute).is_empty(), "{case}: no {attribute} expected in\n{html}");
    }
    actions
}

/// The token of the mailed `{public_url}{path}?token=` link in the newest mails.
fn mailed_token(app: &crate::helpers::TestApp, path: &str) -> String {
    let needle = format!("{PREFIXED_URL}{path}?token=");
    let mut tokens = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(app.data_dir().join("mail")).unwrap() {
        let raw = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        // Quoted-printable soft line breaks and `=3D`.
        let text = raw.replace("=\r\n", "").replace("=3D", "=");
        for (at, _) in text.match_indices(&needle) {
            tokens.insert(crate::helpers::link_token_at(&text[at + needle.len()..]));
        }
    }
    assert_eq!(tokens.len(), 1, "one {path} token under {PREFIXED_URL} in the mail, found {tokens:?}");
    tokens.into_iter().next().unwrap()
}

#[actix_web::test]
async fn every_page_url_form_action_stylesheet_and_redirect_is_under_the_public_url_path() {
    use crate::confirm::{deliver, get, location, post_fields, post_token, with_token};
    use crate::signup::{drain, post_form, valid};

    let css = tempfile::tempdir().unwrap();
    let css_path = css.path().join("brand.css");
    std::fs::write(&css_path, "body { color: black; }\n").unwrap();
    let app = spawn_app_with(&prefixed_config(&css_path)).await;

    // A signup from the hosted form ends on the prefixed "check your inbox" page.
    let signed_up = post_form(&app, &valid("jane@example.com")).await;
    assert_eq!(location(&signed_up), "/join/check-inbox?list=news", "the signup redirect");
    drain(&app).await;
    assert_eq!(deliver(&app).await.len(), 1, "one confirmation mail");
    let confirm = mailed_token(&app, "/confirm");
    let removal = mailed_token(&app, "/manage");

    // Every page, each with its form actions.
    let unknown = "A".repeat(43);
    let pages: Vec<(String, u16, Vec<&str>)> = vec![
        ("/".into(), 200, vec![]),
        ("/signup".into(), 200, vec![]),
        ("/signup?list=news".into(), 200, vec!["/join/api/signup"]),
        ("/signup?list=other".into(), 200, vec!["/join/api/signup"]),
        ("/signup?list=nope".into(), 404, vec![]),
        ("/check-inbox?list=news".into(), 200, vec![]),
        ("/check-inbox".into(), 200, vec![]),
        ("/privacy?list=news".into(), 200, vec![]),
        ("/privacy?list=other".into(), 200, vec![]),
        (with_token("/confirm", &confirm), 200, vec!["/join/api/confirm"]),
        (with_token("/confirm", &unknown), 410, vec![]),
        ("/confirm?token=short".into(), 400, vec![]),
        ("/confirmed?list=news".into(), 200, vec![]),
        // The preference page: Save, and Remove me from all.
        (with_token("/manage", &removal), 200, vec!["/join/api/manage", "/join/api/manage"]),
        ("/manage?token=short".into(), 400, vec![]),
        ("/removed?list=news".into(), 200, vec![]),
        ("/saved?list=news".into(), 200, vec![]),
    ];
    let mut links_seen = std::collections::BTreeSet::new();
    for (path, status, expected_actions) in &pages {
        let response = get(&app, path).await;
        assert_eq!(response.status().as_u16(), *status, "{path}");
        let html = response.text().await.unwrap();
        let actions = assert_urls_under_prefix(&app, path, &html).await;
        assert_eq!(&actions, expected_actions, "{path}: form actions");
        links_seen.extend(attribute_values(&html, "href"));
    }
    // The refused form, re-rendered.
    let refused = post_form(&app, &[("email", "not-an-address"), ("consent", "yes"), ("list", "news")]).await;
    assert_eq!(refused.status().as_u16(), 400);
    let html = refused.text().await.unwrap();
    assert_eq!(assert_urls_under_prefix(&app, "the refused form", &html).await, ["/join/api/signup"]);
    // The links between pages that the contract names were all among them.
    for expected in [
        "/join/static/list.css?list=news",
        "/join/static/custom.css",
        "/join/privacy?list=news",
        "/join/signup?list=news",
        "/join/signup?list=other",
        "/join/",
    ] {
        assert!(links_seen.contains(expected), "{expected} is linked from some page: {links_seen:?}");
    }

    // Every redirect.
    let unsubscribe = get(&app, &with_token("/api/unsubscribe", &removal)).await;
    assert_eq!(location(&unsubscribe), with_token("/join/manage", &removal), "GET /api/unsubscribe");
    let confirmed = post_token(&app, "/api/confirm", &confirm).await;
    assert_eq!(location(&confirmed), "/join/confirmed?list=news", "POST /api/confirm");
    let again = post_token(&app, "/api/confirm", &confirm).await;
    assert_eq!(location(&again), "/join/confirmed?list=news", "POST /api/confirm again");
    let saved =
        post_fields(&app, "/api/manage", &[("token", &removal), ("save", "preferences"), ("list", "news")]).await;
    assert_eq!(location(&saved), "/join/saved?list=news", "POST /api/manage, saving the preference page");
    let removed = post_token(&app, "/api/manage", &removal).await;
    assert_eq!(location(&removed), "/join/removed?list=news", "POST /api/manage");
    let nothing = post_token(&app, "/api/manage", &unknown).await;
    assert_eq!(location(&nothing), "/join/removed", "POST /api/manage, a token that matches nothing");
}

// ---------------------------------------------------------------------------------------------
// Slow clients: `server.request_timeout` for the head and the body

/// A one-second `request_timeout`, a list that allows one other site (for CORS), no rate limit
/// in the way.
const SLOW: &str = "[server]\nrequest_timeout = \"1s\"\n\
    [signup]\nrate_limits = [{ window = \"10m\", max = 1000 }]\n\
    [[lists]]\nid = \"news\"\nname = \"News\"\nallowed_origins = [\"https://site.test\"]\n";

/// Longer than the one-second deadline plus any slack a busy machine needs: a connection still
/// open then is one a slow client holds.
const CLOSED_WITHIN: std::time::Duration = std::time::Duration::from_secs(4);

/// What a slow client got before the server closed the connection.
#[derive(Debug)]
struct Stalled {
    /// The status line and headers, lowercased.
    head: String,
    body: String,
}

impl Stalled {
    fn status(&self) -> &str {
        self.head.lines().next().unwrap_or("")
    }

    fn has_header(&self, name: &str, value: &str) -> bool {
        self.head.lines().any(|line| line == format!("{name}: {value}"))
    }
}

/// Opens a connection, sends `sent` at once, then nothing — or, with `trickle`, one more byte
/// every 200 ms — and reads until the server closes the connection. Fails the test if it is
/// still open after [`CLOSED_WITHIN`].
async fn stall(app: &crate::helpers::TestApp, case: &str, sent: Vec<u8>, trickle: bool) -> Stalled {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let address = app.address.strip_prefix("http://").unwrap();
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    writer.write_all(&sent).await.unwrap();
    let keep_sending = async {
        while trickle && writer.write_all(b"x").await.is_ok() {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        std::future::pending::<()>().await;
    };
    let mut received = Vec::new();
    let read_until_closed = async {
        let mut buffer = [0u8; 4096];
        // A reset after the answer (bytes the server never read) ends the connection as well.
        while let Ok(read @ 1..) = reader.read(&mut buffer).await {
            received.extend_from_slice(&buffer[..read]);
        }
    };
    let closed = tokio::time::timeout(CLOSED_WITHIN, async {
        tokio::select! {
            () = read_until_closed => {}
            () = keep_sending => unreachable!(),
        }
    })
    .await;
    assert!(
        closed.is_ok(),
        "{case}: the connection was still open after {CLOSED_WITHIN:?}, having sent {:?}",
        String::from_utf8_lossy(&received)
    );
    let text = String::from_utf8_lossy(&received).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Stalled { head: head.to_ascii_lowercase(), body: body.to_owned() }
}

/// A request head with `headers`, then the first bytes of a body that claims 100 bytes more
/// than it has.
fn short_body(target: &str, headers: &[&str], body: &str) -> Vec<u8> {
    let mut request = format!("POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for header in headers {
        request.push_str(&format!("{header}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len() + 100));
    request.into_bytes()
}

#[actix_web::test]
async fn a_body_that_stops_or_trickles_is_answered_408_and_closed_and_nothing_is_written() {
    use crate::confirm::{dump, signed_up_and_mailed, status_of};

    let app = spawn_app_with(SLOW).await;
    let (confirm, removal) = signed_up_and_mailed(&app, "jane@example.com").await;
    let before = dump(&app);
    let form = "Content-Type: application/x-www-form-urlencoded";
    let json_signup = r#"{"email":"sam@example.com","consent":true,"list":"news"}"#;
    let form_signup = "email=sam%40example.com&consent=yes&list=news";
    let one_click = format!("/api/unsubscribe?token={removal}");
    let chunked = "POST /api/signup HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
        Transfer-Encoding: chunked\r\n\r\n5\r\n{\"ema";
    // (case, request, trickle, a JSON answer)
    let cases: Vec<(&str, Vec<u8>, bool, bool)> = vec![
        (
            "signup, JSON body, from an allowed site",
            short_body("/api/signup", &["Content-Type: application/json", "Origin: https://site.test"], json_signup),
            false,
            true,
        ),
        (
            "signup, form body, asking for JSON",
            short_body("/api/signup", &[form, "Accept: application/json"], form_signup),
            false,
            true,
        ),
        ("signup, form body, a browser", short_body("/api/signup", &[form], form_signup), false, false),
        ("signup, a chunked body that stops", chunked.as_bytes().to_vec(), false, true),
        ("signup, a body that trickles", short_body("/api/signup", &[form], "email=s"), true, false),
        ("confirm", short_body("/api/confirm", &[form], &format!("token={confirm}")), false, false),
        ("confirm, trickling", short_body("/api/confirm", &[form], &format!("token={confirm}")), true, false),
        ("manage", short_body("/api/manage", &[form], &format!("token={removal}")), false, false),
        ("one-click unsubscribe", short_body(&one_click, &[form], "List-Unsubscribe=One-Click"), false, false),
    ];

    let answers = futures_util::future::join_all(
        cases.iter().map(|(case, request, trickle, _)| stall(&app, case, request.clone(), *trickle)),
    )
    .await;

    for ((case, _, trickle, json), answer) in cases.iter().zip(&answers) {
        if *trickle && answer.head.is_empty() {
            // The server may reset a connection whose client keeps sending before the answer
            // is read; closing it in time is what counts.
            continue;
        }
        assert_eq!(answer.status(), "http/1.1 408 request timeout", "{case}: {answer:?}");
        assert!(answer.has_header("connection", "close"), "{case}: Connection: close in {answer:?}");
        if *json {
            assert!(answer.has_header("content-type", "application/json"), "{case}: {answer:?}");
            let body: Value = serde_json::from_str(&answer.body).unwrap_or_else(|e| panic!("{case}: {answer:?}: {e}"));
            assert_eq!(body, json!({"ok": false, "error": "request_timeout"}), "{case}");
        } else {
            assert!(answer.has_header("content-type", "text/plain; charset=utf-8"), "{case}: {answer:?}");
            assert_eq!(answer.body, "The request did not arrive in time. Please try again.", "{case}: {answer:?}");
        }
    }
    let cors = &answers[0];
    assert!(cors.has_header("access-control-allow-origin", "https://site.test"), "CORS kept: {cors:?}");
    assert!(cors.has_header("vary", "origin"), "Vary kept: {cors:?}");
    assert_eq!(dump(&app), before, "nothing was written");
    assert_eq!(status_of(&app, "jane@example.com").as_deref(), Some("pending"), "neither confirmed nor removed");
}

#[actix_web::test]
async fn the_408_text_speaks_the_visitors_language_among_the_lists() {
    let app = spawn_app_with(&SLOW.replace("name = \"News\"", "name = \"News\"\nlanguages = [\"de\", \"ja\"]")).await;
    let form = "Content-Type: application/x-www-form-urlencoded";
    let body = "email=sam%40example.com&consent=yes&list=news";
    // (case, target, headers, language, text)
    let german = "Die Anfrage ist nicht rechtzeitig angekommen. Bitte versuchen Sie es noch einmal.";
    let cases: [(&str, &str, &[&str], &str, &str); 3] = [
        ("Accept-Language", "/api/signup", &[form, "Accept-Language: de-AT,de;q=0.9"], "de", german),
        (
            "lang wins over the browser",
            "/api/signup?lang=ja",
            &[form, "Accept-Language: de"],
            "ja",
            "リクエストが時間内に届きませんでした。もう一度お試しください。",
        ),
        (
            "a language the list does not serve",
            "/api/confirm",
            &[form, "Accept-Language: fr"],
            "en",
            "The request did not arrive in time. Please try again.",
        ),
    ];
    for (case, target, headers, language, text) in cases {
        let answer = stall(&app, case, short_body(target, headers, body), false).await;
        assert_eq!(answer.status(), "http/1.1 408 request timeout", "{case}: {answer:?}");
        assert!(answer.has_header("content-language", language), "{case}: {answer:?}");
        assert_eq!(answer.body, text, "{case}");
    }
}

#[actix_web::test]
async fn a_head_that_never_ends_is_closed_within_the_deadline() {
    use crate::confirm::dump;

    let app = spawn_app_with(SLOW).await;
    let before = dump(&app);
    let cases = [
        ("a head that stops", b"POST /api/signup HTTP/1.1\r\nHost: x\r\n".to_vec(), false),
        ("a head that trickles", b"POST /api/signup HTTP/1.1\r\nHost: x\r\nX-Slow: ".to_vec(), true),
        ("a request line that stops", b"POST /api/sig".to_vec(), false),
    ];

    let answers = futures_util::future::join_all(
        cases.iter().map(|(case, sent, trickle)| stall(&app, case, sent.clone(), *trickle)),
    )
    .await;

    for ((case, _, _), answer) in cases.iter().zip(&answers) {
        // A 408, as signupd answers any request (the HTTP layer's own, rewritten), unless the
        // connection was reset first.
        if answer.head.is_empty() {
            continue;
        }
        assert_eq!(answer.status(), "http/1.1 408 request timeout", "{case}: {answer:?}");
        assert!(answer.has_header("content-type", "application/json"), "{case}: {answer:?}");
        assert!(answer.head.contains("\r\nx-request-id: "), "{case}: {answer:?}");
        assert_eq!(answer.body, r#"{"ok":false,"error":"request_timeout"}"#, "{case}");
    }
    assert_eq!(dump(&app), before, "nothing was written");
}

// ---------------------------------------------------------------------------------------------
// `/readyz` is rationed: at most one probe through the writer a second

#[actix_web::test]
async fn a_flood_of_readyz_costs_at_most_one_write_probe_a_second() {
    let app = crate::helpers::spawn_app().await;
    let writer = &app.state.writer;
    let (probes_before, batches_before) = (writer.readiness_probes(), writer.batches_committed());
    let started = std::time::Instant::now();

    let answers = futures_util::future::join_all((0..200).map(|_| app.client.get(app.url("/readyz")).send())).await;

    let elapsed = started.elapsed();
    for answer in answers {
        let answer = answer.unwrap();
        assert_eq!(answer.status().as_u16(), 200);
        assert_eq!(answer.text().await.unwrap(), "ready");
    }
    let probes = writer.readiness_probes() - probes_before;
    let batches = writer.batches_committed() - batches_before;
    // One probe, and one more for each second the flood lasted.
    let allowed = 1 + elapsed.as_secs();
    assert!((1..=allowed).contains(&probes), "{probes} probes for 200 requests in {elapsed:?}");
    assert!(batches <= allowed, "{batches} write transactions for 200 requests in {elapsed:?}");
}

#[actix_web::test]
async fn readyz_turns_503_within_about_a_second_of_the_database_locking_and_back_at_once() {
    let app = crate::helpers::spawn_app().await;
    assert_eq!(app.client.get(app.url("/readyz")).send().await.unwrap().status(), 200, "before");
    let blocker = rusqlite::Connection::open(app.state.db.path()).unwrap();
    blocker.execute_batch("BEGIN EXCLUSIVE; CREATE TABLE blocker (x);").unwrap();

    // A 200 may be reused for up to a second; then a probe waits out the lock (another second)
    // and fails.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(6);
    let blocked = loop {
        let response = app.client.get(app.url("/readyz")).send().await.unwrap();
        if response.status() == 503 || std::time::Instant::now() > deadline {
            break response;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(blocked.status(), 503, "still ready 6 s after the database was locked");
    assert_eq!(blocked.headers()["retry-after"], "5");

    // The failed probe waited out the lock, so it is stale already: the next call probes.
    blocker.execute_batch("ROLLBACK").unwrap();
    let recovered = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(recovered.status(), 200, "ready again once the lock is gone");
}
