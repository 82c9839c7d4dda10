//! The two secrets: the token signing secret (rotatable, with older verify-only
//! secrets) and the hash key (never rotated; it keys suppression and rate-limit hashes).
//!
//! Each is looked up in order: the configured file, then `$CREDENTIALS_DIRECTORY/<name>`
//! (systemd `LoadCredential=`), then `<data_dir>/<name>`, which is generated on first start.
//! Loading is split in two so a bad start writes nothing: [`SecretsPlan::resolve`] only reads and
//! checks; [`SecretsPlan::materialize`] creates the missing generated files once every other
//! check has passed.
//!
//! A secret file holds at least 32 bytes; one trailing newline is ignored, so
//! `signupd gen-secret > file` works. Generated files hold 64 base64url characters (48 random
//! bytes from ring), mode 0600, in a directory created 0700.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

use crate::config::{Config, REDACTED};

/// Shortest secret accepted: 256 bits, the HMAC-SHA256 key size.
pub const MIN_SECRET_BYTES: usize = 32;
const GENERATED_RANDOM_BYTES: usize = 48;

/// Key material. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// Key material from bytes already checked elsewhere (tests, derived keys).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    pub fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// `$CREDENTIALS_DIRECTORY`: where systemd's `LoadCredential=` puts secrets, if it does.
pub fn credentials_dir_from_env() -> Option<PathBuf> {
    std::env::var_os("CREDENTIALS_DIRECTORY").map(PathBuf::from)
}

/// The loaded secrets.
#[derive(Debug, Clone)]
pub struct Secrets {
    /// Signs new unsubscribe tokens.
    pub token_secret: Secret,
    /// Older signing secrets: links they signed still verify.
    pub verify_only: Vec<Secret>,
    /// Keys suppression and rate-limit hashes; never rotated.
    pub hash_key: Secret,
}

/// Where one secret comes from, decided without writing anything.
#[derive(Debug)]
enum Resolved {
    Loaded(Secret),
    /// No configured file and no credential: generate this file (or read it if it appeared).
    Generate(PathBuf),
}

/// The secrets as far as they can be known without writing.
#[derive(Debug)]
pub struct SecretsPlan {
    token_secret: Resolved,
    verify_only: Vec<Secret>,
    hash_key: Resolved,
}

impl SecretsPlan {
    /// Reads and checks every configured secret file and systemd credential.
    /// `credentials_dir` is `$CREDENTIALS_DIRECTORY`, passed in so tests need not set it.
    pub fn resolve(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Self> {
        let data_dir = &config.storage.data_dir;
        let token_secret = resolve_one(
            "secrets.token_secret_file",
            config.secrets.token_secret_file.as_deref(),
            credentials_dir.map(|dir| dir.join("token_secret")),
            data_dir.join("token_secret"),
        )?;
        let hash_key = resolve_one(
            "secrets.hash_key_file",
            config.secrets.hash_key_file.as_deref(),
            credentials_dir.map(|dir| dir.join("hash_key")),
            data_dir.join("hash_key"),
        )?;
        let verify_only = config
            .secrets
            .verify_only_secret_files
            .iter()
            .enumerate()
            .map(|(i, path)| read_secret(path).with_context(|| format!("secrets.verify_only_secret_files[{i}]")))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { token_secret, verify_only, hash_key })
    }

    /// Every secret, but only if all exist already: for commands that must use the secrets
    /// `serve` created, never new ones.
    pub fn existing(self) -> anyhow::Result<Secrets> {
        let exists = |resolved: Resolved, name: &str| match resolved {
            Resolved::Loaded(secret) => Ok(secret),
            Resolved::Generate(path) => Err(anyhow::anyhow!(
                "the {name} {} does not exist: run this command with the configuration (and $CREDENTIALS_DIRECTORY) that `serve` uses",
                path.display()
            )),
        };
        Ok(Secrets {
            token_secret: exists(self.token_secret, "token secret")?,
            verify_only: self.verify_only,
            hash_key: exists(self.hash_key, "hash key")?,
        })
    }

    /// Creates the generated secret files that do not exist yet, then returns every secret.
    pub fn materialize(self) -> anyhow::Result<Secrets> {
        Ok(Secrets {
            token_secret: materialize_one(self.token_secret).context("token secret")?,
            verify_only: self.verify_only,
            hash_key: materialize_one(self.hash_key).context("hash key")?,
        })
    }
}

fn resolve_one(
    key: &str,
    configured: Option<&Path>,
    credential: Option<PathBuf>,
    generated: PathBuf,
) -> anyhow::Result<Resolved> {
    if let Some(path) = configured {
        return read_secret(path).with_context(|| key.to_owned()).map(Resolved::Loaded);
    }
    if let Some(path) = credential.filter(|path| path.exists()) {
        return read_secret(&path).context("systemd credential").map(Resolved::Loaded);
    }
    // A path that cannot even be inspected (its directory missing or not a directory) is left
    // to generate: the data directory check that follows names the real problem.
    if generated.exists() { read_secret(&generated).map(Resolved::Loaded) } else { Ok(Resolved::Generate(generated)) }
}

fn materialize_one(resolved: Resolved) -> anyhow::Result<Secret> {
    match resolved {
        Resolved::Loaded(secret) => Ok(secret),
        Resolved::Generate(path) => generate_file(&path),
    }
}

/// Reads a secret file, ignoring one trailing newline; refuses one shorter than 32 bytes.
pub fn read_secret(path: &Path) -> anyhow::Result<Secret> {
    let mut bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.ends_with(b"\n") {
        bytes.pop();
        if bytes.ends_with(b"\r") {
            bytes.pop();
        }
    }
    if bytes.len() < MIN_SECRET_BYTES {
        anyhow::bail!(
            "{} holds {} bytes; a secret needs at least {MIN_SECRET_BYTES} (make one with `signupd gen-secret`)",
            path.display(),
            bytes.len()
        );
    }
    Ok(Secret(bytes))
}

/// A new secret as text: 48 random bytes, base64url (64 characters).
pub fn generate_secret_text() -> anyhow::Result<String> {
    let mut bytes = [0u8; GENERATED_RANDOM_BYTES];
    SystemRandom::new().fill(&mut bytes).map_err(|_| anyhow::anyhow!("the system random number generator failed"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// Creates `path` (0600) with a new secret, its directory 0700 if missing. If another process
/// created it first, that one wins and is read back.
fn generate_file(path: &Path) -> anyhow::Result<Secret> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let text = generate_secret_text()?;
    let mut file = match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => return read_secret(path),
        Err(error) => return Err(error).with_context(|| format!("cannot create {}", path.display())),
    };
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    // The new directory entry must survive a power cut too, or tokens signed with this secret
    // would stop verifying after a reboot.
    if let Some(dir) = path.parent() {
        fs::File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("cannot sync {}", dir.display()))?;
    }
    tracing::info!(path = %path.display(), "generated a new secret file");
    Ok(Secret(text.into_bytes()))
}

/// Creates `dir` and its missing parents with mode 0700. An existing directory is left as it is.
pub fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("cannot create directory {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn debug_never_shows_the_secret() {
        let secret = Secret(b"very-secret-value-that-is-long-enough".to_vec());
        assert_eq!(format!("{secret:?}"), "[redacted]");
    }

    #[test]
    fn generated_files_are_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/token_secret");
        let first = generate_file(&path).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(first.expose().len(), 64);
        assert_eq!(generate_file(&path).unwrap(), first, "an existing file wins");
    }

    #[test]
    fn short_secrets_are_refused_and_one_newline_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let short = dir.path().join("short");
        fs::write(&short, "x".repeat(31) + "\n").unwrap();
        let error = read_secret(&short).unwrap_err().to_string();
        assert!(error.contains("holds 31 bytes"), "{error}");
        let exact = dir.path().join("exact");
        fs::write(&exact, "y".repeat(32) + "\r\n").unwrap();
        assert_eq!(read_secret(&exact).unwrap().expose(), "y".repeat(32).as_bytes());
    }
}
