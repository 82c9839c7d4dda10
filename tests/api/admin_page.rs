//! The admin page on the real metrics listener: HTTP Basic with an `admin` token (401 with a
//! Basic challenge without one, 403 with a token lacking the scope); search, remove and re-send
//! through its own forms, checked in the real SQLite file and the audit log; and every POST that
//! did not come from the page — another `Origin`, a cross-site fetch, no form token, another
//! credential's form token, a form token of another form — refused with nothing done.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::{RequestBuilder, Response};
use tempfile::TempDir;

use crate::confirm::{confirmed_and_welcomed, deliver, signed_up_and_mailed};
use crate::helpers::{TestApp, spawn_app_with};
use crate::signup::{RAISED_LIMITS, count, db, strings};

const ADMIN: &str = "admin-token-cccccccccccccccccccccccccccccccccccccccccccc";
const OTHER_ADMIN: &str = "other-admin-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
const READER: &str = "reader-token-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

struct Admin {
    app: TestApp,
    _tokens: TempDir,
}

const LISTS: &str =
    "[[lists]]\nid = \"news\"\nname = \"News\"\nconsent_text = \"News, now and then.\"\n[[lists]]\nid = \"other\"\n";

/// A server with the metrics listener and the tokens `ops` and `ops2` (admin) and `reader`.
async fn admin() -> Admin {
    admin_with(LISTS).await
}

/// [`admin`] with the `[[lists]]` tables `lists`.
async fn admin_with(lists: &str) -> Admin {
    let tokens = tempfile::tempdir().unwrap();
    let file = |name: &str, token: &str| -> PathBuf {
        let path = tokens.path().join(name);
        std::fs::write(&path, format!("{token}\n")).unwrap();
        path
    };
    let entries: String = [("ops", ADMIN, "admin"), ("ops2", OTHER_ADMIN, "admin"), ("reader", READER, "read")]
        .map(|(name, token, scope)| {
            format!(
                "[[api_tokens]]\nname = \"{name}\"\ntoken_file = {:?}\nscopes = [\"{scope}\"]\n",
                file(name, token).display().to_string()
            )
        })
        .join("");
    let extra = format!("{RAISED_LIMITS}[server]\nmetrics_listen = \"127.0.0.1:0\"\n{entries}{lists}");
    Admin { app: spawn_app_with(&extra).await, _tokens: tokens }
}

impl Admin {
    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.app.metrics_port.expect("a metrics listener"))
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.app.metrics_port.unwrap())
    }

    async fn page(&self, token: &str) -> String {
        let response = self.app.client.get(self.url("/admin")).basic_auth("me", Some(token)).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        response.text().await.unwrap()
    }

    /// A POST of `fields` to `path` as the page's form would send it.
    fn post(&self, path: &str, token: &str, fields: &[(&str, &str)]) -> RequestBuilder {
        self.post_from(path, token, &format!("http://{}", self.host()), "same-origin", fields)
    }

    /// A POST of `fields` to `path` with the browser's `Origin` and `Sec-Fetch-Site`.
    fn post_from(&self, path: &str, token: &str, origin: &str, site: &str, fields: &[(&str, &str)]) -> RequestBuilder {
        self.app
            .client
            .post(self.url(path))
            .basic_auth("me", Some(token))
            .header("Origin", origin)
            .header("Sec-Fetch-Site", site)
            .form(fields)
    }

    /// The page showing the record of `email`, found through the page's own search form.
    async fn record(&self, token: &str, email: &str) -> String {
        let search = form_token(&self.page(token).await, "/admin/search");
        let found = self.post("/admin/search", token, &[("form", &search), ("email", email)]);
        text_of(found.send().await.unwrap(), 200, "search").await
    }

    fn audit(&self) -> Vec<String> {
        strings(
            &self.app,
            "SELECT actor || ' ' || action || ' ' || coalesce(list_id, '*') || ' ' || coalesce(count, '-') \
             FROM audit_log ORDER BY id",
        )
    }
}

/// The value of the hidden `form` field in the form that posts to `action`.
pub fn form_token(html: &str, action: &str) -> String {
    let form = html.split(&format!("action=\"{action}\"")).nth(1).unwrap_or_else(|| panic!("a form to {action}"));
    let value = form.split("name=\"form\" value=\"").nth(1).unwrap();
    value.split('"').next().unwrap().to_owned()
}

/// The fields of a form posted for ann@example.com with the form token `form`.
fn ann_with(form: &str) -> [(&str, &str); 2] {
    [("form", form), ("email", "ann@example.com")]
}

async fn text_of(response: Response, status: u16, case: &str) -> String {
    assert_eq!(response.status().as_u16(), status, "{case}");
    response.text().await.unwrap()
}

#[actix_web::test]
async fn the_page_asks_for_an_admin_token_and_refuses_others() {
    let admin = admin().await;
    let client = &admin.app.client;
    for (case, request) in [
        ("no credentials", client.get(admin.url("/admin"))),
        (
            "a wrong password",
            client.get(admin.url("/admin")).basic_auth("ops", Some("wrong-token-ddddddddddddddddddddddddddddddd")),
        ),
        ("a bearer token", client.get(admin.url("/admin")).bearer_auth(ADMIN)),
    ] {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 401, "{case}");
        let challenge = response.headers().get("www-authenticate").unwrap().to_str().unwrap();
        assert!(challenge.starts_with("Basic realm=\"signupd admin\""), "{case}: {challenge}");
    }
    let response = client.get(admin.url("/admin")).basic_auth("me", Some(READER)).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 403, "a token without the admin scope");
    let page = admin.page(ADMIN).await;
    assert!(page.contains("Signed in with the token <strong>ops</strong>"), "{page}");
    assert!(!page.contains("<script"), "no JavaScript");
    // The public listener does not serve it.
    let public = client.get(admin.app.url("/admin")).basic_auth("me", Some(ADMIN)).send().await.unwrap();
    assert_eq!(public.status().as_u16(), 404);
    assert_eq!(admin.audit(), ["reader admin_forbidden * -"], "showing the form reads nothing; the 403 is audited");
}

#[actix_web::test]
async fn a_search_shows_the_record_and_is_audited_as_a_lookup() {
    let admin = admin().await;
    confirmed_and_welcomed(&admin.app, "ann@example.com").await;
    let page = admin.page(ADMIN).await;
    let search = form_token(&page, "/admin/search");

    let found = admin.post("/admin/search", ADMIN, &[("form", &search), ("email", "Ann@Example.com")]);
    let found = text_of(found.send().await.unwrap(), 200, "search").await;
    assert!(found.contains("Record of ann@example.com"), "{found}");
    assert!(found.contains("List news: confirmed") && found.contains("News, now and then."), "{found}");
    let nobody = admin.post("/admin/search", ADMIN, &[("form", &search), ("email", "nobody@example.com")]);
    let nobody = text_of(nobody.send().await.unwrap(), 200, "unknown").await;
    assert!(nobody.contains("Nothing is held about this address."), "{nobody}");
    let bad = admin.post("/admin/search", ADMIN, &[("form", &search), ("email", "not an address")]);
    let bad = text_of(bad.send().await.unwrap(), 400, "not an address").await;
    assert!(bad.contains("role=\"alert\"") && bad.contains("aria-invalid=\"true\""), "{bad}");
    assert_eq!(admin.audit(), ["ops lookup * 1", "ops lookup * 0"], "a refused search is not a lookup");
}

#[actix_web::test]
async fn posts_that_did_not_come_from_the_page_are_refused_and_change_nothing() {
    let admin = admin().await;
    confirmed_and_welcomed(&admin.app, "ann@example.com").await;
    let page = admin.record(ADMIN, "ann@example.com").await;
    let (remove, search) = (form_token(&page, "/admin/remove"), form_token(&page, "/admin/search"));
    let other = form_token(&admin.record(OTHER_ADMIN, "ann@example.com").await, "/admin/remove");
    let audited = admin.audit();
    let page_origin = format!("http://{}", admin.host());
    let client = &admin.app.client;
    let cases: Vec<(&str, RequestBuilder)> = vec![
        (
            "another origin",
            admin.post_from("/admin/remove", ADMIN, "https://evil.example", "same-origin", &ann_with(&remove)),
        ),
        ("a cross-site fetch", admin.post_from("/admin/remove", ADMIN, &page_origin, "cross-site", &ann_with(&remove))),
        (
            "an opaque origin from another site",
            admin.post_from("/admin/remove", ADMIN, "null", "cross-site", &ann_with(&remove)),
        ),
        (
            "an opaque origin without Sec-Fetch-Site",
            client
                .post(admin.url("/admin/remove"))
                .basic_auth("me", Some(ADMIN))
                .header("Origin", "null")
                .form(&ann_with(&remove)),
        ),
        ("no form token", admin.post("/admin/remove", ADMIN, &[("email", "ann@example.com")])),
        ("another credential's form token", admin.post("/admin/remove", ADMIN, &ann_with(&other))),
        ("the search's form token", admin.post("/admin/remove", ADMIN, &ann_with(&search))),
        ("a made-up form token", admin.post("/admin/remove", ADMIN, &ann_with("AAAA"))),
        (
            "no Origin, no Sec-Fetch-Site, no form token (curl)",
            client.post(admin.url("/admin/remove")).basic_auth("me", Some(ADMIN)).form(&[("email", "ann@example.com")]),
        ),
    ];
    for (case, request) in cases {
        let body = text_of(request.send().await.unwrap(), 403, case).await;
        assert!(body.contains("nothing was done"), "{case}: {body}");
    }
    let unsigned = client.post(admin.url("/admin/remove")).form(&ann_with(&remove)).send().await.unwrap();
    assert_eq!(unsigned.status().as_u16(), 401, "a form token is no credential");
    let reader = admin.post("/admin/remove", READER, &ann_with(&remove)).send().await.unwrap();
    assert_eq!(reader.status().as_u16(), 403);
    let get = client.get(admin.url("/admin/remove")).basic_auth("me", Some(ADMIN)).send().await.unwrap();
    assert_eq!((get.status().as_u16(), get.headers().get("allow").unwrap().to_str().unwrap()), (405, "POST"));
    let huge = admin.post("/admin/remove", ADMIN, &[("form", &remove), ("email", &"a".repeat(10_000))]);
    assert_eq!(huge.send().await.unwrap().status().as_u16(), 413);
    let bad_reason =
        admin.post("/admin/remove", ADMIN, &[("form", &remove), ("email", "ann@example.com"), ("reason", "bounced")]);
    assert_eq!(bad_reason.send().await.unwrap().status().as_u16(), 400);
    let bad_list =
        admin.post("/admin/remove", ADMIN, &[("form", &remove), ("email", "ann@example.com"), ("list", "nope")]);
    assert_eq!(bad_list.send().await.unwrap().status().as_u16(), 400);
    assert_eq!(count(&admin.app, "subscribers"), 1, "nothing removed");
    let mut audited = audited;
    audited.push("reader remove_forbidden * -".to_owned());
    assert_eq!(admin.audit(), audited, "nothing audited but the token refused the scope");
    // Chromium's own form post under the page's no-referrer policy: Origin null, same-origin.
    let own = admin.post_from("/admin/search", ADMIN, "null", "same-origin", &ann_with(&search));
    assert_eq!(own.send().await.unwrap().status().as_u16(), 200, "the page's own form, as Chromium sends it");
}

#[actix_web::test]
async fn a_removal_from_the_page_removes_as_the_command_does() {
    let admin = admin().await;
    confirmed_and_welcomed(&admin.app, "ann@example.com").await;
    let remove = form_token(&admin.record(ADMIN, "ann@example.com").await, "/admin/remove");
    let fields = [("form", remove.as_str()), ("email", "ann@example.com"), ("list", ""), ("reason", "not_me")];
    let page = text_of(admin.post("/admin/remove", ADMIN, &fields).send().await.unwrap(), 200, "remove").await;
    assert!(page.contains("Removed from news (not_me)"), "{page}");
    assert!(page.contains("<td>not_me</td>"), "the record shows the suppression: {page}");
    assert_eq!(count(&admin.app, "subscribers"), 0);
    assert_eq!(strings(&admin.app, "SELECT reason FROM suppressions"), ["not_me"]);
    let again = text_of(admin.post("/admin/remove", ADMIN, &fields).send().await.unwrap(), 200, "again").await;
    assert!(again.contains("Nothing to remove"), "{again}");
    assert_eq!(admin.audit(), ["ops lookup * 1", "ops remove * 1", "ops remove * 0"]);
}

#[actix_web::test]
async fn a_resend_queues_a_new_confirmation_within_the_cooldown_and_only_for_a_pending_row() {
    let admin = admin().await;
    let app = &admin.app;
    let (first, _) = signed_up_and_mailed(app, "bob@example.com").await;
    confirmed_and_welcomed(app, "ann@example.com").await;
    let resend = form_token(&admin.record(ADMIN, "bob@example.com").await, "/admin/resend");
    let post = |email: &'static str, list: &'static str| {
        admin.post("/admin/resend", ADMIN, &[("form", resend.as_str()), ("email", email), ("list", list)]).send()
    };

    let page = text_of(post("bob@example.com", "news").await.unwrap(), 200, "too soon").await;
    assert!(page.contains("Nothing sent: a confirmation went out less than signup.resend_cooldown ago"), "{page}");
    assert!(page.contains("Re-send the confirmation for news"), "the pending row offers it: {page}");
    assert!(deliver(app).await.is_empty());

    app.clock.advance(Duration::from_secs(11 * 60));
    let page = text_of(post("bob@example.com", "news").await.unwrap(), 200, "queued").await;
    assert!(page.contains("A new confirmation for news is queued"), "{page}");
    let mails = deliver(app).await;
    assert_eq!(mails.len(), 1, "one new confirmation");
    assert_ne!(mails[0].confirm_token(), first, "with a new token");

    let page = text_of(post("ann@example.com", "news").await.unwrap(), 200, "confirmed").await;
    assert!(page.contains("Nothing sent: the address has no pending row on news."), "{page}");
    let missing_list = admin.post("/admin/resend", ADMIN, &[("form", resend.as_str()), ("email", "bob@example.com")]);
    assert_eq!(missing_list.send().await.unwrap().status().as_u16(), 400, "a re-send names its list");
    assert!(deliver(app).await.is_empty());
    let pending: i64 =
        db(app).query_row("SELECT count(*) FROM subscribers WHERE status = 'pending'", [], |row| row.get(0)).unwrap();
    assert_eq!(pending, 1);
    assert_eq!(admin.audit(), ["ops lookup * 1", "ops resend news 0", "ops resend news 1", "ops resend news 0"]);
}

#[actix_web::test]
async fn the_record_shows_the_fields_of_each_row_as_lookup_does() {
    // Regression: the page left out a row's [[lists.fields]] values, which lookup shows.
    let admin = admin_with(
        "[[lists]]\nid = \"news\"\nname = \"News\"\n\
         [[lists.fields]]\nname = \"first_name\"\nlabel = \"First name\"\n\
         [[lists.fields]]\nname = \"topic\"\nlabel = \"Topic\"\nkind = \"select\"\noptions = [\"Rust\", \"Go\"]\n",
    )
    .await;
    let app = &admin.app;
    let fields = [
        ("email", "ann@example.com"),
        ("consent", "yes"),
        ("list", "news"),
        ("first_name", "Ann <b>&"),
        ("topic", "Rust"),
    ];
    signed_up_and_mailed(app, "bob@example.com").await;
    let response = crate::confirm::post_fields(app, "/api/signup", &fields).await;
    assert_eq!(response.status().as_u16(), 303);
    crate::signup::drain(app).await;

    let ann = admin.record(ADMIN, "ann@example.com").await;
    let bob = admin.record(ADMIN, "bob@example.com").await;

    assert!(
        ann.contains("<dt>Fields</dt><dd>first_name: Ann &#60;b&#62;&#38;, topic: Rust</dd>"),
        "the values in declared order, escaped:\n{ann}"
    );
    assert!(!ann.contains("<b>&"), "{ann}");
    assert!(bob.contains("<dt>Fields</dt><dd>–</dd>"), "a row without values says so:\n{bob}");
}
