//! Signing up (`docs/http-api.md`): the hosted form (`GET /`, `GET /signup?list=ID`), `POST
//! /api/signup` with its CORS preflight, and "check your inbox" (`GET /check-inbox?list=ID`), where
//! a successful signup from a browser ends. The pages answer GET and HEAD and never write; with
//! several lists and none named, `GET /` offers a choice of lists.
//!
//! `POST /api/signup` checks in the contract's order, cheapest first; nothing is written before
//! step 6:
//!
//! 1. method (405 with `Allow`), content type (415), body size (413);
//! 2. `Origin` against the list's `allowed_origins` (403 `origin_not_allowed`);
//! 3. the honeypot: the normal success answer, nothing saved (in surge mode the press-to-send
//!    answer, with a send token that names nothing);
//! 4. email (400 `invalid_email`), consent (400 `consent_required`), list (400 `unknown_list`),
//!    then the address's domain ([`crate::door::domain_policy`]): blocked (400 `domain_not_allowed`),
//!    and with `check_mx`, no mail records (400 `invalid_email`);
//! 5. and 6. the rate limits of the client and of its neighbourhood (429 `rate_limited`) and
//!    the durable record, one command in the writer's group commit
//!    ([`crate::door::signup::record`]); 503 `storage_unavailable` if SQLite cannot write.
//!
//! Several lists (`list` repeated, or a JSON array): each must be configured (400
//! `unknown_list`), each is named once however often it is repeated, and the origin must suit
//! every one of them. `source` (400 `invalid_source`) and `tags` (400 `unknown_tag`) are
//! checked with the fields; a tag must be one of the `tags` of at least one named list, and each
//! list's row keeps the tags that list allows. An empty `source` or `tags` value counts as
//! absent. Both refusals are errors in the operator's form, not the visitor's: they are logged
//! at warn level (the list and the code; never the value). `return_to` is checked against the
//! first named list, which also names the "check your inbox" page. With several lists and none
//! ticked on the hosted form, the form comes back with the same choice and asks for one
//! (`unknown_list`, as the contract says for a signup that names no list).
//!
//! In surge mode (`crate::door::surge`) the success answer asks the visitor to press to send: `202
//! {"ok":true,"next":"send_confirmation","send":TOKEN}`, or `303` to
//! `/check-inbox?list=ID&send=TOKEN` (with `&return_to=…` when the signup carried a valid one),
//! the page with the button ([`super::send`]).
//!
//! Decisions the reference leaves to the code: a body that cannot be read (bad JSON, a JSON value that is
//! not an object, more than 100 fields) is 400 `invalid_request`; 405, 413 and 415 use the codes
//! `method_not_allowed`, `payload_too_large` and `unsupported_media_type`. An unparsable
//! `Origin` counts as absent, like `null`. A list without `allowed_origins` accepts posts from
//! any origin (the contract checks origins only for lists that name them). `return_to` must be
//! an absolute http(s) URL whose origin is in the list's `allowed_origins`; otherwise it is
//! ignored.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder, web};
use askama::Template;
use url::Url;

use crate::config::presentation::{Language, Messages, Text};
use crate::config::{Config, ListConfig};
use crate::domain::{EmailAddress, Source, Tag};
use crate::door::domain_policy::{Provider, Verdict};
use crate::door::signup::{IntakeOutcome, ListSignup, SignupRequest};
use crate::web::frame::Chrome;
use crate::web::routes::error_pages;
use crate::web::routes::form::{self as body, BodyError, BodyKind};
use crate::web::routes::inbox::{self, InboxLink};
use crate::web::routes::origin::{allowed_return_to, cors_origin, request_origin, with_query};
use crate::web::routes::render::{framed_pages, html};
use crate::web::routes::signup_fields::{self, FormField, Refused};
use crate::web::state::AppState;

framed_pages!(SignupPage, ListsPage, CheckInboxPage);

/// The hosted form: for one list, or a checkbox per list when it offers several.
#[derive(Template)]
#[template(path = "pages/signup.html")]
struct SignupPage<'a> {
    chrome: Chrome<'a>,
    /// The one list of a single-list form.
    single: Option<&'a ListConfig>,
    /// The lists a multi-list form offers (empty for a single list).
    choices: Vec<Choice<'a>>,
    /// The address the visitor typed, shown again after an error (escaped by askama).
    email: &'a str,
    error: Option<&'a str>,
    /// The error is about the choice of lists (none ticked), not the address: the message
    /// describes the fieldset instead of the email field.
    error_on_lists: bool,
    /// The error is about one of `fields` (marked `invalid`), not the address.
    error_on_field: bool,
    /// The offered lists' `[[lists.fields]]`, each name once.
    fields: Vec<FormField<'a>>,
    /// Whether the visitor ticked the consent box: a refusal for something else shows it ticked
    /// again, as they left it, rather than making them find and tick it a second time.
    consented: bool,
    /// The page's language, posted back as `lang` when the list serves several.
    lang_field: Option<&'static str>,
    /// A multilingual list's form in each of its other languages: plain links, no script.
    languages: Vec<LanguageLink>,
}

/// The hosted form in another of the list's languages.
struct LanguageLink {
    code: &'static str,
    /// The language's name in itself ("Deutsch").
    name: String,
    href: String,
}

struct Choice<'a> {
    list: &'a ListConfig,
    ticked: bool,
}

impl<'a> SignupPage<'a> {
    /// The form for `offered` (one list, or a choice of several, `ticked` ticked), in
    /// `language` (one of the first list's).
    fn new(
        config: &'a Config,
        offered: &[&'a ListConfig],
        ticked: &[&'a ListConfig],
        language: Language,
    ) -> Option<Self> {
        let first = *offered.first()?;
        let choices = if offered.len() > 1 {
            offered.iter().map(|list| Choice { list, ticked: ticked.iter().any(|t| t.id == list.id) }).collect()
        } else {
            Vec::new()
        };
        let languages = if first.is_multilingual() {
            let mut pairs: Vec<(&str, &str)> = Vec::new();
            if config.default_list().is_none_or(|only| offered.len() != 1 || only.id != first.id) {
                pairs.extend(offered.iter().map(|list| ("list", list.id.as_ref())));
            }
            let path = if pairs.is_empty() { "/" } else { "/signup" };
            first
                .languages
                .iter()
                .filter(|other| **other != language)
                .map(|other| {
                    let mut query = url::form_urlencoded::Serializer::new(String::new());
                    query.extend_pairs(pairs.iter().copied()).append_pair("lang", other.code());
                    LanguageLink {
                        code: other.code(),
                        name: other.messages().language.name.to_string(),
                        href: crate::web::frame::href(config, &format!("{path}?{}", query.finish())),
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Some(Self {
            chrome: Chrome::for_list_in(config, first, language),
            lang_field: first.is_multilingual().then(|| language.code()),
            languages,
            single: (offered.len() == 1).then_some(first),
            choices,
            email: "",
            error: None,
            error_on_lists: false,
            error_on_field: false,
            fields: signup_fields::form_fields(offered, |_| None),
            consented: false,
        })
    }
}

impl std::fmt::Debug for SignupPage<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignupPage").field("list", &self.single.map(|list| &list.id)).finish_non_exhaustive()
    }
}

#[derive(Debug, Template)]
#[template(path = "pages/lists.html")]
struct ListsPage<'a> {
    chrome: Chrome<'a>,
    lists: &'a [ListConfig],
}

#[derive(Debug, Template)]
#[template(path = "pages/check_inbox.html")]
struct CheckInboxPage<'a> {
    chrome: Chrome<'a>,
    list_name: Option<&'a str>,
    inbox: Option<InboxLink>,
}

/// Every way a signup can be refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    MethodNotAllowed,
    UnsupportedMediaType,
    PayloadTooLarge,
    RequestTimeout,
    InvalidRequest,
    OriginNotAllowed,
    InvalidEmail,
    ConsentRequired,
    UnknownList,
    /// The hosted form offered several lists and none was ticked (`unknown_list`).
    NoListTicked,
    InvalidSource,
    UnknownTag,
    /// A `[[lists.fields]]` value missing or refused (`Answer::refused_field` says which).
    InvalidField,
    DomainNotAllowed,
    RateLimited {
        retry_after_secs: u64,
    },
    StorageUnavailable,
}

impl Refusal {
    fn status(self) -> StatusCode {
        match self {
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Self::InvalidRequest
            | Self::InvalidEmail
            | Self::ConsentRequired
            | Self::UnknownList
            | Self::NoListTicked
            | Self::InvalidSource
            | Self::UnknownTag
            | Self::InvalidField
            | Self::DomainNotAllowed => StatusCode::BAD_REQUEST,
            Self::OriginNotAllowed => StatusCode::FORBIDDEN,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    fn code(self) -> &'static str {
        match self {
            Self::MethodNotAllowed => "method_not_allowed",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::PayloadTooLarge => "payload_too_large",
            Self::RequestTimeout => "request_timeout",
            Self::InvalidRequest => "invalid_request",
            Self::OriginNotAllowed => "origin_not_allowed",
            Self::InvalidEmail => "invalid_email",
            Self::ConsentRequired => "consent_required",
            Self::UnknownList | Self::NoListTicked => "unknown_list",
            Self::InvalidSource => "invalid_source",
            Self::UnknownTag => "unknown_tag",
            Self::InvalidField => "invalid_field",
            Self::DomainNotAllowed => "domain_not_allowed",
            Self::RateLimited { .. } => "rate_limited",
            Self::StorageUnavailable => "storage_unavailable",
        }
    }

    /// The plain-language message on the re-rendered form, in the list's language.
    fn message(self, t: &'static Messages) -> &'static Text {
        let s = &t.signup;
        match self {
            Self::MethodNotAllowed | Self::InvalidRequest | Self::RequestTimeout => &s.unreadable,
            Self::UnsupportedMediaType => &s.unsupported,
            Self::PayloadTooLarge => &s.too_large,
            Self::OriginNotAllowed => &s.origin_not_allowed,
            Self::InvalidEmail => &s.invalid_email,
            Self::ConsentRequired => &s.consent_required,
            Self::UnknownList => &s.unknown_list,
            Self::NoListTicked => &s.no_list_ticked,
            Self::InvalidSource => &s.invalid_source,
            Self::UnknownTag => &s.unknown_tag,
            // `Refused::message` names the field; this is its general form.
            Self::InvalidField => &s.field_invalid,
            Self::DomainNotAllowed => &s.domain_not_allowed,
            Self::RateLimited { .. } => &s.rate_limited,
            Self::StorageUnavailable => &s.storage_unavailable,
        }
    }

    fn retry_after(self) -> Option<u64> {
        match self {
            Self::RateLimited { retry_after_secs } => Some(retry_after_secs),
            Self::StorageUnavailable => Some(error_pages::STORAGE_RETRY_AFTER_SECS),
            _ => None,
        }
    }
}

/// How to answer this request: JSON or HTML, where to return to, which CORS origin to allow.
struct Answer<'a> {
    config: &'a Config,
    json: bool,
    /// The lists the signup names, each once; the first names the "check your inbox" page.
    lists: Vec<&'a ListConfig>,
    /// The lists the hosted form offered, to show again after an error.
    offered: Vec<&'a ListConfig>,
    return_to: Option<Url>,
    cors_origin: Option<String>,
    /// The webmail of the address's domain, for the "open your inbox" link of a success.
    inbox: Option<&'static Provider>,
    /// What the visitor sent for the offered lists' fields, to show again after an error.
    typed_fields: Vec<(String, String)>,
    /// The field an `invalid_field` refusal is about.
    refused_field: Option<Refused<'a>>,
    /// Whether the form's consent said yes, to show the box as the visitor left it.
    consented: bool,
    /// The form's `lang` field and the browser's `Accept-Language`: the visitor's language on
    /// each list ([`ListConfig::visitor_language`]).
    lang: Option<String>,
    accept_language: Option<String>,
}

impl<'a> Answer<'a> {
    /// The visitor's language on `list`: from the request alone, whatever the address.
    fn language(&self, list: &ListConfig) -> Language {
        list.visitor_language(self.lang.as_deref(), self.accept_language.as_deref())
    }

    /// `lang=CODE` for a page of the first list, when it serves several languages.
    fn lang_pair(&self) -> Option<(&'static str, &'static str)> {
        let list = self.list().filter(|list| list.is_multilingual())?;
        Some(("lang", self.language(list).code()))
    }

    fn builder(&self, status: StatusCode) -> HttpResponseBuilder {
        let mut builder = HttpResponse::build(status);
        builder.insert_header((header::VARY, "Origin"));
        if let Some(origin) = &self.cors_origin {
            builder.insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.as_str()));
        }
        builder
    }

    fn list(&self) -> Option<&'a ListConfig> {
        self.lists.first().copied()
    }

    /// Counts `outcome` in the signup metric, once per named list (or under `none`).
    fn count(&self, outcome: &'static str) {
        if self.lists.is_empty() {
            crate::metrics::signup(crate::metrics::series::NO_LIST.to_owned(), outcome);
        }
        for list in &self.lists {
            crate::metrics::signup(list.id.as_ref().to_owned(), outcome);
        }
    }

    /// The one success answer, identical for every state of the address: "check your inbox",
    /// or in surge mode a request to press to send (`send`: the signed send token). Counts the
    /// signup's `source` for the status page too.
    fn success(&self, send: Option<String>, source: Option<&Source>) -> HttpResponse {
        self.count("accepted");
        for list in &self.lists {
            crate::metrics::accepted_source(list.id.as_ref(), source.map(AsRef::as_ref));
        }
        match send {
            Some(token) => self.press_to_send(&token),
            None => self.success_answer(),
        }
    }

    /// What a filled honeypot gets: the success answer (in surge mode with a send token that
    /// names nothing), counted apart.
    fn honeypot(&self, send: Option<String>) -> HttpResponse {
        self.count("honeypot");
        match send {
            Some(token) => self.press_to_send(&token),
            None => self.success_answer(),
        }
    }

    /// Surge mode: JSON clients are told to send the token to `POST /api/send`; browsers go to
    /// the page with the button (carrying a valid `return_to` along, for after the press).
    fn press_to_send(&self, token: &str) -> HttpResponse {
        if self.json {
            let body = self.with_inbox(serde_json::json!({"ok": true, "next": "send_confirmation", "send": token}));
            return self.builder(StatusCode::ACCEPTED).json(body);
        }
        let mut pairs = vec![("list", self.list().map_or("", |list| list.id.as_ref())), ("send", token)];
        pairs.extend(self.lang_pair());
        if let Some(url) = &self.return_to {
            pairs.push(("return_to", url.as_str()));
        }
        pairs.extend(self.inbox_pair());
        let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        let location = crate::web::frame::href(self.config, &format!("/check-inbox?{query}"));
        self.builder(StatusCode::SEE_OTHER).insert_header((header::LOCATION, location)).finish()
    }

    fn success_answer(&self) -> HttpResponse {
        if self.json {
            let body = self.with_inbox(serde_json::json!({"ok": true, "next": "confirm_email"}));
            return self.builder(StatusCode::ACCEPTED).json(body);
        }
        let location = match &self.return_to {
            Some(url) => {
                with_query(url, &[[("signup", "check-inbox")].as_slice(), self.inbox_pair().as_slice()].concat())
            }
            None => {
                let mut pairs: Vec<(&str, &str)> =
                    self.list().map(|list| ("list", list.id.as_ref())).into_iter().collect();
                pairs.extend(self.lang_pair());
                pairs.extend(self.inbox_pair());
                let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
                let path = if query.is_empty() { "/check-inbox".to_owned() } else { format!("/check-inbox?{query}") };
                crate::web::frame::href(self.config, &path)
            }
        };
        self.builder(StatusCode::SEE_OTHER).insert_header((header::LOCATION, location)).finish()
    }

    /// `inbox=ID` for the page a browser is sent to, when the visitor's provider is known.
    fn inbox_pair(&self) -> Option<(&'static str, &'static str)> {
        self.inbox.map(|provider| ("inbox", provider.id))
    }

    /// A JSON success answer with its `inbox` member, when the visitor's provider is known.
    fn with_inbox(&self, mut body: serde_json::Value) -> serde_json::Value {
        if let (Some(provider), Some(list), Some(object)) = (self.inbox, self.list(), body.as_object_mut()) {
            object.insert("inbox".to_owned(), inbox::json(provider, list));
        }
        body
    }

    fn refuse(&self, refusal: Refusal, typed_email: &str) -> HttpResponse {
        self.count(refusal.code());
        let mut builder = self.builder(refusal.status());
        if let Some(seconds) = refusal.retry_after() {
            builder.insert_header((header::RETRY_AFTER, seconds.to_string()));
        }
        if refusal == Refusal::MethodNotAllowed {
            builder.insert_header((header::ALLOW, "POST, OPTIONS"));
        }
        let field = self.refused_field.filter(|_| refusal == Refusal::InvalidField).map(|refused| refused.spec);
        if self.json {
            let mut body = serde_json::json!({"ok": false, "error": refusal.code()});
            if let (Some(spec), Some(object)) = (field, body.as_object_mut()) {
                object.insert("field".to_owned(), spec.name.as_ref().into());
            }
            return builder.json(body);
        }
        if let Some(url) = &self.return_to {
            let mut pairs = vec![("signup", "error"), ("reason", refusal.code())];
            pairs.extend(field.map(|spec| ("field", spec.name.as_ref())));
            let location = with_query(url, &pairs);
            let mut redirect = self.builder(StatusCode::SEE_OTHER);
            return redirect.insert_header((header::LOCATION, location)).finish();
        }
        // The form the visitor saw: the hosted multi-list form names what it offered.
        let fallback = self.list().or_else(|| self.config.default_list()).or(self.config.lists.first());
        let offered = if self.offered.len() > 1 { self.offered.clone() } else { fallback.into_iter().collect() };
        let language = offered.first().map_or_else(Language::english, |first| self.language(first));
        let Some(mut page) = SignupPage::new(self.config, &offered, &self.lists, language) else {
            let english = Language::english().messages();
            return builder.content_type("text/plain; charset=utf-8").body(refusal.message(english).to_string());
        };
        let message = match self.refused_field {
            Some(refused) if refusal == Refusal::InvalidField => refused.message(page.chrome.t),
            _ => refusal.message(page.chrome.t).to_string(),
        };
        page.email = typed_email;
        page.error = Some(&message);
        page.error_on_lists = refusal == Refusal::NoListTicked && !page.choices.is_empty();
        for form_field in &mut page.fields {
            form_field.value = typed_value(&self.typed_fields, form_field.spec.name.as_ref()).unwrap_or_default();
            form_field.invalid = field.is_some_and(|spec| spec.name == form_field.spec.name);
        }
        page.error_on_field = field.is_some();
        page.consented = self.consented;
        let page = html(refusal.status(), &page);
        // Keep the status, Retry-After, Allow and CORS headers decided above.
        let mut response = builder.content_type("text/html; charset=utf-8").body(page.into_body());
        response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// What the visitor sent for the field `name`, if anything.
fn typed_value(typed: &[(String, String)], name: &str) -> Option<String> {
    typed.iter().find(|(seen, _)| seen == name).map(|(_, value)| value.clone())
}

fn public_origin(config: &Config) -> String {
    config.server.public_url.origin().ascii_serialization()
}

/// The lists a signup names, each once, in order; `None` if one of them is not configured. A
/// signup that names none is for the only list, if there is just one.
fn named_lists<'a>(config: &'a Config, ids: &[String]) -> Option<Vec<&'a ListConfig>> {
    if ids.is_empty() {
        return config.default_list().map(|list| vec![list]);
    }
    let mut lists: Vec<&ListConfig> = Vec::with_capacity(ids.len().min(config.lists.len()));
    for id in ids {
        let list = config.list(id)?;
        if !lists.iter().any(|named| named.id == list.id) {
            lists.push(list);
        }
    }
    Some(lists)
}

/// The empty form for `lists` (one, or a choice of several, none ticked), its hidden fields set
/// from the query string of `req`, if given.
fn empty_form(config: &Config, lists: &[&ListConfig], req: &HttpRequest) -> HttpResponse {
    let Some(first) = lists.first() else {
        return error_pages::not_found(config, req);
    };
    let Some(mut page) = SignupPage::new(config, lists, &[], body::page_language(req, first)) else {
        return error_pages::not_found(config, req);
    };
    for field in page.fields.iter_mut().filter(|field| field.is_hidden()) {
        field.value = body::query_param(req, field.spec.name.as_ref()).unwrap_or_default();
    }
    let mut response = html(StatusCode::OK, &page);
    if first.is_multilingual() {
        // Without `lang`, the page's language is the browser's: a cache must keep one per language.
        response.headers_mut().append(header::VARY, HeaderValue::from_static("Accept-Language"));
    }
    response
}

/// The tags of a signup, checked: each a valid word in the `tags` of at least one named list.
fn checked_tags(values: &[String], lists: &[&ListConfig]) -> Result<Vec<Tag>, ()> {
    values
        .iter()
        .filter(|value| !value.is_empty())
        .map(|value| {
            let tag = Tag::parse(value).map_err(|_| ())?;
            if lists.iter().any(|list| list.tags.contains(&tag)) { Ok(tag) } else { Err(()) }
        })
        .collect()
}

/// `GET /`: the form of the only list, or a choice of lists.
pub async fn index(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let config = &state.config;
    match config.default_list() {
        Some(list) => empty_form(config, &[list], &req),
        None => html(StatusCode::OK, &ListsPage { chrome: Chrome::general(config), lists: &config.lists }),
    }
}

/// `GET /signup?list=ID`, or with `list` repeated, a checkbox per list.
pub async fn signup_form(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let ids = body::query_params(&req, "list");
    if ids.is_empty() {
        return index(req, state).await;
    }
    match named_lists(&state.config, &ids) {
        Some(lists) => empty_form(&state.config, &lists, &req),
        None => error_pages::not_found(&state.config, &req),
    }
}

/// `POST /api/signup`.
pub async fn signup(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    let config = &state.config;
    let origin = request_origin(&req);
    let mut answer = Answer {
        config,
        json: body::accepts_json(&req),
        lists: Vec::new(),
        offered: Vec::new(),
        return_to: None,
        cors_origin: cors_origin(config, origin.as_ref()),
        inbox: None,
        typed_fields: Vec::new(),
        refused_field: None,
        consented: false,
        lang: None,
        accept_language: body::accept_language(&req).map(str::to_owned),
    };

    // 1. Content type and size.
    let kind = match body::body_kind(&req) {
        Ok(kind) => kind,
        Err(_) => return answer.refuse(Refusal::UnsupportedMediaType, ""),
    };
    answer.json |= kind == BodyKind::Json;
    let fields = match body::read_limited(&req, payload, config.server.max_body_bytes).await {
        Ok(bytes) => body::parse(kind, &req, bytes).await,
        Err(error) => Err(error),
    };
    let fields = match fields {
        Ok(fields) => fields,
        Err(BodyError::TooLarge) => return answer.refuse(Refusal::PayloadTooLarge, ""),
        Err(BodyError::UnsupportedMediaType) => return answer.refuse(Refusal::UnsupportedMediaType, ""),
        Err(BodyError::Malformed) => return answer.refuse(Refusal::InvalidRequest, ""),
        // `form::body_deadline` turns this into the 408; the refusal counts it as what it is.
        Err(BodyError::TimedOut) => return answer.refuse(Refusal::RequestTimeout, ""),
    };
    let typed_email = fields.email.as_deref().unwrap_or("");
    answer.consented = fields.consent;
    answer.lang.clone_from(&fields.lang);
    let named = named_lists(config, &fields.lists);
    answer.lists = named.clone().unwrap_or_default();
    answer.offered = named_lists(config, &fields.offered).unwrap_or_default();
    answer.return_to = answer.list().and_then(|list| allowed_return_to(list, fields.return_to.as_deref()));
    let shown = if answer.offered.len() > 1 { &answer.offered } else { &answer.lists };
    answer.typed_fields = signup_fields::declared(shown)
        .into_iter()
        .filter_map(|spec| {
            fields.field(spec.name.as_ref()).map(|value| (spec.name.as_ref().to_owned(), value.to_owned()))
        })
        .collect();

    // 2. Origin: it must suit every list named.
    if let Some(origin) = &origin
        && *origin != public_origin(config)
        && answer.lists.iter().any(|list| !list.allowed_origins.is_empty() && !list.allowed_origins.contains(origin))
    {
        return answer.refuse(Refusal::OriginNotAllowed, typed_email);
    }

    // 3. The honeypot: a bot gets what a person would get, and nothing is saved.
    if fields.website.as_deref().is_some_and(|value| !value.is_empty()) {
        tracing::debug!("honeypot filled; answered as success, nothing saved");
        // The link a person at that domain would get: the answer must not tell the two apart.
        if let Ok(email) = EmailAddress::parse(typed_email) {
            answer.inbox = state.domains.mail_check(email.domain()).await.provider;
        }
        let now = state.clock.now();
        let in_surge = answer.lists.iter().any(|list| state.surge.in_surge(list.id.as_ref(), now));
        let send = match (in_surge, answer.list()) {
            // A send id like any other, naming nothing: pressing it changes nothing.
            (true, Some(list)) => crate::config::tokens::new_send_id()
                .ok()
                .map(|send_id| state.keyring.sign_send(list.id.as_ref(), send_id, now)),
            _ => None,
        };
        return answer.honeypot(send);
    }

    // 4. The fields themselves.
    let Ok(email) = EmailAddress::parse(typed_email) else {
        return answer.refuse(Refusal::InvalidEmail, typed_email);
    };
    if !fields.consent {
        return answer.refuse(Refusal::ConsentRequired, typed_email);
    }
    let Some(lists) = named.filter(|lists| !lists.is_empty()) else {
        let refusal = if fields.lists.is_empty() && answer.offered.len() > 1 {
            Refusal::NoListTicked
        } else {
            Refusal::UnknownList
        };
        return answer.refuse(refusal, typed_email);
    };
    let source = match fields.source.as_deref().filter(|value| !value.is_empty()).map(Source::parse).transpose() {
        Ok(source) => source,
        Err(_) => {
            tracing::warn!(list = %lists[0].id, "the signup form sends a source that is not a word of a-z, 0-9, '.', '_', '-'");
            return answer.refuse(Refusal::InvalidSource, typed_email);
        }
    };
    let Ok(tags) = checked_tags(&fields.tags, &lists) else {
        tracing::warn!(list = %lists[0].id, "the signup form sends a tag that none of its lists has in `tags`");
        return answer.refuse(Refusal::UnknownTag, typed_email);
    };
    // The values are the visitor's own, never logged: only the code is counted.
    let field_values = match signup_fields::check(&lists, |name| fields.field(name)) {
        Ok(values) => values,
        Err(refused) => {
            answer.refused_field = Some(refused);
            return answer.refuse(Refusal::InvalidField, typed_email);
        }
    };
    // The domain last: the DNS is the slowest check of the step, and none of it depends on
    // what the database knows about the address.
    if state.domains.is_blocked(email.domain()) {
        return answer.refuse(Refusal::DomainNotAllowed, typed_email);
    }
    let mail = state.domains.mail_check(email.domain()).await;
    if mail.verdict == Verdict::NoMail {
        return answer.refuse(Refusal::InvalidEmail, typed_email);
    }
    // Like the checks above, it depends on the domain alone, never on the address's state.
    answer.inbox = mail.provider;

    // 5. and 6. Rate limit and durable record, in one group commit; answer after it.
    let (client, network) = body::client_of(&req, config);
    let signups = lists
        .iter()
        .zip(field_values)
        .map(|(list, fields)| {
            let allowed: Vec<Tag> = tags.iter().filter(|tag| list.tags.contains(tag)).cloned().collect();
            ListSignup { list_id: list.id.clone(), tags: Tag::join(&allowed), fields, language: answer.language(list) }
        })
        .collect();
    let request = SignupRequest { lists: signups, source: source.clone(), email, client, network };
    match crate::door::signup::record(state.recorder(), request).await {
        Ok(IntakeOutcome::Accepted) => answer.success(None, source.as_ref()),
        Ok(IntakeOutcome::Held { send_id }) => answer
            .success(Some(state.keyring.sign_send(lists[0].id.as_ref(), send_id, state.clock.now())), source.as_ref()),
        Ok(IntakeOutcome::RateLimited { retry_after_secs }) => {
            answer.refuse(Refusal::RateLimited { retry_after_secs }, typed_email)
        }
        Err(error) => {
            tracing::error!(error = %error, list = %lists[0].id, "signup not stored");
            answer.refuse(Refusal::StorageUnavailable, typed_email)
        }
    }
}

/// `OPTIONS /api/signup`: the CORS preflight for pages on an allowed origin. Other origins get
/// an answer without CORS headers, which the browser treats as a refusal.
pub async fn preflight(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let mut response = HttpResponse::NoContent();
    response.insert_header((header::ALLOW, "POST, OPTIONS")).insert_header((header::VARY, "Origin"));
    if let Some(origin) = cors_origin(&state.config, request_origin(&req).as_ref()) {
        response
            .insert_header((header::ACCESS_CONTROL_ALLOW_ORIGIN, origin))
            .insert_header((header::ACCESS_CONTROL_ALLOW_METHODS, "POST"))
            .insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, "Content-Type, Accept"))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, "86400"));
    }
    response.finish()
}

/// Any other method on `/api/signup`.
pub async fn method_not_allowed(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    let answer = Answer {
        config: &state.config,
        json: body::accepts_json(&req),
        lists: Vec::new(),
        offered: Vec::new(),
        return_to: None,
        cors_origin: None,
        inbox: None,
        typed_fields: Vec::new(),
        refused_field: None,
        consented: false,
        lang: None,
        accept_language: body::accept_language(&req).map(str::to_owned),
    };
    answer.refuse(Refusal::MethodNotAllowed, "")
}

/// `GET /check-inbox?list=ID`: the same page for every address (with a send token: surge mode's
/// page with the button).
pub async fn check_inbox(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    if let Some(surge_page) = super::send::surge_page(&req, &state) {
        return surge_page;
    }
    let list = body::list_param(&req).and_then(|id| state.config.list(&id));
    let chrome = match list {
        Some(list) => Chrome::for_list_in(&state.config, list, body::page_language(&req, list)),
        None => Chrome::general(&state.config),
    };
    let inbox = inbox::requested(&req).and_then(|provider| inbox::link(&state.config, list, provider, chrome.t));
    html(StatusCode::OK, &CheckInboxPage { chrome, list_name: list.map(|list| list.name.as_str()), inbox })
}
