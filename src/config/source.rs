//! Which configuration a command reads: `--config`, else `SIGNUPD_CONFIG`, else
//! [`DEFAULT_PATH`] when that file exists (what the Debian package installs), else the built-in
//! zero-setup defaults, and which `SIGNUPD_…` environment variables change it. Every command
//! that reads a configuration says both in one line on stderr, so a command run on a server to
//! troubleshoot it shows that it sees the server's configuration, never a demo, and that no
//! variable left in the shell (`SIGNUPD_STORAGE__DATA_DIR`) points it at another database.
//!
//! The line names the variables, never their values: a value may be the SMTP password
//! (`SIGNUPD_MAIL__SMTP__PASSWORD`).
//!
//! It decides only which file; reading it is [`super::Config::load`]'s.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use figment::providers::Env;

/// Where the package installs the configuration; read when neither `--config` nor
/// `SIGNUPD_CONFIG` names one.
pub const DEFAULT_PATH: &str = "/etc/signupd/signupd.toml";

/// The environment variable that names the configuration file when `--config` does not.
pub const ENVIRONMENT: &str = "SIGNUPD_CONFIG";

/// The prefix of the environment variables [`super::Config::load`] reads as configuration keys
/// (`SIGNUPD_MAIL__SMTP__HOST` is `mail.smtp.host`); [`ENVIRONMENT`] is not one.
pub const PREFIX: &str = "SIGNUPD_";

/// The configuration a command reads, and why that one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSource {
    file: ConfigFile,
    /// The names of the `SIGNUPD_…` variables that set a key, sorted.
    overrides: Vec<String>,
}

/// The file a command reads, and why that one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigFile {
    /// Named by `--config`.
    Flag(PathBuf),
    /// Named by the `SIGNUPD_CONFIG` environment variable.
    Environment(PathBuf),
    /// [`DEFAULT_PATH`], which exists.
    DefaultPath(PathBuf),
    /// No file: the zero-setup defaults (the demo list `default`).
    ZeroSetup,
}

impl ConfigSource {
    /// `--config` (`flag`), else `SIGNUPD_CONFIG` (`environment`; empty counts as unset), else
    /// [`DEFAULT_PATH`] when it exists, else the zero-setup defaults; with the names of the
    /// process's variables that set a key ([`environment`] reads them).
    pub fn resolve(flag: Option<PathBuf>, environment: Option<OsString>) -> Self {
        Self::resolve_with_default(flag, environment, Path::new(DEFAULT_PATH)).changed_by(overrides())
    }

    /// [`Self::resolve`] with the default path as a parameter and no variable, so tests never
    /// depend on the machine's `/etc` nor on the environment they run in.
    fn resolve_with_default(flag: Option<PathBuf>, environment: Option<OsString>, default: &Path) -> Self {
        Self { file: ConfigFile::resolve(flag, environment, default), overrides: Vec::new() }
    }

    /// The same file, changed by the variables `names`.
    fn changed_by(mut self, mut names: Vec<String>) -> Self {
        names.sort();
        names.dedup();
        self.overrides = names;
        self
    }

    /// The file to read; `None` for the zero-setup defaults.
    pub fn path(&self) -> Option<&Path> {
        self.file.path()
    }

    /// Which file, and why.
    pub fn file(&self) -> &ConfigFile {
        &self.file
    }

    /// The names of the `SIGNUPD_…` variables that change the configuration, sorted.
    pub fn overrides(&self) -> &[String] {
        &self.overrides
    }
}

/// The environment as [`super::Config::load`] reads it: every `SIGNUPD_…` variable (the prefix
/// in any case) but [`ENVIRONMENT`], `__` for nesting. One definition, so the configuration
/// line names exactly the variables the configuration takes.
pub fn environment() -> Env {
    // `SIGNUPD_CONFIG` names the file; it is not a key (DEPENDENCIES trap 7).
    Env::prefixed(PREFIX).ignore(&["config"]).split("__")
}

/// The names of the variables [`environment`] takes, as the operator writes them
/// (`SIGNUPD_STORAGE__DATA_DIR`): figment gives the key it made of each (`storage.data_dir`).
fn overrides() -> Vec<String> {
    environment()
        .iter()
        .map(|(key, _)| format!("{PREFIX}{}", key.as_str().replace('.', "__").to_ascii_uppercase()))
        .collect()
}

impl ConfigFile {
    fn resolve(flag: Option<PathBuf>, environment: Option<OsString>, default: &Path) -> Self {
        if let Some(path) = flag {
            return Self::Flag(path);
        }
        if let Some(path) = environment.filter(|value| !value.is_empty()) {
            return Self::Environment(PathBuf::from(path));
        }
        // Only a file that is certainly absent means "no configuration": one that cannot be
        // looked at (a directory the user may not enter) is read, and its error names it,
        // rather than a troubleshooting command silently running the demo.
        match default.try_exists() {
            Ok(false) => Self::ZeroSetup,
            Ok(true) | Err(_) => Self::DefaultPath(default.to_owned()),
        }
    }

    /// The file to read; `None` for the zero-setup defaults.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Self::Flag(path) | Self::Environment(path) | Self::DefaultPath(path) => Some(path),
            Self::ZeroSetup => None,
        }
    }
}

/// The line a command prints on stderr (after `signupd: `) and `serve` logs.
impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            ConfigFile::Flag(path) => write!(f, "configuration {} (from --config)", path.display())?,
            ConfigFile::Environment(path) => write!(f, "configuration {} (from SIGNUPD_CONFIG)", path.display())?,
            ConfigFile::DefaultPath(path) => write!(f, "configuration {} (the default path)", path.display())?,
            ConfigFile::ZeroSetup => write!(
                f,
                "no configuration file (no --config, no SIGNUPD_CONFIG, no {DEFAULT_PATH}): the zero-setup \
                 defaults (the demo list, mail written to ./data/mail, never sent)"
            )?,
        }
        if !self.overrides.is_empty() {
            write!(f, "; changed by the environment: {}", self.overrides.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_environment_and_the_default_path() {
        let dir = tempfile::tempdir().unwrap();
        let default = dir.path().join("signupd.toml");
        std::fs::write(&default, "").unwrap();
        let source =
            ConfigSource::resolve_with_default(Some("flag.toml".into()), Some("environment.toml".into()), &default);
        assert_eq!(*source.file(), ConfigFile::Flag("flag.toml".into()));
        assert_eq!(source.to_string(), "configuration flag.toml (from --config)");
    }

    #[test]
    fn the_environment_wins_over_the_default_path() {
        let dir = tempfile::tempdir().unwrap();
        let default = dir.path().join("signupd.toml");
        std::fs::write(&default, "").unwrap();
        let source = ConfigSource::resolve_with_default(None, Some("environment.toml".into()), &default);
        assert_eq!(*source.file(), ConfigFile::Environment("environment.toml".into()));
        assert_eq!(source.to_string(), "configuration environment.toml (from SIGNUPD_CONFIG)");
    }

    #[test]
    fn the_default_path_is_read_when_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let default = dir.path().join("signupd.toml");
        std::fs::write(&default, "").unwrap();
        let source = ConfigSource::resolve_with_default(None, None, &default);
        assert_eq!(*source.file(), ConfigFile::DefaultPath(default.clone()));
        assert_eq!(source.path(), Some(default.as_path()));
        assert_eq!(source.to_string(), format!("configuration {} (the default path)", default.display()));
    }

    #[test]
    fn an_empty_signupd_config_counts_as_unset() {
        let dir = tempfile::tempdir().unwrap();
        let default = dir.path().join("signupd.toml");
        std::fs::write(&default, "").unwrap();
        let source = ConfigSource::resolve_with_default(None, Some(OsString::new()), &default);
        assert_eq!(*source.file(), ConfigFile::DefaultPath(default));
    }

    #[test]
    fn without_any_file_the_zero_setup_defaults_apply_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let source = ConfigSource::resolve_with_default(None, None, &dir.path().join("signupd.toml"));
        assert_eq!(*source.file(), ConfigFile::ZeroSetup);
        assert_eq!(source.path(), None);
        let line = source.to_string();
        assert!(line.starts_with("no configuration file") && line.contains(DEFAULT_PATH), "{line}");
        assert!(line.contains("never sent"), "{line}");
    }

    #[test]
    fn a_default_path_that_cannot_be_looked_at_is_read_not_skipped() {
        // A path through a regular file: `try_exists` fails with "not a directory", which stands
        // for any default path the command cannot look at.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        let default = file.join("signupd.toml");
        let source = ConfigSource::resolve_with_default(None, None, &default);
        assert_eq!(*source.file(), ConfigFile::DefaultPath(default));
    }

    #[test]
    fn every_variable_that_sets_a_key_is_named_sorted_once_and_without_its_value() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["SIGNUPD_STORAGE__DATA_DIR", "SIGNUPD_MAIL__SMTP__PASSWORD", "SIGNUPD_STORAGE__DATA_DIR"];
        let source = ConfigSource::resolve_with_default(None, Some("environment.toml".into()), &dir.path().join("x"))
            .changed_by(names.map(str::to_owned).to_vec());
        assert_eq!(source.overrides(), ["SIGNUPD_MAIL__SMTP__PASSWORD", "SIGNUPD_STORAGE__DATA_DIR"]);
        assert_eq!(
            source.to_string(),
            "configuration environment.toml (from SIGNUPD_CONFIG); changed by the environment: \
             SIGNUPD_MAIL__SMTP__PASSWORD, SIGNUPD_STORAGE__DATA_DIR"
        );
        let plain = ConfigSource::resolve_with_default(None, None, &dir.path().join("x"));
        assert!(!plain.to_string().contains("environment:"), "{plain}");
    }
}
