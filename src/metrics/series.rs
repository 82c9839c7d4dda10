//! Every series from the first scrape: the help text of each metric and the label values each
//! counter can take, registered at zero when the recorder is installed.
//!
//! Why: a counter that first appears at 1 has no earlier sample, so Prometheus's `increase()`
//! and `rate()` see no change, and an alert on the first failure (the first mail refused for
//! good, the first surge, the first storage error) would fire only on the second. So every
//! counter is exported at 0 for each label value known at start — each configured list (and
//! `none`) × each outcome, method, reason and via; each mail kind × result; each webhook result;
//! each configured destination × result; each configured relay (and `smtp`) × event; each
//! surface of the operator API's failed authentications —
//! and every histogram with its buckets at 0. The gauges are set from the database at each
//! scrape (`app::metrics_server`), so they have their value from the first one.
//!
//! The vocabularies below are the only label values the record functions of [`super`] accept
//! (checked in debug builds, so a test that records a word missing here fails).
//!
//! `via = "cli"`: `signupd remove` runs in a process of its own without a recorder, so the
//! server never counts it and no such series is exported; the command reports on its output.

use super::{
    API_AUTH_FAILURES, CONFIRMATIONS, DESTINATIONS, HTTP_DURATION, MAILS, QUEUE_DEPTH, QUEUE_OLDEST,
    RELAY_EVENTS_TOTAL, RELAY_REFUSING, REMOVALS, SIGNUPS, SMTP_DURATION, SUBSCRIBERS, SURGE_ALERTS, TIME_TO_CONFIRM,
    WEBHOOKS,
};

/// The list label of a signup that named no configured list.
pub const NO_LIST: &str = "none";

/// `signupd_signups_total{outcome}`: accepted, the honeypot's, and every refusal's code.
pub const SIGNUP_OUTCOMES: &[&str] = &[
    "accepted",
    "honeypot",
    "invalid_email",
    "consent_required",
    "unknown_list",
    "origin_not_allowed",
    "domain_not_allowed",
    "invalid_source",
    "unknown_tag",
    "invalid_field",
    "rate_limited",
    "storage_unavailable",
    "invalid_request",
    "request_timeout",
    "payload_too_large",
    "unsupported_media_type",
    "method_not_allowed",
];

/// The outcomes that count a signup as a list's, not as [`NO_LIST`]'s: only a signup that named
/// a list can be accepted or caught by the honeypot.
const LISTED_ONLY: &[&str] = &["accepted", "honeypot"];

/// `signupd_confirmations_total{method}`.
pub const CONFIRM_METHODS: &[&str] = &["button", "retype", "preferences"];

/// `signupd_removals_total{reason}`.
pub const REMOVAL_REASONS: &[&str] = &["unsubscribed", "not_me", "bounced", "complained"];

/// `signupd_removals_total{via}`: the ways the server removes an address.
pub const REMOVAL_VIAS: &[&str] = &["manage", "one_click", "relay", "api"];

/// Whether a removal can have `reason` and `via` at once: a bounce or a complaint comes only
/// from a relay, and a relay removes only for one of them.
pub fn removal_pairs(reason: &str, via: &str) -> bool {
    let from_relay = matches!(reason, "bounced" | "complained");
    from_relay == (via == "relay")
}

/// `signupd_relay_events_total{event}`: the classes of `relays::event::Class`.
pub const RELAY_EVENTS: &[&str] = &["hard_bounce", "soft_bounce", "policy", "complaint", "ignored"];

/// `signupd_relay_events_total{relay}` of a permanent refusal by the SMTP server at send time,
/// beside the configured relays' names.
pub const SMTP_RELAY: &str = "smtp";

/// `signupd_mails_total{kind}`.
pub const MAIL_KINDS: &[&str] = &["confirmation", "welcome"];

/// `signupd_mails_total{result}`; `capped` only ever for a confirmation.
pub const MAIL_RESULTS: &[&str] = &["sent", "retry", "failed", "capped"];

/// `signupd_webhooks_total{result}`.
pub const WEBHOOK_RESULTS: &[&str] = &["delivered", "retry", "dropped"];

/// `signupd_destinations_total{result}`.
pub const DESTINATION_RESULTS: &[&str] = &["delivered", "retry", "dropped"];

/// `signupd_api_auth_failures_total{surface}`: the operator API and the admin page.
pub const API_SURFACES: &[&str] = &["api", "admin"];

/// The `# HELP` line of every metric.
pub fn describe() {
    metrics::describe_counter!(
        SIGNUPS,
        "Signup requests by list and outcome (accepted, honeypot, or the refusal's code)."
    );
    metrics::describe_counter!(CONFIRMATIONS, "Confirmations by list and method.");
    metrics::describe_counter!(REMOVALS, "Addresses removed by list, reason and the way they were removed.");
    metrics::describe_counter!(MAILS, "Mails by kind and result (sent, retry, failed for good, capped per address).");
    metrics::describe_counter!(
        SURGE_ALERTS,
        "Times a list's accepted signups passed signup.surge_alert in one window."
    );
    metrics::describe_counter!(WEBHOOKS, "Webhook deliveries by result (delivered, retry, dropped).");
    metrics::describe_counter!(
        DESTINATIONS,
        "Subscriber events handed to each destination, by result (delivered, retry, dropped)."
    );
    metrics::describe_counter!(
        RELAY_EVENTS_TOTAL,
        "Events the relays reported, by relay (smtp: a permanent refusal at send time) and event \
         (hard_bounce, soft_bounce, policy, complaint, ignored)."
    );
    metrics::describe_counter!(
        API_AUTH_FAILURES,
        "Calls without a valid token to the operator API (api) or the admin page (admin): answered 401, \
         or 429 once the client's failed authentications fill their minute. Not in the audit log."
    );
    metrics::describe_gauge!(
        QUEUE_DEPTH,
        "Items waiting in each queue (intake, mail, webhook; the webhook queue holds destinations' events too)."
    );
    metrics::describe_gauge!(QUEUE_OLDEST, "Age in seconds of the oldest item of each queue; 0 when it is empty.");
    metrics::describe_gauge!(SUBSCRIBERS, "Subscribers by list and status (pending, confirmed).");
    metrics::describe_gauge!(
        RELAY_REFUSING,
        "1 while the SMTP relay refuses signupd itself (login, sender, TLS, connection) and every mail waits."
    );
    metrics::describe_histogram!(HTTP_DURATION, "Time to answer an HTTP request, by route pattern, in seconds.");
    metrics::describe_histogram!(SMTP_DURATION, "Time to hand one mail to the SMTP relay, in seconds.");
    metrics::describe_histogram!(TIME_TO_CONFIRM, "Seconds from the confirmation mail to the confirmation, by list.");
}

/// Registers every counter at zero for the label values known at start, and each list's
/// time-to-confirm histogram. Adding 0 to an existing series leaves its count as it is, so a
/// second application in the same process (tests) adds its lists without resetting anything.
pub fn register(lists: &[String], destinations: &[String], relays: &[String]) {
    metrics::gauge!(RELAY_REFUSING).set(0.0);
    for list in lists {
        for &outcome in SIGNUP_OUTCOMES {
            metrics::counter!(SIGNUPS, "list" => list.clone(), "outcome" => outcome).increment(0);
        }
        for &method in CONFIRM_METHODS {
            metrics::counter!(CONFIRMATIONS, "list" => list.clone(), "method" => method).increment(0);
        }
        for &reason in REMOVAL_REASONS {
            for &via in REMOVAL_VIAS.iter().filter(|via| removal_pairs(reason, via)) {
                metrics::counter!(REMOVALS, "list" => list.clone(), "reason" => reason, "via" => via).increment(0);
            }
        }
        metrics::counter!(SURGE_ALERTS, "list" => list.clone()).increment(0);
        // Asking for the handle registers the histogram; its buckets are rendered at 0.
        let _registered = metrics::histogram!(TIME_TO_CONFIRM, "list" => list.clone());
    }
    for &outcome in SIGNUP_OUTCOMES.iter().filter(|outcome| !LISTED_ONLY.contains(outcome)) {
        metrics::counter!(SIGNUPS, "list" => NO_LIST, "outcome" => outcome).increment(0);
    }
    for &kind in MAIL_KINDS {
        for &result in MAIL_RESULTS.iter().filter(|&&result| result != "capped" || kind == "confirmation") {
            metrics::counter!(MAILS, "kind" => kind, "result" => result).increment(0);
        }
    }
    for &result in WEBHOOK_RESULTS {
        metrics::counter!(WEBHOOKS, "result" => result).increment(0);
    }
    for destination in destinations {
        for &result in DESTINATION_RESULTS {
            metrics::counter!(DESTINATIONS, "destination" => destination.clone(), "result" => result).increment(0);
        }
    }
    for relay in relays.iter().map(String::as_str).chain([SMTP_RELAY]) {
        for &event in RELAY_EVENTS {
            metrics::counter!(RELAY_EVENTS_TOTAL, "relay" => relay.to_owned(), "event" => event).increment(0);
        }
    }
    for &surface in API_SURFACES {
        metrics::counter!(API_AUTH_FAILURES, "surface" => surface).increment(0);
    }
    let _registered = metrics::histogram!(SMTP_DURATION);
}
