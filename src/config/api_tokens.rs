//! `[[api_tokens]]`: who may call the operator API under `/api/v1/` and open the admin page
//! (`docs/operations.md`, "Automation tools"). What is checked here: the name (it is the audit
//! log's actor, so unique and plain) and the scopes. The token itself is read at start
//! (`crate::operator::api::credentials`); nothing of it is in the configuration or the database.

use std::path::PathBuf;

use super::parse::Problems;
use super::raw::RawApiToken;
use crate::domain::ListId;

/// One `[[api_tokens]]` entry.
#[derive(Debug, Clone)]
pub struct ApiTokenConfig {
    /// The audit log's actor for every call made with it: `a-z`, `0-9` and `-`.
    pub name: String,
    /// `None`: `$CREDENTIALS_DIRECTORY/api_token_<name>` (or `api_token/<name>` there).
    pub token_file: Option<PathBuf>,
    /// Never empty, each once.
    pub scopes: Vec<Scope>,
}

impl ApiTokenConfig {
    /// Whether the token may do what `needed` allows. `admin` includes `read` and `write`: the
    /// admin page shows a record and removes it. `write` does not include `read`, so a tool that
    /// only hands over unsubscribes cannot read the list.
    pub fn allows(&self, needed: Scope) -> bool {
        self.scopes.iter().any(|scope| *scope == needed || *scope == Scope::Admin)
    }
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Look up an address, export, stats.
    Read,
    /// Remove, suppress, import.
    Write,
    /// The admin page, and everything `read` and `write` allow.
    Admin,
}

impl Scope {
    pub const ALL: [Self; 3] = [Self::Read, Self::Write, Self::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Admin => "admin",
        }
    }
}

/// The most tokens: one per tool, rotated one at a time (an old and a new entry side by side).
const MAX_TOKENS: usize = 32;

pub(super) fn check(tokens: &[RawApiToken], problems: &mut Problems) -> Vec<ApiTokenConfig> {
    if tokens.len() > MAX_TOKENS {
        problems.push("api_tokens", format!("at most {MAX_TOKENS} API tokens; there are {}", tokens.len()));
    }
    let mut seen: Vec<&str> = Vec::new();
    tokens
        .iter()
        .enumerate()
        .filter_map(|(i, raw)| {
            let key = |field: &str| format!("api_tokens[{i}].{field}");
            let name = problems
                .check(&key("name"), ListId::parse(&raw.name).map_err(|e| e.to_string().replace("list id", "name")));
            if name.is_some() {
                if seen.contains(&raw.name.as_str()) {
                    problems.push(key("name"), format!("duplicate API token name {:?}", raw.name));
                }
                seen.push(&raw.name);
            }
            if raw.scopes.is_empty() {
                problems.push(key("scopes"), "give at least one of \"read\", \"write\", \"admin\"");
            }
            let mut scopes = Vec::new();
            for (j, word) in raw.scopes.iter().enumerate() {
                match Scope::ALL.into_iter().find(|scope| scope.as_str() == word) {
                    Some(scope) if !scopes.contains(&scope) => scopes.push(scope),
                    Some(_) => {
                        problems.push(format!("api_tokens[{i}].scopes[{j}]"), format!("{word:?} is named twice"))
                    }
                    None => problems.push(
                        format!("api_tokens[{i}].scopes[{j}]"),
                        format!("unknown scope {word:?}; known: read, write, admin"),
                    ),
                }
            }
            Some(ApiTokenConfig {
                name: name?.as_ref().to_owned(),
                token_file: (!raw.token_file.is_empty()).then(|| PathBuf::from(&raw.token_file)),
                scopes,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Scope;
    use crate::config::Config;

    fn config(tokens: &str) -> Result<Config, String> {
        Config::from_toml(&format!("[[lists]]\nid = \"news\"\n{tokens}")).map_err(|error| error.to_string())
    }

    #[test]
    fn a_token_is_read_with_its_scopes_and_admin_includes_the_others() {
        let config = config(
            "[[api_tokens]]\nname = \"n8n\"\ntoken_file = \"/run/n8n\"\nscopes = [\"read\", \"write\"]\n\
             [[api_tokens]]\nname = \"ops\"\nscopes = [\"admin\"]\n",
        )
        .unwrap();
        let [n8n, ops] = config.api_tokens.as_slice() else { panic!("two tokens: {:?}", config.api_tokens) };
        assert_eq!(n8n.name, "n8n");
        assert_eq!(n8n.token_file.as_deref(), Some(std::path::Path::new("/run/n8n")));
        assert_eq!(n8n.scopes, [Scope::Read, Scope::Write]);
        assert!(n8n.allows(Scope::Read) && n8n.allows(Scope::Write) && !n8n.allows(Scope::Admin));
        assert_eq!(ops.token_file, None);
        assert!(ops.allows(Scope::Read) && ops.allows(Scope::Write) && ops.allows(Scope::Admin));
    }

    #[test]
    fn write_alone_does_not_read() {
        let config = config("[[api_tokens]]\nname = \"crm\"\nscopes = [\"write\"]\n").unwrap();
        assert!(!config.api_tokens[0].allows(Scope::Read));
    }

    #[test]
    fn bad_entries_name_their_key() {
        for (case, entries, expected) in [
            ("no scopes", "[[api_tokens]]\nname = \"a\"\n", "api_tokens[0].scopes"),
            ("unknown scope", "[[api_tokens]]\nname = \"a\"\nscopes = [\"root\"]\n", "api_tokens[0].scopes[0]"),
            (
                "repeated scope",
                "[[api_tokens]]\nname = \"a\"\nscopes = [\"read\", \"read\"]\n",
                "api_tokens[0].scopes[1]",
            ),
            ("bad name", "[[api_tokens]]\nname = \"N 8\"\nscopes = [\"read\"]\n", "api_tokens[0].name"),
            (
                "duplicate",
                "[[api_tokens]]\nname = \"a\"\nscopes = [\"read\"]\n[[api_tokens]]\nname = \"a\"\nscopes = [\"read\"]\n",
                "api_tokens[1].name",
            ),
            ("unknown key", "[[api_tokens]]\nname = \"a\"\nscopes = [\"read\"]\ntoken = \"x\"\n", "token"),
        ] {
            let error = config(entries).expect_err(case);
            assert!(error.contains(expected), "{case}: {error}");
        }
    }
}
