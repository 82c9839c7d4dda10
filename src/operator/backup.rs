//! `signupd backup DEST [--force]`: a consistent online copy of the database while `serve`
//! writes, through SQLite's backup API.
//!
//! The copy is read inside one read transaction on the source, so every step sees the same
//! snapshot (`storage::backup`). It is written 0600 to a temporary file beside
//! DEST, checked with `PRAGMA integrity_check`, and only then moved into place: DEST is either
//! the old file or a complete, checked copy, never half of one. Without `--force` an existing
//! DEST is refused. The two secrets are not in the database: back them up with the copy. Without
//! the hash key every suppression and removal link stops matching after a restore; without the
//! token secret every unsubscribe link already sent (welcome mails, webhook payloads, exports)
//! stops working. So the command names the files that hold them, found as
//! `serve` finds them (`secrets.hash_key_file` / `secrets.token_secret_file`, the credential
//! `hash_key` / `token_secret`, or `<data_dir>/hash_key` / `<data_dir>/token_secret`): under the
//! Debian package those are in `/etc/signupd/credentials/`, not the data directory.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::Beside;
use crate::storage::backup::copy_checked;

/// What a finished backup holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub bytes: u64,
    pub pending: i64,
    pub confirmed: i64,
    pub suppressions: i64,
}

pub fn run(beside: &Beside, dest: &Path, force: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let summary = backup(beside, dest, force)?;
    writeln!(
        out,
        "backup written to {} ({} bytes): {} confirmed, {} pending, {} suppressions; integrity check ok",
        dest.display(),
        summary.bytes,
        summary.confirmed,
        summary.pending,
        summary.suppressions
    )?;
    writeln!(out, "{}", secret_hint(Secret::HashKey, beside.hash_key_place()))?;
    writeln!(out, "{}", secret_hint(Secret::TokenSecret, beside.token_secret_place()))?;
    Ok(())
}

/// The two secrets a restore needs beside the database.
#[derive(Debug, Clone, Copy)]
enum Secret {
    HashKey,
    TokenSecret,
}

impl Secret {
    /// What it is called, its configuration key and its credential's name.
    fn names(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::HashKey => ("hash key", "secrets.hash_key_file", "hash_key"),
            Self::TokenSecret => ("token secret", "secrets.token_secret_file", "token_secret"),
        }
    }
}

/// Which file to keep with the backup, as this command finds the secret; a warning when that
/// file is not there (the command then runs with other settings than `serve`).
fn secret_hint(secret: Secret, place: anyhow::Result<crate::config::secrets::SecretPlace>) -> String {
    use crate::config::secrets::SecretPlace;
    let (what, key, credential) = secret.names();
    let place = match place {
        Ok(place) => place,
        Err(error) => {
            return format!("warning: cannot tell where the {what} is ({error:#}); keep it with the backup");
        }
    };
    let path = place.path().display();
    let from = match &place {
        SecretPlace::Configured(_) => key.to_owned(),
        SecretPlace::Credential(_) => format!("the credential {credential}"),
        SecretPlace::DataDir(_) => "in the data directory".to_owned(),
    };
    if place.path().exists() {
        format!("keep the {what} with it: {path} ({from})")
    } else {
        format!(
            "warning: the {what} should be {path} ({from}), but that file does not exist: run backup with the \
             configuration and credentials that `serve` uses, and keep the {what} it uses with the backup"
        )
    }
}

pub fn backup(beside: &Beside, dest: &Path, force: bool) -> anyhow::Result<Summary> {
    if !force && dest.exists() {
        anyhow::bail!("{} exists already: pass --force to replace it", dest.display());
    }
    let temporary = temporary_beside(dest)?;
    let result = copy_and_check(beside, &temporary).and_then(|summary| {
        if force {
            std::fs::rename(&temporary, dest)
        } else {
            // A hard link fails if DEST appeared meanwhile: never overwrite without --force.
            std::fs::hard_link(&temporary, dest).and_then(|()| std::fs::remove_file(&temporary))
        }
        .with_context(|| format!("cannot move the backup into place at {}", dest.display()))?;
        Ok(summary)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// A new, empty, 0600 file in DEST's directory (so the final move is a rename on one file system).
fn temporary_beside(dest: &Path) -> anyhow::Result<PathBuf> {
    let name = dest.file_name().with_context(|| format!("{} is not a file path", dest.display()))?;
    let dir = dest.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let temporary = dir.join(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    Ok(temporary)
}

fn copy_and_check(beside: &Beside, temporary: &Path) -> anyhow::Result<Summary> {
    let mut source = beside.reader()?;
    let copied = copy_checked(&mut source, temporary)?;
    let file = std::fs::File::open(temporary)?;
    file.sync_all().with_context(|| format!("cannot write {}", temporary.display()))?;
    let bytes = file.metadata()?.len();
    Ok(Summary { bytes, pending: copied.pending, confirmed: copied.confirmed, suppressions: copied.suppressions })
}
