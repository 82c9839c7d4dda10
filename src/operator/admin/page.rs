//! The admin page's template (`templates/pages/admin.html`) and its view of a record: the
//! `lookup` document with its times written out (UTC, RFC 3339), a row's `[[lists.fields]]`
//! values as `lookup` lists them ([`crate::domain::FieldValues::listed`]) and, per pending row, the
//! re-send form; the removal form for one list or all. Plain HTML forms, no JavaScript.

use askama::Template;

use crate::clock::UnixSeconds;
use crate::config::Config;
use crate::operator::lookup::Document;

/// A time as the page writes it; an out-of-range time as its seconds.
pub fn time(at: UnixSeconds) -> String {
    crate::clock::rfc3339(at).unwrap_or_else(|_| at.to_string())
}

fn maybe_time(at: Option<UnixSeconds>) -> String {
    at.map_or_else(|| "–".to_owned(), time)
}

#[derive(Template)]
#[template(path = "pages/admin.html")]
pub struct Page<'a> {
    token_name: &'a str,
    search_form: String,
    remove_form: String,
    resend_form: String,
    /// (id, name) of each configured list, for the removal's choice.
    lists: Vec<(&'a str, &'a str)>,
    /// What the last action did (`role="status"`).
    notice: Option<String>,
    /// Why the search was refused (`role="alert"`), with what was typed kept in the field.
    problem: Option<String>,
    typed: String,
    record: Option<Record>,
}

// No `Debug`: the page holds an address and its record.
impl std::fmt::Debug for Page<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page").field("token_name", &self.token_name).finish_non_exhaustive()
    }
}

/// A looked-up address, as the page shows it.
pub struct Record {
    email: String,
    nothing_held: bool,
    rows: Vec<RowView>,
    waiting: Vec<[String; 3]>,
    mail: Vec<[String; 4]>,
    events: Vec<[String; 4]>,
    suppressions: Vec<[String; 3]>,
    mails_last_day: i64,
}

struct RowView {
    list: String,
    status: String,
    pending: bool,
    facts: Vec<(&'static str, String)>,
}

impl<'a> Page<'a> {
    pub fn new(config: &'a Config, token_name: &'a str, search: String, remove: String, resend: String) -> Self {
        Self {
            token_name,
            search_form: search,
            remove_form: remove,
            resend_form: resend,
            lists: config.lists.iter().map(|list| (list.id.as_ref(), list.name.as_str())).collect(),
            notice: None,
            problem: None,
            typed: String::new(),
            record: None,
        }
    }

    pub fn notice(mut self, notice: String) -> Self {
        self.notice = Some(notice);
        self
    }

    pub fn problem(mut self, problem: String) -> Self {
        self.problem = Some(problem);
        self
    }

    pub fn typed(mut self, typed: &str) -> Self {
        typed.clone_into(&mut self.typed);
        self
    }

    pub fn record(mut self, document: Document) -> Self {
        let held = document.held;
        let nothing_held = held.is_empty();
        let rows = held
            .rows
            .into_iter()
            .map(|row| RowView {
                pending: row.status == "pending",
                facts: vec![
                    ("Signed up", time(row.created_at)),
                    ("Confirmation sent", maybe_time(row.confirmation_sent_at)),
                    ("Confirmed", maybe_time(row.confirmed_at)),
                    ("Confirmed by", row.confirm_method.unwrap_or_else(|| "–".to_owned())),
                    ("Consent version", row.consent_version),
                    ("Consent text", row.consent_text.unwrap_or_else(|| "(not recorded)".to_owned())),
                    ("Source", row.source.unwrap_or_else(|| "–".to_owned())),
                    ("Tags", row.tags.filter(|tags| !tags.is_empty()).unwrap_or_else(|| "–".to_owned())),
                    ("Fields", row.fields.listed().unwrap_or_else(|| "–".to_owned())),
                    ("Language", row.language.unwrap_or_else(|| "–".to_owned())),
                ],
                list: row.list,
                status: row.status,
            })
            .collect();
        self.typed.clone_from(&document.email);
        self.record = Some(Record {
            nothing_held,
            email: document.email,
            rows,
            waiting: held
                .signups_waiting
                .into_iter()
                .map(|signup| [signup.list, time(signup.received_at), signup.source.unwrap_or_else(|| "–".into())])
                .collect(),
            mail: held
                .queued_mail
                .into_iter()
                .map(|mail| {
                    let state = if mail.held { "held for a press" } else { "due" };
                    [mail.kind, time(mail.created_at), mail.attempts.to_string(), state.to_owned()]
                })
                .collect(),
            events: held
                .queued_events
                .into_iter()
                .map(|event| {
                    [event.event_type, event.list.unwrap_or_else(|| "–".into()), event.sink, time(event.created_at)]
                })
                .collect(),
            suppressions: held
                .suppressions
                .into_iter()
                .map(|suppression| {
                    let list = if suppression.list == "*" { "every list".to_owned() } else { suppression.list };
                    [list, suppression.reason, time(suppression.created_at)]
                })
                .collect(),
            mails_last_day: held.confirmation_mails_last_day,
        });
        self
    }

    pub fn html(&self) -> askama::Result<String> {
        Template::render(self)
    }
}
