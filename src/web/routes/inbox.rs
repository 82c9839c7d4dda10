//! The "open your inbox" link of the check-inbox page and of surge mode's page with the button
//! (`docs/http-api.md`, "The answers"). A successful signup names the visitor's webmail provider
//! by its id only (`inbox=gmail` in the redirect, `"inbox":{…}` in a JSON answer); the page turns
//! the id back into a link to the provider's search for the list's sender. An id signupd does
//! not know is ignored, so a made-up `inbox` shows the page without a link.

use actix_web::HttpRequest;

use crate::config::presentation::Messages;
use crate::config::{Config, ListConfig};
use crate::door::domain_policy::Provider;
use crate::web::routes::form;

/// What a page shows: "Open Gmail", and where it goes.
#[derive(Debug)]
pub struct InboxLink {
    pub label: String,
    pub url: String,
}

/// The provider a page's `inbox` query parameter names.
pub fn requested(req: &HttpRequest) -> Option<&'static Provider> {
    form::query_param(req, "inbox").and_then(|id| Provider::by_id(&id))
}

/// The link to `provider`'s webmail for mail from `list` (or, on a page that names no list,
/// from the first configured one), in the page's language.
pub fn link(config: &Config, list: Option<&ListConfig>, provider: &Provider, messages: &Messages) -> Option<InboxLink> {
    let sender = list.or(config.lists.first())?;
    Some(InboxLink {
        label: messages.check_inbox.open_inbox.with(provider.name),
        url: provider.url(sender.from.email.as_ref()),
    })
}

/// The `inbox` member of a JSON success answer.
pub fn json(provider: &Provider, list: &ListConfig) -> serde_json::Value {
    serde_json::json!({"name": provider.name, "url": provider.url(list.from.email.as_ref())})
}
