//! SQLite storage: one file, `<data_dir>/signupd.sqlite3`, in WAL mode.
//!
//! Writing and reading are split. [`writer`] owns the only read-write connection: every write
//! of the program is a command it runs in a group-committed `BEGIN IMMEDIATE` transaction with
//! `synchronous = FULL`. [`Db`] is an r2d2 pool of `query_only` connections for everything
//! else; in WAL mode they read a consistent snapshot beside the writer and never wait for it.
//! SQLite calls block, so async code reads through [`Db::run`], which moves the work to
//! tokio's blocking pool.
//!
//! A clean stop closes both ([`Db::close`], then [`Writer::close`]), readers first: SQLite
//! removes the `-wal` and `-shm` files when the last connection to the database closes, so
//! only `signupd.sqlite3` stays behind.
//!
//! Every SQL statement of the program is here, in functions named for what they answer.
//!
//! Layout: `writer` (the one writer and its [`Command`] trait), `batch` (what a command runs
//! against: the connection and the batch's in-memory counters), `file` (the database file made
//! and checked before the writer opens it), `migrations` (the embedded schema, one file per
//! schema version), then one file per table family: `intake` (accepted signup requests, consent
//! texts and which text a row agreed to), `subscribers` (rows, the cleanup's deletions, the
//! export's reading), `outbox` (queued mail, leases, the fair order, the hour's tally), `mail_bucket` (the paced
//! budget), `networks` (per-neighbourhood mail counts and reputation), `suppressions` (hashed
//! do-not-mail entries), `address_mails` (the per-address mail cap), `counters` (the surge counts, and the expiry of every `rate_limits` counter; the limiter counts
//! its own keys through [`Batch`]), `webhooks` (deliveries waiting for an endpoint),
//! `service_runs` (when the cleanup last ran), `preferences` (an address's rows across a sender's
//! lists, and confirming a list from the preference page), `rollups` (the status page's hourly
//! counts), `relay_events` (the receipts of the relays' events and the complaints the breaker
//! counts), `audit` (the operator's actions), `held` (everything about one address, for
//! `lookup`). Beside them: `figures` (counts for `signupd
//! stats` and the metrics gauges) and `backup` (the online copy for `signupd backup`).

pub mod address_mails;
pub mod audit;
pub mod backup;
pub mod batch;
pub mod counters;
pub mod figures;
mod file;
pub mod held;
pub mod intake;
pub mod mail_bucket;
pub mod migrations;
pub mod networks;
pub mod outbox;
pub mod preferences;
pub mod relay_events;
pub mod rollups;
pub mod service_runs;
pub mod subscribers;
pub mod suppressions;
pub mod webhooks;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use anyhow::Context;
use r2d2::{Pool, PooledConnection};
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};

pub use batch::Batch;
pub use file::{create_private_file, ensure_file_not_newer, prepare_database_file, start_writer};
pub use migrations::{LATEST_VERSION, MigrationError};
pub use writer::{Command, WriteError, Writer};

/// How long a caller waits for a free reader connection.
const READER_WAIT: Duration = Duration::from_secs(5);
const READERS: u32 = 16;
/// Each reader's page cache, in KiB (see `configure_reader`).
const READER_CACHE_KIB: i64 = -256;

pub type Conn = PooledConnection<SqliteConnectionManager>;

/// Read access to the database; cheap to clone. Its connections are `query_only`: a write
/// through them fails, so the [`Writer`] stays the one place SQLite is written.
#[derive(Debug, Clone)]
pub struct Db {
    /// `None` once [`Db::close`]d. Every handle shares it, so one close closes them all.
    pool: Arc<RwLock<Option<Pool<SqliteConnectionManager>>>>,
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
    #[error("the database is closed: signupd is stopping")]
    Closed,
}

impl Db {
    /// Opens the reader pool on a database the [`Writer`] has created and migrated. Connections
    /// are opened lazily, so this does not touch the file.
    pub fn open_readers(path: &Path) -> anyhow::Result<Self> {
        let manager = SqliteConnectionManager::file(path)
            .with_flags(
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
            )
            .with_init(configure_reader);
        let pool = Pool::builder()
            .max_size(READERS)
            .min_idle(Some(0))
            .connection_timeout(READER_WAIT)
            .build(manager)
            .with_context(|| format!("cannot open database {}", path.display()))?;
        Ok(Self { pool: Arc::new(RwLock::new(Some(pool))), path: path.to_owned() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn conn(&self) -> Result<Conn, StorageError> {
        // A clone of the pool (a reference count), so the wait for a free connection happens
        // outside the lock.
        let pool = self.pool.read().unwrap_or_else(PoisonError::into_inner).clone().ok_or(StorageError::Closed)?;
        Ok(pool.get()?)
    }

    /// Closes every idle reader connection, for every handle; later reads fail with
    /// [`StorageError::Closed`]. A connection still in use closes when it is returned. For a
    /// clean stop, once nothing reads any more.
    pub fn close(&self) {
        let pool = self.pool.write().unwrap_or_else(PoisonError::into_inner).take();
        drop(pool);
    }

    /// Runs blocking reads off the async executor.
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
}

/// A reader: `query_only`, so a write through it is refused by SQLite itself. Readers open the
/// file read-write all the same: in WAL mode a reader may need to write the `-shm` index.
fn configure_reader(conn: &mut Connection) -> rusqlite::Result<()> {
    writer::wait_for_lock(conn)?;
    conn.pragma_update(None, "query_only", "ON")?;
    // A reader's page cache is emptied whenever it starts a read after another connection
    // changed the database, so under load it holds one query's pages at most; SQLite's default
    // of 2 MiB per connection would only add memory (16 readers: 32 MiB). The file's pages stay
    // in the operating system's cache either way. Negative: KiB.
    conn.pragma_update(None, "cache_size", READER_CACHE_KIB)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_writer_connection_is_durable_and_readers_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite3");
        let _writer = Writer::start(&path, 2).unwrap();
        let readers = Db::open_readers(&path).unwrap();
        let conn = readers.conn().unwrap();
        let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
        let query_only: i64 = conn.pragma_query_value(None, "query_only", |r| r.get(0)).unwrap();
        assert_eq!((mode.as_str(), query_only), ("wal", 1));
        let refused = conn.execute("DELETE FROM subscribers", []).unwrap_err();
        assert!(refused.to_string().contains("readonly"), "{refused}");
    }
}
