//! `GET /privacy?list=ID`: what signupd stores for a list and for how long, written from the
//! running configuration (the confirmation link's lifetime, the resend cooldown, the client and
//! neighbourhood rate-limit windows, the per-address mail cap, whether webhooks or destinations
//! receive the list's subscribers), so the notice cannot drift from what the service does. Linked from every page of the list and the footer of every mail.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;

use crate::config::presentation::Language;
use crate::config::{Config, ListConfig, WebhookEvent};
use crate::web::frame::Chrome;
use crate::web::routes::render::{framed_pages, html};
use crate::web::routes::{error_pages, form};
use crate::web::state::AppState;

framed_pages!(PrivacyPage);

#[derive(Debug, Template)]
#[template(path = "pages/privacy.html")]
struct PrivacyPage<'a> {
    chrome: Chrome<'a>,
    list: &'a ListConfig,
    intro: String,
    stored: String,
    /// `None`: the list declares no form fields.
    fields: Option<String>,
    no_ip: String,
    /// `None`: no neighbourhood limits are configured.
    neighbourhood: Option<String>,
    mail: String,
    unconfirmed: String,
    never_mailed: String,
    /// `None`: no per-address cap is configured.
    cap: Option<String>,
    /// `None`: the network reputation is off.
    reputation: Option<String>,
    /// Whether a webhook endpoint or a destination receives this list's subscribers.
    shared: bool,
    contact: String,
}

impl<'a> PrivacyPage<'a> {
    fn new(config: &'a Config, list: &'a ListConfig, language: Language) -> Self {
        let mut chrome = Chrome::for_list_in(config, list, language);
        // The page itself: no footer link to it.
        chrome.privacy_href = None;
        let t = chrome.t;
        let p = &t.privacy;
        let signup = &config.signup;
        let per = |rules: &[crate::config::RateLimitRule]| -> Vec<String> {
            rules
                .iter()
                .map(|rule| {
                    t.durations.per.fill(&[("n", &rule.max.to_string()), ("duration", &t.duration(rule.window))])
                })
                .collect()
        };
        let longest_window = signup
            .rate_limits
            .iter()
            .chain(&signup.network_rate_limits)
            .map(|rule| rule.window)
            .max()
            .unwrap_or_default();
        let contact = list.reply_to.as_ref().unwrap_or(&list.from).email.to_string();
        Self {
            intro: p.intro.with(&list.name),
            stored: p.stored.with(&list.consent_version),
            fields: (!list.fields.is_empty()).then(|| {
                let labels: Vec<String> = list.fields.iter().map(|spec| spec.label.clone()).collect();
                p.fields.with(&t.and_list(&labels))
            }),
            no_ip: p
                .no_ip
                .fill(&[("limits", &t.and_list(&per(&signup.rate_limits))), ("duration", &t.duration(longest_window))]),
            neighbourhood: (!signup.network_rate_limits.is_empty())
                .then(|| p.neighbourhood.with(&t.and_list(&per(&signup.network_rate_limits)))),
            mail: p.mail.with(&t.duration(signup.resend_cooldown)),
            unconfirmed: p.unconfirmed.with(&t.duration(signup.confirm_ttl)),
            never_mailed: p.never_mailed.with(&t.duration(signup.confirm_ttl)),
            cap: signup.max_mails_per_address_per_day.map(|cap| p.cap.fill(&[("n", &cap.to_string())])),
            reputation: (signup.reputation_days > 0).then(|| {
                let days = std::time::Duration::from_secs(u64::from(signup.reputation_days) * 86_400);
                p.reputation.with(&t.duration(days))
            }),
            shared: config
                .webhooks
                .iter()
                .any(|hook| WebhookEvent::ALL.into_iter().any(|event| hook.wants(event, list.id.as_ref())))
                || config.destinations.iter().any(|destination| destination.wants(list.id.as_ref())),
            contact: p.contact.with(&contact),
            chrome,
            list,
        }
    }
}

/// `GET /privacy?list=ID` (without `list`: the only list).
pub async fn privacy_page(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let config = &state.config;
    let list = match form::list_param(&req) {
        Some(id) => config.list(&id),
        None => config.default_list(),
    };
    match list {
        Some(list) => html(StatusCode::OK, &PrivacyPage::new(config, list, form::page_language(&req, list))),
        None => error_pages::not_found(config, &req),
    }
}
