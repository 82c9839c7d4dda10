//! Prometheus metrics (`docs/http-api.md`), served only on `server.metrics_listen`, never on the public
//! listener. Off by default: without a listener no recorder is installed and every counter
//! below is a no-op.
//!
//! Labels only ever hold configured names and fixed words — a configured list id, an outcome,
//! a route pattern — never an address, a subscriber's domain, an IP, a token or a raw path.
//! Nor a signup's `source` or `tags`: a source is whatever the form sent, so as a label it would
//! let any visitor create time series without bound; the per-source figures are in `signupd
//! stats` and on the status page ([`tally`]), which bound them.
//! Gauges that need a query (subscribers per list and status, queue depth and age) are read at
//! scrape time, through a reader, not on any request path: the listener and that refresh live
//! beside the assembly (`app::metrics_server`); this module only names and records.
//!
//! The recorder is process-wide (the `metrics` crate's model), installed once by the first
//! application that asks for a listener; a second one in the same process shares it.
//!
//! Every series is there from the first scrape ([`series`]): each metric has its `# HELP`, and
//! each counter is registered at 0 for every label value known at start, so Prometheus sees the
//! first event as an increase. The record functions accept only the words [`series`] lists.
//!
//! The counts the status page shows (signups by outcome, confirmations, surge alerts, mails,
//! webhook deliveries) are also added to [`tally::TALLY`], which the rollup worker
//! (`crate::operator::status`) stores by the hour; that one counts with or without a listener.

use std::sync::{Mutex, OnceLock, PoisonError};

use anyhow::Context;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub mod series;
pub mod tally;

use series::{
    API_SURFACES, CONFIRM_METHODS, DESTINATION_RESULTS, MAIL_KINDS, MAIL_RESULTS, RELAY_EVENTS, REMOVAL_REASONS,
    REMOVAL_VIAS, SIGNUP_OUTCOMES, WEBHOOK_RESULTS,
};
use tally::{SERVICE, SourceFigures, TALLY, family};

pub const SIGNUPS: &str = "signupd_signups_total";
pub const CONFIRMATIONS: &str = "signupd_confirmations_total";
pub const REMOVALS: &str = "signupd_removals_total";
pub const MAILS: &str = "signupd_mails_total";
pub const WEBHOOKS: &str = "signupd_webhooks_total";
pub const DESTINATIONS: &str = "signupd_destinations_total";
pub const QUEUE_DEPTH: &str = "signupd_queue_depth";
pub const QUEUE_OLDEST: &str = "signupd_queue_oldest_seconds";
pub const SUBSCRIBERS: &str = "signupd_subscribers";
pub const HTTP_DURATION: &str = "signupd_http_request_duration_seconds";
pub const SMTP_DURATION: &str = "signupd_smtp_send_duration_seconds";
pub const TIME_TO_CONFIRM: &str = "signupd_time_to_confirm_seconds";
pub const SURGE_ALERTS: &str = "signupd_surge_alerts_total";
pub const RELAY_EVENTS_TOTAL: &str = "signupd_relay_events_total";
pub const RELAY_REFUSING: &str = "signupd_relay_refusing";
pub const API_AUTH_FAILURES: &str = "signupd_api_auth_failures_total";

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
/// Held while the recorder is installed, so two servers starting at once (the tests start many)
/// install it once: the second waits and takes the first one's handle.
static INSTALLING: Mutex<()> = Mutex::new(());

pub fn signup(list: String, outcome: &'static str) {
    debug_assert!(SIGNUP_OUTCOMES.contains(&outcome), "{outcome} is not in metrics::series::SIGNUP_OUTCOMES");
    TALLY.bump(&list, family::SIGNUPS, outcome);
    metrics::counter!(SIGNUPS, "list" => list, "outcome" => outcome).increment(1);
}

/// The `source` of an accepted signup to `list`: for the status page's table by source only,
/// never a Prometheus label (see the module documentation).
pub fn accepted_source(list: &str, source: Option<&str>) {
    TALLY.add_source(list, source, SourceFigures { signups: 1, confirmations: 0 });
}

/// A confirmation of a row of `list` whose first signup carried `source`.
pub fn confirmation(list: &str, method: &'static str, delay_secs: Option<i64>, source: Option<&str>) {
    debug_assert!(CONFIRM_METHODS.contains(&method), "{method} is not in metrics::series::CONFIRM_METHODS");
    TALLY.bump(list, family::CONFIRMATIONS, "");
    TALLY.add_source(list, source, SourceFigures { signups: 0, confirmations: 1 });
    metrics::counter!(CONFIRMATIONS, "list" => list.to_owned(), "method" => method).increment(1);
    if let Some(delay) = delay_secs {
        #[allow(clippy::cast_precision_loss, reason = "seconds far below 2^52")]
        metrics::histogram!(TIME_TO_CONFIRM, "list" => list.to_owned()).record(delay.max(0) as f64);
    }
}

pub fn removal(list: &str, reason: &'static str, via: &'static str) {
    debug_assert!(REMOVAL_REASONS.contains(&reason), "{reason} is not in metrics::series::REMOVAL_REASONS");
    debug_assert!(REMOVAL_VIAS.contains(&via), "{via} is not in metrics::series::REMOVAL_VIAS");
    metrics::counter!(REMOVALS, "list" => list.to_owned(), "reason" => reason, "via" => via).increment(1);
}

pub fn mail(kind: &'static str, result: &'static str) {
    debug_assert!(
        MAIL_KINDS.contains(&kind) && MAIL_RESULTS.contains(&result),
        "{kind}/{result} not in metrics::series"
    );
    TALLY.bump(SERVICE, family::MAILS, result);
    metrics::counter!(MAILS, "kind" => kind, "result" => result).increment(1);
}

/// A list's signups passed `signup.surge_alert` in one window.
pub fn surge_alert(list: &str) {
    TALLY.bump(list, family::SURGE_ALERTS, "");
    metrics::counter!(SURGE_ALERTS, "list" => list.to_owned()).increment(1);
}

pub fn webhook(result: &'static str) {
    debug_assert!(WEBHOOK_RESULTS.contains(&result), "{result} is not in metrics::series::WEBHOOK_RESULTS");
    TALLY.bump(SERVICE, family::WEBHOOKS, result);
    metrics::counter!(WEBHOOKS, "result" => result).increment(1);
}

/// One subscriber event handed to (or not yet taken by, or dropped for) a destination. In the
/// status page's tally per destination, apart from the webhook endpoints' deliveries.
pub fn destination(name: &str, result: &'static str) {
    debug_assert!(DESTINATION_RESULTS.contains(&result), "{result} is not in metrics::series::DESTINATION_RESULTS");
    TALLY.bump_destination(name, result);
    metrics::counter!(DESTINATIONS, "destination" => name.to_owned(), "result" => result).increment(1);
}

/// One event a relay reported (`relay`: its configured name, or `smtp` for a permanent refusal
/// at send time), by the class it was read as.
pub fn relay_event(relay: &str, event: &'static str) {
    debug_assert!(RELAY_EVENTS.contains(&event), "{event} is not in metrics::series::RELAY_EVENTS");
    metrics::counter!(RELAY_EVENTS_TOTAL, "relay" => relay.to_owned(), "event" => event).increment(1);
}

/// 1 while the SMTP relay refuses signupd itself and the mail queue waits (`mail::relay_hold`).
pub fn relay_refusing(refusing: bool) {
    metrics::gauge!(RELAY_REFUSING).set(if refusing { 1.0 } else { 0.0 });
}

/// A call to the operator API (`surface` `api`) or the admin page (`admin`) without a valid
/// token: answered `401`, or `429` once its client's failures fill their window. Not in the
/// audit log, which a flood would fill.
pub fn api_auth_failure(surface: &'static str) {
    debug_assert!(API_SURFACES.contains(&surface), "{surface} is not in metrics::series::API_SURFACES");
    metrics::counter!(API_AUTH_FAILURES, "surface" => surface).increment(1);
}

pub fn smtp_send(duration: std::time::Duration) {
    metrics::histogram!(SMTP_DURATION).record(duration.as_secs_f64());
}

pub fn http_request(route: String, duration: std::time::Duration) {
    metrics::histogram!(HTTP_DURATION, "route" => route).record(duration.as_secs_f64());
}

/// Installs the recorder (once per process), registers every series known from `lists`,
/// `destinations` and `relays` (their names) at zero ([`series`]) and returns the recorder's handle.
pub fn recorder(lists: &[String], destinations: &[String], relays: &[String]) -> anyhow::Result<PrometheusHandle> {
    let handle = install()?;
    series::register(lists, destinations, relays);
    Ok(handle)
}

fn install() -> anyhow::Result<PrometheusHandle> {
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let _installing = INSTALLING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(handle) = HANDLE.get() {
        return Ok(handle.clone());
    }
    let builder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(HTTP_DURATION.into()),
            &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0],
        )?
        .set_buckets_for_metric(
            Matcher::Full(SMTP_DURATION.into()),
            &[0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0],
        )?
        // From seconds (a scanner) to two days (the link's default lifetime).
        .set_buckets_for_metric(
            Matcher::Full(TIME_TO_CONFIRM.into()),
            &[1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0, 6.0 * 3600.0, 86_400.0, 172_800.0],
        )?;
    let handle = builder.install_recorder().context("cannot install the metrics recorder")?;
    series::describe();
    Ok(HANDLE.get_or_init(|| handle).clone())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier};

    #[test]
    fn servers_starting_at_once_share_one_recorder() {
        // Sixteen threads released together, as the test suite's servers start side by side:
        // each must get the recorder, none the error of losing the race to install it.
        let start = Arc::new(Barrier::new(16));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    super::recorder(&["news".to_owned()], &[], &[]).map(|_| ()).map_err(|error| error.to_string())
                })
            })
            .collect();
        for thread in threads {
            assert_eq!(thread.join().unwrap(), Ok(()));
        }
    }
}
