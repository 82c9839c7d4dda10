//! Subscription bombing (docs/operations.md "Under attack"): the flood's real shape — many
//! victims' addresses, from many addresses of one network or from many networks, through the
//! client-IP header a trusted proxy sets — against each bound: the neighbourhood limits, the
//! per-address cap across lists, the fair mail budget (driven by hand, then with the real
//! workers racing), the expiry of rows that were never mailed (through the real cleanup of the
//! real binary), and the surge alert.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use signupd::outbound::mail::{MailOutcome, try_execute_task};

use crate::helpers::{TestApp, spawn_app_with};
use crate::mail::{Webhook, race_mail_workers, run_mail};
use crate::process::{NO_SURGE, config, serve};
use crate::signup::{count, drain, json_request, valid_json};

/// The test client is the proxy: it names each visitor in `CF-Connecting-IP`.
const TRUSTED: &str = "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n";

/// A JSON signup of `email` to `list` as the visitor `ip`; returns the status.
async fn signup_as(app: &TestApp, ip: &str, email: &str, list: &str) -> u16 {
    let mut body = valid_json(email);
    body["list"] = list.into();
    let response = json_request(app, body).header("CF-Connecting-IP", ip).send().await.unwrap();
    response.status().as_u16()
}

/// The recipients of every mail the file transport wrote into `dir`.
fn recipients(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .filter_map(|mail| mail.lines().find_map(|line| line.strip_prefix("To: ").map(str::to_owned)))
        .collect();
    found.sort();
    found
}

// ---------------------------------------------------------------------------------------------
// Neighbourhood limits

#[actix_web::test]
async fn a_slash_48_gets_one_neighbourhood_budget_however_many_slash_64s_it_signs_up_from() {
    // Arrange: the defaults (100 per 10 minutes per /48), each /64 a client of its own
    let app = spawn_app_with(TRUSTED).await;

    // Act: 150 signups of 150 victims, each from another /64 of one /48
    let mut statuses = Vec::new();
    for n in 0..150 {
        statuses
            .push(signup_as(&app, &format!("2001:db8:7:{n:x}::1"), &format!("victim{n}@example.com"), "news").await);
    }

    // Assert
    let accepted = statuses.iter().filter(|status| **status == 202).count();
    let limited = statuses.iter().filter(|status| **status == 429).count();
    assert_eq!((accepted, limited), (100, 50), "statuses: {statuses:?}");
    assert!(statuses[..100].iter().all(|status| *status == 202), "the first hundred pass");
    assert_eq!(count(&app, "intake"), 100, "nothing is recorded for a refused signup");
    assert_eq!(signup_as(&app, "2001:db8:8::1", "elsewhere@example.com", "news").await, 202, "another /48");
}

#[actix_web::test]
async fn an_ipv4_slash_24_shares_its_budget_and_the_refusal_says_when_to_come_back() {
    // Arrange
    let app =
        spawn_app_with(&format!("{TRUSTED}[signup]\nnetwork_rate_limits = [{{ window = \"10m\", max = 20 }}]\n")).await;
    for n in 0..20 {
        let status = signup_as(&app, &format!("198.51.100.{n}"), &format!("victim{n}@example.com"), "news").await;
        assert_eq!(status, 202, "signup {n} is within the /24's budget");
    }

    // Act
    let refused = json_request(&app, valid_json("victim20@example.com"))
        .header("CF-Connecting-IP", "198.51.100.250")
        .send()
        .await
        .unwrap();

    // Assert
    assert_eq!(refused.status().as_u16(), 429);
    let retry_after: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=600).contains(&retry_after), "Retry-After within the 10-minute window: {retry_after}");
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body, serde_json::json!({"ok": false, "error": "rate_limited"}), "the same answer as the client limit");
    assert_eq!(signup_as(&app, "198.51.101.1", "next-door@example.com", "news").await, 202, "the next /24");
    assert_eq!(count(&app, "intake"), 21);
}

// ---------------------------------------------------------------------------------------------
// Per victim

const THREE_LISTS: &str =
    "[[lists]]\nid = \"a\"\n[[lists]]\nid = \"b\"\n[[lists]]\nid = \"c\"\n[[lists]]\nid = \"d\"\n";

#[actix_web::test]
async fn one_address_gets_at_most_three_confirmations_a_day_across_lists_and_networks() {
    // Arrange: a one-second cooldown, so only the cap stands between the victim and a mail per signup
    let app = spawn_app_with(&format!("{TRUSTED}[signup]\nresend_cooldown = \"1s\"\n{THREE_LISTS}")).await;
    let mail_dir = app.data_dir().join("mail");

    // Act: twelve signups of one victim, from twelve networks, over three lists
    let mut statuses = Vec::new();
    for n in 0..12 {
        let list = ["a", "b", "c"][n % 3];
        statuses.push(signup_as(&app, &format!("203.0.{n}.1"), "victim@example.com", list).await);
        drain(&app).await;
        run_mail(&app).await;
        app.clock.advance(Duration::from_secs(2));
    }

    // Assert: every answer the same, three mails
    assert!(statuses.iter().all(|status| *status == 202), "the answer never changes: {statuses:?}");
    assert_eq!(recipients(&mail_dir), ["victim@example.com"; 3]);
    assert_eq!(count(&app, "outbox"), 0, "resends over the cap are dropped, not kept waiting");

    // Act: a fourth list, where the victim has no row yet
    assert_eq!(signup_as(&app, "192.0.2.1", "victim@example.com", "d").await, 202);
    drain(&app).await;
    let outcomes = run_mail(&app).await;

    // Assert: nothing sent, and nothing kept for an address that never got a link
    assert_eq!(outcomes, [MailOutcome::Capped]);
    assert_eq!(recipients(&mail_dir).len(), 3);
    assert_eq!(count(&app, "subscribers"), 3, "the never-mailed row on list d is gone");

    // Act: a day after the first mail
    app.clock.advance(Duration::from_secs(86_400));
    assert_eq!(signup_as(&app, "203.0.99.1", "victim@example.com", "a").await, 202);
    drain(&app).await;
    assert_eq!(run_mail(&app).await, [MailOutcome::Sent]);

    // Assert
    assert_eq!(recipients(&mail_dir).len(), 4, "the cap counts the last 24 hours");
    let stored: Vec<String> = crate::signup::strings(&app, "SELECT hash FROM address_mails");
    assert!(stored.iter().all(|hash| hash.len() == 64 && !hash.contains("victim")), "hashes only: {stored:?}");
}

#[actix_web::test]
async fn a_failed_send_does_not_count_against_the_cap() {
    // Arrange: a relay that refuses for now (451), so the mail is retried
    let smtp = crate::smtp_server::SmtpServer::start();
    smtp.answer_data_with(&[451]);
    let app = spawn_app_with(&format!("{TRUSTED}[signup]\nmax_mails_per_address_per_day = 1\n{}", smtp.config())).await;
    assert_eq!(signup_as(&app, "203.0.113.1", "victim@example.com", "news").await, 202);
    drain(&app).await;

    // Act
    let first = try_execute_task(&app.state.mailer()).await.unwrap();
    app.clock.advance(Duration::from_secs(120));
    let second = try_execute_task(&app.state.mailer()).await.unwrap();

    // Assert
    assert!(matches!(first, MailOutcome::Retrying { .. }), "{first:?}");
    assert_eq!(second, MailOutcome::Sent, "the failed attempt gave its place under the cap back");
    assert_eq!(smtp.received().len(), 1);
}

#[actix_web::test]
async fn the_cap_holds_when_sixteen_real_workers_race_for_one_victims_mails() {
    // Arrange: one victim on six lists of six senders (lists of one sender would share a
    // mail), each confirmation queued at once
    let lists: String =
        (0..6).map(|n| format!("[[lists]]\nid = \"l{n}\"\nfrom = \"L{n} <l{n}@example.com>\"\n")).collect();
    let app = spawn_app_with(&format!("{TRUSTED}{lists}")).await;
    for n in 0..6 {
        assert_eq!(signup_as(&app, &format!("203.0.{n}.1"), "victim@example.com", &format!("l{n}")).await, 202);
    }
    drain(&app).await;
    assert_eq!(count(&app, "outbox"), 6);

    // Act: the real workers race for the victim's mails
    race_mail_workers(&app, || count(&app, "outbox") == 0).await;

    // Assert
    assert_eq!(recipients(&app.data_dir().join("mail")), ["victim@example.com"; 3], "exactly the cap");
    assert_eq!(count(&app, "outbox"), 0);
    assert_eq!(count(&app, "subscribers"), 3, "the three rows never mailed are gone");
}

// ---------------------------------------------------------------------------------------------
// A fair budget

/// A flood of 40 victims from one /24, then three visitors from networks of their own.
async fn flood_then_visitors(app: &TestApp) -> Vec<String> {
    for n in 0..40 {
        assert_eq!(signup_as(app, &format!("198.51.100.{n}"), &format!("victim{n}@example.com"), "news").await, 202);
    }
    let visitors =
        [("203.0.113.5", "ann@example.org"), ("192.0.2.77", "bob@example.org"), ("2001:db8:9::1", "cat@example.org")];
    for (ip, email) in visitors {
        assert_eq!(signup_as(app, ip, email, "news").await, 202);
    }
    drain(app).await;
    visitors.iter().map(|(_, email)| (*email).to_owned()).collect()
}

const FLOOD_CONFIG: &str = "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n\
    [signup]\nrate_limits = [{ window = \"10m\", max = 1000 }]\nnetwork_rate_limits = [{ window = \"10m\", max = 1000 }]\n";

#[actix_web::test]
async fn when_the_budget_cannot_cover_the_queue_the_networks_with_fewest_mails_go_first() {
    // Arrange
    let app = spawn_app_with(&format!("{FLOOD_CONFIG}[mail]\nmax_mails_per_hour = 5\n")).await;
    let visitors = flood_then_visitors(&app).await;

    // Act
    let outcomes = run_mail(&app).await;

    // Assert: five mails; the visitors queued last are among them
    assert_eq!(outcomes.iter().filter(|outcome| **outcome == MailOutcome::Sent).count(), 5, "{outcomes:?}");
    let sent: BTreeSet<String> = recipients(&app.data_dir().join("mail")).into_iter().collect();
    for visitor in &visitors {
        assert!(sent.contains(visitor), "{visitor} waited behind the flood: {sent:?}");
    }
    assert_eq!(count(&app, "outbox"), 38, "the rest of the flood waits; nothing is dropped");

    // Act: the next hour, a new visitor arrives behind the waiting flood
    app.clock.advance(Duration::from_secs(3600));
    assert_eq!(signup_as(&app, "203.0.114.9", "dan@example.org", "news").await, 202);
    drain(&app).await;
    run_mail(&app).await;

    // Assert
    let sent: BTreeSet<String> = recipients(&app.data_dir().join("mail")).into_iter().collect();
    assert!(sent.contains("dan@example.org"), "{sent:?}");
    assert_eq!(sent.len(), 10);
}

#[actix_web::test]
async fn the_fair_order_counts_each_networks_mails_over_the_last_sixty_minutes_sliding() {
    // Arrange: ten flood networks with three victims each; a burst of ten gives each network
    // one, then the pace is one mail every 6 minutes
    let app = spawn_app_with(&format!("{FLOOD_CONFIG}[mail]\nmax_mails_per_hour = 10\nburst = 10\n")).await;
    app.clock.advance(Duration::from_secs(3000)); // ten minutes before a clock hour ends
    for n in 0..30 {
        let ip = format!("198.51.{}.1", 100 + n % 10);
        assert_eq!(signup_as(&app, &ip, &format!("victim{n}@example.com"), "news").await, 202);
    }
    drain(&app).await;
    run_mail(&app).await;
    assert_eq!(recipients(&app.data_dir().join("mail")).len(), 10);

    // Act: half an hour later (across a clock hour: the window slides), a visitor arrives behind
    // the twenty waiting mails; the pace has refilled five
    app.clock.advance(Duration::from_secs(1800));
    assert_eq!(signup_as(&app, "203.0.113.5", "ann@example.org", "news").await, 202);
    drain(&app).await;
    run_mail(&app).await;

    // Assert: the visitor's network had no mail in the last 60 minutes, every flood network one
    let sent = recipients(&app.data_dir().join("mail"));
    assert_eq!(sent.len(), 15);
    assert!(sent.contains(&"ann@example.org".to_owned()), "{sent:?}");
}

#[actix_web::test]
async fn the_fair_order_and_the_exact_budget_hold_when_sixteen_real_workers_race() {
    // Arrange
    let app = spawn_app_with(&format!("{FLOOD_CONFIG}[mail]\nmax_mails_per_hour = 6\n")).await;
    let visitors = flood_then_visitors(&app).await;
    assert_eq!(count(&app, "outbox"), 43);

    // Act: the real workers race for the queue
    race_mail_workers(&app, || recipients(&app.data_dir().join("mail")).len() >= 6 && count(&app, "outbox") <= 37)
        .await;

    // Assert
    let sent = recipients(&app.data_dir().join("mail"));
    assert_eq!(sent.len(), 6, "exactly the budget: {sent:?}");
    for visitor in &visitors {
        assert!(sent.contains(visitor), "{visitor} waited behind the flood: {sent:?}");
    }
    assert_eq!(count(&app, "outbox"), 37);
}

// ---------------------------------------------------------------------------------------------
// Through the real binary: never-mailed rows expire, the surge alert

/// Polls `check` every 100 ms for up to `limit`.
async fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check()
}

fn count_in(database: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open_with_flags(database, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    conn.query_row(sql, [], |row| row.get(0)).unwrap()
}

#[actix_web::test]
async fn signups_the_budget_never_mailed_are_deleted_by_the_cleanup_confirm_ttl_after_the_signup() {
    // The real server's budget is per clock hour: a run across the turn of the hour would get
    // a second hour's mail. The test takes well under a minute, so it starts clear of the turn.
    let into_hour = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() % 3600;
    if into_hour > 3600 - 60 {
        tokio::time::sleep(Duration::from_secs(3600 - into_hour + 1)).await;
    }
    // Arrange: one mail an hour, an 8-second confirm window (long enough to see the queue
    // before it ends, on a busy machine too), the cleanup every second
    let dir = tempfile::tempdir().unwrap();
    let path =
        config(dir.path(), 1, "[server]\ntrusted_proxies = [\"127.0.0.1\"]\n[cleanup]\nschedule = \"* * * * * *\"\n");
    let text = std::fs::read_to_string(&path).unwrap().replace("[signup]\n", "[signup]\nconfirm_ttl = \"8s\"\n");
    std::fs::write(&path, text).unwrap();
    let server = serve(&path);
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    for n in 0..3 {
        let response = client
            .post(server.url("/api/signup"))
            .header("CF-Connecting-IP", format!("203.0.{n}.1"))
            .form(&[("email", format!("person{n}@example.com").as_str()), ("consent", "yes"), ("list", "news")])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 303);
    }
    let database = dir.path().join("data").join("signupd.sqlite3");
    let mail_dir = dir.path().join("data").join("mail");
    assert!(
        eventually(Duration::from_secs(10), || {
            count_in(&database, "SELECT count(*) FROM subscribers") == 3
                && recipients(&mail_dir).len() == 1
                && count_in(&database, "SELECT count(*) FROM outbox") == 2
        })
        .await,
        "three rows, one mail (the budget) and two mails waiting, before the window ends"
    );

    // Act + Assert: the cleanup removes the two never-mailed rows with their queued mail (and the
    // mailed one once its link expired)
    assert!(
        eventually(Duration::from_secs(25), || {
            count_in(&database, "SELECT count(*) FROM subscribers WHERE confirmation_sent_at IS NULL") == 0
                && count_in(&database, "SELECT count(*) FROM outbox") == 0
        })
        .await,
        "never-mailed rows: {}, queued mails: {}",
        count_in(&database, "SELECT count(*) FROM subscribers WHERE confirmation_sent_at IS NULL"),
        count_in(&database, "SELECT count(*) FROM outbox")
    );
    assert_eq!(recipients(&mail_dir).len(), 1, "and they were never mailed");
    server.stop().await;
}

#[actix_web::test]
async fn a_surge_past_the_threshold_posts_one_alert_per_window_without_addresses() {
    // Arrange: an alert after three accepted signups in an hour; the signups race, and exactly
    // one of them may see the count pass the threshold
    let alert = Webhook::start();
    let dir = tempfile::tempdir().unwrap();
    let path =
        config(dir.path(), 1000, "[server]\ntrusted_proxies = [\"127.0.0.1\"]\nmetrics_listen = \"127.0.0.1:0\"\n");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(NO_SURGE, "surge_alert = { window = \"1h\", max = 3 }")
        .replace("[mail]\n", &format!("[mail]\nalert_webhook = \"{}\"\n", alert.url));
    std::fs::write(&path, text).unwrap();
    let server = serve(&path);
    let client = reqwest::Client::new();

    // Act: twenty signups from twenty networks, all at once
    let signups = (0..20).map(|n| {
        client
            .post(server.url("/api/signup"))
            .header("CF-Connecting-IP", format!("203.0.{n}.1"))
            .header("Accept", "application/json")
            .form(&[("email", format!("surge{n}@example.com").as_str()), ("consent", "yes"), ("list", "news")])
            .send()
    });
    for response in futures_util::future::join_all(signups).await {
        assert_eq!(response.unwrap().status().as_u16(), 202, "the answer does not change in a surge");
    }

    // Assert
    assert!(eventually(Duration::from_secs(10), || !alert.requests().is_empty()).await, "no alert arrived");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let requests = alert.requests();
    assert_eq!(requests.len(), 1, "one alert per window: {requests:?}");
    let body = String::from_utf8(requests[0].1.clone()).unwrap();
    let posted: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(posted, serde_json::json!({"alert": "signup_surge", "list": "news", "count": 4, "window": "1h"}));
    assert!(requests[0].0.starts_with("POST /alert "), "{}", requests[0].0);
    assert!(!body.contains('@') && !body.contains("203.0"), "no address or IP: {body}");
    let port = server.metrics_port.expect("serve logs metrics_port");
    let metrics = client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("signupd_surge_alerts_total{list=\"news\"} 1"), "{metrics}");
    server.stop().await;
}

#[actix_web::test]
async fn the_alert_webhook_does_not_follow_a_redirect() {
    // Arrange: the alert endpoint answers 302 to another receiver
    let elsewhere = Webhook::start();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let redirector = format!("http://127.0.0.1:{}/alert", listener.local_addr().unwrap().port());
    let redirected = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = redirected.clone();
    let target = elsewhere.url.clone();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buffer = [0; 4096];
            let _ = stream.read(&mut buffer);
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let answer =
                format!("HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    let app = spawn_app_with(&format!(
        "{TRUSTED}[signup]\nsurge_alert = {{ window = \"1h\", max = 1 }}\n[mail]\nalert_webhook = \"{redirector}\"\n"
    ))
    .await;

    // Act: the second signup passes the threshold
    assert_eq!(signup_as(&app, "203.0.113.1", "one@example.com", "news").await, 202);
    assert_eq!(signup_as(&app, "203.0.114.1", "two@example.com", "news").await, 202);

    // Assert
    let posted = eventually(Duration::from_secs(10), || redirected.load(std::sync::atomic::Ordering::SeqCst) > 0).await;
    assert!(posted, "the alert was posted to the configured URL");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(elsewhere.requests().is_empty(), "the redirect was not followed: {:?}", elsewhere.requests());
}
