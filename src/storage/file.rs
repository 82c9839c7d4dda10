//! The database file, before the writer opens it: its directory made and proven writable, a
//! file from a newer signupd refused, the file created 0600; then the writer started (which
//! migrates). `serve` and `signupd migrate` prepare it the same way.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rusqlite::{Connection, OpenFlags};

use super::{Writer, migrations};
use crate::config::Config;

/// Starts the writer (which migrates) on the blocking pool; logs what it applied.
pub async fn start_writer(path: PathBuf, cache_mib: u32) -> anyhow::Result<Writer> {
    let writer = tokio::task::spawn_blocking(move || Writer::start(&path, cache_mib))
        .await
        .context("opening the database was cancelled")??;
    if writer.migrations_applied() > 0 {
        tracing::info!(applied = writer.migrations_applied(), "applied database migrations");
    }
    Ok(writer)
}

/// Creates the data directory if needed, checks it is writable, refuses a database from a newer
/// signupd, and creates the database file 0600 if missing. Returns its path.
pub async fn prepare_database_file(config: &Config) -> anyhow::Result<PathBuf> {
    let data_dir = config.storage.data_dir.clone();
    let path = config.storage.database_path();
    tokio::task::spawn_blocking(move || {
        ensure_writable_dir(&data_dir).context("storage.data_dir")?;
        // Check the version through a read-only connection first: the writer switches the file
        // to WAL, which is already a write.
        if path.exists() {
            ensure_file_not_newer(&path)?;
        }
        create_private_file(&path)?;
        Ok(path)
    })
    .await
    .context("opening the database was cancelled")?
}

/// Creates `dir` (0700) if missing and proves it writable by creating and removing a file, so a
/// read-only or misowned directory fails at start with its path, not at the first signup.
fn ensure_writable_dir(dir: &Path) -> anyhow::Result<()> {
    crate::config::secrets::create_private_dir(dir)?;
    let probe = dir.join(format!(".signupd-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("{} is not writable", dir.display()))?;
    std::fs::remove_file(&probe).with_context(|| format!("cannot remove {}", probe.display()))?;
    Ok(())
}

/// Refuses a database file written by a newer signupd. Opens it read-only, so it changes nothing.
pub fn ensure_file_not_newer(path: &Path) -> anyhow::Result<usize> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    migrations::ensure_not_newer(&conn).with_context(|| format!("database {}", path.display()))
}

/// Creates the database file 0600 if missing: it holds addresses, and SQLite gives the `-wal`
/// and `-shm` files the database file's permissions.
pub fn create_private_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error).with_context(|| format!("cannot create database {}", path.display())),
    }
}
