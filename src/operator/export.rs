//! `signupd export`: every subscriber (of a list, a status, since a time) as CSV, JSON or JSON
//! lines, streamed row by row from one read transaction — a consistent snapshot while `serve`
//! keeps writing, in constant memory however many rows there are.
//!
//! Each record: `email`, `list`, `status`, `created_at`, `confirmed_at`, `confirm_method`,
//! `consent_version`, `consent_text` (the text the list showed for that version when the row was
//! created), for confirmed rows `unsubscribe_url`: a one-click link signed with the current
//! key, for the operator's own mail, and then where the signup came from: `source` and `tags`
//! (as the first signup of the row stored them; a repeat never changes them). Times are RFC 3339
//! UTC; absent values are empty (CSV) or `null` (JSON).
//!
//! Then `fields`: the values of the list's `[[lists.fields]]` the row stored, as a JSON object
//! (in CSV, one cell holding that object, empty when none; `import` reads it back), and last
//! `language`: the code of the language the subscriber signed up in (`import` reads it back).
//!
//! The attribution columns come last, so a consumer that reads the columns by position keeps
//! working. In JSON, `source` is a string or `null` and `tags` an array of strings (empty when
//! none). In CSV, `source` is a cell (empty when none) and `tags` one cell with the tags
//! separated by a single space (`beta pricing`; empty when none): a tag is `[a-z0-9._-]` only,
//! so the space can never be part of one, and the cell needs no quoting.
//!
//! CSV follows RFC 4180 (the `csv` crate quotes), and a cell a spreadsheet would run as a
//! formula — starting with `=`, `+`, `-`, `@`, a tab or a carriage return — gets a leading `'`
//! (OWASP's rule for CSV injection): the address `=cmd@example.com` is exported as
//! `'=cmd@example.com`.
//!
//! `--output FILE` creates the file 0600 and refuses one that exists; if the export fails
//! half-way, the partial file is deleted.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rusqlite::Connection;
use serde::Serialize;

use super::Beside;
use crate::clock::{Clock, SystemClock, UnixSeconds, rfc3339};
use crate::config::Config;
use crate::config::tokens::Keyring;
use crate::domain::{FieldValues, Tag};
use crate::outbound::mail::message::Links;
use crate::storage::subscribers::{self, ExportFilter, Status};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusFilter {
    Confirmed,
    Pending,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Csv,
    Json,
    Jsonl,
}

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportRequest {
    pub list: Option<String>,
    pub status: StatusFilter,
    pub format: Format,
    pub since: Option<UnixSeconds>,
    pub output: Option<PathBuf>,
}

/// One exported subscriber. Holds an address: no `Debug`.
#[allow(missing_debug_implementations)]
#[derive(Serialize)]
pub struct Record {
    pub email: String,
    pub list: String,
    pub status: String,
    pub created_at: String,
    pub confirmed_at: Option<String>,
    pub confirm_method: Option<String>,
    pub consent_version: String,
    pub consent_text: Option<String>,
    pub unsubscribe_url: Option<String>,
    pub source: Option<String>,
    /// Sorted, each once.
    pub tags: Vec<String>,
    /// The list's field values, in the order the row stored them (an empty object when none).
    pub fields: FieldValues,
    /// The code of the language the subscriber reads (the list's `language` for a row from
    /// before there was one).
    pub language: String,
}

/// The CSV header; new columns only ever go at the end.
const COLUMNS: [&str; 13] = [
    "email",
    "list",
    "status",
    "created_at",
    "confirmed_at",
    "confirm_method",
    "consent_version",
    "consent_text",
    "unsubscribe_url",
    "source",
    "tags",
    "fields",
    "language",
];

/// Between the tags of one CSV cell.
const CSV_TAG_SEPARATOR: &str = " ";

/// Parses `--since`: RFC 3339 (`2026-11-01T00:00:00Z`) or a date (`2026-11-01`, midnight UTC).
pub fn parse_since(value: &str) -> Result<UnixSeconds, String> {
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(value) {
        return Ok(time.timestamp());
    }
    chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|time| time.and_utc().timestamp())
        .ok_or_else(|| format!("{value:?} is neither an RFC 3339 time (2026-11-01T12:00:00Z) nor a date (2026-11-01)"))
}

/// Runs the export; returns how many records were written.
pub fn run(beside: &Beside, request: &ExportRequest, stdout: &mut dyn Write) -> anyhow::Result<u64> {
    if let Some(list) = &request.list {
        anyhow::ensure!(beside.config.list(list).is_some(), "--list: no list with id {list:?} is configured");
    }
    let secrets = beside.secrets()?;
    let keyring = Keyring::new(&secrets.token_secret, &secrets.verify_only);
    let links = Links::new(&beside.config);
    let written = write_export(beside, request, &keyring, &links, stdout)?;
    super::audit::record_beside(beside, super::audit::cli_entry("export", request.list.as_deref(), written, None))?;
    Ok(written)
}

/// The records to stdout or the new file.
fn write_export(
    beside: &Beside,
    request: &ExportRequest,
    keyring: &Keyring,
    links: &Links,
    stdout: &mut dyn Write,
) -> anyhow::Result<u64> {
    let config = &beside.config;
    match &request.output {
        None => write_records(&mut *beside.reader()?, request, config, keyring, links, stdout),
        Some(path) => {
            let file = create_private(path)?;
            let mut out = BufWriter::new(file);
            let written = write_records(&mut *beside.reader()?, request, config, keyring, links, &mut out)
                .and_then(|count| out.flush().map(|()| count).context("cannot write the export"))
                .and_then(|count| {
                    out.get_ref().sync_all().with_context(|| format!("cannot write {}", path.display()))?;
                    Ok(count)
                });
            if written.is_err() {
                // Nothing half-written is left behind.
                let _ = std::fs::remove_file(path);
            }
            written
        }
    }
}

fn create_private(path: &Path) -> anyhow::Result<File> {
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).with_context(|| {
        if path.exists() {
            format!("--output: {} exists already; choose a new file name", path.display())
        } else {
            format!("--output: cannot create {}", path.display())
        }
    })
}

/// Writes the records `request` selects (its list, status and time; `output` is not looked at)
/// to `out` in its format, from one read transaction of `conn`; returns how many.
pub fn write_records(
    conn: &mut Connection,
    request: &ExportRequest,
    config: &Config,
    keyring: &Keyring,
    links: &Links,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    // One read transaction: every row comes from the same snapshot.
    let tx = conn.transaction().context("cannot start a read transaction")?;
    let filter = ExportFilter {
        list_id: request.list.as_deref(),
        status: match request.status {
            StatusFilter::Confirmed => Some(Status::Confirmed),
            StatusFilter::Pending => Some(Status::Pending),
            StatusFilter::All => None,
        },
        created_since: request.since,
    };
    let now = SystemClock.now();
    let mut sink = Sink::new(request.format, out)?;
    let mut count = 0;
    subscribers::for_each_exported(&tx, filter, |row| {
        let unsubscribe_url = (row.status == Status::Confirmed)
            .then(|| links.unsubscribe(&keyring.sign_unsubscribe(&row.list_id, &row.id, now)));
        let language = config.row_language_code(&row.list_id, row.language.as_deref()).to_owned();
        sink.write(&Record {
            email: row.email,
            list: row.list_id,
            status: row.status.as_str().to_owned(),
            created_at: rfc3339(row.created_at)?,
            confirmed_at: row.confirmed_at.map(rfc3339).transpose()?,
            confirm_method: row.confirm_method,
            consent_version: row.consent_version,
            consent_text: row.consent_text,
            unsubscribe_url,
            source: row.source,
            tags: Tag::split(row.tags.as_deref()),
            fields: FieldValues::from_column(row.fields.as_deref()),
            language,
        })?;
        count += 1;
        Ok(())
    })?;
    sink.finish()?;
    Ok(count)
}

/// Where records go, in the chosen format.
enum Sink<'a> {
    Csv(Box<csv::Writer<&'a mut dyn Write>>),
    Json { out: &'a mut dyn Write, first: bool },
    Jsonl(&'a mut dyn Write),
}

impl<'a> Sink<'a> {
    fn new(format: Format, out: &'a mut dyn Write) -> anyhow::Result<Self> {
        Ok(match format {
            Format::Csv => {
                let mut writer = csv::Writer::from_writer(out);
                writer.write_record(COLUMNS)?;
                Sink::Csv(Box::new(writer))
            }
            Format::Json => {
                out.write_all(b"[")?;
                Sink::Json { out, first: true }
            }
            Format::Jsonl => Sink::Jsonl(out),
        })
    }

    fn write(&mut self, record: &Record) -> anyhow::Result<()> {
        match self {
            Sink::Csv(writer) => {
                let tags = record.tags.join(CSV_TAG_SEPARATOR);
                let fields = record.fields.to_column();
                let cells = [
                    Some(record.email.as_str()),
                    Some(record.list.as_str()),
                    Some(record.status.as_str()),
                    Some(record.created_at.as_str()),
                    record.confirmed_at.as_deref(),
                    record.confirm_method.as_deref(),
                    Some(record.consent_version.as_str()),
                    record.consent_text.as_deref(),
                    record.unsubscribe_url.as_deref(),
                    record.source.as_deref(),
                    Some(tags.as_str()),
                    fields.as_deref(),
                    Some(record.language.as_str()),
                ];
                writer.write_record(cells.iter().map(|cell| neutralise(cell.unwrap_or("")).into_owned()))?;
            }
            Sink::Json { out, first } => {
                if !*first {
                    out.write_all(b",")?;
                }
                *first = false;
                out.write_all(b"\n")?;
                serde_json::to_writer(&mut **out, record)?;
            }
            Sink::Jsonl(out) => {
                serde_json::to_writer(&mut **out, record)?;
                out.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    fn finish(self) -> anyhow::Result<()> {
        match self {
            Sink::Csv(mut writer) => writer.flush()?,
            Sink::Json { out, first } => out.write_all(if first { b"]\n" } else { b"\n]\n" })?,
            Sink::Jsonl(out) => out.flush()?,
        }
        Ok(())
    }
}

/// OWASP's rule against CSV injection: a cell that starts like a formula gets a leading `'`.
pub fn neutralise(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{cell}").into() } else { cell.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised_and_others_left_alone() {
        for (cell, expected) in [
            ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"),
            ("+1", "'+1"),
            ("-2", "'-2"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("ann@example.com", "ann@example.com"),
            ("", ""),
        ] {
            assert_eq!(neutralise(cell), expected, "{cell:?}");
        }
    }

    #[test]
    fn since_takes_rfc3339_or_a_date() {
        assert_eq!(parse_since("2026-01-01T00:00:00Z"), Ok(1_767_225_600));
        assert_eq!(parse_since("2026-01-01T01:00:00+01:00"), Ok(1_767_225_600));
        assert_eq!(parse_since("2026-01-01"), Ok(1_767_225_600));
        for bad in ["yesterday", "2026-13-01", "", "1767225600"] {
            assert!(parse_since(bad).is_err(), "{bad:?}");
        }
    }
}
