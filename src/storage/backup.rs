//! An online copy of the database through SQLite's backup API, for `signupd backup`.
//!
//! The copy is read inside one read transaction on the source, so every step sees the same
//! snapshot (in WAL mode a reader never holds up the server's writer, and the backup does not
//! restart when the server commits meanwhile). The copy is then checked with
//! `PRAGMA integrity_check` and its own WAL folded in, so it is one self-contained file.

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use rusqlite::Connection;
use rusqlite::backup::Backup;

use super::figures;
use super::subscribers::Status;

/// Pages copied per step (4 MiB with 4 KiB pages), and the pause between steps.
const PAGES_PER_STEP: std::os::raw::c_int = 1024;
const PAUSE: Duration = Duration::from_millis(1);

/// What a checked copy holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    pub pending: i64,
    pub confirmed: i64,
    pub suppressions: i64,
}

/// Copies `source` into the (new, empty) file `target` and checks the copy.
pub fn copy_checked(source: &mut Connection, target: &Path) -> anyhow::Result<Copied> {
    let snapshot = source.transaction().context("cannot start a read transaction")?;
    // The first read pins the snapshot every step of the copy sees.
    snapshot.query_row("SELECT count(*) FROM sqlite_master", [], |row| row.get::<_, i64>(0))?;
    {
        let mut copy = Connection::open(target).with_context(|| format!("cannot open {}", target.display()))?;
        let backup = Backup::new(&snapshot, &mut copy).context("cannot start the backup")?;
        backup.run_to_completion(PAGES_PER_STEP, PAUSE, None).context("the backup failed")?;
    }
    drop(snapshot);

    let copy = Connection::open(target)?;
    let verdict: String = copy.query_row("PRAGMA integrity_check", [], |row| row.get(0))?;
    anyhow::ensure!(verdict == "ok", "the copy failed its integrity check: {verdict}");
    let copied = Copied {
        pending: figures::all_subscribers(&copy, Status::Pending)?,
        confirmed: figures::all_subscribers(&copy, Status::Confirmed)?,
        suppressions: figures::all_suppressions(&copy)?,
    };
    copy.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    Ok(copied)
}
