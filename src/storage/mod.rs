//! SQLite storage: one file, `<data_dir>/signupd.sqlite3`, through an r2d2 pool of rusqlite
//! connections. Every connection runs in WAL mode with `synchronous = FULL` (an acknowledged
//! signup survives a power cut), a busy handler that waits up to 5 s for another writer, and
//! foreign keys on.
//!
//! SQLite calls block, so async code reaches the database only through [`Db::run`], which moves
//! the work to tokio's blocking pool. Writers use `BEGIN IMMEDIATE` transactions
//! ([`immediate`]) so a read-then-write never fails half-way on a lock upgrade.
//!
//! Layout: `migrations` (the embedded schema), then one file per table family: `intake`
//! (accepted signup requests and consent texts), `subscribers` (rows), `outbox` (queued mail,
//! leases, the sending budget),
//! `suppressions` (hashed do-not-mail entries). Rate-limit counters live with the limiter.

pub mod intake;
pub mod migrations;
pub mod outbox;
pub mod subscribers;
pub mod suppressions;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use r2d2::{Pool, PooledConnection};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

pub use migrations::{LATEST_VERSION, MigrationError};

/// How long a connection waits for another writer before giving up with `SQLITE_BUSY`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// The readiness probe waits less, so `/readyz` answers well within a load balancer's timeout.
const READINESS_BUSY_TIMEOUT: Duration = Duration::from_millis(500);
const POOL_SIZE: u32 = 32;

pub type Conn = PooledConnection<SqliteConnectionManager>;

/// A handle on the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Db {
    pool: Pool<SqliteConnectionManager>,
    path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("no database connection available")]
    Pool(#[from] r2d2::Error),
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error("the database task was cancelled")]
    Cancelled,
}

impl Db {
    /// Opens (creating if missing) the database file. Does not migrate: see [`Db::migrate`].
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        create_private_file(path)?;
        let manager = SqliteConnectionManager::file(path).with_init(configure_connection);
        let pool = Pool::builder()
            .max_size(POOL_SIZE)
            .connection_timeout(BUSY_TIMEOUT)
            .build(manager)
            .with_context(|| format!("cannot open database {}", path.display()))?;
        Ok(Self { pool, path: path.to_owned() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn conn(&self) -> Result<Conn, StorageError> {
        Ok(self.pool.get()?)
    }

    /// Applies pending migrations; returns how many ran.
    pub fn migrate(&self) -> anyhow::Result<usize> {
        let mut conn = self.conn().context("cannot open database")?;
        migrations::migrate(&mut conn).with_context(|| format!("database {}", self.path.display()))
    }

    /// Runs blocking database work off the async executor.
    pub async fn run<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StorageError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = db.conn()?;
            work(&mut conn)
        })
        .await
        .map_err(|_| E::from(StorageError::Cancelled))?
    }

    /// Whether the database is migrated and can take a write right now. Takes the write lock
    /// (`BEGIN IMMEDIATE`) and rolls back, so it changes nothing.
    pub async fn is_ready(&self) -> bool {
        let result: Result<bool, StorageError> = self
            .run(|conn| {
                conn.busy_timeout(READINESS_BUSY_TIMEOUT)?;
                let probe = (|| {
                    let version = migrations::schema_version(conn).unwrap_or(usize::MAX);
                    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    tx.rollback()?;
                    Ok::<_, rusqlite::Error>(version == LATEST_VERSION)
                })();
                wait_for_writers(conn)?;
                Ok(probe?)
            })
            .await;
        match result {
            Ok(ready) => ready,
            Err(error) => {
                tracing::warn!(error = %error, "readiness probe: the database cannot be written");
                false
            }
        }
    }
}

/// Refuses a database file written by a newer signupd. Opens it read-only, so it changes nothing.
pub fn ensure_file_not_newer(path: &Path) -> anyhow::Result<usize> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    migrations::ensure_not_newer(&conn).with_context(|| format!("database {}", path.display()))
}

/// Starts a write transaction that holds the write lock from its first statement.
pub fn immediate(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

/// Creates the database file 0600 if missing: it holds addresses, and SQLite gives the `-wal`
/// and `-shm` files the database file's permissions.
fn create_private_file(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error).with_context(|| format!("cannot create database {}", path.display())),
    }
}

/// How long a writer sleeps between two tries while another holds the write lock.
const BUSY_RETRY: Duration = Duration::from_micros(250);

/// Waits for the write lock in short steps. SQLite's own `busy_timeout` sleeps 1, 2, 5, … up to
/// 100 ms between tries, so under contention (the intake writer, the mail workers and the
/// intake worker) a request could sleep 100 ms after the lock was long free; measured in the
/// signup benchmark as p99 in the hundreds of milliseconds.
fn wait_for_writers(conn: &Connection) -> rusqlite::Result<()> {
    #[allow(clippy::disallowed_methods, reason = "a busy handler runs on a blocking thread and must sleep")]
    fn retry(attempt: i32) -> bool {
        std::thread::sleep(BUSY_RETRY);
        u128::try_from(attempt).unwrap_or(0) * BUSY_RETRY.as_micros() < BUSY_TIMEOUT.as_micros()
    }
    conn.busy_handler(Some(retry))
}

fn configure_connection(conn: &mut Connection) -> rusqlite::Result<()> {
    wait_for_writers(conn)?;
    // journal_mode answers with a row; WAL is persistent, the others are per connection.
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidParameterName(format!("journal_mode is {mode}, WAL is required")));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_connection_is_configured() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("db.sqlite3")).unwrap();
        let conn = db.conn().unwrap();
        let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
        let sync: i64 = conn.pragma_query_value(None, "synchronous", |r| r.get(0)).unwrap();
        let fk: i64 = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0)).unwrap();
        assert_eq!((mode.as_str(), sync, fk), ("wal", 2, 1));
    }
}
