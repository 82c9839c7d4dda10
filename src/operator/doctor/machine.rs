//! The machine: the data directory on a local disk with room to grow, secrets only the service
//! can read, and a database that is whole and of this version.
//!
//! A secret's mode is checked wherever the secret is: the files the configuration names (the
//! secrets, the SMTP password, API tokens, webhook, destination and relay credentials, the DKIM
//! key) and every file of the credentials directory, where `smtp/password` and its kind live
//! when no key names them.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::Check;
use crate::config::Config;

const AREA: &str = "machine";

/// Free space under which the data directory is a warning, and a problem.
const LOW_SPACE: u64 = 1 << 30;
const NO_SPACE: u64 = 100 << 20;

pub fn checks(config: &Config, credentials_dir: Option<&Path>) -> Vec<Check> {
    let mut checks = vec![data_dir(&config.storage.data_dir)];
    checks.extend(secrets(config, credentials_dir));
    checks.push(database(&config.storage.database_path()));
    checks
}

/// The data directory (or, before the first start, the nearest folder above it that exists):
/// its filesystem and its free space.
fn data_dir(dir: &Path) -> Check {
    let name = format!("data directory {}", dir.display());
    let Some(existing) = dir.ancestors().find(|path| path.exists()) else {
        return Check::problem(AREA, name, "no folder of the path exists", "check storage.data_dir");
    };
    let filesystem = match rustix::fs::statfs(existing) {
        Ok(stat) => stat,
        Err(error) => {
            return Check::problem(
                AREA,
                name,
                format!("cannot read its filesystem ({error})"),
                "check storage.data_dir",
            );
        }
    };
    #[allow(clippy::cast_sign_loss, reason = "a magic number is a bit pattern, whatever the field's sign")]
    let kind = filesystem.f_type as u32;
    if let Some(network) = network_filesystem(kind) {
        return Check::problem(
            AREA,
            name,
            format!("it is on {network}, a network filesystem"),
            "move storage.data_dir to a local disk: SQLite's locking and WAL need one, and a network filesystem can corrupt the database",
        );
    }
    let free = match rustix::fs::statvfs(existing) {
        Ok(stat) => stat.f_bavail.saturating_mul(stat.f_frsize),
        Err(error) => {
            return Check::warning(
                AREA,
                name,
                format!("cannot read its free space ({error})"),
                "check the disk with df",
            );
        }
    };
    let saw = format!(
        "on a local filesystem, {} free{}",
        human_bytes(free),
        if existing == dir { String::new() } else { format!(" (not created yet; {} exists)", existing.display()) }
    );
    match free {
        free if free < NO_SPACE => Check::problem(AREA, name, saw, "free disk space: a full disk stops every signup"),
        free if free < LOW_SPACE => Check::warning(AREA, name, saw, "free disk space before it runs out"),
        _ => Check::ok(AREA, name, saw),
    }
}

/// Which network filesystem a statfs magic number (`f_type`) is, if it is one.
pub fn network_filesystem(kind: u32) -> Option<&'static str> {
    use linux_raw_sys::general as magic;
    let known = [
        (magic::NFS_SUPER_MAGIC, "NFS"),
        (magic::SMB_SUPER_MAGIC, "SMB"),
        (magic::SMB2_SUPER_MAGIC, "SMB"),
        (magic::CIFS_SUPER_MAGIC, "CIFS"),
        (magic::FUSE_SUPER_MAGIC, "FUSE (sshfs, rclone, and their kind)"),
        (magic::V9FS_MAGIC, "9P (a virtual machine's shared folder)"),
        (magic::CEPH_SUPER_MAGIC, "Ceph"),
        (magic::AFS_SUPER_MAGIC, "AFS"),
    ];
    known.iter().find(|(number, _)| *number == kind).map(|(_, name)| *name)
}

/// The secrets' files: nobody but the service may read them.
fn secrets(config: &Config, credentials_dir: Option<&Path>) -> Vec<Check> {
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    match crate::config::secrets::SecretsPlan::resolve(config, credentials_dir) {
        Ok(plan) => {
            files.push(("token secret".into(), plan.token_secret_path().to_owned()));
            files.push(("hash key".into(), plan.hash_key_path().to_owned()));
        }
        Err(error) => {
            return vec![Check::problem(
                AREA,
                "secrets",
                format!("{error:#}"),
                "fix the secrets' files as the error says",
            )];
        }
    }
    let configured = [("SMTP password", config.mail.smtp.password_file.as_ref())]
        .into_iter()
        .chain(config.mail.dkim.as_ref().map(|dkim| ("DKIM key", Some(&dkim.private_key_file))))
        .chain(config.api_tokens.iter().map(|token| ("API token", token.token_file.as_ref())))
        .chain(config.webhooks.iter().map(|hook| ("webhook secret", hook.secret_file.as_ref())))
        .chain(
            config
                .destinations
                .iter()
                .map(|destination| ("destination credential", destination.credential_file.as_ref())),
        )
        .chain(config.relays.iter().map(|relay| ("relay credential", relay.credential_file.as_ref())));
    for (what, path) in configured {
        if let Some(path) = path {
            files.push((what.into(), path.clone()));
        }
    }
    if let Some(dir) = credentials_dir {
        files.extend(credential_files(dir).into_iter().map(|path| ("credential".to_owned(), path)));
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|(_, path)| seen.insert(path.clone()));
    files
        .into_iter()
        .map(|(what, path)| {
            let name = format!("{what} {}", path.display());
            match std::fs::metadata(&path) {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    Check::ok(AREA, name, "not there yet: serve makes it, readable by the service only")
                }
                Err(error) => {
                    Check::problem(AREA, name, format!("cannot be read ({error})"), "check its owner and mode")
                }
                Ok(metadata) => {
                    let mode = metadata.permissions().mode() & 0o777;
                    if mode & 0o077 == 0 {
                        Check::ok(AREA, name, format!("mode {mode:04o}"))
                    } else {
                        Check::problem(
                            AREA,
                            name,
                            format!("mode {mode:04o}: others on the machine can read it"),
                            format!("chmod 600 {}", path.display()),
                        )
                    }
                }
            }
        })
        .collect()
}

/// Every file in the credentials directory `dir` and the folders below it (the unit loads
/// `smtp/`, `webhook/`, … as folders), in name order; symbolic links are followed to a file but
/// never into a folder.
fn credential_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() && depth < 2 => folders.push((path, depth + 1)),
                Ok(kind) if kind.is_file() || (kind.is_symlink() && path.is_file()) => files.push(path),
                _ => {}
            }
        }
    }
    files.sort();
    files
}

/// The database: whole (`PRAGMA quick_check`) and of a schema this signupd knows, read-only.
fn database(path: &Path) -> Check {
    let name = format!("database {}", path.display());
    if !path.exists() {
        return Check::ok(AREA, name, "not there yet: serve makes it on its first start");
    }
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = match rusqlite::Connection::open_with_flags(path, flags) {
        Ok(conn) => conn,
        Err(error) => {
            return Check::problem(AREA, name, format!("cannot be opened ({error})"), "check its owner and mode");
        }
    };
    let _ = conn.busy_timeout(std::time::Duration::from_secs(5));
    let quick_check: Result<String, _> = conn.query_row("PRAGMA quick_check", [], |row| row.get(0));
    let version = crate::storage::migrations::schema_version(&conn);
    let latest = crate::storage::migrations::LATEST_VERSION;
    match (quick_check, version) {
        (Err(error), _) => {
            Check::problem(AREA, name, format!("cannot be checked ({error})"), "restore it from a backup")
        }
        (Ok(answer), _) if answer != "ok" => Check::problem(
            AREA,
            name,
            format!("PRAGMA quick_check found damage: {}", answer.lines().next().unwrap_or_default()),
            "stop signupd and restore the database from a backup (docs/operations.md, backups)",
        ),
        (Ok(_), Err(error)) => {
            Check::problem(AREA, name, format!("its schema cannot be read ({error})"), "restore it from a backup")
        }
        (Ok(_), Ok(version)) if version > latest => Check::problem(
            AREA,
            name,
            format!("schema version {version}, newer than this signupd's {latest}"),
            "run the signupd that made it, or restore a backup from before the upgrade",
        ),
        (Ok(_), Ok(version)) if version < latest => Check::warning(
            AREA,
            name,
            format!("whole; schema version {version}, this signupd's is {latest}"),
            "serve migrates it on its next start (signupd migrate does it now)",
        ),
        (Ok(_), Ok(version)) => Check::ok(AREA, name, format!("whole (quick_check), schema version {version}")),
    }
}

fn human_bytes(bytes: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if bytes >= GIB { format!("{:.1} GiB", bytes as f64 / GIB as f64) } else { format!("{} MiB", bytes / MIB) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_filesystems_are_told_from_local_ones() {
        use linux_raw_sys::general as magic;
        assert_eq!(network_filesystem(magic::NFS_SUPER_MAGIC), Some("NFS"));
        assert_eq!(network_filesystem(magic::CIFS_SUPER_MAGIC), Some("CIFS"));
        assert!(network_filesystem(magic::FUSE_SUPER_MAGIC).is_some());
        for local in [magic::EXT4_SUPER_MAGIC, magic::TMPFS_MAGIC, magic::XFS_SUPER_MAGIC, magic::BTRFS_SUPER_MAGIC] {
            assert_eq!(network_filesystem(local), None, "{local:#x}");
        }
    }

    #[test]
    fn a_secret_others_can_read_is_a_problem_with_the_chmod_to_run() {
        let dir = tempfile::tempdir().unwrap();
        let toml = format!("[storage]\ndata_dir = {:?}\n[[lists]]\nid = \"news\"", dir.path().display().to_string());
        let config = Config::from_toml(&toml).unwrap();
        let key = dir.path().join("hash_key");
        std::fs::write(&key, "x".repeat(44)).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let checks = secrets(&config, None);
        let hash_key = checks.iter().find(|check| check.name.starts_with("hash key")).unwrap();
        assert_eq!(hash_key.verdict, super::super::Verdict::Problem, "{hash_key:?}");
        assert_eq!(hash_key.todo.as_deref(), Some(format!("chmod 600 {}", key.display()).as_str()));
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let checks = secrets(&config, None);
        assert!(checks.iter().all(|check| check.verdict == super::super::Verdict::Ok), "{checks:?}");
    }
}
