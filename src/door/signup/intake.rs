//! Recording a signup request: the whole of a signup's synchronous work, the same for every
//! address. [`record`] computes the rate-limit keys on the request's own thread, then the
//! [`RecordSignup`] command counts the client and its neighbourhood, appends the request to
//! `intake` and counts it for the list's surge alert, in the writer's next group commit; the
//! answer is sent only after that commit. The surge alert, if this request crossed the
//! threshold, is posted in the background, after the answer.
//!
//! The counting is done in the batch's memory ([`crate::storage::Batch`]), so the command's only
//! statement is the append: one statement is atomic by itself, and the command runs without a
//! savepoint of its own ([`Command::ATOMIC`]).
//!
//! The consent text each list shows is recorded once, when `serve` starts ([`RecordConsentTexts`]),
//! not with every signup: from that moment the form shows it, so that is when it is first used,
//! and a signup's row names it by list and version.

use std::sync::Arc;

use crate::clock::{Clock, UnixSeconds};
use crate::config::Config;
use crate::config::presentation::Language;
use crate::domain::{EmailAddress, ListId, Source};
use crate::door::ratelimit::{self, ClientNet, Counter, Decision, Neighbourhood, RateLimiter};
use crate::door::surge::SurgeModes;
use crate::storage::counters::{self, SurgeCount};
use crate::storage::intake::{self, ConsentText, NewItem};
use crate::storage::{Batch, Command, WriteError, Writer};

/// What recording a signup needs: the parts of the running service the request path uses, and
/// no more (the web room's `AppState::recorder` lends them).
#[derive(Debug, Clone, Copy)]
pub struct Recorder<'a> {
    pub config: &'a Arc<Config>,
    pub clock: &'a dyn Clock,
    /// Computes the client's rate-limit keys; the writer counts them.
    pub limiter: &'a RateLimiter,
    pub writer: &'a Writer,
    /// Told which lists the writer's counts put in surge mode.
    pub surge: &'a SurgeModes,
    /// For the surge alert's webhook.
    pub http_client: &'a reqwest::Client,
}

/// A validated signup request, for one list or several.
#[derive(Debug, Clone)]
pub struct SignupRequest {
    /// Each list once; at least one.
    pub lists: Vec<ListSignup>,
    pub source: Option<Source>,
    pub email: EmailAddress,
    pub client: ClientNet,
    pub network: Neighbourhood,
}

/// One list of a signup request, with the tags that list allows of those the request carried.
#[derive(Debug, Clone)]
pub struct ListSignup {
    pub list_id: ListId,
    /// Comma-joined (`Tag::join`); `None`: no tags.
    pub tags: Option<String>,
    /// The values of the list's `fields`, stored form (`FieldValues::to_column`); `None`: none.
    pub fields: Option<String>,
    /// The visitor's language, one of the list's (`ListConfig::visitor_language`).
    pub language: Language,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntakeOutcome {
    /// Durably recorded.
    Accepted,
    /// Durably recorded while a list of the request was in surge: its mail is held until the
    /// visitor presses to send, with a send token naming `send_id`.
    Held {
        send_id: i64,
    },
    RateLimited {
        retry_after_secs: u64,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("the signup could not be stored")]
    Storage(#[source] WriteError),
    #[error("list {0} is not configured")]
    UnknownList(ListId),
}

/// Records `request` durably (or refuses it for the rate limit); returns after the commit. A
/// request for several lists counts once against the client's limits, and once per list
/// against each list's surge alert.
pub async fn record(door: Recorder<'_>, request: SignupRequest) -> Result<IntakeOutcome, IntakeError> {
    let mut lists = Vec::with_capacity(request.lists.len());
    for signup in request.lists {
        let list = door
            .config
            .list(signup.list_id.as_ref())
            .ok_or_else(|| IntakeError::UnknownList(signup.list_id.clone()))?;
        lists.push(ListItem {
            list_id: signup.list_id,
            consent_version: list.consent_version.clone(),
            tags: signup.tags,
            fields: signup.fields,
            language: signup.language,
        });
    }
    let now = door.clock.now();
    let surge = door.config.signup.surge_alert;
    let complaint_breaker = door.config.signup.complaint_breaker.is_some();
    let command = RecordSignup {
        counters: door.limiter.counters(&request.client, &request.network, now),
        network_tag: door.limiter.network_tag(&request.network),
        surge: surge.map(|rule| (i64::try_from(rule.window.as_secs()).unwrap_or(i64::MAX), i64::from(rule.max))),
        complaint_breaker,
        // Only surge mode holds a request, and only then does a send token name it.
        send_id: (surge.is_some() || complaint_breaker)
            .then(crate::config::tokens::new_send_id)
            .transpose()
            .map_err(|error| IntakeError::Storage(WriteError::Rejected(error)))?,
        lists,
        source: request.source,
        email: request.email,
        now,
    };
    let recorded = door.writer.execute(command).await.map_err(IntakeError::Storage)?;
    for (list_id, count) in &recorded.signups_in_window {
        door.surge.note(list_id.as_ref(), count.surge_until);
        if let Some(rule) = surge
            && count.count == i64::from(rule.max) + 1
        {
            // Exactly one request per window sees the count pass the threshold: one alert.
            super::surge::alert(door.config, door.http_client, list_id.as_ref(), count.count, rule.window);
        }
    }
    Ok(recorded.outcome)
}

/// Counts the client and its neighbourhood against their limits and, if both have room,
/// counts each list's accepted signups in the surge window and appends the request to
/// `intake` (one item per list), held with `send_id` if any of its lists is in surge.
struct RecordSignup {
    counters: Vec<Counter>,
    network_tag: String,
    /// The surge window in seconds and its `max`; `None`: the surge alert is off, and surge
    /// mode comes only from the complaint breaker.
    surge: Option<(i64, i64)>,
    /// Whether the complaint breaker is on: its holds put a list in surge mode too.
    complaint_breaker: bool,
    /// The id a send token names, used only if the request is held; `None` when surge mode is
    /// off.
    send_id: Option<i64>,
    lists: Vec<ListItem>,
    source: Option<Source>,
    email: EmailAddress,
    now: UnixSeconds,
}

struct ListItem {
    list_id: ListId,
    consent_version: String,
    tags: Option<String>,
    fields: Option<String>,
    language: Language,
}

struct Recorded {
    outcome: IntakeOutcome,
    /// Each list's accepted signups in the current surge window, this one included, and until
    /// when it is in surge (by the counts or the complaint breaker's hold); empty when both are
    /// off or the request was refused.
    signups_in_window: Vec<(ListId, SurgeCount)>,
}

impl Command for RecordSignup {
    type Output = Recorded;
    // One statement (the append of every list's item); the counters are the batch's, dropped
    // if it fails.
    const ATOMIC: bool = true;

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Recorded> {
        if let Decision::Limited { retry_after_secs } = ratelimit::check_and_count(batch, &self.counters, self.now)? {
            let outcome = IntakeOutcome::RateLimited { retry_after_secs };
            return Ok(Recorded { outcome, signups_in_window: Vec::new() });
        }
        let mut signups_in_window = Vec::new();
        if self.surge.is_some() || self.complaint_breaker {
            for list in &self.lists {
                let list_id = list.list_id.as_ref();
                let mut count = match self.surge {
                    Some((window, max)) => counters::count_signup(batch, list_id, window, max, self.now)?,
                    None => SurgeCount { count: 0, surge_until: 0 },
                };
                if self.complaint_breaker {
                    count.surge_until = count.surge_until.max(counters::complaint_hold(batch, list_id, self.now)?);
                }
                signups_in_window.push((list.list_id.clone(), count));
            }
        }
        let held = signups_in_window.iter().any(|(_, count)| count.in_surge(self.now));
        let send_id = self.send_id.filter(|_| held);
        let items: Vec<NewItem<'_>> = self
            .lists
            .iter()
            .map(|list| NewItem {
                list_id: list.list_id.as_ref(),
                email: self.email.as_ref(),
                consent_version: &list.consent_version,
                network: &self.network_tag,
                source: self.source.as_ref().map(AsRef::as_ref),
                tags: list.tags.as_deref(),
                fields: list.fields.as_deref(),
                send_id,
                language: list.language.code(),
            })
            .collect();
        intake::append(batch.conn(), &items, self.now)?;
        let outcome = match send_id {
            Some(send_id) => IntakeOutcome::Held { send_id },
            None => IntakeOutcome::Accepted,
        };
        Ok(Recorded { outcome, signups_in_window })
    }
}

/// Records the consent text of every list, each (list, version, text) the first time it is
/// shown: run once as `serve` starts, before the first signup can be answered.
#[derive(Debug)]
pub struct RecordConsentTexts {
    texts: Vec<(String, ConsentText)>,
    now: UnixSeconds,
}

impl RecordConsentTexts {
    pub fn of(config: &Config, now: UnixSeconds) -> Self {
        let texts = config
            .lists
            .iter()
            .map(|list| (list.id.as_ref().to_owned(), ConsentText::new(&list.consent_version, &list.consent_text)))
            .collect();
        Self { texts, now }
    }
}

impl Command for RecordConsentTexts {
    type Output = ();

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<()> {
        for (list_id, consent) in &self.texts {
            intake::record_consent_text(batch.conn(), list_id, consent, self.now)?;
        }
        Ok(())
    }
}
