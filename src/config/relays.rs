//! `[[relays]]`: the relays that carry signupd's mail and report back what became of it
//! (`docs/operations.md`, "Bounces and complaints"), each heard at `POST /api/relay/<name>`.
//! What is checked here: the name (a path segment, unique), the kind, and the topics — required
//! for `ses`, where a valid signature alone proves only that *some* SNS topic sent the message,
//! and refused for every other kind. The credential itself is read at start (`crate::relays`).

use std::path::PathBuf;

use super::parse::Problems;
use super::raw::RawRelay;
use crate::domain::ListId;

/// One `[[relays]]` entry.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The path segment, and the `relay` label of the metrics: `a-z`, `0-9` and `-`.
    pub name: String,
    pub kind: RelayKind,
    /// `None`: `$CREDENTIALS_DIRECTORY/relay_<name>` (never read for `ses`).
    pub credential_file: Option<PathBuf>,
    /// `ses`: the TopicArns whose messages are believed; empty for the other kinds.
    pub topics: Vec<String>,
}

/// The relays whose events signupd reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayKind {
    Ses,
    Resend,
    Postmark,
    Sendgrid,
    Mailgun,
}

impl RelayKind {
    pub const ALL: [Self; 5] = [Self::Ses, Self::Resend, Self::Postmark, Self::Sendgrid, Self::Mailgun];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ses => "ses",
            Self::Resend => "resend",
            Self::Postmark => "postmark",
            Self::Sendgrid => "sendgrid",
            Self::Mailgun => "mailgun",
        }
    }

    /// What the credential file holds, in the operator's words; `None`: the kind has none
    /// (SNS signs with Amazon's certificate).
    pub fn credential_form(self) -> Option<&'static str> {
        match self {
            Self::Ses => None,
            Self::Resend => Some("the webhook's signing secret, whsec_…"),
            Self::Postmark => Some("the webhook's Basic credentials, user:password"),
            Self::Sendgrid => Some("the Event Webhook's verification key, as SendGrid shows it (base64)"),
            Self::Mailgun => Some("the HTTP webhook signing key"),
        }
    }
}

/// The most relays: one per sender is the norm; a few allow for a move between them.
const MAX_RELAYS: usize = 16;

pub(super) fn check(relays: &[RawRelay], problems: &mut Problems) -> Vec<RelayConfig> {
    if relays.len() > MAX_RELAYS {
        problems.push("relays", format!("at most {MAX_RELAYS} relays; there are {}", relays.len()));
    }
    let mut seen: Vec<&str> = Vec::new();
    relays
        .iter()
        .enumerate()
        .filter_map(|(i, raw)| {
            let key = |field: &str| format!("relays[{i}].{field}");
            let name = problems
                .check(&key("name"), ListId::parse(&raw.name).map_err(|e| e.to_string().replace("list id", "name")));
            if name.is_some() {
                if seen.contains(&raw.name.as_str()) {
                    problems.push(key("name"), format!("duplicate relay name {:?}", raw.name));
                }
                seen.push(&raw.name);
            }
            let kind = RelayKind::ALL.into_iter().find(|kind| kind.as_str() == raw.kind);
            if kind.is_none() {
                problems.push(
                    key("kind"),
                    format!("unknown kind {:?}; known: ses, resend, postmark, sendgrid, mailgun", raw.kind),
                );
            }
            match kind {
                Some(RelayKind::Ses) => {
                    if raw.topics.is_empty() {
                        problems.push(
                            key("topics"),
                            "ses needs the ARNs of the SNS topics SES publishes to, e.g. \
                             [\"arn:aws:sns:eu-west-1:123456789012:ses-events\"]",
                        );
                    }
                    for (j, topic) in raw.topics.iter().enumerate() {
                        if !is_topic_arn(topic) {
                            problems.push(
                                format!("relays[{i}].topics[{j}]"),
                                "not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)",
                            );
                        }
                    }
                    if !raw.credential_file.is_empty() {
                        problems.push(key("credential_file"), "ses has no credential: SNS signs its messages");
                    }
                }
                Some(_) if !raw.topics.is_empty() => {
                    problems.push(key("topics"), "only ses has topics");
                }
                _ => {}
            }
            Some(RelayConfig {
                name: name?.as_ref().to_owned(),
                kind: kind?,
                credential_file: (!raw.credential_file.is_empty()).then(|| PathBuf::from(&raw.credential_file)),
                topics: raw.topics.clone(),
            })
        })
        .collect()
}

/// `arn:<partition>:sns:<region>:<account>:<topic>`, each part present.
fn is_topic_arn(text: &str) -> bool {
    let parts: Vec<&str> = text.split(':').collect();
    matches!(parts.as_slice(), ["arn", partition, "sns", region, account, topic]
        if partition.starts_with("aws")
            && !region.is_empty()
            && account.len() == 12
            && account.bytes().all(|b| b.is_ascii_digit())
            && !topic.is_empty()
            && topic.len() <= 256)
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, RelayKind};

    fn config(relays: &str) -> Result<Config, String> {
        Config::from_toml(&format!("[[lists]]\nid = \"news\"\n{relays}")).map_err(|error| error.to_string())
    }

    #[test]
    fn each_kind_is_read_with_its_parts() {
        let config = config(
            "[[relays]]\nname = \"ses\"\nkind = \"ses\"\ntopics = [\"arn:aws:sns:eu-west-1:123456789012:ses-events\"]\n\
             [[relays]]\nname = \"pm\"\nkind = \"postmark\"\ncredential_file = \"/run/pm\"\n",
        )
        .unwrap();
        assert_eq!(config.relays.len(), 2);
        assert_eq!(config.relays[0].kind, RelayKind::Ses);
        assert_eq!(config.relays[0].topics, ["arn:aws:sns:eu-west-1:123456789012:ses-events"]);
        assert_eq!(config.relays[1].kind, RelayKind::Postmark);
        assert_eq!(config.relays[1].credential_file.as_deref(), Some(std::path::Path::new("/run/pm")));
    }

    #[test]
    fn mistakes_name_their_key() {
        for (relays, key) in [
            ("[[relays]]\nname = \"a\"\nkind = \"sparkpost\"", "relays[0].kind"),
            ("[[relays]]\nname = \"Bad Name\"\nkind = \"resend\"", "relays[0].name"),
            (
                "[[relays]]\nname = \"a\"\nkind = \"resend\"\n[[relays]]\nname = \"a\"\nkind = \"mailgun\"",
                "relays[1].name",
            ),
            ("[[relays]]\nname = \"a\"\nkind = \"ses\"", "relays[0].topics"),
            (
                "[[relays]]\nname = \"a\"\nkind = \"ses\"\ntopics = [\"arn:aws:sqs:eu-west-1:123456789012:q\"]",
                "relays[0].topics[0]",
            ),
            (
                "[[relays]]\nname = \"a\"\nkind = \"ses\"\ntopics = [\"arn:aws:sns:eu-west-1:12345:t\"]",
                "relays[0].topics[0]",
            ),
            (
                "[[relays]]\nname = \"a\"\nkind = \"ses\"\ntopics = [\"arn:aws:sns:eu-west-1:123456789012:t\"]\ncredential_file = \"x\"",
                "relays[0].credential_file",
            ),
            (
                "[[relays]]\nname = \"a\"\nkind = \"resend\"\ntopics = [\"arn:aws:sns:eu-west-1:123456789012:t\"]",
                "relays[0].topics",
            ),
            ("[[relays]]\nname = \"a\"\nkind = \"resend\"\nurl = \"x\"", "url"),
        ] {
            let error = config(relays).unwrap_err();
            assert!(error.contains(key), "{relays}: {error}");
        }
    }

    #[test]
    fn the_complaint_breaker_defaults_to_three_and_zero_turns_it_off() {
        assert_eq!(config("").unwrap().signup.complaint_breaker, Some(3));
        assert_eq!(config("[signup]\ncomplaint_breaker = 0").unwrap().signup.complaint_breaker, None);
        assert_eq!(config("[signup]\ncomplaint_breaker = 10").unwrap().signup.complaint_breaker, Some(10));
    }
}
