//! `signupd backfill --destination NAME [--list ID] [--dry-run]`: hand a destination the
//! subscribers who confirmed before it was configured (`docs/operations.md`, "Handing
//! subscribers to your sender"). A destination receives `subscriber.confirmed` as it happens;
//! one added to a list that already has subscribers would otherwise never hear of them.
//!
//! **What it queues.** For every row confirmed on the destination's lists (or on `--list` alone,
//! which must be one of them), one `subscriber.confirmed` event for that destination alone, the
//! body the confirmation would have queued, with the row's own `confirmed_at` and
//! `confirm_method` ([`crate::outbound::webhooks::backfilled`]). It goes into the same durable,
//! ordered queue as the live events, so the destination's worker in a running `serve` delivers
//! it, retries it and drops it by the same rules. A repeat is harmless: every sender takes a
//! duplicate as success (`crate::outbound::destinations`), so running it twice, or for a
//! subscriber the sender already holds, ends with the address confirmed there once. A row whose
//! own confirmation event still waits in the destination's queue is not queued again, and one
//! removed between the read and the write is not handed on.
//!
//! **Beside `serve`.** Rows are read a page at a time ([`BATCH_ROWS`], as `import` writes) through
//! a reader; each page's events are prepared off the writer (bodies, consent texts) and queued by
//! one `QueueBackfill` command through this process's own writer, one short transaction each,
//! with the import's pause between two, so the server's writer gets its turn and a large list
//! never holds the write lock long. A page that the database could not take (another process
//! held the lock) is tried again, as `import` does. Pages already committed when a later one
//! fails stay queued: each is complete in itself, and a re-run queues the rest (and repeats the
//! others, harmlessly).
//!
//! **Refusals** come before anything is opened for writing, so a refused run writes nothing: no
//! destination configured, an unknown destination (the configured ones are named), a `--list`
//! the destination does not hand on (its lists are named). They are runtime errors (exit 1), as
//! `send-test-destination --name` and `remove --list` refuse a name the configuration lacks.
//!
//! **`--dry-run`** counts the rows and writes nothing, not even the audit entry. A real run
//! appends one audit entry (`backfill`, the `--list` or none, the count queued).

use std::io::Write;

use super::Beside;
use super::import::{BATCH_ROWS, execute_paced};
use crate::clock::{Clock, UnixSeconds};
use crate::config::{Config, DestinationConfig};
use crate::outbound::webhooks::{self, Backfilled, ConfirmedEvent, PreparedEvent};
use crate::storage::{Batch, Command, Writer, intake, subscribers};

/// What to backfill.
#[derive(Debug, Clone)]
pub struct BackfillRequest {
    pub destination: String,
    pub list: Option<String>,
    pub dry_run: bool,
}

/// What a run did on one list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Queued (a dry run: would be).
    pub queued: u64,
    /// Not queued: the subscriber's own confirmation event still waits for the destination.
    pub already_waiting: u64,
    /// Not queued: removed between the read and the write.
    pub gone: u64,
}

/// The destination `name`, or the refusal that names what is configured.
pub fn destination<'a>(beside: &'a Beside, name: &str) -> anyhow::Result<&'a DestinationConfig> {
    let destinations = &beside.config.destinations;
    anyhow::ensure!(
        !destinations.is_empty(),
        "no [[destinations]] entry is configured: add the destination to the configuration (and restart `signupd \
         serve`) first"
    );
    destinations.iter().find(|destination| destination.name == name).ok_or_else(|| {
        let names: Vec<&str> = destinations.iter().map(|destination| destination.name.as_str()).collect();
        anyhow::anyhow!("--destination: no destination named {name:?} is configured (configured: {})", names.join(", "))
    })
}

/// The lists to backfill: `list` if the destination hands it on, else every list it hands on.
pub fn lists(beside: &Beside, destination: &DestinationConfig, list: Option<&str>) -> anyhow::Result<Vec<String>> {
    let handed_on: Vec<String> =
        beside.config.lists.iter().map(|list| list.id.to_string()).filter(|id| destination.wants(id)).collect();
    match list {
        None => Ok(handed_on),
        Some(id) if handed_on.iter().any(|handed| handed == id) => Ok(vec![id.to_owned()]),
        Some(id) => anyhow::bail!(
            "--list: destination {} does not hand on list {id:?}; its lists: {}",
            destination.name,
            handed_on.join(", ")
        ),
    }
}

/// Runs the backfill on a blocking thread; `runtime` drives the writer's answers, `clock` dates
/// the events (they are due at once). One line per list on `out`; the number queued.
pub fn run(
    beside: &Beside,
    request: &BackfillRequest,
    clock: &dyn Clock,
    runtime: &tokio::runtime::Handle,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    let destination = destination(beside, &request.destination)?;
    let lists = lists(beside, destination, request.list.as_deref())?;
    let name = destination.name.as_str();
    let reader = beside.reader()?;
    if request.dry_run {
        for list in &lists {
            let count = subscribers::count_confirmed(&reader, list)?;
            writeln!(
                out,
                "would queue {} of {list} for destination {name} (dry run: nothing written)",
                subscribers_phrase(count)
            )?;
        }
        return Ok(0);
    }
    let writer = beside.writer()?;
    let mut total = 0;
    let mut outcome = Ok(());
    for list in &lists {
        let counts = queue_list(&reader, clock, &beside.config, runtime, &writer, name, list);
        let (counts, failure) = match counts {
            Ok(counts) => (counts, None),
            Err((counts, error)) => (counts, Some(error)),
        };
        total += counts.queued;
        let mut line = format!("queued {} of {list} for destination {name}", subscribers_phrase(counts.queued));
        if counts.already_waiting > 0 {
            line.push_str(&format!(" ({} already waiting in its queue)", grouped(counts.already_waiting)));
        }
        writeln!(out, "{line}")?;
        if let Some(error) = failure {
            outcome = Err(error);
            break;
        }
    }
    let entry = super::audit::cli_entry("backfill", request.list.as_deref(), total, None);
    let recorded = runtime.block_on(super::audit::record(&writer, entry));
    // Closed here, not at the process's exit: with no server running, this was the last
    // connection, and closing it folds the WAL into the file.
    runtime.block_on(writer.close())?;
    recorded?;
    outcome.map(|()| total)
}

/// Queues every confirmed row of `list` for `destination`, a page at a time; the counts so far
/// with the error that stopped it.
fn queue_list(
    reader: &rusqlite::Connection,
    clock: &dyn Clock,
    config: &Config,
    runtime: &tokio::runtime::Handle,
    writer: &Writer,
    destination: &str,
    list: &str,
) -> Result<Counts, (Counts, anyhow::Error)> {
    let mut counts = Counts::default();
    let mut after: Option<String> = None;
    loop {
        let page = subscribers::confirmed_after(reader, list, after.as_deref(), BATCH_ROWS)
            .map_err(|error| (counts, anyhow::Error::new(error).context("cannot read the subscribers")))?;
        let Some(last) = page.last() else { return Ok(counts) };
        after = Some(last.email.clone());
        let now = clock.now();
        let events = prepare(reader, destination, config, &page, now).map_err(|error| (counts, error))?;
        for done in write_page(runtime, writer, events).map_err(|error| (counts, error))? {
            match done {
                Backfilled::Queued => counts.queued += 1,
                Backfilled::AlreadyWaiting => counts.already_waiting += 1,
                Backfilled::Gone => counts.gone += 1,
            }
        }
    }
}

/// The events of one page, built before the writer sees them.
fn prepare(
    reader: &rusqlite::Connection,
    destination: &str,
    config: &Config,
    page: &[subscribers::Backfillable],
    now: UnixSeconds,
) -> anyhow::Result<Vec<PreparedEvent>> {
    page.iter()
        .map(|row| {
            let consent_text = intake::consent_text_agreed(reader, &row.list_id, &row.consent_version, row.created_at)?;
            let event = ConfirmedEvent {
                list: &row.list_id,
                email: &row.email,
                subscriber_id: &row.id,
                created_at: row.created_at,
                method: &row.confirm_method,
                consent_version: &row.consent_version,
                source: row.source.as_deref(),
                tags: row.tags.as_deref(),
                fields: row.fields.as_deref(),
                language: config.row_language_code(&row.list_id, row.language.as_deref()),
                now,
            };
            webhooks::backfilled(destination, &event, row.confirmed_at, consent_text.as_deref())
        })
        .collect()
}

/// Hands a page to the writer, tries it again while another process holds the lock (the page
/// then wrote nothing), then pauses so the server's writer gets its turn.
fn write_page(
    runtime: &tokio::runtime::Handle,
    writer: &Writer,
    events: Vec<PreparedEvent>,
) -> anyhow::Result<Vec<Backfilled>> {
    let events = std::sync::Arc::new(events);
    execute_paced(runtime, writer, "a page", "cannot queue a page of events", || QueueBackfill(events.clone()))
}

/// The writer command: queues one page's events, in one transaction; what became of each.
struct QueueBackfill(std::sync::Arc<Vec<PreparedEvent>>);

impl std::fmt::Debug for QueueBackfill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The events hold addresses.
        f.debug_struct("QueueBackfill").field("events", &self.0.len()).finish()
    }
}

impl Command for QueueBackfill {
    type Output = Vec<Backfilled>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Backfilled>> {
        let conn = batch.conn();
        Ok(self.0.iter().map(|event| event.queue_backfill(conn)).collect::<rusqlite::Result<_>>()?)
    }
}

/// "1 confirmed subscriber", "1,234 confirmed subscribers".
fn subscribers_phrase(count: u64) -> String {
    let noun = if count == 1 { "subscriber" } else { "subscribers" };
    format!("{} confirmed {noun}", grouped(count))
}

/// `count` with a comma between groups of three digits.
fn grouped(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands_and_one_is_singular() {
        for (count, text) in [
            (0, "0 confirmed subscribers"),
            (1, "1 confirmed subscriber"),
            (999, "999 confirmed subscribers"),
            (1_234, "1,234 confirmed subscribers"),
            (1_234_567, "1,234,567 confirmed subscribers"),
        ] {
            assert_eq!(subscribers_phrase(count), text, "{count}");
        }
    }
}
