//! The operator's room: what the person running signupd reaches beside the server — the
//! commands below, the operator API ([`api`]), the admin page ([`admin`]), the status page
//! ([`status`]) and the form snippets ([`snippet`]). Everything here reads through the same
//! storage functions and writes through the same commands as the routes, and is audited.
//!
//! The operator's commands (`docs/operations.md`): `export`, `import`, `remove`, `stats`, `backup`,
//! `lookup` and `audit` (with the audit log every command that reads or changes subscribers
//! appends to), `backfill` (a destination's subscribers from before it was configured), and
//! `ingest-mail`, which a Postfix pipe transport runs. Each works while
//! `serve` runs on the same database, and they share one way in, [`Beside::open`]:
//!
//! - reads go through `query_only` connections ([`Db`]); in WAL mode they see a consistent
//!   snapshot and never hold up the server's writer;
//! - a command that writes (`remove`, `import`, `backfill`) attaches its own [`Writer`] and runs the very command the
//!   server's routes run, in one short transaction; SQLite's file lock arbitrates between the
//!   two processes, and the server's writer waits out such a moment (up to its lock wait);
//! - nothing here migrates or creates a secret: a database from another version, or secrets
//!   that `serve` would have to generate, are errors that say what to run instead;
//! - secrets and credentials are found as `serve` finds them ([`crate::config::secrets`]): the
//!   configured files, then the credentials directory (`$CREDENTIALS_DIRECTORY`, else
//!   `credentials/` beside the configuration file), then the data directory.

pub mod admin;
pub mod api;
pub mod audit;
pub mod backfill;
pub mod backup;
pub mod doctor;
pub mod export;
pub mod import;
pub mod import_file;
pub mod ingest_mail;
pub mod lookup;
pub mod remove;
pub mod snippet;
pub mod stats;
pub mod status;

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::config::Config;
use crate::config::secrets::{Secrets, SecretsPlan};
use crate::storage::{self, Db, Writer};

/// A mistake in how a command was called (a flag missing or not fitting the input), found only
/// once the input was looked at: the binary exits 2 for it, as for clap's own usage errors.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The database of a configuration, opened beside a running server.
#[derive(Debug)]
pub struct Beside {
    pub config: Config,
    pub db: Db,
    pub path: PathBuf,
    /// Where credentials are looked for ([`crate::config::secrets::credentials_dir`]).
    pub credentials_dir: Option<PathBuf>,
}

impl Beside {
    /// Opens the readers; fails unless the database exists at the schema this binary writes.
    /// `credentials_dir` is where the secrets' credentials are looked for.
    pub fn open(config: Config, credentials_dir: Option<PathBuf>) -> anyhow::Result<Self> {
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
        Ok(Self { config, db, path, credentials_dir })
    }

    fn credentials_dir(&self) -> Option<&Path> {
        self.credentials_dir.as_deref()
    }

    /// The secrets `serve` uses (same configuration, same credentials); none is generated
    /// here, since a new hash key would match no stored hash.
    pub fn secrets(&self) -> anyhow::Result<Secrets> {
        SecretsPlan::resolve(&self.config, self.credentials_dir())?.existing()
    }

    /// Where the hash key `serve` uses lives, for the hint to keep it with a backup.
    pub fn hash_key_place(&self) -> anyhow::Result<crate::config::secrets::SecretPlace> {
        crate::config::secrets::hash_key_place(&self.config, self.credentials_dir())
    }

    /// Where the token secret is, as `serve` would find it (`backup` names it).
    pub fn token_secret_place(&self) -> anyhow::Result<crate::config::secrets::SecretPlace> {
        crate::config::secrets::token_secret_place(&self.config, self.credentials_dir())
    }

    /// The webhook endpoints, so a removal queues its event like the server's would.
    pub fn webhooks(&self, secrets: &Secrets) -> anyhow::Result<crate::outbound::webhooks::Webhooks> {
        let keyring =
            std::sync::Arc::new(crate::config::tokens::Keyring::new(&secrets.token_secret, &secrets.verify_only));
        crate::outbound::webhooks::Webhooks::load(&self.config, self.credentials_dir(), keyring)
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
