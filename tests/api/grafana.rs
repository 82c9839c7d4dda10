//! The Grafana dashboard `packaging/grafana/signupd.json` (docs/operations.md "Monitoring and
//! alerts"): importable as is — valid JSON, a Prometheus data source asked for at import, unique
//! panel ids, no overlapping panels, a unit and a description on every panel, a row per concern —
//! and every metric name its queries use is one that a live `/metrics` serves. The operations
//! guide's metrics table and alert rules are held to the same served names.
//!
//! The live check runs the real app with its metrics listener and drives enough real traffic for
//! every labelled series to exist: a signup confirmed and welcomed, a second one past a surge
//! threshold of 1, a refusal, a one-click removal, and the webhook deliveries they queue.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::confirm::confirmed_and_welcomed;
use crate::helpers::{TestApp, spawn_app_in};
use crate::signup::{drain, post_form, valid};
use crate::webhook_receiver::{Receiver, Reply};
use crate::webhooks::{HOOK_PATH, deliver as deliver_events};

const DASHBOARD: &str = include_str!("../../packaging/grafana/signupd.json");

/// The rows the issue names, one per concern.
const ROWS: [&str; 6] = [
    "Signups and refusals",
    "Confirmations and time to confirm",
    "Mail and budget",
    "Queues",
    "Webhooks",
    "HTTP latency",
];

/// The alert rules to start from, as the README named them.
const STARTER_ALERTS: [&str; 3] = ["SignupdMailQueueStuck", "SignupdConfirmationRateCollapsed", "SignupdStorageErrors"];

const HISTOGRAM_SUFFIXES: [&str; 3] = ["_bucket", "_sum", "_count"];

// ---------------------------------------------------------------------------------------------
// The extractor and the served set

/// Every `signupd_…` identifier in `text` (a PromQL expression, or prose), deduplicated.
fn metric_names(text: &str) -> BTreeSet<String> {
    const PREFIX: &str = "signupd_";
    let bytes = text.as_bytes();
    let mut names = BTreeSet::new();
    let mut at = 0;
    while let Some(found) = text[at..].find(PREFIX) {
        let start = at + found;
        let mut end = start + PREFIX.len();
        while end < bytes.len()
            && (bytes[end].is_ascii_lowercase() || bytes[end].is_ascii_digit() || bytes[end] == b'_')
        {
            end += 1;
        }
        let boundary = start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        if boundary {
            names.insert(text[start..end].to_owned());
        }
        at = end;
    }
    names
}

/// What one `/metrics` answer serves: each `# TYPE` line's name and type, and each sample's name.
#[derive(Debug)]
struct Served {
    types: BTreeMap<String, String>,
    samples: BTreeSet<String>,
}

impl Served {
    fn parse(exposition: &str) -> Self {
        let mut types = BTreeMap::new();
        let mut samples = BTreeSet::new();
        for line in exposition.lines() {
            if let Some(declaration) = line.strip_prefix("# TYPE ") {
                let mut words = declaration.split_whitespace();
                if let (Some(name), Some(kind)) = (words.next(), words.next()) {
                    types.insert(name.to_owned(), kind.to_owned());
                }
            } else if !line.starts_with('#') && !line.trim().is_empty() {
                let end = line.find(['{', ' ']).unwrap_or(line.len());
                samples.insert(line[..end].to_owned());
            }
        }
        Self { types, samples }
    }

    /// Whether a query naming `name` finds series: a sample's name; `_bucket`, `_sum` or
    /// `_count` of a name declared `# TYPE … histogram`; or a declared name that is not a
    /// histogram or summary (those have no series under their bare name).
    fn serves(&self, name: &str) -> bool {
        if self.samples.contains(name) {
            return true;
        }
        let of_histogram = HISTOGRAM_SUFFIXES.iter().any(|suffix| {
            name.strip_suffix(suffix).is_some_and(|base| self.types.get(base).is_some_and(|kind| kind == "histogram"))
        });
        of_histogram || self.types.get(name).is_some_and(|kind| kind != "histogram" && kind != "summary")
    }

    /// The names among `names` that are not served.
    fn unserved<'a>(&self, names: impl IntoIterator<Item = &'a String>) -> Vec<String> {
        names.into_iter().filter(|name| !self.serves(name)).cloned().collect()
    }
}

/// Every PromQL query of a dashboard: the `expr` of each target, and the template variables'
/// `query` and `definition`.
fn queries(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                if let (true, Value::String(text)) = (matches!(key.as_str(), "expr" | "query" | "definition"), item) {
                    found.push(text.clone());
                }
                queries(item, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| queries(item, found)),
        _ => {}
    }
}

/// Every metric name the dashboard's queries use.
fn dashboard_metric_names(dashboard: &Value) -> BTreeSet<String> {
    let mut found = Vec::new();
    queries(dashboard, &mut found);
    found.iter().flat_map(|query| metric_names(query)).collect()
}

/// The panels of a dashboard, with those inside collapsed rows.
fn all_panels(dashboard: &Value) -> Vec<&Value> {
    let mut panels = Vec::new();
    for panel in dashboard["panels"].as_array().expect("a panels array") {
        panels.push(panel);
        if let Some(inner) = panel["panels"].as_array() {
            panels.extend(inner);
        }
    }
    panels
}

/// The "Monitoring and alerts" section of the operations guide.
fn monitoring_section() -> String {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md")).unwrap();
    let start = guide.find("\n## Monitoring and alerts\n").expect("the section in the guide");
    let rest = &guide[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |end| end + 3);
    rest[..end].to_owned()
}

/// The expressions of the alert rules in the YAML blocks of `section`: each block's lines but
/// the rules' names, durations and annotations.
fn alert_expressions(section: &str) -> String {
    let mut expressions = String::new();
    for block in section.split("```yaml\n").skip(1) {
        let block = block.split("```").next().unwrap_or_default();
        for line in block.lines() {
            let key = line.trim_start().trim_start_matches("- ");
            if !["alert:", "for:", "annotations:", "groups:", "rules:", "name:"].iter().any(|k| key.starts_with(k)) {
                expressions.push_str(line);
                expressions.push('\n');
            }
        }
    }
    expressions
}

// ---------------------------------------------------------------------------------------------
// The live check

/// An app with the metrics listener, a surge threshold of 1, a webhook endpoint `crm` at
/// `receiver` and a destination `sender` (its series are served from the start, whether or not
/// another test in the same process configured one), its one list `news`.
async fn app(receiver: &Receiver) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("webhook_secret");
    std::fs::write(&secret, "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n").unwrap();
    let credential = dir.path().join("listmonk_token");
    std::fs::write(&credential, "api:token\n").unwrap();
    let extra = format!(
        "[server]\nmetrics_listen = \"127.0.0.1:0\"\n\
         [signup]\nrate_limits = [{{ window = \"10m\", max = 1000 }}]\nsurge_alert = {{ window = \"10m\", max = 1 }}\n\
         [mail]\nwebhook_timeout = \"1s\"\n\
         [[webhooks]]\nname = \"crm\"\nurl = \"{}\"\nsecret_file = {:?}\n\
         [[destinations]]\nname = \"sender\"\nkind = \"listmonk\"\nurl = \"{}\"\ncredential_file = {:?}\ntarget = \"1\"\n",
        receiver.url(HOOK_PATH),
        secret.display().to_string(),
        receiver.url(""),
        credential.display().to_string()
    );
    spawn_app_in(dir, &extra).await
}

/// Real traffic through every path that records a metric, then one scrape of `/metrics`.
async fn scraped_after_traffic() -> Served {
    let receiver = Receiver::start(Reply::Status(204));
    let app = app(&receiver).await;
    // Signed up, mailed, confirmed with the button and welcomed.
    let welcome = confirmed_and_welcomed(&app, "jane@example.com").await;
    // A second accepted signup passes the surge threshold of 1; a third is refused.
    assert_eq!(post_form(&app, &valid("ann@example.com")).await.status().as_u16(), 303);
    let refused = post_form(&app, &valid("not-an-address")).await;
    assert!(!refused.status().is_server_error(), "a refusal: {}", refused.status());
    drain(&app).await;
    // A one-click removal.
    let removed = app
        .client
        .post(app.url(&welcome.unsubscribe_path))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert!(removed.status().is_success(), "one-click removal: {}", removed.status());
    // The confirmed and unsubscribed events.
    let outcomes = deliver_events(&app, "crm").await;
    assert!(!outcomes.is_empty(), "{outcomes:?}");

    let port = app.metrics_port.expect("a metrics listener");
    let response = app.client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    Served::parse(&response.text().await.unwrap())
}

#[actix_web::test]
async fn grafana_dashboard_and_the_guides_alert_rules_use_only_metric_names_that_metrics_serves() {
    // Arrange
    let dashboard: Value = serde_json::from_str(DASHBOARD).expect("the dashboard is valid JSON");
    let used = dashboard_metric_names(&dashboard);
    let section = monitoring_section();
    let documented = metric_names(&section);
    let alerting = metric_names(&alert_expressions(&section));

    // Act
    let served = scraped_after_traffic().await;

    // Assert: the dashboard queries every metric family signupd has, and each name is served
    for family in ["signups_total", "confirmations_total", "time_to_confirm_seconds", "mails_total", "queue_depth"] {
        assert!(used.iter().any(|name| name.starts_with(&format!("signupd_{family}"))), "{family}: {used:?}");
    }
    assert_eq!(served.unserved(&used), Vec::<String>::new(), "served: {served:?}");
    // The guide's alert rules query served names; its table names only metrics that exist (a
    // histogram by its declared name).
    assert!(alerting.len() >= 5, "{alerting:?}");
    assert_eq!(served.unserved(&alerting), Vec::<String>::new(), "served: {served:?}");
    assert!(documented.len() >= 12, "{documented:?}");
    let undeclared: Vec<&String> =
        documented.iter().filter(|name| !served.serves(name) && !served.types.contains_key(*name)).collect();
    assert_eq!(undeclared, Vec::<&String>::new(), "served: {served:?}");

    // Assert: one misspelt name in the real dashboard is caught by the same check
    let misspelt: Value =
        serde_json::from_str(&DASHBOARD.replace("signupd_queue_depth", "signupd_queue_dept")).unwrap();
    assert_eq!(served.unserved(&dashboard_metric_names(&misspelt)), ["signupd_queue_dept"]);
}

// ---------------------------------------------------------------------------------------------
// The extractor, without an app

#[test]
fn grafana_extractor_finds_every_name_and_the_served_check_rejects_a_misspelt_one() {
    // Arrange: what a scrape serves, in the exporter's shape
    let served = Served::parse(
        "# TYPE signupd_signups_total counter\n\
         signupd_signups_total{list=\"news\",outcome=\"accepted\"} 1\n\
         # TYPE signupd_queue_depth gauge\n\
         signupd_queue_depth{queue=\"mail\"} 0\n\
         # TYPE signupd_http_request_duration_seconds histogram\n\
         signupd_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"0.001\"} 1\n\
         signupd_http_request_duration_seconds_sum{route=\"/healthz\"} 0.0002\n\
         signupd_http_request_duration_seconds_count{route=\"/healthz\"} 1\n",
    );
    let expr = "sum(rate(signupd_nope_total{list=~\"$list\"}[5m])) / sum(rate(signupd_signups_total[5m])) \
        + histogram_quantile(0.5, sum by (le) (rate(signupd_http_request_duration_seconds_bucket[5m]))) \
        + on() signupd_queue_depth{queue=\"mail\"} + mysignupd_other";

    // Act
    let names = metric_names(expr);

    // Assert: every signupd_ identifier, and only at a word boundary
    let expected = [
        "signupd_http_request_duration_seconds_bucket",
        "signupd_nope_total",
        "signupd_queue_depth",
        "signupd_signups_total",
    ];
    assert_eq!(names.iter().map(String::as_str).collect::<Vec<_>>(), expected);
    // The misspelt name is rejected, the real ones pass.
    assert_eq!(served.unserved(&names), ["signupd_nope_total"]);
    // Histogram suffixes only on a declared histogram; its bare name has no series.
    assert!(served.serves("signupd_http_request_duration_seconds_count"));
    assert!(!served.serves("signupd_http_request_duration_seconds"));
    assert!(!served.serves("signupd_signups_total_count"));
    assert!(!served.serves("signupd_queue_depth_bucket"));
}

// ---------------------------------------------------------------------------------------------
// The dashboard's shape

#[test]
fn grafana_dashboard_imports_as_is_with_a_row_per_concern_and_unique_non_overlapping_panels() {
    let dashboard: Value = serde_json::from_str(DASHBOARD).expect("the dashboard is valid JSON");

    // The data source is asked for at import, and every panel and query uses it.
    let inputs = dashboard["__inputs"].as_array().expect("__inputs");
    assert!(
        inputs.iter().any(|input| input["name"] == "DS_PROMETHEUS" && input["pluginId"] == "prometheus"),
        "{inputs:?}"
    );
    let datasource = serde_json::json!({"type": "prometheus", "uid": "${DS_PROMETHEUS}"});
    assert_eq!(dashboard["templating"]["list"][0]["name"], "list");
    assert_eq!(dashboard["templating"]["list"][0]["datasource"], datasource);
    assert!(dashboard["uid"].is_string() && dashboard["schemaVersion"].as_u64().is_some_and(|version| version >= 36));

    let panels = all_panels(&dashboard);
    // Unique ids.
    let mut ids = BTreeSet::new();
    for panel in &panels {
        let id = panel["id"].as_u64().unwrap_or_else(|| panic!("a numeric id: {panel}"));
        assert!(ids.insert(id), "panel id {id} twice");
    }
    // A row per concern.
    let rows: Vec<&str> =
        panels.iter().filter(|panel| panel["type"] == "row").filter_map(|panel| panel["title"].as_str()).collect();
    for title in ROWS {
        assert!(rows.contains(&title), "no row {title:?}: {rows:?}");
    }
    // Each panel: a unit, a description, the data source, queries.
    for panel in panels.iter().filter(|panel| panel["type"] != "row") {
        let title = panel["title"].as_str().unwrap_or_default();
        assert!(matches!(panel["type"].as_str(), Some("timeseries" | "stat")), "{title}");
        assert!(panel["description"].as_str().is_some_and(|text| text.len() > 20), "{title}: a description");
        assert!(
            panel["fieldConfig"]["defaults"]["unit"].as_str().is_some_and(|unit| !unit.is_empty()),
            "{title}: a unit"
        );
        assert_eq!(panel["datasource"], datasource, "{title}");
        let targets = panel["targets"].as_array().unwrap_or_else(|| panic!("{title}: targets"));
        assert!(!targets.is_empty(), "{title}: targets");
        for target in targets {
            assert_eq!(target["datasource"], datasource, "{title}");
            assert!(!metric_names(target["expr"].as_str().unwrap_or_default()).is_empty(), "{title}: {target}");
        }
    }
    // Laid out on the 24-column grid without overlaps (rows included).
    let boxes: Vec<(&str, [u64; 4])> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|panel| {
            let grid = &panel["gridPos"];
            let value = |key: &str| grid[key].as_u64().unwrap_or_else(|| panic!("gridPos.{key}: {panel}"));
            (panel["title"].as_str().unwrap_or_default(), [value("x"), value("y"), value("w"), value("h")])
        })
        .collect();
    for (index, (title, [x, y, w, h])) in boxes.iter().enumerate() {
        assert!(x + w <= 24 && *w > 0 && *h > 0, "{title}: {x} {y} {w} {h}");
        for (other, [x2, y2, w2, h2]) in &boxes[index + 1..] {
            let apart = x + w <= *x2 || x2 + w2 <= *x || y + h <= *y2 || y2 + h2 <= *y;
            assert!(apart, "{title} overlaps {other}");
        }
    }
}

#[test]
fn grafana_import_and_the_starter_alert_rules_are_in_the_operations_guide() {
    let section = monitoring_section();
    assert!(section.contains("packaging/grafana/signupd.json"), "the guide says how to import the dashboard");
    for alert in STARTER_ALERTS {
        assert!(section.contains(&format!("- alert: {alert}\n")), "{alert} in the guide's rules");
    }
}
