//! `[[destinations]]`: the operator's own sender (listmonk, Buttondown, Mailchimp, Brevo) that
//! confirmed subscribers are handed to (`docs/operations.md`, "Handing subscribers to your
//! sender"). What is checked here, before anything runs: the name (unique among webhooks *and*
//! destinations, since both share one delivery queue keyed by name), the kind, the URL (https,
//! plain http only to loopback; required for listmonk, which has no public API), the target in
//! the form the kind names its lists, the lists, and tags only for a kind that has tags. The
//! credential itself is read at start (`crate::outbound::destinations`).

use std::path::PathBuf;

use url::Url;

use super::ListConfig;
use super::parse::{self, Problems};
use super::raw::RawDestination;
use crate::domain::ListId;

/// One `[[destinations]]` entry.
#[derive(Debug, Clone)]
pub struct DestinationConfig {
    /// Shown in logs and metrics: `a-z`, `0-9` and `-`, like a list id.
    pub name: String,
    pub kind: DestinationKind,
    /// `None`: the vendor's public API (never for listmonk).
    pub url: Option<Url>,
    /// `None`: `$CREDENTIALS_DIRECTORY/destination_<name>`.
    pub credential_file: Option<PathBuf>,
    /// listmonk and Brevo: the list id (digits); Mailchimp: the audience id; Buttondown: none.
    pub target: Option<String>,
    /// Empty: every list.
    pub lists: Vec<String>,
    /// Added to each subscriber where the kind has tags.
    pub tags: Vec<String>,
}

impl DestinationConfig {
    /// Whether subscribers of `list` are handed to this destination.
    pub fn wants(&self, list: &str) -> bool {
        self.lists.is_empty() || self.lists.iter().any(|id| id == list)
    }
}

/// The senders signupd can hand subscribers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestinationKind {
    Listmonk,
    Buttondown,
    Mailchimp,
    Brevo,
}

impl DestinationKind {
    pub const ALL: [Self; 4] = [Self::Listmonk, Self::Buttondown, Self::Mailchimp, Self::Brevo];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Listmonk => "listmonk",
            Self::Buttondown => "buttondown",
            Self::Mailchimp => "mailchimp",
            Self::Brevo => "brevo",
        }
    }

    /// Whether the sender keeps tags on a subscriber (listmonk tags lists, Brevo has none).
    pub fn has_tags(self) -> bool {
        matches!(self, Self::Buttondown | Self::Mailchimp)
    }

    /// What `target` names for this kind, in the words of an error; `None`: no target.
    fn target_rule(self) -> Option<&'static str> {
        match self {
            Self::Listmonk => Some("the listmonk list id (a number, as in Lists → the list's ID)"),
            Self::Brevo => Some("the Brevo list id (a number, as in Contacts → Lists)"),
            Self::Mailchimp => Some("the Mailchimp audience id (Audience → Settings → Unique id, e.g. \"a1b2c3d4e5\")"),
            Self::Buttondown => None,
        }
    }

    fn target_is_valid(self, target: &str) -> bool {
        match self {
            Self::Listmonk | Self::Brevo => {
                !target.is_empty() && target.len() <= 18 && target.bytes().all(|b| b.is_ascii_digit())
            }
            Self::Mailchimp => {
                !target.is_empty() && target.len() <= 64 && target.bytes().all(|b| b.is_ascii_alphanumeric())
            }
            Self::Buttondown => target.is_empty(),
        }
    }
}

/// The most webhooks and destinations together: an event's rows for them are found by a scan
/// of this many queue ids (`storage::webhooks::queued_confirmed`).
pub const MAX_SINKS: usize = 64;

/// The longest tag accepted (Mailchimp's limit on a tag name is 100 characters).
const MAX_TAG_CHARS: usize = 100;

pub(super) fn check(
    destinations: &[RawDestination],
    webhook_names: &[&str],
    lists: &[ListConfig],
    problems: &mut Problems,
) -> Vec<DestinationConfig> {
    if webhook_names.len() + destinations.len() > MAX_SINKS {
        problems.push(
            "destinations",
            format!(
                "at most {MAX_SINKS} webhooks and destinations together; there are {}",
                webhook_names.len() + destinations.len()
            ),
        );
    }
    let mut seen: Vec<&str> = Vec::new();
    destinations
        .iter()
        .enumerate()
        .filter_map(|(i, raw)| {
            let key = |field: &str| format!("destinations[{i}].{field}");
            let name = problems
                .check(&key("name"), ListId::parse(&raw.name).map_err(|e| e.to_string().replace("list id", "name")));
            if name.is_some() {
                if seen.contains(&raw.name.as_str()) {
                    problems.push(key("name"), format!("duplicate destination name {:?}", raw.name));
                } else if webhook_names.contains(&raw.name.as_str()) {
                    problems.push(
                        key("name"),
                        format!("{:?} is also a webhook's name; webhooks and destinations share one queue", raw.name),
                    );
                }
                seen.push(&raw.name);
            }
            let kind = DestinationKind::ALL.into_iter().find(|kind| kind.as_str() == raw.kind);
            if kind.is_none() {
                problems.push(
                    key("kind"),
                    format!("unknown kind {:?}; known: listmonk, buttondown, mailchimp, brevo", raw.kind),
                );
            }
            let url = match raw.url.as_str() {
                "" => {
                    if kind == Some(DestinationKind::Listmonk) {
                        problems
                            .push(key("url"), "listmonk needs its base URL, e.g. \"https://lists.your-domain.net\"");
                    }
                    None
                }
                url => {
                    problems.check(&key("url"), parse::webhook_url(url).and_then(parse::destination_not_a_placeholder))
                }
            };
            if let Some(kind) = kind {
                let target = raw.target.trim();
                if !kind.target_is_valid(target) {
                    let message = match kind.target_rule() {
                        Some(rule) => format!("{target:?} is not {rule}"),
                        None => "buttondown has no lists: leave target empty (one API key is one newsletter)".into(),
                    };
                    problems.push(key("target"), message);
                }
                if !kind.has_tags() && !raw.tags.is_empty() {
                    problems.push(key("tags"), format!("{} keeps no tags on a subscriber; remove tags", kind.as_str()));
                }
            }
            for (j, tag) in raw.tags.iter().enumerate() {
                if tag.trim().is_empty() || tag.chars().count() > MAX_TAG_CHARS || tag.chars().any(char::is_control) {
                    problems.push(
                        format!("destinations[{i}].tags[{j}]"),
                        format!("a tag is 1 to {MAX_TAG_CHARS} characters, no control characters"),
                    );
                }
            }
            for (j, list) in raw.lists.iter().enumerate() {
                if !lists.iter().any(|configured| configured.id.as_ref() == list) {
                    problems.push(
                        format!("destinations[{i}].lists[{j}]"),
                        format!("no list with id {list:?} is configured"),
                    );
                }
            }
            let target = raw.target.trim();
            Some(DestinationConfig {
                name: name?.as_ref().to_owned(),
                kind: kind?,
                url,
                credential_file: parse::optional_path(&raw.credential_file),
                target: (!target.is_empty()).then(|| target.to_owned()),
                lists: raw.lists.clone(),
                tags: raw.tags.iter().map(|tag| tag.trim().to_owned()).collect(),
            })
        })
        .collect()
}
