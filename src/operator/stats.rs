//! `signupd stats [--json]`: how the lists and queues are doing, read from one snapshot.
//!
//! Per list: pending and confirmed rows, of the confirmed the rows `signupd import` brought over
//! (`imported`), suppressions by reason, accepted signups and confirmations in the last 24 h and
//! 7 d — the status page's counts of the current hour and the 23 (or 167) before it, so both
//! agree, and a signup or confirmation whose row was removed since still counts (the decision
//! is in [`figures`]) — the confirmation rate of the last 7 d's signups (the share of rows
//! created in the last 7 days and still held that are confirmed now; a pending row that expired
//! or was removed is deleted and no longer counts), and the median time from the confirmation
//! mail to the confirm click over the last 7 d's confirmations. Per queue (`intake`, `mail`,
//! `webhook`):
//! depth and the age of the oldest item. The mail budget of the current hour, and when the
//! hourly cleanup last finished.
//!
//! An import records what the operator asserts, not a signup or a confirmation signupd saw: its
//! rows count among `confirmed` (and `imported`), and nowhere else — not in the signups or
//! confirmations of the last 24 h and 7 d, the confirmation rate, the median time to confirm or
//! the per-source figures ([`figures`] leaves them out), so importing a list never makes the
//! last week look like a good one.
//!
//! Per list and source (`docs/operations.md`), over the same rows as the list's confirmation
//! rate: the signups (rows created and still held) of the last 24 h and 7 d from that source, how many of the last 7 d's
//! are confirmed now, and so the confirmation rate of the last 7 d's signups. Only sources with
//! a signup in the last 7 d appear, largest first (ties by name). Rows whose signup carried no
//! source count under `(none)` in the table and `"source": null` in JSON. The source is free
//! text from the form, so a visitor can make up any number of them: at most the
//! [`MAX_SOURCES`] largest appear by name, and the rest are summed in one `(other)` line
//! (`other_sources_7d` in JSON) that says how many sources it holds. `(none)` and `(other)`
//! cannot be a source's name: a source has no parentheses. Prometheus has no per-source
//! figures at all (`crate::metrics`).
//!
//! `--json` prints [`Stats`] as one JSON object; its field names are stable. Times are
//! RFC 3339 UTC, durations seconds, absent values `null`.

use std::io::Write;

use anyhow::Context;
use rusqlite::Connection;
use serde::Serialize;

use super::Beside;
use crate::clock::{Clock, SystemClock, UnixSeconds, rfc3339};
use crate::config::Config;
use crate::metrics::tally::family;
use crate::storage::figures::SourceCounts;
use crate::storage::subscribers::Status;
use crate::storage::suppressions::Reason;
use crate::storage::{figures, outbox, rollups, service_runs};

const DAY: i64 = 86_400;

/// The rollup series of a list's accepted signups, as the status page charts them.
const ACCEPTED_SIGNUPS: &str = "signups.accepted";

/// The most sources `stats` names per list; the rest are summed as `(other)`.
pub const MAX_SOURCES: usize = 20;

#[derive(Debug, Serialize, PartialEq)]
pub struct Stats {
    pub generated_at: String,
    pub lists: Vec<ListStats>,
    pub queues: Vec<QueueStats>,
    pub mail_budget: MailBudget,
    pub last_cleanup_at: Option<String>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct ListStats {
    pub id: String,
    pub pending: i64,
    pub confirmed: i64,
    /// Of `confirmed`, the rows `signupd import` brought over.
    pub imported: i64,
    pub suppressed: Suppressed,
    /// Accepted signups in the status page's last 24 and 168 hours (rows removed since
    /// included; a repeated signup counts each time).
    pub signups: Recent,
    /// Confirmations in the same hours, by any method but `import`.
    pub confirmations: Recent,
    /// Confirmed ÷ created, over rows created in the last 7 days; `null` without any.
    pub confirmation_rate_7d: Option<f64>,
    /// Median seconds from mail to confirm, over the last 7 days' confirmations.
    pub median_time_to_confirm_secs_7d: Option<i64>,
    /// The last 7 days' signups by source: at most [`MAX_SOURCES`] named sources, most signups
    /// first, then the rows without a source (`source: null`), if any.
    pub sources_7d: Vec<SourceStats>,
    /// The named sources beyond the first [`MAX_SOURCES`], summed; `null` when there are none.
    pub other_sources_7d: Option<OtherSources>,
}

/// One source's signups.
#[derive(Debug, Serialize, PartialEq)]
pub struct SourceStats {
    /// `None` (`null`): rows whose signup carried no source.
    pub source: Option<String>,
    #[serde(flatten)]
    pub figures: SourceSignups,
}

/// The sources that did not fit, summed.
#[derive(Debug, Serialize, PartialEq)]
pub struct OtherSources {
    /// How many sources are summed here.
    pub sources: i64,
    #[serde(flatten)]
    pub figures: SourceSignups,
}

/// The figures of one source, or of several summed.
#[derive(Debug, Serialize, PartialEq)]
pub struct SourceSignups {
    pub signups: Recent,
    /// Of the last 7 days' signups, the rows confirmed now.
    pub confirmed_of_signups_7d: i64,
    /// `confirmed_of_signups_7d` ÷ `signups.last_7d`. Never over 0 signups: a source without
    /// any in the last 7 days is not listed.
    pub confirmation_rate_7d: f64,
}

impl From<&SourceCounts> for SourceSignups {
    fn from(counts: &SourceCounts) -> Self {
        #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
        let rate = counts.confirmed as f64 / counts.created.max(1) as f64;
        Self {
            signups: Recent { last_24h: counts.created_recent, last_7d: counts.created },
            confirmed_of_signups_7d: counts.confirmed,
            confirmation_rate_7d: rate,
        }
    }
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Suppressed {
    pub unsubscribed: i64,
    pub not_me: i64,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Recent {
    pub last_24h: i64,
    pub last_7d: i64,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct QueueStats {
    pub name: &'static str,
    pub depth: i64,
    pub oldest_age_secs: Option<i64>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct MailBudget {
    /// Mails sent or being sent in the current clock hour.
    pub used_this_hour: i64,
    pub max_per_hour: u32,
}

/// Gathers the figures at `now`, in one read transaction.
pub fn gather(config: &Config, conn: &mut Connection, now: UnixSeconds) -> anyhow::Result<Stats> {
    let tx = conn.transaction().context("cannot start a read transaction")?;
    let lists =
        config.lists.iter().map(|list| list_stats(&tx, list.id.as_ref(), now)).collect::<rusqlite::Result<Vec<_>>>()?;
    let queues = figures::queue_depths(&tx)?
        .into_iter()
        .map(|queue| QueueStats { name: queue.name, depth: queue.depth, oldest_age_secs: queue.oldest_age(now) })
        .collect();
    let mail_budget = MailBudget {
        used_this_hour: outbox::reserved_this_hour(&tx, now)?,
        max_per_hour: config.mail.max_mails_per_hour,
    };
    let last_cleanup_at = service_runs::last_cleanup_at(&tx)?;
    Ok(Stats {
        generated_at: rfc3339(now)?,
        lists,
        queues,
        mail_budget,
        last_cleanup_at: last_cleanup_at.map(rfc3339).transpose()?,
    })
}

fn list_stats(conn: &Connection, list: &str, now: UnixSeconds) -> rusqlite::Result<ListStats> {
    let (day, week) = (now - DAY, now - 7 * DAY);
    // The status page's last 24 and 168 hourly buckets, the current hour included (the
    // decision is in `crate::storage::figures`).
    let (day_hours, week_hours) = (rollups::hour_of(now) - 23, rollups::hour_of(now) - (7 * 24 - 1));
    let accepted = |first| rollups::counter_since(conn, list, ACCEPTED_SIGNUPS, first);
    let confirmed = |first| rollups::counter_since(conn, list, family::CONFIRMATIONS, first);
    let created_7d = figures::created_since(conn, list, week)?;
    let confirmed_of_created_7d = figures::confirmed_of_created_since(conn, list, week)?;
    let by_source = figures::created_by_source_since(conn, list, week, day, MAX_SOURCES)?;
    let named = by_source
        .named
        .iter()
        .map(|(source, counts)| SourceStats { source: Some(source.clone()), figures: counts.into() });
    let without = by_source.without.as_ref().map(|counts| SourceStats { source: None, figures: counts.into() });
    Ok(ListStats {
        id: list.to_owned(),
        pending: figures::subscribers(conn, list, Status::Pending)?,
        confirmed: figures::subscribers(conn, list, Status::Confirmed)?,
        imported: figures::imported(conn, list)?,
        suppressed: Suppressed {
            unsubscribed: figures::suppressions(conn, list, Reason::Unsubscribed)?,
            not_me: figures::suppressions(conn, list, Reason::NotMe)?,
        },
        signups: Recent { last_24h: accepted(day_hours)?, last_7d: accepted(week_hours)? },
        confirmations: Recent { last_24h: confirmed(day_hours)?, last_7d: confirmed(week_hours)? },
        #[allow(clippy::cast_precision_loss, reason = "counts far below 2^52")]
        confirmation_rate_7d: (created_7d > 0).then(|| confirmed_of_created_7d as f64 / created_7d as f64),
        median_time_to_confirm_secs_7d: figures::median_confirm_delay_since(conn, list, week)?,
        sources_7d: named.chain(without).collect(),
        other_sources_7d: by_source
            .other
            .as_ref()
            .map(|(sources, counts)| OtherSources { sources: *sources, figures: counts.into() }),
    })
}

/// Prints the figures as a table, or as JSON.
pub fn run(beside: &Beside, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let stats = gather(&beside.config, &mut *beside.reader()?, SystemClock.now())?;
    if json {
        serde_json::to_writer_pretty(&mut *out, &stats)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "signupd stats at {}", stats.generated_at)?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<16} {:>9} {:>9} {:>9} {:>7} {:>7} {:>10} {:>10} {:>9} {:>9} {:>7} {:>12}",
        "list",
        "pending",
        "confirmed",
        "imported",
        "unsub",
        "not_me",
        "signups24h",
        "signups7d",
        "confirm24h",
        "confirm7d",
        "rate7d",
        "median_secs"
    )?;
    for list in &stats.lists {
        let rate = list.confirmation_rate_7d.map_or_else(|| "-".to_owned(), |rate| format!("{:.0}%", rate * 100.0));
        let median = list.median_time_to_confirm_secs_7d.map_or_else(|| "-".to_owned(), |secs| secs.to_string());
        writeln!(
            out,
            "{:<16} {:>9} {:>9} {:>9} {:>7} {:>7} {:>10} {:>10} {:>9} {:>9} {:>7} {:>12}",
            list.id,
            list.pending,
            list.confirmed,
            list.imported,
            list.suppressed.unsubscribed,
            list.suppressed.not_me,
            list.signups.last_24h,
            list.signups.last_7d,
            list.confirmations.last_24h,
            list.confirmations.last_7d,
            rate,
            median
        )?;
    }
    for list in &stats.lists {
        write_sources(out, list)?;
    }
    writeln!(out)?;
    for queue in &stats.queues {
        let oldest = queue.oldest_age_secs.map_or_else(|| "-".to_owned(), |secs| format!("{secs} s"));
        writeln!(out, "queue {:<8} depth {:>8}   oldest {oldest}", queue.name, queue.depth)?;
    }
    writeln!(out, "mail budget this hour: {} of {}", stats.mail_budget.used_this_hour, stats.mail_budget.max_per_hour)?;
    writeln!(out, "last cleanup: {}", stats.last_cleanup_at.as_deref().unwrap_or("never"))?;
    Ok(())
}

/// The per-source lines of one list (the module doc says what they count).
fn write_sources(out: &mut dyn Write, list: &ListStats) -> anyhow::Result<()> {
    writeln!(out)?;
    if list.sources_7d.is_empty() {
        writeln!(out, "sources of {}: no signups in the last 7 d", list.id)?;
        return Ok(());
    }
    writeln!(out, "sources of {}, signups of the last 7 d:", list.id)?;
    let line = |out: &mut dyn Write, label: &str, figures: &SourceSignups, note: &str| {
        let (day, week) = (figures.signups.last_24h, figures.signups.last_7d);
        let confirmed = figures.confirmed_of_signups_7d;
        let rate = format!("{:.0}%", figures.confirmation_rate_7d * 100.0);
        writeln!(out, "  {label:<32} {day:>10} {week:>10} {confirmed:>10} {rate:>7}{note}")
    };
    writeln!(out, "  {:<32} {:>10} {:>10} {:>10} {:>7}", "source", "signups24h", "signups7d", "confirmed", "rate7d")?;
    for source in &list.sources_7d {
        let label = source.source.as_deref().unwrap_or("(none)");
        line(out, label, &source.figures, "")?;
    }
    if let Some(other) = &list.other_sources_7d {
        let note = format!("   ({} more sources)", other.sources);
        line(out, "(other)", &other.figures, &note)?;
    }
    Ok(())
}
