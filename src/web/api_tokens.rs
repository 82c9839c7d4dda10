//! The operator API's tokens (`[[api_tokens]]`, `docs/operations.md`, "Automation tools"), read
//! once at start, and the one way a presented token is checked ([`ApiTokens::authenticate`]).
//!
//! A token file holds one random token (`signupd gen-secret` makes one): at least 32 bytes of
//! printable ASCII without spaces, as an `Authorization: Bearer` header or an HTTP Basic
//! password carries it. What is kept in memory is not the token but its HMAC-SHA256 under a key
//! drawn at start; a presented token is checked with `ring::hmac::verify` against each
//! configured one, in constant time, and every token is tried whatever matched first, so the
//! time an answer takes says nothing about which token, or how much of one, was right. Nothing
//! of a token reaches the database, a log line or an error message.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use ring::hmac;
use ring::rand::SystemRandom;

use crate::config::{ApiTokenConfig, Config, Scope};

/// A configured token: its entry, and the tag its token is checked against.
pub struct ApiToken {
    pub config: ApiTokenConfig,
    tag: hmac::Tag,
}

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiToken").field("name", &self.config.name).finish_non_exhaustive()
    }
}

impl ApiToken {
    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn allows(&self, scope: Scope) -> bool {
        self.config.allows(scope)
    }

    /// A value bound to this token and to `purpose`, that only this process can compute: the
    /// admin page's per-form tokens. Another credential, or another process, gives another.
    pub fn bound(&self, tokens: &ApiTokens, purpose: &str) -> hmac::Tag {
        let mut context = hmac::Context::with_key(&tokens.key);
        context.update(self.tag.as_ref());
        context.update(purpose.as_bytes());
        context.sign()
    }
}

/// Every configured token.
pub struct ApiTokens {
    tokens: Vec<Arc<ApiToken>>,
    /// Drawn at start; never leaves the process.
    key: hmac::Key,
}

impl std::fmt::Debug for ApiTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiTokens").field("tokens", &self.tokens).finish_non_exhaustive()
    }
}

/// The shortest token accepted, as for every other secret.
const MIN_TOKEN_BYTES: usize = crate::config::secrets::MIN_SECRET_BYTES;
/// The longest: a header's worth.
const MAX_TOKEN_BYTES: usize = 512;

impl ApiTokens {
    /// Reads every token file; an error names the key (`api_tokens[0].token_file`) and the
    /// file, never what it holds.
    pub fn load(config: &Config, credentials_dir: Option<&Path>) -> anyhow::Result<Self> {
        let key = hmac::Key::generate(hmac::HMAC_SHA256, &SystemRandom::new())
            .map_err(|_| anyhow::anyhow!("the system random number generator failed"))?;
        let tokens = config
            .api_tokens
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let token =
                    read_token(entry, credentials_dir).with_context(|| format!("api_tokens[{i}].token_file"))?;
                Ok(Arc::new(ApiToken { config: entry.clone(), tag: hmac::sign(&key, &token) }))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { tokens, key })
    }

    /// No token is configured: `/api/v1/` and the admin page are not served.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The configured token `presented` is, if any.
    pub fn authenticate(&self, presented: &[u8]) -> Option<Arc<ApiToken>> {
        let mut found = None;
        for token in &self.tokens {
            if hmac::verify(&self.key, presented, token.tag.as_ref()).is_ok() && found.is_none() {
                found = Some(token.clone());
            }
        }
        found
    }

    /// Whether `tag` is what [`ApiToken::bound`] gives for `token` and `purpose`, in constant time.
    pub fn verify_bound(&self, token: &ApiToken, purpose: &str, tag: &[u8]) -> bool {
        let mut message = token.tag.as_ref().to_vec();
        message.extend_from_slice(purpose.as_bytes());
        hmac::verify(&self.key, &message, tag).is_ok()
    }
}

fn read_token(entry: &ApiTokenConfig, credentials_dir: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    let name = &entry.name;
    let path: PathBuf = match &entry.token_file {
        Some(path) => path.clone(),
        None => {
            let credential = format!("api_token_{name}");
            let found = credentials_dir
                .map(|dir| crate::config::secrets::find_credential(dir, &credential))
                .transpose()?
                .flatten();
            found.ok_or_else(|| {
                anyhow::anyhow!(
                    "not set, and {}: set it to a file holding the token (make one with `signupd gen-secret`), or \
                     put that file at api_token/{name} in the credentials directory",
                    crate::config::secrets::missing_credential(credentials_dir, &credential),
                )
            })?
        }
    };
    let text = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let end = text.iter().rposition(|byte| !matches!(byte, b'\r' | b'\n')).map_or(0, |at| at + 1);
    let token = &text[..end];
    anyhow::ensure!(
        (MIN_TOKEN_BYTES..=MAX_TOKEN_BYTES).contains(&token.len()),
        "{} holds {} bytes; a token needs {MIN_TOKEN_BYTES} to {MAX_TOKEN_BYTES} (make one with `signupd gen-secret`)",
        path.display(),
        token.len()
    );
    anyhow::ensure!(
        token.iter().all(|byte| byte.is_ascii_graphic()),
        "{} holds a space or a character that is not printable ASCII; a token travels in an HTTP header (make one \
         with `signupd gen-secret`)",
        path.display()
    );
    Ok(token.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(files: &[(&str, &str, &[u8])]) -> (tempfile::TempDir, anyhow::Result<ApiTokens>) {
        let dir = tempfile::tempdir().unwrap();
        let mut toml = String::from("[[lists]]\nid = \"news\"\n");
        for (name, scopes, content) in files {
            let path = dir.path().join(name);
            std::fs::write(&path, content).unwrap();
            toml.push_str(&format!(
                "[[api_tokens]]\nname = \"{name}\"\ntoken_file = \"{}\"\nscopes = {scopes}\n",
                path.display()
            ));
        }
        let config = Config::from_toml(&toml).unwrap();
        let loaded = ApiTokens::load(&config, None);
        (dir, loaded)
    }

    const A: &[u8] = b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
    const B: &[u8] = b"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn each_token_authenticates_as_its_entry_and_nothing_else_does() {
        let (_dir, loaded) = tokens(&[("n8n", "[\"read\"]", A), ("ops", "[\"admin\"]", B)]);
        let tokens = loaded.unwrap();
        assert_eq!(tokens.authenticate(&A[..A.len() - 1]).unwrap().name(), "n8n");
        assert_eq!(tokens.authenticate(B).unwrap().name(), "ops");
        for wrong in [&b""[..], &A[..10], A, &B[..B.len() - 1], b"cccccccccccccccccccccccccccccccccccccccc"] {
            assert!(tokens.authenticate(wrong).is_none(), "{:?}", String::from_utf8_lossy(wrong));
        }
    }

    #[test]
    fn a_bound_value_is_the_tokens_own_and_the_purposes_own() {
        let (_dir, loaded) = tokens(&[("n8n", "[\"admin\"]", A), ("ops", "[\"admin\"]", B)]);
        let tokens = loaded.unwrap();
        let (n8n, ops) = (tokens.authenticate(&A[..A.len() - 1]).unwrap(), tokens.authenticate(B).unwrap());
        let tag = n8n.bound(&tokens, "remove");
        assert!(tokens.verify_bound(&n8n, "remove", tag.as_ref()));
        assert!(!tokens.verify_bound(&ops, "remove", tag.as_ref()));
        assert!(!tokens.verify_bound(&n8n, "resend", tag.as_ref()));
        assert!(!tokens.verify_bound(&n8n, "remove", &tag.as_ref()[1..]));
    }

    #[test]
    fn short_long_and_spaced_tokens_are_refused_without_showing_them() {
        let long = vec![b'x'; 513];
        for (case, content) in [
            ("short", &b"short-token\n"[..]),
            ("long", &long[..]),
            ("space", &b"aaaaaaaaaaaaaaaa aaaaaaaaaaaaaaaaaaaaaaaa"[..]),
        ] {
            let (_dir, loaded) = tokens(&[("n8n", "[\"read\"]", content)]);
            let error = format!("{:#}", loaded.expect_err(case));
            assert!(error.starts_with("api_tokens[0].token_file"), "{case}: {error}");
            assert!(!error.contains("aaaaaaaa") && !error.contains("short-token"), "{case}: {error}");
        }
    }

    #[test]
    fn a_token_without_a_file_is_found_in_the_credentials_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("api_token")).unwrap();
        std::fs::write(dir.path().join("api_token/n8n"), A).unwrap();
        let config =
            Config::from_toml("[[lists]]\nid = \"news\"\n[[api_tokens]]\nname = \"n8n\"\nscopes = [\"read\"]\n")
                .unwrap();
        let tokens = ApiTokens::load(&config, Some(dir.path())).unwrap();
        assert_eq!(tokens.authenticate(&A[..A.len() - 1]).unwrap().name(), "n8n");
        let error = format!("{:#}", ApiTokens::load(&config, None).unwrap_err());
        assert!(error.contains("api_token/n8n"), "{error}");
    }
}
