//! The preference page's use case (`docs/http-api.md`, the manage page): which lists a manage
//! link shows, saving the lists ticked there, and "remove me from all". The route
//! (`routes/manage.rs`) only parses and answers; what is read and written lives here.
//!
//! Decisions, where the product contract leaves room:
//!
//! - **The sender.** The page shows every configured list whose `from` equals the token's
//!   list's `from` ([`crate::config::ListConfig::same_sender`]): display name and address,
//!   compared as configured. Language is *not* compared (one confirmation mail does compare the
//!   rows' languages, since it speaks one): a sender's German and English lists are one brand,
//!   and each list's name and consent text carry their own `lang`. The page speaks the language
//!   of the token's row. Comparing the address alone
//!   would show the lists of two brands that share a sending address (a host's `no-reply@`);
//!   the display name keeps them apart. Lists of other senders are never shown, read or written.
//! - **Saving** ([`Preferences::save`]), for each list of the sender: ticked and confirmed, or
//!   unticked and not confirmed: nothing. Unticked and confirmed: removed as `unsubscribed`,
//!   exactly as the manage page removes a row (suppression, `subscriber.unsubscribed` with
//!   `via = "manage"`). Ticked and pending, or without a row: confirmed at once with
//!   `confirm_method = "preferences"`, the list's current consent version (the text the page
//!   showed beside the box, recorded in `consent_texts` when `serve` started), a
//!   `subscriber.confirmed` event and, if the list sends one, the welcome mail (it carries the
//!   list's own manage and one-click links); any suppression of that list and address is
//!   lifted, `not_me` included: the token came from the address's inbox, so the tick is that
//!   address asking for the list. A pending list left unticked stays pending: the visitor did
//!   not ask to remove it (the confirmation mail may still be on its way), and it expires as
//!   any pending row does. A `list` value that names no list of the sender (another sender's,
//!   or none) is ignored: the form never sends one.
//! - **Nothing ticked** is a choice like any other: every confirmed list of the sender is
//!   unsubscribed, pending ones stay.
//! - **One transaction.** All of a save is one writer command, prepared off the writer thread
//!   from the rows a reader saw and checked against them inside the transaction (a concurrent
//!   change prepares it again, [`crate::subscribers::subscription`]). A save that changes nothing sends
//!   nothing to the writer: saving the same choice twice writes nothing and sends no event.
//! - **Remove me from all** ([`Preferences::remove_all`]) removes the address from every list
//!   of the sender as the manage page removes one row: `unsubscribed` (with its event) where it
//!   was confirmed, `not_me` where it was pending or only just signed up.
//!
//! A token names one row; once that row is removed (its list unticked, or "remove me from
//! all"), the link names nothing any more and its page is the one for an unknown link. The
//! other lists keep their own links, in their own mails.

use std::cell::Cell;

use crate::clock::UnixSeconds;
use crate::config::presentation::Language;
use crate::config::tokens::RemovalToken;
use crate::config::{Config, ListConfig};
use crate::domain::{FieldValues, ListId};
use crate::outbound::webhooks::{ConfirmedEvent, PreparedEvent};
use crate::storage::preferences::{self as rows, ListRow, NewConfirmed};
use crate::storage::subscribers::{self, Removable, Status};
use crate::storage::suppressions::{self, Reason};
use crate::storage::{Batch, Command, outbox};
use crate::subscribers::subscription::{
    ConfirmMethod, PreparedRemoval, RemovalChannel, RemovalTarget, Removed, Stale, Subscriptions, write_prepared,
};

/// The stored language code of `list`'s row among `rows`, if it has one.
fn stored_language<'r>(rows: &'r [ListRow], list: &ListConfig) -> Option<&'r str> {
    rows.iter().find(|row| row.list_id == list.id.as_ref()).and_then(|row| row.language.as_deref())
}

/// The lists of `list`'s sender, `list` among them, in the configuration's order.
pub fn sender_lists<'c>(config: &'c Config, list: &ListConfig) -> Vec<&'c ListConfig> {
    config.lists.iter().filter(|other| list.same_sender(other)).collect()
}

/// Where the address stands on one list of the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListState {
    Confirmed,
    /// Signed up, waiting for the confirmation click.
    Pending,
    /// No row (never signed up, removed, or expired).
    Absent,
}

/// One list of the page, with the address's state on it.
#[derive(Debug)]
pub struct Choice<'c> {
    pub list: &'c ListConfig,
    pub state: ListState,
    /// What the address's row keeps of the list's fields, as (label, value) in the list's
    /// declared order; shown read-only. A value of a field the list no longer declares is
    /// labelled with its name.
    pub fields: Vec<(String, String)>,
}

impl Choice<'_> {
    pub fn is_confirmed(&self) -> bool {
        self.state == ListState::Confirmed
    }

    pub fn is_pending(&self) -> bool {
        self.state == ListState::Pending
    }
}

/// What the preference page shows for a token.
#[derive(Debug)]
pub struct View<'c> {
    /// The list of the token's row: the page's frame.
    pub list: &'c ListConfig,
    /// The language of the token's row: the page's.
    pub language: Language,
    /// Every list of the sender, in the configuration's order.
    pub choices: Vec<Choice<'c>>,
}

/// What a save did.
#[derive(Debug, Clone)]
pub struct Saved {
    /// The token's list, for the page that says it was saved.
    pub list_id: String,
    /// The language of the token's row: the page that says it was saved speaks it too.
    pub language: Language,
    /// The lists confirmed from the page, each with its row's source (a new row has none).
    pub confirmed: Vec<(String, Option<String>)>,
    /// The lists removed from the page.
    pub removed: Vec<Removed>,
}

/// The preference page's reads and writes: a reader to prepare, the writer to write.
#[derive(Debug, Clone, Copy)]
pub struct Preferences<'a> {
    pub subscriptions: Subscriptions<'a>,
}

/// The row a token names, and every row of its address; read in one snapshot.
type Found = Option<(Removable, Vec<ListRow>)>;

impl<'a> Preferences<'a> {
    pub fn new(subscriptions: Subscriptions<'a>) -> Self {
        Self { subscriptions }
    }

    fn config(&self) -> &'a Config {
        self.subscriptions.config
    }

    /// The row `target` names and the address's rows on that row's sender's lists (none when
    /// its list is no longer configured). Reads only.
    async fn find(&self, target: &RemovalTarget) -> anyhow::Result<Found> {
        let target = target.clone();
        // Which lists each list's page shows, worked out before the read: the row decides which
        // of them are looked up, so no other sender's list costs a lookup.
        let senders: Vec<(String, Vec<String>)> = self
            .config()
            .lists
            .iter()
            .map(|list| {
                let ids = sender_lists(self.config(), list).iter().map(|list| list.id.as_ref().to_owned()).collect();
                (list.id.as_ref().to_owned(), ids)
            })
            .collect();
        self.subscriptions
            .db
            .run(move |conn| {
                let Some(row) = target.find(conn)? else {
                    return Ok(None);
                };
                let lists: Vec<&str> = senders
                    .iter()
                    .find(|(list, _)| *list == row.list_id)
                    .map(|(_, ids)| ids.iter().map(String::as_str).collect())
                    .unwrap_or_default();
                let rows = rows::rows_of_address(conn, &row.email, &lists)?;
                Ok::<_, anyhow::Error>(Some((row, rows)))
            })
            .await
    }

    /// The page for the row `target` names; `None` when it names none, or a row of a list that
    /// is no longer configured (then there is no sender to show). Reads only.
    pub async fn view(&self, target: &RemovalTarget) -> anyhow::Result<Option<View<'a>>> {
        let Some((row, rows)) = self.find(target).await? else {
            return Ok(None);
        };
        let Some(list) = self.config().list(&row.list_id) else {
            return Ok(None);
        };
        let language = list.row_language(stored_language(&rows, list));
        let choices = sender_lists(self.config(), list)
            .into_iter()
            .map(|list| {
                let row = rows.iter().find(|row| row.list_id == list.id.as_ref());
                let state = match row.map(|row| row.status) {
                    Some(Status::Confirmed) => ListState::Confirmed,
                    Some(Status::Pending) => ListState::Pending,
                    None => ListState::Absent,
                };
                let fields = row.map(|row| kept_fields(list, row.fields.as_deref())).unwrap_or_default();
                Choice { list, state, fields }
            })
            .collect();
        Ok(Some(View { list, language, choices }))
    }

    /// Saves the lists `ticked` for the address of the row `target` names (the module
    /// documentation has the rules). `None` when it names no row of a configured list; then
    /// nothing is written.
    pub async fn save(
        &self,
        target: &RemovalTarget,
        ticked: &[String],
        now: UnixSeconds,
    ) -> anyhow::Result<Option<Saved>> {
        // Set by the preparation: the token's list, when the token names a row.
        let token_list: Cell<Option<(String, Language)>> = Cell::new(None);
        let saved = write_prepared(self.subscriptions.writer, async || {
            let Some((row, rows)) = self.find(target).await? else {
                token_list.set(None);
                return Ok(None);
            };
            let Some(list) = self.config().list(&row.list_id) else {
                token_list.set(None);
                return Ok(None);
            };
            token_list.set(Some((row.list_id.clone(), list.row_language(stored_language(&rows, list)))));
            let command = self.prepare_save(list, &row.email, &rows, ticked, now)?;
            Ok((!command.is_empty()).then_some(command))
        })
        .await?;
        Ok(token_list.take().map(|(list_id, language)| {
            let (confirmed, removed) = saved.unwrap_or_default();
            Saved { list_id, language, confirmed, removed }
        }))
    }

    fn prepare_save(
        &self,
        token_list: &ListConfig,
        email: &str,
        rows: &[ListRow],
        ticked: &[String],
        now: UnixSeconds,
    ) -> anyhow::Result<SavePreferences> {
        let mut command = SavePreferences { email: email.to_owned(), confirm: Vec::new(), remove: Vec::new(), now };
        let page_language = token_list.row_language(stored_language(rows, token_list));
        for list in sender_lists(self.config(), token_list) {
            let list_id = list.id.as_ref();
            let wanted = ticked.iter().any(|id| id == list_id);
            let existing = rows.iter().find(|row| row.list_id == list_id);
            match (wanted, existing) {
                (true, Some(row)) if row.status == Status::Confirmed => {}
                (true, existing) => {
                    command.confirm.push(self.prepare_confirmation(list, email, existing, page_language, now)?);
                }
                (false, Some(row)) if row.status == Status::Confirmed => {
                    let removable = Removable {
                        id: row.id.clone(),
                        list_id: list_id.to_owned(),
                        email: email.to_owned(),
                        status: row.status,
                    };
                    let prepared = self.subscriptions.prepare_removal(
                        list_id,
                        email,
                        Some(&removable),
                        Reason::Unsubscribed,
                        RemovalChannel::Manage,
                        now,
                    )?;
                    command.remove.push((removable, prepared));
                }
                // Pending and unticked stays pending; absent and unticked stays absent.
                (false, _) => {}
            }
        }
        Ok(command)
    }

    /// Confirming `list` for `email` from the page: the pending row `existing`, or a new row.
    fn prepare_confirmation(
        &self,
        list: &ListConfig,
        email: &str,
        existing: Option<&ListRow>,
        page_language: Language,
        now: UnixSeconds,
    ) -> anyhow::Result<PreparedConfirmation> {
        // A pending row keeps its language; a new row takes the page's, where the list serves it.
        let language = match existing {
            Some(row) => row.language.clone(),
            None => list.served_language(page_language.code()).map(|language| language.code().to_owned()),
        };
        let hash_key = self.subscriptions.hash_key;
        let (subscriber_id, new_removal_hash, created_at) = match existing {
            Some(row) => (row.id.clone(), None, row.created_at),
            None => {
                // Time-ordered, as `signup::state_table` makes every new row's id.
                let id = uuid::Uuid::now_v7().to_string();
                let removal_hash = RemovalToken::derive(hash_key, &id).removal_hash();
                (id, Some(removal_hash), now)
            }
        };
        let list_id = list.id.as_ref();
        let event = self.subscriptions.webhooks.confirmed(
            &ConfirmedEvent {
                list: list_id,
                email,
                subscriber_id: &subscriber_id,
                created_at,
                method: ConfirmMethod::Preferences.as_str(),
                consent_version: &list.consent_version,
                source: existing.and_then(|row| row.source.as_deref()),
                tags: existing.and_then(|row| row.tags.as_deref()),
                fields: existing.and_then(|row| row.fields.as_deref()),
                language: list.row_language(language.as_deref()).code(),
                now,
            },
            Some(&list.consent_text),
        )?;
        Ok(PreparedConfirmation {
            list_id: list.id.clone(),
            subscriber_id,
            new_removal_hash,
            consent_version: list.consent_version.clone(),
            welcome_mail: list.welcome_mail,
            suppression_hash: suppressions::hash(hash_key, list_id, email),
            event,
            source: existing.and_then(|row| row.source.clone()),
            language,
        })
    }

    /// "Remove me from all": removes the address of the row `target` names from every list of
    /// its sender, each as its status says. `None` when the token names no row; the token's
    /// list, the language of its row (while the list is configured) and what was removed
    /// otherwise.
    pub async fn remove_all(
        &self,
        target: &RemovalTarget,
        now: UnixSeconds,
    ) -> anyhow::Result<Option<(String, Option<Language>, Vec<Removed>)>> {
        let Some((row, rows)) = self.find(target).await? else {
            return Ok(None);
        };
        let Some(list) = self.config().list(&row.list_id) else {
            // No sender to look up: the one row, as the manage page always removed it.
            let removed = self.subscriptions.remove(target, RemovalChannel::Manage, now).await?;
            return Ok(Some((row.list_id, None, removed.into_iter().collect())));
        };
        let language = list.row_language(stored_language(&rows, list));
        let lists: Vec<ListId> = sender_lists(self.config(), list).into_iter().map(|list| list.id.clone()).collect();
        let removed =
            self.subscriptions.remove_from_lists(&lists, &row.email, None, RemovalChannel::Manage, now).await?;
        Ok(Some((row.list_id, Some(language), removed)))
    }
}

/// Confirming one list from the page, prepared from the row (or its absence) a reader saw.
struct PreparedConfirmation {
    list_id: ListId,
    /// The pending row's id, or the new row's.
    subscriber_id: String,
    /// `Some` for a new row (the preparation saw none): its removal hash.
    new_removal_hash: Option<String>,
    consent_version: String,
    welcome_mail: bool,
    /// Lifted, whatever its reason.
    suppression_hash: String,
    /// `subscriber.confirmed`, if an endpoint wants it.
    event: Option<PreparedEvent>,
    /// The pending row's source; a new row has none.
    source: Option<String>,
    /// The row's language code (a new row's: the page's, when its list serves it).
    language: Option<String>,
}

/// One save of the preference page, all of it in one transaction: each list confirmed or
/// removed as prepared, or nothing at all when any row is no longer what the preparation read.
struct SavePreferences {
    /// Normalised, as stored.
    email: String,
    confirm: Vec<PreparedConfirmation>,
    remove: Vec<(Removable, PreparedRemoval)>,
    now: UnixSeconds,
}

impl SavePreferences {
    fn is_empty(&self) -> bool {
        self.confirm.is_empty() && self.remove.is_empty()
    }
}

impl std::fmt::Debug for SavePreferences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let confirm: Vec<&ListId> = self.confirm.iter().map(|confirm| &confirm.list_id).collect();
        let remove: Vec<&str> = self.remove.iter().map(|(row, _)| row.list_id.as_str()).collect();
        f.debug_struct("SavePreferences").field("confirm", &confirm).field("remove", &remove).finish_non_exhaustive()
    }
}

impl Command for SavePreferences {
    /// The lists confirmed with their rows' sources, and what was removed.
    type Output = (Vec<(String, Option<String>)>, Vec<Removed>);

    fn execute(self, batch: &mut Batch<'_>) -> anyhow::Result<Self::Output> {
        let conn = batch.conn();
        let email = self.email.as_str();
        let mut confirmed = Vec::with_capacity(self.confirm.len());
        for confirm in &self.confirm {
            let list_id = confirm.list_id.as_ref();
            let existing = subscribers::find(conn, list_id, email)?;
            match (&confirm.new_removal_hash, existing) {
                (None, Some(row)) if row.id == confirm.subscriber_id && row.status == Status::Pending => {
                    if !rows::confirm_pending(conn, &row.id, &confirm.consent_version, self.now)? {
                        return Err(Stale.into());
                    }
                }
                (Some(removal_hash), None) => rows::insert_confirmed(
                    conn,
                    &NewConfirmed {
                        id: &confirm.subscriber_id,
                        list_id,
                        email,
                        consent_version: &confirm.consent_version,
                        removal_hash,
                        language: confirm.language.as_deref(),
                        now: self.now,
                    },
                )?,
                _ => return Err(Stale.into()),
            }
            if confirm.welcome_mail {
                outbox::queue_welcome(conn, &confirm.subscriber_id, self.now)?;
            }
            rows::lift_suppression(conn, &confirm.suppression_hash)?;
            if let Some(event) = &confirm.event {
                event.queue(conn)?;
            }
            confirmed.push((list_id.to_owned(), confirm.source.clone()));
        }
        let mut removed = Vec::with_capacity(self.remove.len());
        for (row, prepared) in &self.remove {
            let existing = subscribers::find(conn, &row.list_id, email)?;
            prepared.check(existing.as_ref().map(|existing| (existing.id.as_str(), existing.status)))?;
            removed.push(prepared.apply(conn, row, self.now)?);
        }
        Ok((confirmed, removed))
    }
}

/// The row's field values as the page shows them: labelled by the list's fields, in their order,
/// then any value of a field the list no longer declares, under its name.
fn kept_fields(list: &ListConfig, column: Option<&str>) -> Vec<(String, String)> {
    let values = FieldValues::from_column(column);
    let mut shown: Vec<(String, String)> = list
        .fields
        .iter()
        .filter_map(|spec| values.get(spec.name.as_ref()).map(|value| (spec.label.clone(), value.to_owned())))
        .collect();
    for (name, value) in values.iter() {
        if !list.fields.iter().any(|spec| spec.name.as_ref() == name) {
            shown.push((name.to_owned(), value.to_owned()));
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sender_is_the_whole_from_in_any_language() {
        let config = Config::from_toml(
            "[[lists]]\nid = \"news\"\nfrom = \"Acme <hello@acme.example>\"\n\
             [[lists]]\nid = \"neues\"\nfrom = \"Acme <hello@acme.example>\"\nlanguage = \"de\"\n\
             [[lists]]\nid = \"other-brand\"\nfrom = \"Beta <hello@acme.example>\"\n\
             [[lists]]\nid = \"club\"\nfrom = \"Club <club@books.example>\"\n",
        )
        .unwrap();
        let ids = |list: &str| -> Vec<String> {
            sender_lists(&config, config.list(list).unwrap()).iter().map(|list| list.id.to_string()).collect()
        };

        assert_eq!(ids("news"), ["news", "neues"], "another language, the same sender");
        assert_eq!(ids("neues"), ["news", "neues"]);
        assert_eq!(ids("other-brand"), ["other-brand"], "the same address under another name is another sender");
        assert_eq!(ids("club"), ["club"]);
    }
}
