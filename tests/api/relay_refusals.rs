//! A relay that refuses signupd itself, worded as real relays word it (Exim, qmail, Postfix,
//! Microsoft 365), with the real mail workers racing against it: the whole queue waits, the
//! operator hears of it once, no pending signup or confirmed row is lost, and everything goes
//! out once the relay takes mail again, each mail once. A relay refusing one recipient holds
//! nobody else back. (The certificate and login refusals are tried against a real Postfix:
//! tests/postfix/relay.py.)

use std::collections::BTreeMap;
use std::time::Duration;

use signupd::outbound::mail::{MailOutcome, Transport, try_execute_task};

use crate::confirm::post_token;
use crate::helpers::{START, TestApp, spawn_app_with};
use crate::mail::{Mail, Webhook, race_mail_workers, run_mail, sign_up};
use crate::signup::{RAISED_LIMITS, count, db, drain, post_form, strings};
use crate::smtp_server::SmtpServer;

#[actix_web::test]
async fn racing_workers_meet_a_refused_sender_alert_once_lose_nothing_and_send_everything_when_it_is_fixed() {
    // Arrange: a relay that refuses the list's sender (553 5.7.1), an alert receiver, and a
    // dozen visitors told to check their inbox
    let smtp = SmtpServer::start();
    smtp.refuse_senders_with(Some(553));
    let webhook = Webhook::start();
    let mail_config = smtp.config().replacen("[mail]\n", &format!("[mail]\nalert_webhook = \"{}\"\n", webhook.url), 1);
    let app =
        spawn_app_with(&format!("[server]\nmetrics_listen = \"127.0.0.1:0\"\n{RAISED_LIMITS}{mail_config}")).await;
    let metrics_port = app.metrics_port.expect("a metrics listener");
    let addresses: Vec<String> = (0..12).map(|n| format!("visitor{n}@example.com")).collect();
    for address in &addresses {
        sign_up(&app, address).await;
    }
    drain(&app).await;

    // Act: sixteen workers, as serve runs them, until the alert came
    race_mail_workers(&app, || !webhook.requests().is_empty()).await;

    // Assert: one alert, naming the step and the code, never an address
    let alerts = webhook.requests();
    assert_eq!(alerts.len(), 1, "one alert however many workers met the refusal: {alerts:?}");
    let body = String::from_utf8(alerts[0].1.clone()).unwrap();
    let alert: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(alert["event"], "relay_refused", "{body}");
    assert_eq!(alert["stage"], "mail_from", "{body}");
    assert_eq!(alert["smtp_code"], 553, "{body}");
    assert!(alert["detail"].as_str().unwrap().contains("refused the sender (MAIL FROM)"), "{body}");
    assert!(!body.contains('@'), "no address in the alert: {body}");
    // Nothing lost, and no mail after mail burnt against the refusal
    assert_eq!(count(&app, "subscribers"), 12, "every pending signup is kept");
    assert_eq!(count(&app, "outbox"), 12, "every mail waits");
    assert!(smtp.received().is_empty());
    let tries = smtp.mail_attempts();
    assert!((1..=16).contains(&tries), "at most one try per worker before the queue waits: {tries}");
    assert_eq!(relay_refusing(&app, metrics_port).await, "1", "the gauge shows the relay refusing");

    // Act: the operator fixes the sender at the relay; the wait runs out (at most five minutes)
    smtp.refuse_senders_with(None);
    app.clock.advance(Duration::from_secs(5 * 60 + 1));
    race_mail_workers(&app, || smtp.received().len() >= 12).await;

    // Assert: every visitor got exactly one mail, with a link that works; one alert still
    let mut per_address: BTreeMap<String, usize> = BTreeMap::new();
    for raw in smtp.received() {
        *per_address.entry(Mail::parse(&raw).to()).or_default() += 1;
    }
    let expected: BTreeMap<String, usize> = addresses.iter().map(|address| (address.clone(), 1)).collect();
    assert_eq!(per_address, expected);
    assert_eq!(count(&app, "outbox"), 0);
    assert_eq!(webhook.requests().len(), 1, "no second alert for the same episode");
    assert_eq!(relay_refusing(&app, metrics_port).await, "0");
}

/// The value of `signupd_relay_refusing` on the metrics listener.
async fn relay_refusing(app: &crate::helpers::TestApp, port: u16) -> String {
    let text = app.client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap().text().await.unwrap();
    let line =
        text.lines().find(|line| line.starts_with("signupd_relay_refusing ")).unwrap_or_else(|| panic!("{text}"));
    line.rsplit(' ').next().unwrap().to_owned()
}

#[actix_web::test]
async fn the_relay_hears_the_configured_ehlo_name() {
    // Arrange
    let smtp = SmtpServer::start();
    let app = spawn_app_with(&format!("{RAISED_LIMITS}{}helo_name = \"mta.bakery.test\"\n", smtp.config())).await;
    sign_up(&app, "ann@example.com").await;
    drain(&app).await;

    // Act
    let sent = crate::mail::run_mail(&app).await;

    // Assert
    assert_eq!(sent, [signupd::outbound::mail::MailOutcome::Sent]);
    assert_eq!(smtp.helo_names(), ["mta.bakery.test"]);
}

/// Where a scripted refusal comes.
#[derive(Debug, Clone, Copy)]
enum At {
    Rcpt,
    Data,
}

/// The replies real relays give when they refuse signupd itself, each to every recipient.
const REFUSALS_OF_SIGNUPD: [(&str, At, u16, &str); 6] = [
    // Exim's default for a client that did not log in (or logged in wrongly).
    ("exim", At::Rcpt, 550, "relay not permitted"),
    // qmail: the enhanced status after a `#`.
    ("qmail", At::Rcpt, 553, "sorry, that domain isnt in my list of allowed rcpthosts (#5.7.1)"),
    // Postfix reports its sender restrictions at RCPT TO.
    ("postfix", At::Rcpt, 550, "5.1.0 <news@example.com>: Sender address rejected: not owned by user relay-user"),
    // A relay refusing everyone for a while.
    ("postfix-defer", At::Rcpt, 450, "4.7.1 Client host rejected: cannot find your hostname"),
    // Microsoft 365 at the end of DATA.
    ("m365-sendas", At::Data, 554, "5.2.252 SendAsDenied; news@example.com not allowed to send as news@example.com"),
    (
        "m365-quota",
        At::Data,
        554,
        "5.2.0 STOREDRV.Submission.Exception:SubmissionQuotaExceededException; Failed to process message",
    ),
];

/// An app with an alert receiver and two lists of different senders (`news`, `other`).
async fn app_alerting_to(smtp: &SmtpServer, webhook: &Webhook) -> TestApp {
    let mail_config = smtp.config().replacen("[mail]\n", &format!("[mail]\nalert_webhook = \"{}\"\n", webhook.url), 1);
    spawn_app_with(&format!(
        "{RAISED_LIMITS}{mail_config}\n[[lists]]\nid = \"news\"\nname = \"News\"\nfrom = \"News <news@example.com>\"\n\
         [[lists]]\nid = \"other\"\nname = \"Other\"\nfrom = \"Other <other@example.org>\"\n"
    ))
    .await
}

/// The alerts the receiver got, as JSON.
fn alerts(webhook: &Webhook) -> Vec<serde_json::Value> {
    webhook.requests().iter().map(|(_, body)| serde_json::from_slice(body).unwrap()).collect()
}

/// How many mails the relay took, per recipient.
fn received_per_address(smtp: &SmtpServer) -> BTreeMap<String, usize> {
    let mut per_address = BTreeMap::new();
    for raw in smtp.received() {
        *per_address.entry(Mail::parse(&raw).to()).or_default() += 1;
    }
    per_address
}

/// The app's mail worker as it is after a restart: the same queue, a fresh transport (the hold
/// lives in memory).
fn restarted(app: &TestApp) -> signupd::outbound::mail::Mailer {
    let mut mailer = app.state.mailer();
    mailer.transport = Transport::from_config(&app.state.config, None).unwrap();
    mailer
}

#[actix_web::test]
async fn every_real_relays_refusal_of_signupd_keeps_every_signup_alerts_once_and_all_goes_after_a_restart() {
    for (name, at, code, text) in REFUSALS_OF_SIGNUPD {
        // Arrange: a relay answering every recipient (or every message) as this one does, and
        // five visitors who signed up in the same second
        let smtp = SmtpServer::start();
        match at {
            At::Rcpt => smtp.refuse_recipients_saying(None, code, text),
            At::Data => smtp.refuse_data_saying(code, text),
        }
        let webhook = Webhook::start();
        let app = app_alerting_to(&smtp, &webhook).await;
        let addresses: Vec<String> = (0..5).map(|n| format!("visitor{n}@example.net")).collect();
        for address in &addresses {
            sign_up(&app, address).await;
        }

        // Act: the real workers, racing, until the operator heard
        race_mail_workers(&app, || !webhook.requests().is_empty()).await;

        // Assert: one relay_refused alert with the relay's code; nothing lost, no try burnt
        let alerts = alerts(&webhook);
        assert_eq!(alerts.len(), 1, "{name}: one alert: {alerts:?}");
        assert_eq!(alerts[0]["event"], "relay_refused", "{name}: {alerts:?}");
        assert_eq!(alerts[0]["smtp_code"], code, "{name}: {alerts:?}");
        let stage = match at {
            At::Rcpt => "rcpt",
            At::Data => "data",
        };
        assert_eq!(alerts[0]["stage"], stage, "{name}: {alerts:?}");
        assert!(!alerts[0].to_string().contains('@'), "{name}: no address in the alert: {alerts:?}");
        assert_eq!(count(&app, "subscribers"), 5, "{name}: every pending signup is kept");
        assert_eq!(count(&app, "suppressions"), 0, "{name}: nobody is suppressed");
        assert_eq!(count(&app, "outbox"), 5, "{name}: every mail waits");
        assert!(smtp.received().is_empty(), "{name}");
        let (most_tries, latest_due): (i64, i64) = db(&app)
            .query_row("SELECT max(attempts), max(next_attempt_at) FROM outbox", [], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .unwrap();
        assert_eq!(most_tries, 0, "{name}: a held mail keeps its count of tries");
        assert!(latest_due <= START, "{name}: a held mail keeps its place (its due time): {latest_due}");

        // Act: the operator fixes the relay and restarts signupd; no time passes
        smtp.accept_everything();
        let mailer = restarted(&app);
        let mut sent = Vec::new();
        loop {
            match try_execute_task(&mailer).await.unwrap() {
                MailOutcome::EmptyQueue => break,
                outcome => sent.push(outcome),
            }
            assert!(sent.len() <= 5, "{name}: {sent:?}");
        }

        // Assert: held mail goes at once, each once
        assert_eq!(sent, vec![MailOutcome::Sent; 5], "{name}");
        let expected: BTreeMap<String, usize> = addresses.iter().map(|address| (address.clone(), 1)).collect();
        assert_eq!(received_per_address(&smtp), expected, "{name}");
        assert_eq!(count(&app, "outbox"), 0, "{name}");
    }
}

#[actix_web::test]
async fn a_recipient_refused_by_policy_waits_alone_while_its_neighbours_are_delivered() {
    // Arrange: Postfix refusing one recipient by policy, and four visitors signing up in the
    // same second behind it
    let smtp = SmtpServer::start();
    smtp.refuse_recipients_saying(Some("blocked@"), 554, "5.7.1 <{to}>: Recipient address rejected: Access denied");
    let webhook = Webhook::start();
    let app = app_alerting_to(&smtp, &webhook).await;
    sign_up(&app, "blocked@example.net").await;
    let neighbours: Vec<String> = (0..4).map(|n| format!("neighbour{n}@example.net")).collect();
    for address in &neighbours {
        sign_up(&app, address).await;
    }

    // Act: the real workers, racing, until the neighbours got their mail
    race_mail_workers(&app, || smtp.received().len() >= 4).await;

    // Assert: every neighbour once; the refused one waits with its own backoff, tried once;
    // nothing held, nobody alerted, nothing lost
    let expected: BTreeMap<String, usize> = neighbours.iter().map(|address| (address.clone(), 1)).collect();
    assert_eq!(received_per_address(&smtp), expected);
    assert_eq!(smtp.rcpt_attempts_for("blocked@"), 1, "tried once, then waits its own backoff");
    assert!(alerts(&webhook).is_empty(), "a policy refusal of one recipient is not the relay refusing signupd");
    assert_eq!(strings(&app, "SELECT status FROM subscribers WHERE email = 'blocked@example.net'"), ["pending"]);
    assert_eq!(count(&app, "suppressions"), 0);
    let (tries, due): (i64, i64) = db(&app)
        .query_row("SELECT attempts, next_attempt_at FROM outbox", [], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap();
    assert_eq!(tries, 1);
    assert!(due > START + 20, "its own backoff (retry_base 30 s, jittered): {due}");

    // Act: the relay lets it through; its backoff runs out
    smtp.accept_everything();
    app.clock.advance(Duration::from_secs(60));
    assert_eq!(run_mail(&app).await, [MailOutcome::Sent]);
    assert_eq!(count(&app, "outbox"), 0);
}

#[actix_web::test]
async fn a_recipient_the_relay_does_not_know_is_given_up_alone_and_suppressed_on_that_list_only() {
    // Arrange: the relay knows no `gone@` and takes everyone else; gone@ is pending on `news`
    // and was confirmed on `other` before
    let smtp = SmtpServer::start();
    let webhook = Webhook::start();
    let app = app_alerting_to(&smtp, &webhook).await;
    confirm_on(&app, &smtp, "gone@example.net", "other").await;
    smtp.refuse_recipients_saying(Some("gone@"), 550, "5.1.1 <{to}>: Recipient address rejected: User unknown");
    sign_up(&app, "gone@example.net").await;
    sign_up(&app, "here@example.net").await;

    // Act
    let outcomes = signupd::outbound::mail::try_execute_batch(&app.state.mailer(), 32).await.unwrap();

    // Assert: the refusal is settled by the next recipient: gone@'s confirmation is given up,
    // here@'s sent; the operator is told; only the pending row on `news` goes
    assert!(matches!(&outcomes[..], [MailOutcome::GaveUp { .. }, MailOutcome::Sent]), "{outcomes:?}");
    let alerts = alerts(&webhook);
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(alerts[0]["event"], "confirmation_undeliverable", "{alerts:?}");
    assert_eq!(
        strings(&app, "SELECT list_id || ' ' || status FROM subscribers WHERE email = 'gone@example.net'"),
        ["other confirmed"],
        "a send-time refusal never removes a confirmed row"
    );
    assert_eq!(
        strings(&app, "SELECT list_id || ' ' || reason FROM suppressions"),
        ["news bounced"],
        "suppressed on the list the mail was for, and no other"
    );
}

/// Signs `email` up on `list` and confirms it through the mailed link; the welcome mail is
/// sent.
async fn confirm_on(app: &TestApp, smtp: &SmtpServer, email: &str, list: &str) {
    let before = smtp.received().len();
    let response = post_form(app, &[("email", email), ("consent", "yes"), ("list", list)]).await;
    assert_eq!(response.status().as_u16(), 303, "signup of {email} on {list}");
    drain(app).await;
    assert_eq!(run_mail(app).await, [MailOutcome::Sent]);
    let token = Mail::parse(&smtp.received()[before]).confirm_token();
    let response = post_token(app, "/api/confirm", &token).await;
    assert_eq!(response.status().as_u16(), 303, "confirming {email} on {list}");
    assert_eq!(run_mail(app).await, [MailOutcome::Sent], "the welcome mail");
}

#[actix_web::test]
async fn a_confirmed_subscriber_whose_welcome_mail_is_refused_stays_confirmed_on_both_lists() {
    // Arrange: sue is confirmed on `other`, and pending on `news`, with visitors before and
    // after her
    let smtp = SmtpServer::start();
    let webhook = Webhook::start();
    let app = app_alerting_to(&smtp, &webhook).await;
    confirm_on(&app, &smtp, "sue@example.net", "other").await;
    let response = post_form(&app, &[("email", "sue@example.net"), ("consent", "yes"), ("list", "news")]).await;
    assert_eq!(response.status().as_u16(), 303);
    drain(&app).await;
    assert_eq!(run_mail(&app).await, [MailOutcome::Sent]);
    let token = Mail::parse(smtp.received().last().unwrap()).confirm_token();
    sign_up(&app, "visitor0@example.net").await;
    sign_up(&app, "visitor1@example.net").await;

    // Act: she confirms `news` while the relay answers Exim's `550 relay not permitted`
    smtp.refuse_recipients_saying(None, 550, "relay not permitted");
    let response = post_token(&app, "/api/confirm", &token).await;
    assert_eq!(response.status().as_u16(), 303);
    sign_up(&app, "visitor2@example.net").await;
    race_mail_workers(&app, || !webhook.requests().is_empty()).await;

    // Assert: she stays confirmed on both lists, nobody is suppressed, one relay_refused
    let confirmed = "SELECT list_id || ' ' || status FROM subscribers WHERE email = 'sue@example.net' ORDER BY list_id";
    assert_eq!(strings(&app, confirmed), ["news confirmed", "other confirmed"]);
    assert_eq!(count(&app, "suppressions"), 0);
    let told = alerts(&webhook);
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["event"], "relay_refused", "{told:?}");
    assert_eq!(count(&app, "outbox"), 4, "her welcome mail and the visitors' confirmations wait");

    // Act: the relay is fixed, but knows no such user as sue (`550 5.1.1`) and takes the rest
    smtp.accept_everything();
    smtp.refuse_recipients_saying(Some("sue@"), 550, "5.1.1 <{to}>: Recipient address rejected: User unknown");
    app.clock.advance(Duration::from_secs(5 * 60 + 1));
    let visitors_mailed = || smtp.received().iter().filter(|raw| Mail::parse(raw).to().starts_with("visitor")).count();
    race_mail_workers(&app, || visitors_mailed() >= 3).await;

    // Assert: the visitors got theirs; she is still confirmed on both lists and suppressed
    // nowhere; her welcome mail waits for a retry, and the operator heard of it once
    assert_eq!(visitors_mailed(), 3);
    assert_eq!(strings(&app, confirmed), ["news confirmed", "other confirmed"]);
    assert_eq!(count(&app, "suppressions"), 0);
    let told = alerts(&webhook);
    let welcome: Vec<_> = told.iter().filter(|alert| alert["event"] == "welcome_refused").collect();
    assert_eq!(welcome.len(), 1, "{told:?}");
    assert_eq!(welcome[0]["list"], "news", "{told:?}");
    assert_eq!(welcome[0]["smtp_code"], 550, "{told:?}");
    assert_eq!(welcome[0]["recipient_domain"], "example.net", "the domain alone: {told:?}");
    assert!(!welcome[0].to_string().contains("sue"), "never the address: {told:?}");
    assert_eq!(strings(&app, "SELECT kind FROM outbox"), ["welcome"]);
}
