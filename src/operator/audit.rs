//! The audit log of the operator's actions (`docs/operations.md`, "Answering the people on the
//! list"): [`record`] appends one entry through a writer (every command that reads or changes
//! subscribers calls it once), and `signupd audit [--since TIME] [--json]` ([`run`]) prints the
//! log. An entry names the address only by its keyed hash, the every-list key of
//! `storage::suppressions`, so "who removed me?" is answered by hashing the address asked about
//! (`signupd lookup` shows it) and finding that hash, while the log itself holds no address.

use std::io::Write;

use super::Beside;
use crate::clock::UnixSeconds;
use crate::storage::audit::{self, Entry};
use crate::storage::{Batch, Command, Writer};

/// The actor of every command-line action.
pub const CLI: &str = "cli";

/// Appends `entry`.
pub async fn record(writer: &Writer, entry: Entry) -> anyhow::Result<()> {
    writer.execute(AppendAudit(entry)).await?;
    Ok(())
}

/// Appends `entry` through a writer of its own, from a blocking thread of the runtime (a command
/// that otherwise only reads, such as `export`).
pub fn record_beside(beside: &Beside, entry: Entry) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Handle::current();
    let writer = beside.writer()?;
    let recorded = runtime.block_on(record(&writer, entry));
    runtime.block_on(writer.close())?;
    recorded
}

/// An entry of the command line's, now.
pub fn cli_entry(action: &str, list_id: Option<&str>, count: u64, address_hash: Option<String>) -> Entry {
    use crate::clock::Clock;
    Entry {
        at: crate::clock::SystemClock.now(),
        actor: CLI.to_owned(),
        action: action.to_owned(),
        list_id: list_id.map(str::to_owned),
        count: Some(i64::try_from(count).unwrap_or(i64::MAX)),
        address_hash,
    }
}

#[derive(Debug)]
struct AppendAudit(Entry);

impl Command for AppendAudit {
    type Output = ();
    const ATOMIC: bool = true;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
        Ok(audit::append(batch.conn(), &self.0)?)
    }
}

/// `signupd audit`: every entry since `since` (all of them without it), oldest first, as lines
/// of text or, with `json`, one JSON object per line.
pub fn run(beside: &Beside, since: Option<UnixSeconds>, json: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let conn = beside.reader()?;
    let entries = audit::since(&conn, since.unwrap_or(i64::MIN))?;
    for entry in &entries {
        if json {
            serde_json::to_writer(&mut *out, entry)?;
            writeln!(out)?;
        } else {
            let at = crate::clock::rfc3339(entry.at).unwrap_or_else(|_| entry.at.to_string());
            let list = entry.list_id.as_deref().unwrap_or("-");
            let count = entry.count.map_or_else(|| "-".to_owned(), |count| count.to_string());
            let address = entry.address_hash.as_deref().unwrap_or("-");
            writeln!(out, "{at}  {}  {}  list {list}  count {count}  address {address}", entry.actor, entry.action)?;
        }
    }
    if entries.is_empty() && !json {
        writeln!(out, "no entries")?;
    }
    Ok(())
}
