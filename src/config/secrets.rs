//! The two secrets — the token signing secret (rotatable, with older verify-only secrets) and
//! the hash key (never rotated; it keys suppression and rate-limit hashes) — and the one way
//! every credential is found.
//!
//! **The credentials directory** ([`credentials_dir`]) is `$CREDENTIALS_DIRECTORY` when it is
//! set (systemd's `LoadCredential=`), else the directory `credentials/` beside the configuration
//! file, when it exists: so a command run by hand on a packaged machine (`--config
//! /etc/signupd/signupd.toml`) finds `/etc/signupd/credentials/` as the unit does. Never a fixed
//! path: the zero-setup demo and the tests must not pick up a machine's installed secrets.
//!
//! **A credential in it** ([`find_credential`]) is found under the name systemd gives it
//! (`webhook_crm`, `smtp_password`), then, for the two the unit loads as directories (`smtp`,
//! `webhook`: systemd flattens `webhook/crm` into `webhook_crm`), under the name the operator
//! sees on disk (`webhook/crm`). Both present with different contents is an error naming both.
//!
//! Each secret is looked up in order: the configured file, then the credential `<name>`, then
//! `<data_dir>/<name>`, which is generated on first start. Loading is split in two so a bad start
//! writes nothing: [`SecretsPlan::resolve`] only reads and checks; [`SecretsPlan::materialize`]
//! creates the missing generated files once every other check has passed.
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

/// The directory looked for beside the configuration file when `$CREDENTIALS_DIRECTORY` is unset.
pub const CREDENTIALS_BESIDE_CONFIG: &str = "credentials";

/// Credentials the packaged unit loads as a whole directory (`LoadCredential=webhook:…/webhook`):
/// systemd hands the file `webhook/crm` over as `webhook_crm`.
const DIRECTORY_CREDENTIALS: &[&str] = &["smtp", "webhook", "destination", "relay", "api_token"];

/// Where credentials are looked for: `$CREDENTIALS_DIRECTORY` when set, else `credentials/`
/// beside `config_file` when that directory exists, else nowhere.
pub fn credentials_dir(config_file: Option<&Path>) -> Option<PathBuf> {
    choose_credentials_dir(std::env::var_os("CREDENTIALS_DIRECTORY"), config_file)
}

fn choose_credentials_dir(from_env: Option<std::ffi::OsString>, config_file: Option<&Path>) -> Option<PathBuf> {
    if let Some(dir) = from_env.filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    // `signupd.toml` has the parent "", so `credentials` is then taken relative to the working
    // directory, like the file itself.
    let beside = config_file?.parent()?.join(CREDENTIALS_BESIDE_CONFIG);
    beside.is_dir().then_some(beside)
}

/// Where credential `name` would be in `dir`: the name systemd gives it, and for the credentials
/// the unit loads from a directory, the path below that directory (`webhook/crm`).
fn credential_paths(dir: &Path, name: &str) -> (PathBuf, Option<PathBuf>) {
    // By prefix, not at the first `_`: the id `api_token` has one of its own.
    let nested = DIRECTORY_CREDENTIALS
        .iter()
        .find_map(|id| Some((id, name.strip_prefix(id)?.strip_prefix('_')?)))
        .filter(|(_, file)| !file.is_empty())
        .map(|(id, file)| dir.join(id).join(file));
    (dir.join(name), nested)
}

/// Finds credential `name` (`token_secret`, `smtp_password`, `webhook_crm`) in `dir`: first as
/// systemd provides it (`dir/webhook_crm`), then, for a credential the unit loads from a
/// directory, as the operator keeps it (`dir/webhook/crm`). `None` when neither exists. Both
/// existing with different contents (line breaks at the end aside) is an error naming both, so
/// nobody edits the one that is not used. A file that cannot be inspected is an error too, not a
/// missing credential: a command run without root must not fall back to another secret.
pub fn find_credential(dir: &Path, name: &str) -> anyhow::Result<Option<PathBuf>> {
    let exists = |path: &Path| path.try_exists().with_context(|| format!("cannot read {}", path.display()));
    let (flat, nested) = credential_paths(dir, name);
    let nested = match nested {
        Some(path) if exists(&path)? => Some(path),
        _ => None,
    };
    match (exists(&flat)?, nested) {
        (false, nested) => Ok(nested),
        (true, None) => Ok(Some(flat)),
        (true, Some(nested)) => {
            let read = |path: &Path| fs::read(path).with_context(|| format!("cannot read {}", path.display()));
            let (a, b) = (read(&flat)?, read(&nested)?);
            let content = |bytes: &[u8]| {
                let end = bytes.iter().rposition(|byte| !matches!(byte, b'\r' | b'\n')).map_or(0, |at| at + 1);
                bytes[..end].to_vec()
            };
            if content(&a) != content(&b) {
                anyhow::bail!(
                    "credential {name}: {} and {} both exist and differ; keep only one of them",
                    flat.display(),
                    nested.display()
                );
            }
            Ok(Some(flat))
        }
    }
}

/// Why credential `name` was not found, naming the directory looked in (for error messages).
pub fn missing_credential(credentials_dir: Option<&Path>, name: &str) -> String {
    match credentials_dir {
        None => format!(
            "there is no credentials directory to hold {name} ($CREDENTIALS_DIRECTORY is not set and there is no \
             {CREDENTIALS_BESIDE_CONFIG}/ directory beside the configuration file)"
        ),
        Some(dir) => match credential_paths(dir, name) {
            (flat, Some(nested)) => {
                format!(
                    "neither {} nor {} exists (credentials directory {})",
                    flat.display(),
                    nested.display(),
                    dir.display()
                )
            }
            (flat, None) => format!("{} does not exist (credentials directory {})", flat.display(), dir.display()),
        },
    }
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
    Loaded {
        secret: Secret,
        path: PathBuf,
    },
    /// No configured file and no credential: generate this file (or read it if it appeared).
    Generate(PathBuf),
}

impl Resolved {
    fn path(&self) -> &Path {
        match self {
            Self::Loaded { path, .. } | Self::Generate(path) => path,
        }
    }
}

/// Where a secret lives, by the lookup order; nothing read but what tells two copies apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretPlace {
    /// The configured file (`secrets.hash_key_file`, `secrets.token_secret_file`).
    Configured(PathBuf),
    /// The credential in the credentials directory.
    Credential(PathBuf),
    /// `<data_dir>/<name>`, generated by `serve` when missing.
    DataDir(PathBuf),
}

impl SecretPlace {
    pub fn path(&self) -> &Path {
        match self {
            Self::Configured(path) | Self::Credential(path) | Self::DataDir(path) => path,
        }
    }
}

/// The two secrets by name: the configuration key, the credential and data-directory file name.
#[derive(Debug, Clone, Copy)]
struct Named {
    key: &'static str,
    name: &'static str,
    /// In messages: "the hash key".
    what: &'static str,
}

const TOKEN_SECRET: Named = Named { key: "secrets.token_secret_file", name: "token_secret", what: "token secret" };
const HASH_KEY: Named = Named { key: "secrets.hash_key_file", name: "hash_key", what: "hash key" };

/// Where the hash key of `config` lives, with the credentials in `credentials_dir`: for the
/// hints that tell an operator which file to keep with a backup.
pub fn hash_key_place(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<SecretPlace> {
    place(HASH_KEY, config.secrets.hash_key_file.as_deref(), credentials_dir, &config.storage.data_dir)
}

/// Where the token secret is, as `serve` would find it (like [`hash_key_place`]).
pub fn token_secret_place(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<SecretPlace> {
    place(TOKEN_SECRET, config.secrets.token_secret_file.as_deref(), credentials_dir, &config.storage.data_dir)
}

fn place(
    secret: Named,
    configured: Option<&Path>,
    credentials_dir: Option<&Path>,
    data_dir: &Path,
) -> anyhow::Result<SecretPlace> {
    if let Some(path) = configured {
        return Ok(SecretPlace::Configured(path.to_owned()));
    }
    if let Some(dir) = credentials_dir
        && let Some(path) = find_credential(dir, secret.name)?
    {
        return Ok(SecretPlace::Credential(path));
    }
    Ok(SecretPlace::DataDir(data_dir.join(secret.name)))
}

/// The secrets as far as they can be known without writing.
#[derive(Debug)]
pub struct SecretsPlan {
    token_secret: Resolved,
    verify_only: Vec<Secret>,
    hash_key: Resolved,
    /// Where credentials were looked for, for the messages of [`SecretsPlan::existing`].
    credentials_dir: Option<PathBuf>,
}

impl SecretsPlan {
    /// Reads and checks every configured secret file and credential. `credentials_dir` is
    /// [`credentials_dir`]'s answer, passed in so tests need not set the environment.
    pub fn resolve(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Self> {
        let data_dir = &config.storage.data_dir;
        let token_secret = resolve_one(
            TOKEN_SECRET,
            place(TOKEN_SECRET, config.secrets.token_secret_file.as_deref(), credentials_dir, data_dir)?,
        )?;
        let hash_key = resolve_one(
            HASH_KEY,
            place(HASH_KEY, config.secrets.hash_key_file.as_deref(), credentials_dir, data_dir)?,
        )?;
        let verify_only = config
            .secrets
            .verify_only_secret_files
            .iter()
            .enumerate()
            .map(|(i, path)| read_secret(path).with_context(|| format!("secrets.verify_only_secret_files[{i}]")))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { token_secret, verify_only, hash_key, credentials_dir: credentials_dir.map(Path::to_owned) })
    }

    /// The file the token secret was read from, or will be generated as.
    pub fn token_secret_path(&self) -> &Path {
        self.token_secret.path()
    }

    /// The file the hash key was read from, or will be generated as.
    pub fn hash_key_path(&self) -> &Path {
        self.hash_key.path()
    }

    /// Every secret, but only if all exist already: for commands that must use the secrets
    /// `serve` created, never new ones.
    pub fn existing(self) -> anyhow::Result<Secrets> {
        let credentials_dir = self.credentials_dir.as_deref();
        let exists = |resolved: Resolved, secret: Named| match resolved {
            Resolved::Loaded { secret, .. } => Ok(secret),
            Resolved::Generate(path) => Err(anyhow::anyhow!(
                "the {} {} does not exist, {} is not set, and {}: run this command with the configuration and \
                 credentials that `serve` uses",
                secret.what,
                path.display(),
                secret.key,
                missing_credential(credentials_dir, secret.name)
            )),
        };
        Ok(Secrets {
            token_secret: exists(self.token_secret, TOKEN_SECRET)?,
            verify_only: self.verify_only,
            hash_key: exists(self.hash_key, HASH_KEY)?,
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

fn resolve_one(secret: Named, place: SecretPlace) -> anyhow::Result<Resolved> {
    match place {
        SecretPlace::Configured(path) => {
            let secret = read_secret(&path).with_context(|| secret.key.to_owned())?;
            Ok(Resolved::Loaded { secret, path })
        }
        SecretPlace::Credential(path) => {
            let secret = read_secret(&path).with_context(|| format!("credential {}", secret.name))?;
            Ok(Resolved::Loaded { secret, path })
        }
        // A path that cannot even be inspected (its directory missing or not a directory) is left
        // to generate: the data directory check that follows names the real problem.
        SecretPlace::DataDir(path) if path.exists() => Ok(Resolved::Loaded { secret: read_secret(&path)?, path }),
        SecretPlace::DataDir(path) => Ok(Resolved::Generate(path)),
    }
}

fn materialize_one(resolved: Resolved) -> anyhow::Result<Secret> {
    match resolved {
        Resolved::Loaded { secret, .. } => Ok(secret),
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

    /// A credentials directory holding `files` (relative path, contents).
    fn credentials(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, contents) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, contents).unwrap();
        }
        dir
    }

    #[test]
    fn a_credential_is_found_flattened_or_in_its_directory_and_two_different_copies_are_refused() {
        struct Case {
            name: &'static str,
            files: &'static [(&'static str, &'static str)],
            credential: &'static str,
            /// The file found, relative to the directory; `Err` holds what the error must say.
            expected: Result<Option<&'static str>, &'static str>,
        }
        let cases = [
            Case {
                name: "flattened only (what systemd provides)",
                files: &[("webhook_crm", "whsec_a")],
                credential: "webhook_crm",
                expected: Ok(Some("webhook_crm")),
            },
            Case {
                name: "directory only (what the operator sees on disk)",
                files: &[("webhook/crm", "whsec_a")],
                credential: "webhook_crm",
                expected: Ok(Some("webhook/crm")),
            },
            Case {
                name: "both, equal but for the line break",
                files: &[("smtp_password", "pw\n"), ("smtp/password", "pw")],
                credential: "smtp_password",
                expected: Ok(Some("smtp_password")),
            },
            Case {
                name: "both, different",
                files: &[("webhook_crm", "whsec_a"), ("webhook/crm", "whsec_b")],
                credential: "webhook_crm",
                expected: Err("both exist and differ"),
            },
            Case {
                name: "neither",
                files: &[("webhook/other", "whsec_a")],
                credential: "webhook_crm",
                expected: Ok(None),
            },
            Case {
                name: "a plain credential has no directory form",
                files: &[("hash/key", "k")],
                credential: "hash_key",
                expected: Ok(None),
            },
        ];
        for case in cases {
            let dir = credentials(case.files);
            let found = find_credential(dir.path(), case.credential);
            match (found, case.expected) {
                (Ok(found), Ok(expected)) => {
                    assert_eq!(found, expected.map(|path| dir.path().join(path)), "{}", case.name);
                }
                (Err(error), Err(expected)) => {
                    let error = error.to_string();
                    assert!(error.contains(expected), "{}: {error}", case.name);
                    for (path, contents) in case.files {
                        assert!(error.contains(&dir.path().join(path).display().to_string()), "{}: {error}", case.name);
                        assert!(!error.contains(contents), "{}: the contents in {error}", case.name);
                    }
                }
                (found, expected) => panic!("{}: found {found:?}, expected {expected:?}", case.name),
            }
        }
    }

    #[test]
    fn a_missing_credential_names_the_directory_and_both_places_looked_at() {
        let dir = credentials(&[]);
        let message = missing_credential(Some(dir.path()), "webhook_crm");
        assert!(message.contains(&dir.path().join("webhook_crm").display().to_string()), "{message}");
        assert!(message.contains(&dir.path().join("webhook/crm").display().to_string()), "{message}");
        let message = missing_credential(None, "smtp_password");
        assert!(message.contains("$CREDENTIALS_DIRECTORY") && message.contains("credentials/"), "{message}");
    }

    #[test]
    fn the_credentials_directory_is_the_environments_else_the_one_beside_the_config_file() {
        let dir = credentials(&[("etc/credentials/token_secret", "t")]);
        let config = dir.path().join("etc/signupd.toml");
        let beside = dir.path().join("etc/credentials");
        let from_env = Some(std::ffi::OsString::from("/run/credentials/signupd.service"));
        assert_eq!(
            choose_credentials_dir(from_env, Some(&config)),
            Some(PathBuf::from("/run/credentials/signupd.service")),
            "the environment wins"
        );
        assert_eq!(choose_credentials_dir(None, Some(&config)), Some(beside.clone()));
        assert_eq!(choose_credentials_dir(Some("".into()), Some(&config)), Some(beside), "empty is unset");
        assert_eq!(choose_credentials_dir(None, Some(&dir.path().join("signupd.toml"))), None, "no credentials/ there");
        assert_eq!(choose_credentials_dir(None, None), None, "the zero-setup demo reads no machine's secrets");
    }

    #[test]
    fn the_directory_credentials_are_the_ones_the_unit_loads_as_directories() {
        let unit = include_str!("../../packaging/signupd.service");
        for id in DIRECTORY_CREDENTIALS {
            let line = format!("LoadCredential={id}:/etc/signupd/credentials/{id}\n");
            assert!(unit.contains(&line), "the unit does not load {id}/ as a directory");
        }
        for name in [TOKEN_SECRET.name, HASH_KEY.name] {
            let line = format!("LoadCredential={name}:/etc/signupd/credentials/{name}\n");
            assert!(unit.contains(&line), "the unit does not load the file {name}");
        }
    }

    #[test]
    fn the_place_of_a_secret_follows_the_lookup_order() {
        let key = "h".repeat(40);
        let creds = credentials(&[("hash_key", key.as_str())]);
        let data = tempfile::tempdir().unwrap();
        let configured = Path::new("/etc/signupd/hash.key");
        let data_dir = data.path();
        assert_eq!(
            place(HASH_KEY, Some(configured), Some(creds.path()), data_dir).unwrap(),
            SecretPlace::Configured(configured.to_owned())
        );
        assert_eq!(
            place(HASH_KEY, None, Some(creds.path()), data_dir).unwrap(),
            SecretPlace::Credential(creds.path().join("hash_key"))
        );
        assert_eq!(place(HASH_KEY, None, None, data_dir).unwrap(), SecretPlace::DataDir(data_dir.join("hash_key")));
    }
}
