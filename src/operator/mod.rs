//! The operator's commands (`docs/operations.md`): `export`, `remove`, `stats`, `backup`. Each works while
//! `serve` runs on the same database, and they share one way in, [`Beside::open`]:
//!
//! - reads go through `query_only` connections ([`Db`]); in WAL mode they see a consistent
//!   snapshot and never hold up the server's writer;
//! - a command that writes (`remove`) attaches its own [`Writer`] and runs the very command the
//!   server's routes run, in one short transaction; SQLite's file lock arbitrates between the
//!   two processes, and the server's writer waits out such a moment (up to its lock wait);
//! - nothing here migrates or creates a secret: a database from another version, or secrets
//!   that `serve` would have to generate, are errors that say what to run instead.

pub mod backup;
pub mod export;
pub mod remove;
pub mod stats;

use std::path::PathBuf;

use anyhow::Context;

use crate::config::Config;
use crate::secrets::{Secrets, SecretsPlan};
use crate::storage::{self, Db, Writer};

/// The database of a configuration, opened beside a running server.
#[derive(Debug)]
pub struct Beside {
    pub config: Config,
    pub db: Db,
    pub path: PathBuf,
}

impl Beside {
    /// Opens the readers; fails unless the database exists at the schema this binary writes.
    pub fn open(config: Config) -> anyhow::Result<Self> {
        let path = config.storage.database_path();
        anyhow::ensure!(
            path.exists(),
            "there is no database at {} (storage.data_dir): start `signupd serve` once, or run `signupd migrate`",
            path.display()
        );
        let version = storage::ensure_file_not_newer(&path)?;
        anyhow::ensure!(
            version == storage::LATEST_VERSION,
            "database {} has schema version {version}, this signupd reads version {}: run `signupd migrate` with this binary first",
            path.display(),
            storage::LATEST_VERSION
        );
        let db = Db::open_readers(&path)?;
        Ok(Self { config, db, path })
    }

    /// The secrets `serve` uses (same configuration, same `$CREDENTIALS_DIRECTORY`); none is
    /// generated here, since a new hash key would match no stored hash.
    pub fn secrets(&self) -> anyhow::Result<Secrets> {
        let credentials_dir = crate::secrets::credentials_dir_from_env();
        SecretsPlan::resolve(&self.config, credentials_dir.as_deref())?.existing()
    }

    /// The webhook endpoints, so a removal queues its event like the server's would.
    pub fn webhooks(&self, secrets: &Secrets) -> anyhow::Result<crate::webhooks::Webhooks> {
        let credentials_dir = crate::secrets::credentials_dir_from_env();
        let keyring = std::sync::Arc::new(crate::tokens::Keyring::new(&secrets.token_secret, &secrets.verify_only));
        crate::webhooks::Webhooks::load(&self.config, credentials_dir.as_deref(), keyring)
    }

    /// A writer of this process's own, for a command that writes.
    pub fn writer(&self) -> anyhow::Result<Writer> {
        Writer::attach(&self.path)
    }

    /// A read connection for a blocking command.
    pub fn reader(&self) -> anyhow::Result<storage::Conn> {
        self.db.conn().context("cannot open the database for reading")
    }
}

/// A Unix time as RFC 3339 (UTC, seconds).
pub fn rfc3339(time: crate::clock::UnixSeconds) -> String {
    chrono::DateTime::from_timestamp(time, 0)
        .map(|time| time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}
