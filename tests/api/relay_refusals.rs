//! A relay that refuses signupd itself — a sender it will not carry, here — with the real mail
//! workers racing against it: the whole queue waits, the operator hears of it once, no pending
//! signup is lost, and everything goes out once the relay takes mail again, each mail once.
//! (The certificate and login refusals are tried against a real Postfix: tests/postfix/relay.py.)

use std::collections::BTreeMap;
use std::time::Duration;

use crate::helpers::spawn_app_with;
use crate::mail::{Mail, Webhook, race_mail_workers, sign_up};
use crate::signup::{RAISED_LIMITS, count, drain};
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
