//! `POST /api/signup` under abuse (docs/http-api.md "Rate limits"): the
//! per-client budget, who the client is behind proxies, what survives a restart, that no IP is
//! stored, and many concurrent signups of one address.

use std::path::Path;
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::json;

use crate::helpers::{TestApp, spawn_app, spawn_app_in, spawn_app_with};
use crate::signup::{
    Answer, RAISED_LIMITS, assert_json_accepted, assert_json_error, count, db, drain, form_request, header,
    json_request, post_json, strings, valid, valid_json,
};

const TRUSTED_LOCALHOST: &str = "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n";

/// A JSON signup of a fresh address, with extra request headers; returns the status and the
/// Retry-After header.
async fn signup_with(app: &TestApp, n: usize, headers: &[(&str, &str)]) -> (u16, Option<String>) {
    let mut request = json_request(app, valid_json(&format!("person{n}@example.com")));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let retry_after = header(&response, "retry-after");
    (response.status().as_u16(), retry_after)
}

/// Signs up `accepted` fresh addresses (all must pass), then one more that must be refused.
async fn exhaust(app: &TestApp, first: usize, accepted: usize, headers: &[(&str, &str)], case: &str) -> u64 {
    for n in first..first + accepted {
        let (status, _) = signup_with(app, n, headers).await;
        assert_eq!(status, 202, "{case}: signup {n} is within the budget");
    }
    let (status, retry_after) = signup_with(app, first + accepted, headers).await;
    assert_eq!(status, 429, "{case}: signup {} is over the budget", first + accepted);
    retry_after
        .unwrap_or_else(|| panic!("{case}: 429 without Retry-After"))
        .parse()
        .unwrap_or_else(|e| panic!("{case}: Retry-After is not integer seconds: {e}"))
}

// ---------------------------------------------------------------------------------------------
// The budget

#[actix_web::test]
async fn the_fourth_signup_in_ten_minutes_is_rate_limited() {
    let app = spawn_app().await;
    for n in 0..3 {
        assert_eq!(signup_with(&app, n, &[]).await.0, 202, "signup {n}");
    }

    let response = post_json(&app, valid_json("person3@example.com")).await;

    let retry_after: u64 = header(&response, "retry-after")
        .expect("429 carries Retry-After")
        .parse()
        .expect("Retry-After in integer seconds");
    assert!((1..=600).contains(&retry_after), "Retry-After {retry_after}");
    assert_json_error(response, 429, "rate_limited", "fourth signup").await;
    assert_eq!(count(&app, "intake"), 3, "the refused signup is not recorded");
}

#[actix_web::test]
async fn a_browser_over_the_limit_gets_the_form_with_429() {
    let app = spawn_app().await;
    exhaust(&app, 0, 3, &[], "arrange").await;

    let response = form_request(&app, &valid("late@example.com")).send().await.unwrap();

    assert_eq!(response.status(), 429);
    assert!(header(&response, "retry-after").is_some(), "Retry-After for browsers too");
    assert!(header(&response, "content-type").unwrap_or_default().starts_with("text/html"));
    assert_eq!(count(&app, "intake"), 3);
}

#[actix_web::test]
async fn an_allowed_return_to_learns_that_the_signup_was_rate_limited() {
    let app = spawn_app_with("[[lists]]\nid = \"news\"\nallowed_origins = [\"https://site.example\"]\n").await;
    exhaust(&app, 0, 3, &[], "arrange").await;
    let mut fields = valid("late@example.com");
    fields.push(("return_to", "https://site.example/join"));

    let response = form_request(&app, &fields).send().await.unwrap();

    assert_eq!(response.status(), 303);
    let location = url::Url::parse(&header(&response, "location").unwrap()).unwrap();
    let query: Vec<(String, String)> = location.query_pairs().into_owned().collect();
    assert!(query.contains(&("signup".into(), "error".into())), "{location}");
    assert!(query.contains(&("reason".into(), "rate_limited".into())), "{location}");
}

#[actix_web::test]
async fn the_limit_frees_up_once_retry_after_has_passed() {
    let app = spawn_app().await;
    let retry_after = exhaust(&app, 0, 3, &[], "first window").await;

    app.clock.advance(Duration::from_secs(retry_after));

    assert_eq!(signup_with(&app, 10, &[]).await.0, 202, "after Retry-After ({retry_after} s)");
}

#[actix_web::test]
async fn the_daily_limit_counts_across_ten_minute_windows() {
    let app = spawn_app().await;
    let mut n = 0;
    for window in 0..3 {
        for _ in 0..3 {
            assert_eq!(signup_with(&app, n, &[]).await.0, 202, "window {window}, signup {n}");
            n += 1;
        }
        app.clock.advance(Duration::from_secs(601));
    }
    assert_eq!(signup_with(&app, n, &[]).await.0, 202, "the tenth signup of the day");

    let (status, retry_after) = signup_with(&app, n + 1, &[]).await;

    assert_eq!(status, 429, "the eleventh signup of the day");
    let retry_after: u64 = retry_after.expect("Retry-After").parse().unwrap();
    assert!(
        (601..=86_400).contains(&retry_after),
        "the daily window, not the 10-minute one, decides: Retry-After {retry_after}"
    );
}

#[actix_web::test]
async fn refused_and_honeypot_requests_do_not_use_up_the_budget() {
    let app = spawn_app().await;
    for n in 0..5 {
        let bad = post_json(&app, json!({"email": format!("bad{n}"), "consent": true, "list": "news"})).await;
        assert_json_error(bad, 400, "invalid_email", "arrange").await;
        let bot = post_json(&app, json!({"email": "bot@example.com", "consent": true, "website": "x"})).await;
        assert_json_accepted(bot, "arrange").await;
    }
    assert_eq!(count(&app, "rate_limits"), 0, "nothing counted yet");

    for n in 0..3 {
        assert_eq!(signup_with(&app, n, &[]).await.0, 202, "signup {n}");
    }
}

#[actix_web::test]
async fn the_fields_and_the_honeypot_are_checked_before_the_rate_limit() {
    let app = spawn_app().await;
    exhaust(&app, 0, 3, &[], "arrange").await;

    let bad = post_json(&app, json!({"email": "nope", "consent": true, "list": "news"})).await;
    let bot = post_json(&app, json!({"email": "bot@example.com", "consent": true, "website": "x"})).await;

    assert_json_error(bad, 400, "invalid_email", "invalid email over the limit").await;
    assert_json_accepted(bot, "honeypot over the limit").await;
    assert_eq!(count(&app, "intake"), 3);
}

#[actix_web::test]
async fn the_rate_limit_survives_a_restart() {
    let app = spawn_app().await;
    exhaust(&app, 0, 3, &[], "before the restart").await;
    let TestApp { dir, .. } = app;

    let restarted = spawn_app_in(dir, "").await;

    let (status, _) = signup_with(&restarted, 10, &[]).await;
    assert_eq!(status, 429, "the counters live in SQLite");
}

// ---------------------------------------------------------------------------------------------
// Who the client is

#[actix_web::test]
async fn spoofed_client_ip_headers_are_ignored_without_trusted_proxies() {
    let app = spawn_app().await;
    for n in 0..3 {
        let ip = format!("198.51.100.{n}");
        assert_eq!(signup_with(&app, n, &[("CF-Connecting-IP", &ip)]).await.0, 202, "{ip}");
    }

    let (status, _) = signup_with(&app, 3, &[("CF-Connecting-IP", "198.51.100.99")]).await;

    assert_eq!(status, 429, "every request counted against the TCP peer");
}

#[actix_web::test]
async fn a_trusted_proxy_gives_each_client_ip_its_own_budget() {
    let app = spawn_app_with(TRUSTED_LOCALHOST).await;
    exhaust(&app, 0, 3, &[("CF-Connecting-IP", "203.0.113.1")], "203.0.113.1").await;

    exhaust(&app, 10, 3, &[("CF-Connecting-IP", "203.0.113.2")], "203.0.113.2").await;
    let (status, _) = signup_with(&app, 20, &[]).await;

    assert_eq!(status, 202, "the proxy itself, without the header, has its own budget");
}

#[actix_web::test]
async fn a_client_ip_header_without_exactly_one_valid_ip_counts_as_the_proxy() {
    let app = spawn_app_with(TRUSTED_LOCALHOST).await;
    let values = ["203.0.113.1, 203.0.113.2", "not-an-ip", "203.0.113.3:443"];
    for (n, value) in values.iter().enumerate() {
        assert_eq!(signup_with(&app, n, &[("CF-Connecting-IP", value)]).await.0, 202, "{value:?}");
    }

    let (status, _) = signup_with(&app, 3, &[]).await;

    assert_eq!(status, 429, "all three counted against the proxy 127.0.0.1");
}

#[actix_web::test]
async fn ipv6_clients_in_one_64_share_a_budget() {
    let app = spawn_app_with(TRUSTED_LOCALHOST).await;
    for (n, ip) in ["2001:db8::1", "2001:db8::1", "2001:db8::2"].iter().enumerate() {
        assert_eq!(signup_with(&app, n, &[("CF-Connecting-IP", ip)]).await.0, 202, "{ip}");
    }

    let (same_64, _) = signup_with(&app, 3, &[("CF-Connecting-IP", "2001:db8::ffff:1")]).await;
    let (other_64, _) = signup_with(&app, 4, &[("CF-Connecting-IP", "2001:db8:0:1::1")]).await;

    assert_eq!(same_64, 429, "2001:db8::/64 used its budget");
    assert_eq!(other_64, 202, "2001:db8:0:1::/64 is another client");
}

#[actix_web::test]
async fn ipv6_prefix_is_configurable() {
    let app = spawn_app_with("[server]\ntrusted_proxies = [\"127.0.0.1\"]\nipv6_prefix = 128\n").await;
    exhaust(&app, 0, 3, &[("CF-Connecting-IP", "2001:db8::1")], "2001:db8::1").await;

    let (status, _) = signup_with(&app, 10, &[("CF-Connecting-IP", "2001:db8::2")]).await;

    assert_eq!(status, 202, "with /128 every address is its own client");
}

#[actix_web::test]
async fn x_forwarded_for_is_ignored_unless_named() {
    let default = spawn_app_with(TRUSTED_LOCALHOST).await;
    for n in 0..3 {
        let ip = format!("198.51.100.{n}");
        assert_eq!(signup_with(&default, n, &[("X-Forwarded-For", &ip)]).await.0, 202);
    }
    let (status, _) = signup_with(&default, 3, &[("X-Forwarded-For", "198.51.100.99")]).await;
    assert_eq!(status, 429, "X-Forwarded-For is not read by default");

    let named =
        spawn_app_with("[server]\ntrusted_proxies = [\"127.0.0.1\"]\nclient_ip_header = \"X-Forwarded-For\"\n").await;
    exhaust(&named, 0, 3, &[("X-Forwarded-For", "198.51.100.1")], "198.51.100.1").await;
    let (status, _) = signup_with(&named, 10, &[("X-Forwarded-For", "198.51.100.2")]).await;
    assert_eq!(status, 202, "named by the operator, X-Forwarded-For picks the client");
}

fn files_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_in(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[actix_web::test]
async fn the_data_dir_never_holds_the_client_ip() {
    let app = spawn_app_with(TRUSTED_LOCALHOST).await;
    let clients = [("203.0.113.7", "203.0.113."), ("2001:db8:abcd:12::7", "2001:db8:abcd")];
    for (n, (ip, _)) in clients.iter().enumerate() {
        assert_eq!(signup_with(&app, n, &[("CF-Connecting-IP", ip)]).await.0, 202, "{ip}");
    }
    drain(&app).await;

    let files = files_in(app.data_dir());
    assert!(files.iter().any(|f| f.ends_with("signupd.sqlite3-wal")), "the WAL is checked too: {files:?}");
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        for (_, needle) in clients {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{} contains {needle:?}",
                file.display()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Concurrency

#[actix_web::test]
async fn fifty_concurrent_signups_of_one_address_make_one_row_and_one_mail() {
    let app = spawn_app_with(RAISED_LIMITS).await;
    // Two spellings of one mailbox, so normalisation and the unique key race together.
    let requests = (0..50).map(|n| {
        let email = if n % 2 == 0 { "jane@example.com" } else { " JANE@Example.COM" };
        post_json(&app, valid_json(email))
    });

    let responses = join_all(requests).await;

    let mut answers = Vec::new();
    for response in responses {
        answers.push(Answer::of(response).await);
    }
    assert_eq!(answers[0].status, 202, "{:?}", answers[0]);
    for (n, answer) in answers.iter().enumerate() {
        assert_eq!(answer, &answers[0], "answer {n}");
    }
    drain(&app).await;
    assert_eq!(strings(&app, "SELECT email || ' ' || status FROM subscribers"), ["jane@example.com pending"]);
    assert_eq!(strings(&app, "SELECT kind FROM outbox"), ["confirm"]);
    assert_eq!(count(&app, "intake"), 0);
}

#[actix_web::test]
async fn concurrent_signups_from_one_client_never_exceed_its_budget() {
    let app = spawn_app().await;
    let requests = (0..20).map(|n| post_json(&app, valid_json(&format!("person{n}@example.com"))));

    let statuses: Vec<u16> = join_all(requests).await.iter().map(|r| r.status().as_u16()).collect();

    assert_eq!(statuses.iter().filter(|s| **s == 202).count(), 3, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 17, "{statuses:?}");
    assert_eq!(count(&app, "intake"), 3);
}

#[actix_web::test]
async fn n_plus_one_concurrent_signups_at_a_limit_of_n_let_exactly_n_through_for_each_client() {
    // Arrange: two clients behind a trusted proxy, each with a budget of 25
    const LIMIT: usize = 25;
    let app = spawn_app_with(&format!(
        "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n\
         [signup]\nrate_limits = [ {{ window = \"1h\", max = {LIMIT} }} ]\nnetwork_rate_limits = []\n"
    ))
    .await;
    let clients = ["203.0.113.1", "198.51.100.1"];

    // Act: all 2 × (N + 1) requests at once, racing for the writer's batches
    let requests = clients.iter().enumerate().flat_map(|(c, ip)| {
        let app = &app;
        (0..=LIMIT)
            .map(move |n| async move { (*ip, signup_with(app, c * 100 + n, &[("CF-Connecting-IP", ip)]).await.0) })
    });
    let answers = join_all(requests).await;

    // Assert
    for ip in clients {
        let statuses: Vec<u16> =
            answers.iter().filter(|(client, _)| *client == ip).map(|(_, status)| *status).collect();
        assert_eq!(statuses.iter().filter(|&&s| s == 202).count(), LIMIT, "{ip}: {statuses:?}");
        assert_eq!(statuses.iter().filter(|&&s| s == 429).count(), 1, "{ip}: {statuses:?}");
    }
    assert_eq!(count(&app, "intake"), 2 * LIMIT as i64, "exactly the accepted requests were recorded");
    let counters: Vec<i64> = db(&app)
        .prepare("SELECT count FROM rate_limits WHERE key NOT LIKE 'surge/%' ORDER BY key")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(counters, [LIMIT as i64, LIMIT as i64], "one counter per client, each written with its exact count");
}
