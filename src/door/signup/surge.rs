//! The surge alert (`signup.surge_alert`): when a list's accepted signups pass `max` within one
//! fixed window, the operator hears of it once for that window — an error-level log line, the
//! `signupd_surge_alerts_total{list}` metric, and a POST to `mail.alert_webhook` with the list,
//! the count and the window. Never an address or an IP: the alert says *that* something is
//! happening; the metrics and the operations guide say what to do.
//!
//! The count is kept by the writer with the signup itself ([`super::intake`]), so exactly one
//! request per window sees it pass the threshold, however many arrive at once.

use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::outbound::mail::alert::{self, SignupSurge};

/// Raises the alert in the background: the signup's answer never waits for the webhook. It takes
/// the configuration and the HTTP client, not the intake's `Recorder`, so this file and
/// [`super::intake`], which calls it, do not import each other.
pub fn alert(config: &Arc<Config>, client: &reqwest::Client, list: &str, count: i64, window: Duration) {
    crate::metrics::surge_alert(list);
    let window = humantime::format_duration(window).to_string();
    tracing::error!(list, count, window = %window, "signup surge: accepted signups for this list passed signup.surge_alert");
    let surge = SignupSurge { alert: "signup_surge", list: list.to_owned(), count, window };
    let config = config.clone();
    let client = client.clone();
    tokio::spawn(async move { alert::post(&config, &client, &surge).await });
}
