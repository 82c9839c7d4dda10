//! Reading the file `signupd import` brings over, one record at a time: CSV with a header row
//! (RFC 4180, the `csv` crate) or JSON lines (one object per line, `serde_json`). Only the
//! current record is held, so a file of any length is read in constant memory. Nothing here
//! checks a value (that is [`super::import`]'s job): a record comes out as the file gives it,
//! with the number of the line it starts on.
//!
//! The fields: `email`, `confirmed_at`, `consent_text`, `consent_version`, `source`, `language`,
//! `tags`, and
//! the values of the list's `[[lists.fields]]`: a `fields` object of strings (in CSV, a cell
//! holding that JSON object, as `export` writes it), or a column (a JSON member) named like the
//! field — `first_name` — which is what another tool's export has. Any other column or field is
//! ignored, so an export of another tool can be fed as it is once its columns carry these names. CSV header names are matched without regard to case or
//! surrounding spaces; an empty cell is an absent value. In CSV, `tags` is one cell of words
//! separated by spaces or commas; in JSON, an array of strings or one such string. In JSON, a
//! `null` is an absent value and every field but `tags` is a string; a field's value that is not a
//! string is kept as one no rule accepts, so the list's check refuses the record.
//!
//! What makes the whole file unreadable (an I/O error, a CSV without an `email` column) is an
//! error; what makes one record unreadable (a line that is not JSON, a CSV record that is not
//! UTF-8, a JSON line longer than [`MAX_JSON_LINE`]) is an [`Item::Unreadable`] with its line
//! number, and reading goes on with the next one.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::Context;

/// The two formats `import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    Csv,
    Jsonl,
}

impl ImportFormat {
    /// The format a file's extension names (`.csv`; `.jsonl` or `.ndjson`), if any.
    pub fn from_path(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "csv" => Some(Self::Csv),
            "jsonl" | "ndjson" => Some(Self::Jsonl),
            _ => None,
        }
    }
}

/// A JSON line longer than this is refused rather than held: a record of the import's fields is
/// far shorter, and a file without line breaks must not be read into memory whole.
pub const MAX_JSON_LINE: u64 = 1024 * 1024;

/// One record as the file gives it. No `Debug`: it holds an address.
#[allow(missing_debug_implementations)]
#[derive(Default, Clone, PartialEq, Eq)]
pub struct RawRow {
    /// The line the record starts on (1 is the first line; in CSV, the header).
    pub line: u64,
    pub email: Option<String>,
    pub confirmed_at: Option<String>,
    pub consent_text: Option<String>,
    pub consent_version: Option<String>,
    pub source: Option<String>,
    /// The language the subscriber reads (a language tag; `None`: the list's `language`).
    pub language: Option<String>,
    /// The words of `tags`, as given (empty when none).
    pub tags: Vec<String>,
    /// Every other value of the record that may be a field's: the members of `fields`, then the
    /// other columns (JSON string members), each name once (the first wins), names lowercased
    /// in CSV. Which of them count is the list's to say ([`super::import`]).
    pub fields: Vec<(String, String)>,
}

impl RawRow {
    /// The value given for the field `name`, if any.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(seen, _)| seen == name).map(|(_, value)| value.as_str())
    }

    fn add_field(&mut self, name: String, value: String) {
        if !value.trim().is_empty() && !self.fields.iter().any(|(seen, _)| *seen == name) {
            self.fields.push((name, value));
        }
    }

    /// Adds the members of a JSON object (a record's `fields`, or the record itself). A `null` is
    /// no value; a number, boolean, object or array where text belongs is kept as a value that
    /// begins with U+FFFD, which no field's rule accepts: a list's field given one is refused
    /// with the record's line ("is not text"), as `POST /api/signup` refuses it with
    /// `invalid_field`, rather than imported without it. A member no field of the list names is
    /// ignored whatever its value, as any other column is.
    fn add_fields_object(&mut self, object: &serde_json::Map<String, serde_json::Value>) {
        for (name, value) in object {
            match value {
                serde_json::Value::Null => {}
                serde_json::Value::String(value) => self.add_field(name.clone(), value.clone()),
                other => self.add_field(name.clone(), format!("\u{FFFD}{other}")),
            }
        }
    }
}

/// What the next record of the file is.
#[allow(missing_debug_implementations)]
pub enum Item {
    Row(RawRow),
    /// A record that cannot be read; `reason` never quotes the record.
    Unreadable {
        line: u64,
        reason: &'static str,
    },
}

/// The records of a file.
#[allow(missing_debug_implementations)]
pub struct Rows<R: Read> {
    inner: Inner<R>,
}

enum Inner<R: Read> {
    // Boxed: the CSV reader's buffers would make every `Inner` as large as it.
    Csv { reader: Box<csv::Reader<R>>, columns: Columns, others: Vec<(usize, String)>, record: csv::StringRecord },
    Jsonl { reader: BufReader<R>, line: u64, buffer: Vec<u8> },
}

/// Where each field is in a CSV record.
#[derive(Debug, Clone, Copy)]
struct Columns {
    email: usize,
    confirmed_at: Option<usize>,
    consent_text: Option<usize>,
    consent_version: Option<usize>,
    source: Option<usize>,
    language: Option<usize>,
    tags: Option<usize>,
    fields: Option<usize>,
}

/// The columns a field's value may be in: every one [`Columns`] does not name.
const NAMED_COLUMNS: &[&str] =
    &["email", "confirmed_at", "consent_text", "consent_version", "source", "language", "tags", "fields"];

impl<R: Read> Rows<R> {
    /// Starts reading; for CSV, reads the header row and fails without an `email` column.
    pub fn new(input: R, format: ImportFormat) -> anyhow::Result<Self> {
        let inner = match format {
            ImportFormat::Csv => {
                // Flexible: a record with fewer cells than the header is read, its missing cells
                // absent, instead of stopping the import.
                let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(input);
                let header = reader.headers().context("cannot read the CSV header row")?.clone();
                let find = |name: &str| header.iter().position(|column| column.trim().eq_ignore_ascii_case(name));
                let email = find("email").ok_or_else(|| {
                    anyhow::anyhow!("the CSV header row has no email column (the first line must name the columns)")
                })?;
                let columns = Columns {
                    email,
                    confirmed_at: find("confirmed_at"),
                    consent_text: find("consent_text"),
                    consent_version: find("consent_version"),
                    source: find("source"),
                    language: find("language"),
                    tags: find("tags"),
                    fields: find("fields"),
                };
                let others = header
                    .iter()
                    .enumerate()
                    .map(|(at, name)| (at, name.trim().to_ascii_lowercase()))
                    .filter(|(_, name)| !NAMED_COLUMNS.contains(&name.as_str()))
                    .collect();
                Inner::Csv { reader: Box::new(reader), columns, others, record: csv::StringRecord::new() }
            }
            ImportFormat::Jsonl => Inner::Jsonl { reader: BufReader::new(input), line: 0, buffer: Vec::new() },
        };
        Ok(Self { inner })
    }

    /// Whether every record can carry its own `consent_text`: for CSV, whether the header has
    /// the column; for JSON lines, unknown until each line is read (`None`).
    pub fn has_consent_text_column(&self) -> Option<bool> {
        match &self.inner {
            Inner::Csv { columns, .. } => Some(columns.consent_text.is_some()),
            Inner::Jsonl { .. } => None,
        }
    }

    /// The next record; `None` at the end of the file.
    pub fn next_item(&mut self) -> anyhow::Result<Option<Item>> {
        match &mut self.inner {
            Inner::Csv { reader, columns, others, record } => next_csv(reader, *columns, others, record),
            Inner::Jsonl { reader, line, buffer } => next_json(reader, line, buffer),
        }
    }
}

fn next_csv<R: Read>(
    reader: &mut csv::Reader<R>,
    columns: Columns,
    others: &[(usize, String)],
    record: &mut csv::StringRecord,
) -> anyhow::Result<Option<Item>> {
    match reader.read_record(record) {
        Ok(false) => Ok(None),
        Ok(true) => {
            let line = record.position().map_or(0, csv::Position::line);
            let cell = |at: Option<usize>| {
                at.and_then(|at| record.get(at)).map(str::trim).filter(|cell| !cell.is_empty()).map(str::to_owned)
            };
            let mut row = RawRow {
                line,
                email: cell(Some(columns.email)),
                confirmed_at: cell(columns.confirmed_at),
                consent_text: cell(columns.consent_text),
                consent_version: cell(columns.consent_version),
                source: cell(columns.source),
                language: cell(columns.language),
                tags: cell(columns.tags).map(|tags| words(&tags)).unwrap_or_default(),
                fields: Vec::new(),
            };
            if let Some(cell) = cell(columns.fields) {
                match serde_json::from_str::<serde_json::Value>(&cell) {
                    Ok(serde_json::Value::Object(object)) => row.add_fields_object(&object),
                    _ => return Ok(Some(Item::Unreadable { line, reason: "the fields cell is not a JSON object" })),
                }
            }
            for (at, name) in others {
                if let Some(value) = cell(Some(*at)) {
                    row.add_field(name.clone(), value);
                }
            }
            Ok(Some(Item::Row(row)))
        }
        // The reader has moved past such a record: the next call reads the one after it.
        Err(error) if matches!(error.kind(), csv::ErrorKind::Utf8 { .. }) => {
            let line = error.position().map_or(0, csv::Position::line);
            Ok(Some(Item::Unreadable { line, reason: "the record is not UTF-8" }))
        }
        Err(error) => Err(anyhow::Error::new(error).context("cannot read the CSV file")),
    }
}

/// A JSON line's fields; any other field is ignored.
#[derive(serde::Deserialize)]
struct JsonRow {
    email: Option<String>,
    confirmed_at: Option<String>,
    consent_text: Option<String>,
    consent_version: Option<String>,
    source: Option<String>,
    language: Option<String>,
    tags: Option<JsonTags>,
    fields: Option<serde_json::Map<String, serde_json::Value>>,
    /// Every other member: a string one may be a field's value.
    #[serde(flatten)]
    others: serde_json::Map<String, serde_json::Value>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum JsonTags {
    Many(Vec<String>),
    One(String),
}

fn next_json<R: Read>(reader: &mut BufReader<R>, line: &mut u64, buffer: &mut Vec<u8>) -> anyhow::Result<Option<Item>> {
    loop {
        buffer.clear();
        let read = reader.by_ref().take(MAX_JSON_LINE).read_until(b'\n', buffer).context("cannot read the file")?;
        if read == 0 {
            return Ok(None);
        }
        *line += 1;
        if !buffer.ends_with(b"\n") && read as u64 == MAX_JSON_LINE {
            skip_rest_of_line(reader)?;
            return Ok(Some(Item::Unreadable { line: *line, reason: "the line is longer than 1 MiB" }));
        }
        if buffer.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // serde_json's messages may quote the value (an address); only the kind of error is told.
        let row: JsonRow = match serde_json::from_slice(buffer) {
            Ok(row) => row,
            Err(error) => {
                let reason = if error.is_data() {
                    "not an object of the import's fields (each a string; tags a string or an array of strings; fields an object)"
                } else {
                    "not valid JSON (one object per line)"
                };
                return Ok(Some(Item::Unreadable { line: *line, reason }));
            }
        };
        let present = |value: Option<String>| value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let tags = match row.tags {
            None => Vec::new(),
            Some(JsonTags::One(tags)) => words(&tags),
            Some(JsonTags::Many(tags)) => tags.iter().flat_map(|tag| words(tag)).collect(),
        };
        let mut raw = RawRow {
            line: *line,
            email: present(row.email),
            confirmed_at: present(row.confirmed_at),
            consent_text: present(row.consent_text),
            consent_version: present(row.consent_version),
            source: present(row.source),
            language: present(row.language),
            tags,
            fields: Vec::new(),
        };
        if let Some(fields) = &row.fields {
            raw.add_fields_object(fields);
        }
        raw.add_fields_object(&row.others);
        return Ok(Some(Item::Row(raw)));
    }
}

/// Consumes the rest of an overlong line, in the reader's own buffer.
fn skip_rest_of_line<R: Read>(reader: &mut BufReader<R>) -> anyhow::Result<()> {
    loop {
        let available = reader.fill_buf().context("cannot read the file")?;
        if available.is_empty() {
            return Ok(());
        }
        if let Some(at) = available.iter().position(|&byte| byte == b'\n') {
            reader.consume(at + 1);
            return Ok(());
        }
        let length = available.len();
        reader.consume(length);
    }
}

/// The words of a `tags` value: separated by spaces or commas.
fn words(value: &str) -> Vec<String> {
    value.split(|c: char| c == ',' || c.is_whitespace()).filter(|word| !word.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record read: its line, address and tags; or an unreadable one: its line and reason.
    type Found = Result<(u64, Option<String>, Vec<String>), (u64, &'static str)>;

    fn items(text: &str, format: ImportFormat) -> Vec<Found> {
        let mut rows = Rows::new(text.as_bytes(), format).unwrap();
        let mut found = Vec::new();
        while let Some(item) = rows.next_item().unwrap() {
            found.push(match item {
                Item::Row(row) => Ok((row.line, row.email, row.tags)),
                Item::Unreadable { line, reason } => Err((line, reason)),
            });
        }
        found
    }

    #[test]
    fn formats_come_from_the_extension() {
        for (name, format) in [
            ("a.csv", Some(ImportFormat::Csv)),
            ("a.CSV", Some(ImportFormat::Csv)),
            ("a.jsonl", Some(ImportFormat::Jsonl)),
            ("a.ndjson", Some(ImportFormat::Jsonl)),
            ("a.json", None),
            ("a", None),
        ] {
            assert_eq!(ImportFormat::from_path(Path::new(name)), format, "{name}");
        }
    }

    #[test]
    fn csv_columns_are_found_by_name_unknown_ones_ignored_and_lines_counted_with_quoted_breaks() {
        let text = "Extra, EMAIL ,tags\nx,a@example.com,\"beta, news\"\n\"two\nlines\",b@example.com,\n,,\n";
        let found = items(text, ImportFormat::Csv);
        assert_eq!(
            found,
            [
                Ok((2, Some("a@example.com".to_owned()), vec!["beta".to_owned(), "news".to_owned()])),
                Ok((3, Some("b@example.com".to_owned()), vec![])),
                Ok((5, None, vec![])),
            ]
        );
        let rows = Rows::new(text.as_bytes(), ImportFormat::Csv).unwrap();
        assert_eq!(rows.has_consent_text_column(), Some(false));
    }

    #[test]
    fn a_csv_saved_with_a_byte_order_mark_still_has_its_email_column() {
        // Spreadsheets save "CSV UTF-8" with a BOM before the first header name.
        let found = items("\u{feff}email\na@example.com\n", ImportFormat::Csv);
        assert_eq!(found, [Ok((2, Some("a@example.com".to_owned()), vec![]))]);
    }

    #[test]
    fn a_csv_without_an_email_column_is_refused_whole() {
        let error = Rows::new("mail,name\na@example.com,A\n".as_bytes(), ImportFormat::Csv).err().unwrap();
        assert!(error.to_string().contains("no email column"), "{error}");
    }

    #[test]
    fn a_csv_record_that_is_not_utf8_is_unreadable_and_the_next_one_is_read() {
        let mut text = b"email\n".to_vec();
        text.extend_from_slice(b"\xff@example.com\nb@example.com\n");
        let mut rows = Rows::new(text.as_slice(), ImportFormat::Csv).unwrap();
        assert!(matches!(rows.next_item().unwrap(), Some(Item::Unreadable { line: 2, .. })));
        assert!(matches!(rows.next_item().unwrap(), Some(Item::Row(row)) if row.line == 3));
        assert!(rows.next_item().unwrap().is_none());
    }

    #[test]
    fn json_lines_take_tags_as_an_array_or_a_string_skip_blank_lines_and_never_quote_a_bad_line() {
        let text = concat!(
            "{\"email\":\"a@example.com\",\"tags\":[\"beta\",\"news\"],\"other\":1}\n",
            "\n",
            "{\"email\":\"b@example.com\",\"tags\":\"beta news\"}\n",
            "{\"email\":\"secret@example.com\",\n",
            "{\"email\":5}\n",
            "{\"email\":null}",
        );
        let found = items(text, ImportFormat::Jsonl);
        let two = vec!["beta".to_owned(), "news".to_owned()];
        assert_eq!(found[0], Ok((1, Some("a@example.com".to_owned()), two.clone())));
        assert_eq!(found[1], Ok((3, Some("b@example.com".to_owned()), two)));
        assert!(matches!(found[2], Err((4, reason)) if reason.contains("not valid JSON")), "{:?}", found[2]);
        assert!(matches!(found[3], Err((5, reason)) if reason.contains("each a string")), "{:?}", found[3]);
        assert_eq!(found[4], Ok((6, None, vec![])));
        assert_eq!(found.len(), 5);
    }

    #[test]
    fn an_overlong_json_line_is_unreadable_and_skipped_whole() {
        let long = format!("{{\"email\":\"{}\"}}\n{{\"email\":\"b@example.com\"}}\n", "a".repeat(2 * 1024 * 1024));
        let found = items(&long, ImportFormat::Jsonl);
        assert!(matches!(found[0], Err((1, reason)) if reason.contains("1 MiB")), "{:?}", found[0]);
        assert_eq!(found[1], Ok((2, Some("b@example.com".to_owned()), vec![])));
    }
}
