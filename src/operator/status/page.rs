//! `GET /status` on the metrics listener: the page, built from one range read of the rollups.
//! Per list: signups by outcome, confirmations and the confirmation rate, and the confirmation
//! rate by source over the range (a table only: the sources are words, not a time series);
//! service-wide: mails against the hourly budget, the queues, webhook deliveries, destinations.
//! Each chart is followed by a table of the same numbers, the accessible source of truth.
//!
//! **Webhooks and destinations apart.** The events of both wait in one queue (the `webhook`
//! line of the queue charts holds both), but their results are shown apart: the "Webhook
//! deliveries" chart counts the webhook endpoints' results only, and the destinations panel, a
//! table with one row per destination, counts each destination's handed on, retried and
//! dropped events over the range, beside what waits for it now (how many, how many after a
//! failed attempt, and the oldest one's age, read from the queue when the page is asked for).
//! Adding the destinations' retries into the webhook line would have hidden which sender is
//! failing; leaving them out of the page, as it was, showed a failing destination as 0. A
//! destination that is configured but idle has its row of zeros, so a 0 there is a real 0.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use super::chart::{self, Chart, Frame, Series, Unit};
use super::view::{Aggregate, Range, SourceTable, rate};
use crate::clock::UnixSeconds;
use crate::config::ListConfig;
use crate::metrics::tally::SERVICE;
use crate::storage::figures::{self, SinkWaiting};
use crate::storage::rollups;
use crate::web::state::AppState;

/// The queues, in the order `stats` lists them.
const QUEUES: [&str; 3] = ["intake", "mail", "webhook"];
/// Mail results, sent first (the one the budget counts).
const MAIL_RESULTS: [&str; 4] = ["sent", "retry", "failed", "capped"];
const WEBHOOK_RESULTS: [&str; 3] = ["delivered", "retry", "dropped"];
/// The sources a list's table names, as `signupd stats` does; the rest are summed.
pub const TOP_SOURCES: usize = 20;

#[derive(Debug, Template)]
#[template(path = "pages/status.html")]
struct StatusPage {
    generated_at: String,
    range: Range,
    /// "the last 48 hours, by hour" or "the last 30 days, by day".
    range_text: &'static str,
    lists: Vec<ListSection>,
    service: ServiceSection,
    top_sources: usize,
    sources_per_hour: usize,
    source_days: i64,
}

/// A table of numbers: a header row, one row per bucket, a totals row.
#[derive(Debug)]
struct Table {
    caption: String,
    head: Vec<String>,
    /// The series each numeric column is of, for tests and scripts (`data-series`).
    keys: Vec<String>,
    rows: Vec<(String, Vec<String>)>,
    totals: Option<Vec<String>>,
}

#[derive(Debug)]
struct ListSection {
    id: String,
    /// The configured name, or a note that the list is not configured now.
    name: String,
    accepted: i64,
    refused: i64,
    confirmations: i64,
    surge_alerts: i64,
    /// What the relays reported about the list's mail (`relays::effect::series`).
    hard_bounces: i64,
    complaints: i64,
    rate: String,
    signups: Chart,
    signups_table: Table,
    confirmations_chart: Chart,
    rate_chart: Chart,
    confirmations_table: Table,
    sources: SourcesTable,
    /// For a list of several languages, its rows created in the range by language, each of
    /// its languages in its order (zeros too); empty for a list of one language.
    languages: Vec<(String, i64)>,
}

/// A list's confirmation rate by source over the range: one row per named source, then the
/// other sources summed and the signups without a source.
#[derive(Debug)]
struct SourcesTable {
    caption: String,
    rows: Vec<SourceRow>,
    /// The sum of every row: accepted signups, confirmations, rate.
    totals: [String; 3],
}

#[derive(Debug)]
struct SourceRow {
    /// The source, `(other)` or `(none)`: the row's `data-source`, for tests and scripts.
    key: String,
    /// What the row's header says.
    label: String,
    signups: i64,
    confirmations: i64,
    rate: String,
}

#[derive(Debug)]
struct ServiceSection {
    budget: u32,
    sent: i64,
    mails: Chart,
    mails_table: Table,
    depth: Chart,
    oldest: Chart,
    queues_table: Table,
    webhooks: Chart,
    webhooks_table: Table,
    destinations: Vec<DestinationRow>,
}

/// One destination in the destinations panel.
#[derive(Debug)]
struct DestinationRow {
    name: String,
    /// Its kind, or a note that it is not configured now.
    kind: String,
    /// Over the range: events handed on, failed attempts that will be retried, events dropped.
    delivered: i64,
    retries: i64,
    dropped: i64,
    /// Now: events waiting, of them after a failed attempt, and the oldest one's age.
    waiting: i64,
    retrying: i64,
    oldest: String,
}

const STYLESHEET: &str = include_str!("../../../static/status.css");

/// `GET /static/status.css` on the metrics listener: the charts' colours and the page's wider
/// column, built in.
pub async fn stylesheet() -> HttpResponse {
    crate::web::routes::css(STYLESHEET)
}

/// `GET /status[?range=48h|30d]`.
pub async fn status_page(
    req: HttpRequest,
    state: web::Data<(AppState, metrics_exporter_prometheus::PrometheusHandle)>,
) -> HttpResponse {
    let (state, _) = state.get_ref();
    let Some(range) = Range::parse(crate::web::routes::form::query_param(&req, "range").as_deref()) else {
        return HttpResponse::NotFound()
            .content_type("text/plain; charset=utf-8")
            .body("unknown range: use 48h or 30d\n");
    };
    let now = state.clock.now();
    let (first, last) = range.hours(now);
    let multilingual: Vec<ListConfig> =
        state.config.lists.iter().filter(|list| list.is_multilingual()).cloned().collect();
    let read = state
        .db
        .run(move |conn| {
            let mut data = Aggregate::new(range, now);
            rollups::visit_between(conn, first, last, |hour, list, series, value| data.add(hour, list, series, value))?;
            // The 30 days are whole UTC days: their table by source is read by the day.
            let add_source = |list: &str, source: &str, figures| data.add_source(list, source, figures);
            match range {
                Range::Hours48 => rollups::visit_sources_between(conn, first, last, add_source)?,
                Range::Days30 => rollups::visit_daily_sources_between(
                    conn,
                    rollups::day_of(first),
                    rollups::day_of(last),
                    add_source,
                )?,
            }
            let waiting = figures::waiting_by_sink(conn)?;
            let mut languages = Vec::with_capacity(multilingual.len());
            for list in &multilingual {
                let rows = figures::rows_by_language(conn, list.id.as_ref(), first.saturating_mul(3600))?;
                languages.push((list.id.as_ref().to_owned(), by_language(list, &rows)));
            }
            Ok::<_, anyhow::Error>((data, (waiting, languages)))
        })
        .await;
    let (data, (waiting, languages)) = match read {
        Ok(read) => read,
        Err(error) => {
            tracing::error!(error = format!("{error:#}"), "status page: cannot read the rollups");
            return HttpResponse::ServiceUnavailable()
                .content_type("text/plain; charset=utf-8")
                .body("the database cannot be read\n");
        }
    };
    let mut page = build(state, &data, &waiting, now);
    for section in &mut page.lists {
        if let Some((_, counts)) = languages.iter().find(|(id, _)| *id == section.id) {
            section.languages.clone_from(counts);
        }
    }
    match page.render() {
        Ok(body) => HttpResponse::build(StatusCode::OK).content_type("text/html; charset=utf-8").body(body),
        Err(error) => {
            tracing::error!(error = %error, "cannot render the status page");
            HttpResponse::InternalServerError().content_type("text/plain; charset=utf-8").body("internal error")
        }
    }
}

fn build(state: &AppState, data: &Aggregate, waiting: &[SinkWaiting], now: UnixSeconds) -> StatusPage {
    let range = data.range;
    let labels = Labels::of(data);
    // The configured lists in their order, then any other list with values in the range (one
    // removed from the configuration, or `none`: signups that named no list).
    let mut lists: Vec<(String, String)> =
        state.config.lists.iter().map(|list| (list.id.as_ref().to_owned(), list.name.clone())).collect();
    for id in data.lists() {
        if !lists.iter().any(|(known, _)| *known == id) {
            let name =
                if id == "none" { "signups that named no list".to_owned() } else { "not configured now".to_owned() };
            lists.push((id, name));
        }
    }
    StatusPage {
        generated_at: crate::clock::rfc3339(now).unwrap_or_default(),
        range,
        range_text: match range {
            Range::Hours48 => "the last 48 hours, by hour",
            Range::Days30 => "the last 30 days, by day",
        },
        lists: lists.into_iter().enumerate().map(|(n, (id, name))| list_section(data, &labels, n, id, name)).collect(),
        service: service_section(state, data, &labels, destination_rows(state, data, waiting, now)),
        top_sources: TOP_SOURCES,
        sources_per_hour: crate::metrics::tally::SOURCES_PER_HOUR,
        source_days: rollups::SOURCE_RETENTION_DAYS,
    }
}

/// The buckets' names: short on the axis, full in the tables.
struct Labels {
    axis: Vec<String>,
    rows: Vec<String>,
    every: usize,
    per: &'static str,
    /// The first column's header.
    name: &'static str,
}

impl Labels {
    fn of(data: &Aggregate) -> Self {
        let time = |index: usize| chrono::DateTime::from_timestamp(data.start_time(index), 0).unwrap_or_default();
        let count = data.starts.len();
        match data.range {
            Range::Hours48 => Self {
                axis: (0..count).map(|i| time(i).format("%H:00").to_string()).collect(),
                rows: (0..count).map(|i| time(i).format("%Y-%m-%d %H:00").to_string()).collect(),
                every: 8,
                per: "per hour",
                name: "Hour (UTC)",
            },
            Range::Days30 => Self {
                axis: (0..count).map(|i| time(i).format("%m-%d").to_string()).collect(),
                rows: (0..count).map(|i| time(i).format("%Y-%m-%d").to_string()).collect(),
                every: 7,
                per: "per day",
                name: "Day (UTC)",
            },
        }
    }

    fn frame(&self, id: String, title: String, description: String) -> Frame {
        Frame { id, title, description, labels: self.axis.clone(), label_every: self.every }
    }
}

fn sum(values: &[i64]) -> i64 {
    values.iter().sum()
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".to_owned(), |share| format!("{:.0}%", share * 100.0))
}

/// A table of `columns` (header, series key, values) by bucket, with totals when `total`.
fn table(
    caption: String,
    labels: &Labels,
    columns: &[(String, String, Vec<String>)],
    totals: Option<Vec<String>>,
) -> Table {
    let mut head = vec![labels.name.to_owned()];
    head.extend(columns.iter().map(|(header, _, _)| header.clone()));
    let rows = labels
        .rows
        .iter()
        .enumerate()
        .map(|(index, label)| {
            (
                label.clone(),
                columns.iter().map(|(_, _, values)| values.get(index).cloned().unwrap_or_default()).collect(),
            )
        })
        .collect();
    Table { caption, head, keys: columns.iter().map(|(_, key, _)| key.clone()).collect(), rows, totals }
}

fn strings(values: &[i64]) -> Vec<String> {
    values.iter().map(ToString::to_string).collect()
}

fn list_section(data: &Aggregate, labels: &Labels, index: usize, id: String, name: String) -> ListSection {
    let mut outcomes = data.labels(&id, "signups");
    // Accepted first, always (a chart of refusals alone would hide what went well).
    outcomes.retain(|outcome| outcome != "accepted");
    outcomes.insert(0, "accepted".to_owned());
    let values: Vec<Vec<i64>> =
        outcomes.iter().map(|outcome| data.values(&id, &format!("signups.{outcome}"))).collect();
    let accepted = sum(&values[0]);
    let refused: i64 = values[1..].iter().map(|v| sum(v)).sum();
    let confirmations = data.values(&id, "confirmations");
    let surges = data.values(&id, "surge_alerts");
    let total_confirmations = sum(&confirmations);
    let series: Vec<Series<'_, i64>> = outcomes
        .iter()
        .zip(&values)
        .enumerate()
        .map(|(n, (outcome, values))| Series { label: outcome.clone(), class: chart::class(n), values })
        .collect();
    let described: Vec<String> = outcomes.iter().zip(&values).map(|(o, v)| format!("{o} {}", sum(v))).collect();
    let signups = chart::stacked_bars(
        labels.frame(
            format!("c{index}-signups"),
            format!("Signups to {id} by outcome, {}", labels.per),
            format!("Stacked bars. Totals: {}. The table below has each bucket's numbers.", described.join(", ")),
        ),
        &series,
        None,
    );
    let mut columns: Vec<(String, String, Vec<String>)> =
        outcomes.iter().zip(&values).map(|(o, v)| (o.clone(), format!("signups.{o}"), strings(v))).collect();
    columns.push(("surge alerts".into(), "surge_alerts".into(), strings(&surges)));
    let mut totals: Vec<String> = values.iter().map(|v| sum(v).to_string()).collect();
    totals.push(sum(&surges).to_string());
    let signups_table = table(format!("Signups to {id} by outcome"), labels, &columns, Some(totals));

    let confirmations_chart = chart::stacked_bars(
        labels.frame(
            format!("c{index}-confirmations"),
            format!("Confirmations of {id}, {}", labels.per),
            format!("Bars. Total: {total_confirmations}. The table below has each bucket's numbers."),
        ),
        &[Series { label: "confirmations".into(), class: chart::class(0), values: &confirmations }],
        None,
    );
    let rates: Vec<Option<f64>> = confirmations.iter().zip(&values[0]).map(|(c, a)| rate(*c, *a)).collect();
    let overall = rate(total_confirmations, accepted);
    let rate_chart = chart::lines(
        labels.frame(
            format!("c{index}-rate"),
            format!("Confirmation rate of {id}, {}", labels.per),
            format!(
                "A line; no point where there were no accepted signups. Over the range: {}. The table below has each bucket's rate.",
                percent(overall)
            ),
        ),
        &[Series { label: "confirmations ÷ accepted signups".into(), class: chart::class(1), values: &rates }],
        Unit::Percent,
        1.0,
    );
    // What the relays reported about the list's mail, beside the confirmations it asked for.
    let reported: Vec<(&str, &str, Vec<i64>)> = [
        ("hard bounces", "bounces.hard"),
        ("soft bounces", "bounces.soft"),
        ("complaints", "complaints"),
        ("policy refusals", "refusals.policy"),
    ]
    .into_iter()
    .map(|(label, series)| (label, series, data.values(&id, series)))
    .collect();
    let mut columns = vec![
        ("accepted".into(), "signups.accepted".into(), strings(&values[0])),
        ("confirmations".into(), "confirmations".into(), strings(&confirmations)),
        ("rate".into(), "rate".into(), rates.iter().map(|r| percent(*r)).collect()),
    ];
    let mut totals = vec![accepted.to_string(), total_confirmations.to_string(), percent(overall)];
    for (label, series, values) in &reported {
        columns.push(((*label).into(), (*series).into(), strings(values)));
        totals.push(sum(values).to_string());
    }
    let confirmations_table = table(
        format!("Confirmations of {id}, the confirmation rate, and what the relays reported"),
        labels,
        &columns,
        Some(totals),
    );
    let sources = sources_table(&id, &data.sources(&id, TOP_SOURCES));
    ListSection {
        sources,
        languages: Vec::new(),
        id,
        name,
        accepted,
        refused,
        confirmations: total_confirmations,
        surge_alerts: sum(&surges),
        hard_bounces: sum(&reported[0].2),
        complaints: sum(&reported[2].2),
        rate: percent(overall),
        signups,
        signups_table,
        confirmations_chart,
        rate_chart,
        confirmations_table,
    }
}

/// Each of `list`'s languages with its rows among `rows` (stored code, count); a row of no
/// language or of one the list no longer serves counts for the list's `language`.
fn by_language(list: &ListConfig, rows: &[(Option<String>, i64)]) -> Vec<(String, i64)> {
    let mut counts: Vec<(String, i64)> =
        list.languages.iter().map(|language| (language.code().to_owned(), 0)).collect();
    for (stored, count) in rows {
        let code = list.row_language(stored.as_deref()).code();
        if let Some((_, total)) = counts.iter_mut().find(|(known, _)| known == code) {
            *total += count;
        }
    }
    counts
}

fn sources_table(id: &str, table: &SourceTable) -> SourcesTable {
    let row = |key: &str, label: String, figures: crate::metrics::tally::SourceFigures| SourceRow {
        key: key.to_owned(),
        label,
        signups: figures.signups,
        confirmations: figures.confirmations,
        rate: percent(rate(figures.confirmations, figures.signups)),
    };
    let mut rows: Vec<SourceRow> =
        table.named.iter().map(|(source, figures)| row(source, source.clone(), *figures)).collect();
    if let Some(other) = &table.other {
        let label = match (other.named, other.beyond_the_bound) {
            (0, _) => "Other sources (past the hourly bound)".to_owned(),
            (1, false) => "1 other source".to_owned(),
            (n, false) => format!("{n} other sources"),
            (n, true) => format!("{n} other sources, and those past the hourly bound"),
        };
        rows.push(row("(other)", label, other.figures));
    }
    if let Some(none) = table.none {
        rows.push(row("(none)", "No source".to_owned(), none));
    }
    let signups: i64 = rows.iter().map(|row| row.signups).sum();
    let confirmations: i64 = rows.iter().map(|row| row.confirmations).sum();
    SourcesTable {
        caption: format!("Confirmation rate of {id} by source, summed over the range"),
        rows,
        totals: [signups.to_string(), confirmations.to_string(), percent(rate(confirmations, signups))],
    }
}

fn service_section(
    state: &AppState,
    data: &Aggregate,
    labels: &Labels,
    destinations: Vec<DestinationRow>,
) -> ServiceSection {
    let budget_per_hour = state.config.mail.max_mails_per_hour;
    let budget = i64::from(budget_per_hour) * data.range.bucket_hours();
    let mails: Vec<Vec<i64>> = MAIL_RESULTS.iter().map(|r| data.values(SERVICE, &format!("mails.{r}"))).collect();
    let sent = sum(&mails[0]);
    let budget_label = match data.range {
        Range::Hours48 => format!("budget: {budget_per_hour} an hour"),
        Range::Days30 => format!("budget: 24 × {budget_per_hour} a day"),
    };
    let mails_chart = chart::stacked_bars(
        labels.frame(
            "mails".into(),
            format!("Mails sent against the budget, {}", labels.per),
            format!(
                "Bars of mails sent, a dashed line at the budget of {budget}. Total sent: {sent}. The table below has each bucket's numbers, with the retries and failures."
            ),
        ),
        &[Series { label: "sent".into(), class: chart::class(0), values: &mails[0] }],
        Some((budget, budget_label)),
    );
    let columns: Vec<(String, String, Vec<String>)> =
        MAIL_RESULTS.iter().zip(&mails).map(|(r, v)| ((*r).to_owned(), format!("mails.{r}"), strings(v))).collect();
    let mails_table = table(
        format!("Mails by result (budget {budget} {})", labels.per),
        labels,
        &columns,
        Some(mails.iter().map(|v| sum(v).to_string()).collect()),
    );

    let depths: Vec<Vec<i64>> = QUEUES.iter().map(|q| data.values(SERVICE, &format!("queue.{q}.depth"))).collect();
    let ages: Vec<Vec<i64>> = QUEUES.iter().map(|q| data.values(SERVICE, &format!("queue.{q}.oldest_secs"))).collect();
    #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    let as_points = |values: &[i64]| -> Vec<Option<f64>> { values.iter().map(|v| Some(*v as f64)).collect() };
    let depth_points: Vec<Vec<Option<f64>>> = depths.iter().map(|v| as_points(v)).collect();
    let age_points: Vec<Vec<Option<f64>>> = ages.iter().map(|v| as_points(v)).collect();
    fn queue_series(points: &[Vec<Option<f64>>]) -> Vec<Series<'_, Option<f64>>> {
        QUEUES
            .iter()
            .zip(points)
            .enumerate()
            .map(|(n, (q, v))| Series { label: (*q).to_owned(), class: chart::class(n), values: v })
            .collect()
    }
    let highest = |values: &[Vec<i64>]| -> String {
        let largest = values.iter().map(|v| v.iter().copied().max().unwrap_or(0));
        QUEUES.iter().zip(largest).map(|(q, n)| format!("{q} {n}")).collect::<Vec<_>>().join(", ")
    };
    let depth = chart::lines(
        labels.frame(
            "queue-depth".into(),
            format!("Queue depth, largest {}", labels.per.trim_start_matches("per ")),
            format!(
                "Lines for intake, mail and webhook. Largest: {}. The table below has each bucket's numbers.",
                highest(&depths)
            ),
        ),
        &queue_series(&depth_points),
        Unit::Count,
        0.0,
    );
    let oldest = chart::lines(
        labels.frame(
            "queue-oldest".into(),
            format!("Age of the oldest queued item, largest {}", labels.per.trim_start_matches("per ")),
            format!("Lines for intake, mail and webhook, in seconds. Largest: {}. The table below has each bucket's numbers.", highest(&ages)),
        ),
        &queue_series(&age_points),
        Unit::Seconds,
        0.0,
    );
    let mut columns = Vec::new();
    for (n, queue) in QUEUES.iter().enumerate() {
        columns.push((format!("{queue} depth"), format!("queue.{queue}.depth"), strings(&depths[n])));
        columns.push((format!("{queue} oldest (s)"), format!("queue.{queue}.oldest_secs"), strings(&ages[n])));
    }
    let queues_table = table(format!("Queues: largest depth and oldest item {}", labels.per), labels, &columns, None);

    let hooks: Vec<Vec<i64>> = WEBHOOK_RESULTS.iter().map(|r| data.values(SERVICE, &format!("webhooks.{r}"))).collect();
    let hook_series: Vec<Series<'_, i64>> = WEBHOOK_RESULTS
        .iter()
        .zip(&hooks)
        .enumerate()
        .map(|(n, (r, v))| Series { label: (*r).to_owned(), class: chart::class(n), values: v })
        .collect();
    let described: Vec<String> = WEBHOOK_RESULTS.iter().zip(&hooks).map(|(r, v)| format!("{r} {}", sum(v))).collect();
    let webhooks = chart::stacked_bars(
        labels.frame(
            "webhooks".into(),
            format!("Webhook deliveries by result, {}", labels.per),
            format!("Stacked bars. Totals: {}. The table below has each bucket's numbers.", described.join(", ")),
        ),
        &hook_series,
        None,
    );
    let columns: Vec<(String, String, Vec<String>)> = WEBHOOK_RESULTS
        .iter()
        .zip(&hooks)
        .map(|(r, v)| ((*r).to_owned(), format!("webhooks.{r}"), strings(v)))
        .collect();
    let webhooks_table = table(
        "Webhook deliveries by result".into(),
        labels,
        &columns,
        Some(hooks.iter().map(|v| sum(v).to_string()).collect()),
    );
    ServiceSection {
        budget: budget_per_hour,
        sent,
        mails: mails_chart,
        mails_table,
        depth,
        oldest,
        queues_table,
        webhooks,
        webhooks_table,
        destinations,
    }
}

/// The configured destinations in their order, then any other one with counts in the range (a
/// destination removed from the configuration since).
fn destination_rows(
    state: &AppState,
    data: &Aggregate,
    waiting: &[SinkWaiting],
    now: UnixSeconds,
) -> Vec<DestinationRow> {
    let family = crate::metrics::tally::family::DESTINATIONS;
    let mut named: Vec<(String, String)> = state
        .config
        .destinations
        .iter()
        .map(|destination| (destination.name.clone(), destination.kind.as_str().to_owned()))
        .collect();
    for label in data.labels(SERVICE, family) {
        let Some((name, _)) = label.rsplit_once('.') else { continue };
        if !named.iter().any(|(known, _)| known == name) {
            named.push((name.to_owned(), "not configured now".to_owned()));
        }
    }
    named
        .into_iter()
        .map(|(name, kind)| {
            let total = |result: &str| sum(&data.values(SERVICE, &format!("{family}.{name}.{result}")));
            let queued = waiting.iter().find(|sink| sink.sink == name);
            DestinationRow {
                delivered: total("delivered"),
                retries: total("retry"),
                dropped: total("dropped"),
                waiting: queued.map_or(0, |sink| sink.waiting),
                retrying: queued.map_or(0, |sink| sink.retrying),
                oldest: queued.map_or_else(|| "–".to_owned(), |sink| age((now - sink.oldest_at).max(0))),
                name,
                kind,
            }
        })
        .collect()
}

/// A wait in the largest unit that keeps it readable: `45 s`, `12 min`, `5 h`, `3 d`.
fn age(secs: i64) -> String {
    if secs < 120 {
        format!("{secs} s")
    } else if secs < 7_200 {
        format!("{} min", secs / 60)
    } else if secs < 172_800 {
        format!("{} h", secs / 3_600)
    } else {
        format!("{} d", secs / 86_400)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_reads_in_the_largest_unit_that_keeps_it_readable() {
        for (secs, text) in
            [(0, "0 s"), (119, "119 s"), (120, "2 min"), (7_199, "119 min"), (7_200, "2 h"), (172_800, "2 d")]
        {
            assert_eq!(age(secs), text, "{secs}");
        }
    }
}
