//! `signupd import FILE --list ID [--format csv|jsonl] [--consent-text TEXT] [--consent-version NAME]
//! [--dry-run]`: bring an existing list over (`docs/operations.md`, "Importing an existing list").
//!
//! **What an import is.** Each good record becomes a *confirmed* row of the list with
//! `confirm_method = 'import'`: the operator asserts that the address confirmed elsewhere;
//! signupd saw no confirmation. `export` says so in `confirm_method`, and `stats` counts such rows
//! apart (`imported`) and never among signups, confirmations, rates or sources. Nothing is
//! mailed, no webhook event is queued, and the rows are otherwise like a signup's: a fresh
//! time-ordered UUID, the removal hash a signup's row gets (so the unsubscribe link in `export`
//! and the manage page work for them), `source`, `language` (one of the list's languages, found
//! as a form's `lang` is; another is refused), `tags` and the list's `fields` (each value
//! checked by its field's rule; a required field may be missing, since `required` is the form's
//! rule for a visitor and a record from another tool may not have the value).
//!
//! **Times.** `created_at` is when signupd recorded the row (the import's time);
//! `confirmed_at` is the file's value (RFC 3339, not in the future), else the import's time.
//!
//! **Consent.** The row's text is the record's `consent_text`, else `--consent-text`. The flag
//! is required when the file cannot carry a text per record: a CSV without a `consent_text`
//! column is refused before anything is read (a usage error), a JSON line without one is refused
//! with its line number. The row's `consent_version` is the record's, else `--consent-version`,
//! else one derived from the row's text ([`derived_version`]: `import-` and the first 12 hex
//! digits of the SHA-256 of its UTF-8 bytes). So a plain list of addresses with `--consent-text`
//! imports as it is, and rows with different texts get different versions. The list's current
//! `consent_version` is never taken: once `serve` has started it names the list's own text.
//!
//! Each (list, version, text) of an imported row is recorded in `consent_texts`, as signup
//! records a list's text. A row stores its version only, and `export` finds the text through the
//! version (the text in force when the row was created), so **a version names one text**: a
//! record whose text differs from the text already recorded for its version (or from the first
//! text this import gave that version) is refused. Otherwise importing an old wording under a
//! version that names another would show the wrong wording for every row of that version. A
//! derived version cannot meet another text (short of a SHA-256 prefix collision, or a file that
//! spells a derived name by hand).
//!
//! `--consent-version` is checked like a record's version, a usage error before the file is
//! opened. It is allowed without `--consent-text`: a file whose records all carry one wording (an
//! export with a consent column) may well want to name it. Like any version it names one text,
//! the one already recorded for it, else the first record's, so a record with another text is
//! refused by its line, and the refusal says to leave the flag out so that each text gets a
//! version of its own. Refusing the flag outright there would forbid that sound use to spare a
//! mistake that a dry run shows line by line.
//!
//! **What is never changed.** An address the list already has a row for (any status) is skipped
//! as `existing`, and so is a later record of an address earlier in the file. An address with a
//! suppression for the list is skipped as `suppressed`; the suppression is looked up inside the
//! writer's transaction, so one that `serve` records meanwhile is honoured. The suppression is
//! checked first: an address both suppressed and present counts as suppressed.
//!
//! **Refused records** (an invalid address, time, version, text, source or tag, an unreadable
//! record) are reported on stderr, one line each with the line number and the reason, the
//! address masked (`j***@example.com`) and never shown when it does not parse; a source or tag
//! is not quoted either. A refused record never stops the import. The counts go to stdout last:
//! `imported N, skipped M (existing E, suppressed S), refused R`. The exit code is 0 once the
//! file was read to the end, refused records or not (the counts and stderr say what to fix; a
//! re-run after fixing imports the rest and skips what is in); 1 when the file cannot be read
//! (a missing file, a CSV without an `email` column, an I/O error) or the database cannot be
//! written, with the counts so far; 2 for a usage error (no `--format` for an unknown extension,
//! a required `--consent-text` missing, a `--consent-version` that is no valid version).
//!
//! **Streaming, beside `serve`.** One thread reads, checks and prepares (ids, hashes: the crypto
//! stays off the writer) [`BATCH_ROWS`] records at a time, and hands each batch to this
//! process's own writer, attached beside the server's ([`Beside::writer`]): one [`ImportRows`]
//! command, one transaction per batch. The reader works on the next batch while the writer
//! commits, and at most a few batches exist at once, so memory stays flat however long the file
//! is (only the consent texts seen, one per version, are kept). Between two batches the import
//! lets go of SQLite's write lock for [`PAUSE`], so the server's writer, which retries every half
//! millisecond, gets its turn between two batches rather than waiting out its one-second lock
//! wait (`BENCHMARKS.md`, "Importing a list": no signup refused during a million rows).
//!
//! **`--dry-run`** writes nothing: the same checks, with existing and suppressed addresses
//! looked up through a reader and the records seen earlier in the file kept in a private
//! temporary SQLite database (on disk, deleted on close: a set of a million would not be constant
//! memory), and the same counts. That database holds each record's suppression hash (keyed
//! HMAC of list and address), never the address: the file is not where addresses are kept.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::Duration;

use anyhow::Context;
use rusqlite::Connection;

use super::import_file::{ImportFormat, Item, RawRow, Rows};
use super::{Beside, UsageError};
use crate::clock::{Clock, SystemClock, UnixSeconds};
use crate::config::ListConfig;
use crate::config::secrets::Secret;
use crate::config::tokens::{RemovalToken, sha256_hex};
use crate::domain::{EmailAddress, FieldSpec, FieldValues, Source, Tag};
use crate::storage::intake::{self, ConsentText};
use crate::storage::subscribers::{self, NewImported};
use crate::storage::{Batch, Command, WriteError, Writer, suppressions};

/// Records per batch, so per transaction. Measured on 2 cores with a million rows beside `serve`
/// under a signup load (`BENCHMARKS.md`, "Importing a list"): with 2,000 the signups' p99 rose to
/// 92–292 ms and the slowest waited 639 ms, too near the server writer's one-second lock wait;
/// with 500 the p99 stayed at 25 ms (slowest 150 ms) and the signups kept two thirds of their
/// rate, for an import about a quarter slower (26 s alone, 38 s beside the load).
pub const BATCH_ROWS: usize = 500;

/// How long the import lets go of the write lock between two batches: several of the server
/// writer's half-millisecond retries.
pub const PAUSE: Duration = Duration::from_millis(3);

/// How often a batch the database could not take (another process held the lock for the whole
/// lock wait) is tried again before the import stops.
const ATTEMPTS: usize = 5;

/// What to import.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    pub file: PathBuf,
    pub list: String,
    pub format: Option<ImportFormat>,
    pub consent_text: Option<String>,
    /// The version of every record without one of its own (else [`derived_version`]).
    pub consent_version: Option<String>,
    pub dry_run: bool,
}

/// What became of the records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub imported: u64,
    /// Skipped: the list has a row for the address already (or an earlier record had it).
    pub existing: u64,
    /// Skipped: the address is suppressed on the list.
    pub suppressed: u64,
    pub refused: u64,
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "imported {}, skipped {} (existing {}, suppressed {}), refused {}",
            self.imported,
            self.existing + self.suppressed,
            self.existing,
            self.suppressed,
            self.refused
        )
    }
}

/// The consent evidence of every record without its own: `--consent-text` and
/// `--consent-version`, or the API's `consent_text` and `consent_version`.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    pub consent_text: Option<String>,
    pub consent_version: Option<String>,
}

/// An import of JSON lines already in memory (`POST /api/v1/import`), by `writer` — the
/// server's own — with the same checks, batches and counts as the command. Runs on a blocking
/// thread; `runtime` drives the writer's answers. Refusals go to `refusals`, one line each as the
/// command prints them. The caller checked `defaults` and records the audit entry.
#[allow(clippy::too_many_arguments, reason = "each is one part of the import's ground")]
pub fn import_lines(
    db: &crate::storage::Db,
    writer: Option<&Writer>,
    hash_key: Secret,
    list: &ListConfig,
    defaults: &Defaults,
    body: &[u8],
    runtime: &tokio::runtime::Handle,
    refusals: &mut (dyn Write + Send),
) -> Result<Counts, (Counts, anyhow::Error)> {
    let no_counts = |error: anyhow::Error| (Counts::default(), error);
    let rows = Rows::new(body, ImportFormat::Jsonl).map_err(no_counts)?;
    let reader = db.conn().context("cannot open the database for reading").map_err(no_counts)?;
    let checker = Checker::new(reader, list, defaults, hash_key).map_err(no_counts)?;
    match writer {
        None => {
            let reader = db.conn().context("cannot open the database for reading").map_err(no_counts)?;
            let mut sink = DryRun::new(reader, list.id.as_ref()).map_err(no_counts)?;
            stream(rows, checker, refusals, |batch| sink.take(&batch))
        }
        Some(writer) => stream(rows, checker, refusals, |batch| write_batch(runtime, writer, list.id.as_ref(), batch)),
    }
}

/// What became of one prepared record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Imported,
    Existing,
    Suppressed,
}

/// A checked record, ready for the writer. No `Debug`: it holds an address.
#[allow(missing_debug_implementations)]
#[derive(Clone)]
pub struct Prepared {
    id: String,
    email: String,
    consent_version: String,
    /// Index into the batch's consent texts.
    consent: usize,
    confirmed_at: UnixSeconds,
    removal_hash: String,
    suppression_hash: String,
    /// The address's every-list key: a bounce or complaint keeps it out of every list.
    every_list_hash: String,
    source: Option<String>,
    tags: Option<String>,
    /// The list's field values, stored form.
    fields: Option<String>,
    /// One of the list's language codes; `None`: the list's `language`.
    language: Option<String>,
}

impl Prepared {
    /// Suppressed on the list, or on every list (a bounce or a complaint).
    fn is_suppressed(&self, conn: &Connection) -> rusqlite::Result<bool> {
        Ok(suppressions::find(conn, &self.suppression_hash)?.is_some()
            || suppressions::find(conn, &self.every_list_hash)?.is_some())
    }
}

/// One batch of checked records and the consent texts they use.
#[allow(missing_debug_implementations)]
#[derive(Clone)]
pub struct PreparedBatch {
    rows: Vec<Prepared>,
    texts: Vec<ConsentText>,
    now: UnixSeconds,
}

/// The writer command: inserts one batch, in one transaction; one outcome per row, in order.
#[allow(missing_debug_implementations)]
pub struct ImportRows {
    list_id: String,
    batch: PreparedBatch,
}

impl Command for ImportRows {
    type Output = Vec<Outcome>;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Vec<Outcome>> {
        let conn = batch.conn();
        let PreparedBatch { rows, texts, now } = self.batch;
        let mut used = vec![false; texts.len()];
        let mut outcomes = Vec::with_capacity(rows.len());
        for row in &rows {
            // Inside the transaction: a suppression `serve` recorded a moment ago is seen.
            let outcome = if row.is_suppressed(conn)? {
                Outcome::Suppressed
            } else if subscribers::insert_imported(
                conn,
                &NewImported {
                    id: &row.id,
                    list_id: &self.list_id,
                    email: &row.email,
                    consent_version: &row.consent_version,
                    created_at: now,
                    confirmed_at: row.confirmed_at,
                    removal_hash: &row.removal_hash,
                    source: row.source.as_deref(),
                    tags: row.tags.as_deref(),
                    fields: row.fields.as_deref(),
                    language: row.language.as_deref(),
                },
            )? {
                used[row.consent] = true;
                Outcome::Imported
            } else {
                Outcome::Existing
            };
            outcomes.push(outcome);
        }
        for (text, used) in texts.iter().zip(used) {
            if used {
                intake::record_consent_text(conn, &self.list_id, text, now)?;
            }
        }
        Ok(outcomes)
    }
}

/// Runs the import on a blocking thread; `runtime` drives the writer's answers. Refused records
/// go to `refusals` as they are found, the counts to `out` at the end.
pub fn run(
    beside: &Beside,
    request: &ImportRequest,
    runtime: &tokio::runtime::Handle,
    out: &mut dyn Write,
    refusals: &mut (dyn Write + Send),
) -> anyhow::Result<Counts> {
    let list = beside
        .config
        .list(&request.list)
        .ok_or_else(|| anyhow::anyhow!("--list: no list with id {:?} is configured", request.list))?;
    let format = match request.format {
        Some(format) => format,
        None => ImportFormat::from_path(&request.file).ok_or_else(|| {
            UsageError(format!(
                "cannot tell the format of {} from its extension (.csv, .jsonl or .ndjson): give --format csv or --format jsonl",
                request.file.display()
            ))
        })?,
    };
    if let Some(text) = &request.consent_text {
        crate::config::parse::display_text(text).map_err(|error| UsageError(format!("--consent-text {error}")))?;
    }
    if let Some(version) = &request.consent_version {
        crate::config::parse::consent_version(version)
            .map_err(|error| UsageError(format!("--consent-version {error}")))?;
    }
    let file = std::fs::File::open(&request.file).with_context(|| format!("cannot open {}", request.file.display()))?;
    let rows = Rows::new(file, format).with_context(|| format!("cannot import {}", request.file.display()))?;
    if rows.has_consent_text_column() == Some(false) && request.consent_text.is_none() {
        return Err(UsageError(format!(
            "{} has no consent_text column: give --consent-text with the wording these addresses agreed to",
            request.file.display()
        ))
        .into());
    }
    let hash_key = beside.secrets()?.hash_key;
    let defaults =
        Defaults { consent_text: request.consent_text.clone(), consent_version: request.consent_version.clone() };
    let checker = Checker::new(beside.reader()?, list, &defaults, hash_key)?;

    let counts = if request.dry_run {
        let mut sink = DryRun::new(beside.reader()?, list.id.as_ref())?;
        stream(rows, checker, refusals, |batch| sink.take(&batch))
    } else {
        let writer = beside.writer()?;
        let imported = stream(rows, checker, refusals, |batch| write_batch(runtime, &writer, list.id.as_ref(), batch));
        let count = match &imported {
            Ok(counts) | Err((counts, _)) => counts.imported,
        };
        let entry = super::audit::cli_entry("import", Some(list.id.as_ref()), count, None);
        let recorded = runtime.block_on(super::audit::record(&writer, entry));
        // Closed here, not at the process's exit: with no server running, this was the last
        // connection, and closing it folds the WAL into the file.
        runtime.block_on(writer.close())?;
        recorded?;
        imported
    };
    match counts {
        Ok(counts) => {
            if request.dry_run {
                writeln!(out, "dry run: nothing was written; the import would give:")?;
            }
            writeln!(out, "{counts}")?;
            Ok(counts)
        }
        Err((counts, error)) => {
            Err(error.context(format!("the import stopped ({counts}; a new run skips what was imported)")))
        }
    }
}

/// Reads and checks on a thread of its own, hands each batch to `take` on this one.
fn stream<R: Read + Send>(
    mut rows: Rows<R>,
    mut checker: Checker,
    refusals: &mut (dyn Write + Send),
    mut take: impl FnMut(PreparedBatch) -> anyhow::Result<Vec<Outcome>>,
) -> Result<Counts, (Counts, anyhow::Error)> {
    // One batch waits while the next is prepared: the reader never runs far ahead.
    let (sender, batches) = std::sync::mpsc::sync_channel::<PreparedBatch>(1);
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || read(&mut rows, &mut checker, refusals, &sender));
        let mut counts = Counts::default();
        let taken = take_all(&batches, &mut take, &mut counts);
        // Dropping the receiver stops the reader at its next batch if the writing failed.
        drop(batches);
        let read = reader.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the file reader panicked")));
        counts.refused = match &read {
            Ok(refused) => *refused,
            Err(_) => 0,
        };
        match (taken, read) {
            (Err(error), _) | (Ok(()), Err(error)) => Err((counts, error)),
            (Ok(()), Ok(_)) => Ok(counts),
        }
    })
}

fn take_all(
    batches: &Receiver<PreparedBatch>,
    take: &mut impl FnMut(PreparedBatch) -> anyhow::Result<Vec<Outcome>>,
    counts: &mut Counts,
) -> anyhow::Result<()> {
    for batch in batches {
        for outcome in take(batch)? {
            match outcome {
                Outcome::Imported => counts.imported += 1,
                Outcome::Existing => counts.existing += 1,
                Outcome::Suppressed => counts.suppressed += 1,
            }
        }
    }
    Ok(())
}

/// Reads the file to its end; returns how many records were refused.
fn read<R: Read>(
    rows: &mut Rows<R>,
    checker: &mut Checker,
    refusals: &mut (dyn Write + Send),
    batches: &SyncSender<PreparedBatch>,
) -> anyhow::Result<u64> {
    let mut refused = 0;
    let mut batch = checker.new_batch();
    while let Some(item) = rows.next_item()? {
        let checked = match item {
            Item::Row(row) => checker.check(&row, &mut batch).map_err(|refusal| (row.line, refusal)),
            Item::Unreadable { line, reason } => Err((line, Refusal { masked: None, reason: reason.to_owned() })),
        };
        if let Err((line, refusal)) = checked {
            refused += 1;
            let who = refusal.masked.map(|masked| format!(" {masked}")).unwrap_or_default();
            writeln!(refusals, "line {line}: refused{who}: {}", refusal.reason).context("cannot report a refusal")?;
        }
        if batch.rows.len() >= BATCH_ROWS {
            let full = std::mem::replace(&mut batch, checker.new_batch());
            if batches.send(full).is_err() {
                // The writing side stopped; its error is the one to report.
                return Ok(refused);
            }
        }
    }
    if !batch.rows.is_empty() {
        let _ = batches.send(batch);
    }
    Ok(refused)
}

/// Why a record was refused: the address masked when it parsed, and a reason that quotes nothing.
#[derive(Debug)]
struct Refusal {
    masked: Option<String>,
    reason: String,
}

/// Checks records against the list and prepares them for the writer.
struct Checker {
    list_id: String,
    /// The list, for the languages it serves.
    list: ListConfig,
    list_tags: Vec<Tag>,
    /// The list's fields, none required: `required` is the form's rule for a visitor, and a
    /// record brought over from another tool may simply not have the value.
    list_fields: Vec<FieldSpec>,
    default_text: Option<String>,
    default_version: Option<String>,
    hash_key: Secret,
    reader: crate::storage::Conn,
    /// The text each consent version names: as recorded in the database when the import first
    /// met the version, else the first text this import gave it. One entry per version.
    texts: HashMap<String, String>,
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker").field("list_id", &self.list_id).finish_non_exhaustive()
    }
}

impl Checker {
    fn new(
        reader: crate::storage::Conn,
        list: &ListConfig,
        defaults: &Defaults,
        hash_key: Secret,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            list_id: list.id.as_ref().to_owned(),
            list: list.clone(),
            list_tags: list.tags.clone(),
            list_fields: list.fields.iter().cloned().map(|spec| FieldSpec { required: false, ..spec }).collect(),
            default_text: defaults.consent_text.clone(),
            default_version: defaults.consent_version.clone(),
            hash_key,
            reader,
            texts: HashMap::new(),
        })
    }

    fn new_batch(&self) -> PreparedBatch {
        PreparedBatch { rows: Vec::with_capacity(BATCH_ROWS), texts: Vec::new(), now: SystemClock.now() }
    }

    /// Checks one record and adds it to `batch`, or says why not.
    fn check(&mut self, row: &RawRow, batch: &mut PreparedBatch) -> Result<(), Refusal> {
        let refuse = |masked: Option<String>, reason: &str| Refusal { masked, reason: reason.to_owned() };
        let Some(raw_email) = &row.email else {
            return Err(refuse(None, "no email"));
        };
        // The error names what is wrong, never the input.
        let email = EmailAddress::parse(raw_email).map_err(|error| refuse(None, &format!("email: {error}")))?;
        let masked = || Some(email.masked());
        let confirmed_at = match &row.confirmed_at {
            None => batch.now,
            Some(value) => {
                let time = chrono::DateTime::parse_from_rfc3339(value)
                    .map_err(|_| {
                        refuse(masked(), "confirmed_at is not an RFC 3339 time (such as 2025-03-01T09:30:00Z)")
                    })?
                    .timestamp();
                if time > batch.now {
                    return Err(refuse(masked(), "confirmed_at is in the future"));
                }
                time
            }
        };
        let file_version = match &row.consent_version {
            None => None,
            Some(version) => Some(crate::config::parse::consent_version(version).map_err(|_| {
                refuse(masked(), "consent_version is not 1-64 characters of A-Z, a-z, 0-9, '.', '-', '_'")
            })?),
        };
        let Some(text) = row.consent_text.as_ref().or(self.default_text.as_ref()).cloned() else {
            return Err(refuse(masked(), "no consent_text, and no --consent-text was given"));
        };
        crate::config::parse::display_text(&text)
            .map_err(|error| refuse(masked(), &format!("consent_text {error}")))?;
        let from_flag = file_version.is_none() && self.default_version.is_some();
        let version = file_version.or_else(|| self.default_version.clone()).unwrap_or_else(|| derived_version(&text));
        if self.text_of(&version, &text, batch.now).map_err(|error| refuse(masked(), &format!("{error:#}")))? != text {
            let remedy = if from_flag {
                "leave out --consent-version to have a version derived from each text, or name another"
            } else {
                "give these rows a consent_version of their own"
            };
            return Err(refuse(
                masked(),
                &format!(
                    "consent_text differs from the text recorded for consent_version {version} (a version names one text: {remedy})"
                ),
            ));
        }
        let source = match &row.source {
            None => None,
            Some(source) => Some(
                Source::parse(source)
                    .map_err(|_| refuse(masked(), "source is not 1-64 characters of a-z, 0-9, '.', '_' and '-'"))?,
            ),
        };
        let mut tags = Vec::with_capacity(row.tags.len());
        for tag in &row.tags {
            let tag = Tag::parse(tag)
                .ok()
                .filter(|tag| self.list_tags.contains(tag))
                .ok_or_else(|| refuse(masked(), &format!("a tag is not one of the tags of list {}", self.list_id)))?;
            tags.push(tag);
        }
        let fields = self.fields_of(row).map_err(|reason| refuse(masked(), &reason))?;
        let language = match &row.language {
            None => None,
            Some(tag) => Some(self.list.served_language(tag).ok_or_else(|| {
                refuse(masked(), &format!("language is not one of the languages of list {}", self.list_id))
            })?),
        };
        let consent = match batch.texts.iter().position(|known| known.version == version) {
            Some(at) => at,
            None => {
                batch.texts.push(ConsentText::new(&version, &text));
                batch.texts.len() - 1
            }
        };
        let id = uuid::Uuid::now_v7().to_string();
        batch.rows.push(Prepared {
            removal_hash: RemovalToken::derive(&self.hash_key, &id).removal_hash(),
            suppression_hash: suppressions::hash(&self.hash_key, &self.list_id, email.as_ref()),
            every_list_hash: suppressions::every_list_hash(&self.hash_key, email.as_ref()),
            id,
            email: email.as_ref().to_owned(),
            consent_version: version,
            consent,
            confirmed_at,
            source: source.map(|source| source.as_ref().to_owned()),
            tags: Tag::join(&tags),
            fields: fields.to_column(),
            language: language.map(|language| language.code().to_owned()),
        });
        Ok(())
    }

    /// The record's values of the list's fields, each checked by its rule.
    fn fields_of(&self, row: &RawRow) -> Result<FieldValues, String> {
        FieldValues::collect(&self.list_fields, |name| row.field(name)).map_err(|invalid| invalid.to_string())
    }

    /// The text `version` names for this list: the one recorded in force at `now`, else the
    /// first one this import gives it (`text`).
    fn text_of(&mut self, version: &str, text: &str, now: UnixSeconds) -> anyhow::Result<String> {
        if let Some(known) = self.texts.get(version) {
            return Ok(known.clone());
        }
        let recorded = intake::consent_text_agreed(&self.reader, &self.list_id, version, now)
            .context("cannot read the recorded consent texts")?;
        let known = recorded.unwrap_or_else(|| text.to_owned());
        self.texts.insert(version.to_owned(), known.clone());
        Ok(known)
    }
}

/// The version a record without one gets when no `--consent-version` is given: `import-` and the
/// first 12 hex digits (48 bits) of the SHA-256 of the text's UTF-8 bytes. One text always
/// gives the same version, so a re-import finds its rows' text recorded; two texts give two
/// versions. 19 characters, a valid `consent_version`.
pub fn derived_version(text: &str) -> String {
    let digest = sha256_hex(text.as_bytes());
    format!("import-{}", &digest[..12])
}

/// Hands a batch to the writer, tries it again while another process holds the lock (the batch
/// then wrote nothing), then pauses.
fn write_batch(
    runtime: &tokio::runtime::Handle,
    writer: &Writer,
    list_id: &str,
    batch: PreparedBatch,
) -> anyhow::Result<Vec<Outcome>> {
    execute_paced(runtime, writer, "a batch", "cannot write a batch", || ImportRows {
        list_id: list_id.to_owned(),
        batch: batch.clone(),
    })
}

/// Runs the writer command `command()` from a command beside a running server (a blocking
/// thread): again while another process holds the lock for the whole lock wait (the command then
/// wrote nothing), up to [`ATTEMPTS`] times, and pauses [`PAUSE`] after each try, so the
/// server's writer gets the lock between two of them. `what` names one command in the note on
/// stderr (the operator's commands log nowhere), `failed` the error that ends the run.
pub(crate) fn execute_paced<C: Command>(
    runtime: &tokio::runtime::Handle,
    writer: &Writer,
    what: &str,
    failed: &'static str,
    command: impl Fn() -> C,
) -> anyhow::Result<C::Output> {
    let mut attempt = 1;
    loop {
        match runtime.block_on(writer.execute(command())) {
            Ok(output) => {
                pause();
                return Ok(output);
            }
            Err(WriteError::Unavailable(error)) if attempt < ATTEMPTS => {
                let _ = writeln!(
                    std::io::stderr(),
                    "the database could not take {what} ({error}); trying again ({attempt} of {ATTEMPTS})"
                );
                attempt += 1;
                pause();
            }
            Err(error) => return Err(anyhow::Error::new(error).context(failed)),
        }
    }
}

#[allow(
    clippy::disallowed_methods,
    reason = "the commands beside a server run on a blocking thread and pace themselves"
)]
fn pause() {
    std::thread::sleep(PAUSE);
}

/// `--dry-run`: what the writer would find, looked up without writing.
struct DryRun {
    list_id: String,
    reader: crate::storage::Conn,
    /// A private temporary database (an empty file name: on disk, deleted on close) holding the
    /// suppression hashes of the records this run would have imported, so a later record of one
    /// of their addresses counts as existing. The hash names one address of the list, as the
    /// address would, without writing the address to disk.
    seen: Connection,
}

impl DryRun {
    fn new(reader: crate::storage::Conn, list_id: &str) -> anyhow::Result<Self> {
        let seen = Connection::open("").context("cannot open a temporary database for --dry-run")?;
        seen.execute_batch("CREATE TABLE seen (suppression_hash TEXT PRIMARY KEY) WITHOUT ROWID")?;
        Ok(Self { list_id: list_id.to_owned(), reader, seen })
    }

    fn take(&mut self, batch: &PreparedBatch) -> anyhow::Result<Vec<Outcome>> {
        let transaction = self.seen.transaction()?;
        let mut outcomes = Vec::with_capacity(batch.rows.len());
        for row in &batch.rows {
            let outcome = if row.is_suppressed(&self.reader)? {
                Outcome::Suppressed
            } else if subscribers::exists(&self.reader, &self.list_id, &row.email)?
                || transaction
                    .prepare_cached("INSERT OR IGNORE INTO seen (suppression_hash) VALUES (?1)")?
                    .execute([&row.suppression_hash])?
                    == 0
            {
                Outcome::Existing
            } else {
                Outcome::Imported
            };
            outcomes.push(outcome);
        }
        transaction.commit()?;
        Ok(outcomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_the_guide_shows_them() {
        let counts = Counts { imported: 5, existing: 2, suppressed: 1, refused: 3 };
        assert_eq!(counts.to_string(), "imported 5, skipped 3 (existing 2, suppressed 1), refused 3");
    }

    #[test]
    fn a_derived_version_is_import_and_twelve_hex_digits_of_the_texts_sha256() {
        // FIPS 180-2 appendix B.1: SHA-256("abc") = ba7816bf 8f01cfea ...
        assert_eq!(derived_version("abc"), "import-ba7816bf8f01");
        let version = derived_version("Send me news – Ünïcödé.");
        assert_eq!(crate::config::parse::consent_version(&version), Ok(version.clone()), "a valid version");
        assert_ne!(derived_version("Yes."), derived_version("Yes. "), "the exact text, not a normalised one");
    }
}
