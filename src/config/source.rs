//! Which configuration a command reads: `--config`, else `SIGNUPD_CONFIG`, else
//! [`DEFAULT_PATH`] when that file exists (what the Debian package installs), else the built-in
//! zero-setup defaults. Every command that reads a configuration says which in one line on
//! stderr, so a command run on a server to troubleshoot it shows that it sees the server's
//! configuration, never a demo.
//!
//! It decides only which file; reading it is [`super::Config::load`]'s.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where the package installs the configuration; read when neither `--config` nor
/// `SIGNUPD_CONFIG` names one.
pub const DEFAULT_PATH: &str = "/etc/signupd/signupd.toml";

/// The environment variable that names the configuration file when `--config` does not.
pub const ENVIRONMENT: &str = "SIGNUPD_CONFIG";

/// The configuration a command reads, and why that one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
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
    /// [`DEFAULT_PATH`] when it exists, else the zero-setup defaults.
    pub fn resolve(flag: Option<PathBuf>, environment: Option<OsString>) -> Self {
        Self::resolve_with_default(flag, environment, Path::new(DEFAULT_PATH))
    }

    /// [`Self::resolve`] with the default path as a parameter, so tests never depend on the
    /// machine's `/etc`.
    fn resolve_with_default(flag: Option<PathBuf>, environment: Option<OsString>, default: &Path) -> Self {
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
        match self {
            Self::Flag(path) => write!(f, "configuration {} (from --config)", path.display()),
            Self::Environment(path) => write!(f, "configuration {} (from SIGNUPD_CONFIG)", path.display()),
            Self::DefaultPath(path) => write!(f, "configuration {} (the default path)", path.display()),
            Self::ZeroSetup => write!(
                f,
                "no configuration file (no --config, no SIGNUPD_CONFIG, no {DEFAULT_PATH}): the zero-setup \
                 defaults (the demo list, mail written to ./data/mail, never sent)"
            ),
        }
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
        assert_eq!(source, ConfigSource::Flag("flag.toml".into()));
        assert_eq!(source.to_string(), "configuration flag.toml (from --config)");
    }

    #[test]
    fn the_environment_wins_over_the_default_path() {
        let dir = tempfile::tempdir().unwrap();
        let default = dir.path().join("signupd.toml");
        std::fs::write(&default, "").unwrap();
        let source = ConfigSource::resolve_with_default(None, Some("environment.toml".into()), &default);
        assert_eq!(source, ConfigSource::Environment("environment.toml".into()));
        assert_eq!(source.to_string(), "configuration environment.toml (from SIGNUPD_CONFIG)");
    }

    #[test]
    fn the_default_path_is_read_when_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let default = dir.path().join("signupd.toml");
        std::fs::write(&default, "").unwrap();
        let source = ConfigSource::resolve_with_default(None, None, &default);
        assert_eq!(source, ConfigSource::DefaultPath(default.clone()));
        assert_eq!(source.path(), Some(default.as_path()));
        assert_eq!(source.to_string(), format!("configuration {} (the default path)", default.display()));
    }

    #[test]
    fn an_empty_signupd_config_counts_as_unset() {
        let dir = tempfile::tempdir().unwrap();
        let default = dir.path().join("signupd.toml");
        std::fs::write(&default, "").unwrap();
        let source = ConfigSource::resolve_with_default(None, Some(OsString::new()), &default);
        assert_eq!(source, ConfigSource::DefaultPath(default));
    }

    #[test]
    fn without_any_file_the_zero_setup_defaults_apply_and_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let source = ConfigSource::resolve_with_default(None, None, &dir.path().join("signupd.toml"));
        assert_eq!(source, ConfigSource::ZeroSetup);
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
        assert_eq!(source, ConfigSource::DefaultPath(default));
    }
}
