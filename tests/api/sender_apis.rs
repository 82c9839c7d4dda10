//! The senders a destination hands subscribers to, as loopback HTTP/1.1 servers: one small
//! in-memory model per vendor — listmonk, Buttondown, Mailchimp, Brevo — written from each
//! vendor's documented API (`/work/shared/research/senders.md` §1.1–1.4), not from signupd's code.
//! Each checks the credential the way its vendor does, keeps the people it holds with their
//! standing on each list, and answers creates, duplicates, updates and lookups as documented.
//!
//! One core serves all four: it records every request with the status it got, and can be
//! scripted to answer the next requests with a given status and headers (a 429 and its reset
//! header, a 500, a 400 with a code), to be down (503 to everything, or its port closed), or to
//! answer slowly. One thread per connection, one request per connection (`Connection: close`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use md5::{Digest, Md5};
use serde_json::{Map, Value, json};

use crate::webhook_receiver::{Request, read_request};

// ---------------------------------------------------------------------------------------------
// What the tests see

/// The four senders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Listmonk,
    Buttondown,
    Mailchimp,
    Brevo,
}

impl Kind {
    pub const ALL: [Self; 4] = [Self::Listmonk, Self::Buttondown, Self::Mailchimp, Self::Brevo];

    /// The `kind` of a `[[destinations]]` table.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Listmonk => "listmonk",
            Self::Buttondown => "buttondown",
            Self::Mailchimp => "mailchimp",
            Self::Brevo => "brevo",
        }
    }

    /// The API root under the server's address (listmonk: its base URL, the paths start `/api`).
    fn root(self) -> &'static str {
        match self {
            Self::Listmonk => "",
            Self::Buttondown => "/v1",
            Self::Mailchimp => "/3.0",
            Self::Brevo => "/v3",
        }
    }

    /// The list (listmonk, Brevo) or audience (Mailchimp) the tests hand subscribers to;
    /// Buttondown has none.
    pub fn target(self) -> &'static str {
        match self {
            Self::Listmonk => "3",
            Self::Buttondown => "",
            Self::Mailchimp => "a1b2c3d4e5",
            Self::Brevo => "7",
        }
    }

    /// Whether the sender keeps tags on a subscriber.
    pub fn has_tags(self) -> bool {
        matches!(self, Self::Buttondown | Self::Mailchimp)
    }

    /// The status the vendor answers a wrong credential with: listmonk 403 (it has no 401), the
    /// others 401.
    pub fn wrong_credential_status(self) -> u16 {
        if self == Self::Listmonk { 403 } else { 401 }
    }

    /// A credential in the vendor's form, unique to this server.
    fn new_credential(self) -> String {
        let mut bytes = [0u8; 12];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).unwrap();
        let secret = hex::encode(bytes);
        match self {
            Self::Listmonk => format!("signupd-api:{secret}"),
            Self::Buttondown => format!("bd{secret}"),
            Self::Mailchimp => format!("{secret}-us6"),
            Self::Brevo => format!("xkeysib-{secret}"),
        }
    }
}

/// Where an address stands with a sender, on the tests' target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// listmonk `confirmed` on the list; Buttondown `regular`; Mailchimp `subscribed`; Brevo on
    /// the list.
    Subscribed,
    /// Waiting for the sender's own confirmation: listmonk `unconfirmed`, Buttondown
    /// `unactivated`, Mailchimp `pending`.
    Pending,
    /// listmonk `unsubscribed` on the list; Buttondown `unsubscribed`; Mailchimp `unsubscribed`;
    /// Brevo: the contact kept but not on the list (Brevo unsubscribes from a list by unlinking).
    Unsubscribed,
    /// Held, but neither of those (Buttondown `churned`, Mailchimp `archived`, listmonk not on
    /// the list).
    Other,
}

/// An answer as the server writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// JSON, or empty.
    pub body: String,
}

impl Answer {
    pub fn status(status: u16) -> Self {
        Self { status, headers: Vec::new(), body: String::new() }
    }

    pub fn json(status: u16, body: &Value) -> Self {
        Self { status, headers: vec![("content-type".into(), "application/json".into())], body: body.to_string() }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

/// A request as received, with the status it was answered.
#[derive(Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent (percent-encoded).
    pub target: String,
    /// Names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub status: u16,
}

impl std::fmt::Debug for Recorded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} → {} {}", self.method, self.target, self.status, String::from_utf8_lossy(&self.body))
    }
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The path without the query, percent-decoded.
    pub fn path(&self) -> String {
        decode(self.target.split('?').next().unwrap_or_default())
    }
}

/// A change the sender accepted (a 2xx that changed or re-confirmed an address), with where the
/// address stood on the target afterwards: the history of what reached the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effect {
    pub email: String,
    pub standing: Option<Standing>,
}

// ---------------------------------------------------------------------------------------------
// The server

/// One sender's API on 127.0.0.1. The accept loop stops when this is dropped.
pub struct SenderApi {
    pub kind: Kind,
    pub port: u16,
    shared: Arc<Shared>,
    /// To the accept loop.
    control: mpsc::Sender<Control>,
    /// From the accept loop: the port closed or listens again.
    done: mpsc::Receiver<()>,
}

/// What the accept loop is told to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    Close,
    Open,
    Stop,
}

impl std::fmt::Debug for SenderApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SenderApi({}, port {})", self.kind.as_str(), self.port)
    }
}

struct Shared {
    state: Mutex<State>,
}

struct State {
    kind: Kind,
    credential: String,
    requests: Vec<Recorded>,
    /// Answers for the next requests, before the model sees them.
    script: VecDeque<Answer>,
    /// 503 to everything.
    down: bool,
    /// Nothing listens on the port.
    port_closed: bool,
    /// How long each answer takes.
    delay: Duration,
    /// Addresses the sender's validation refuses.
    refused: BTreeSet<String>,
    effects: Vec<Effect>,
    model: Model,
}

impl SenderApi {
    pub fn start(kind: Kind) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = State {
            kind,
            credential: kind.new_credential(),
            requests: Vec::new(),
            script: VecDeque::new(),
            down: false,
            port_closed: false,
            delay: Duration::ZERO,
            refused: BTreeSet::new(),
            effects: Vec::new(),
            model: Model::new(kind),
        };
        let shared = Arc::new(Shared { state: Mutex::new(state) });
        let (control, orders) = mpsc::channel();
        let (ack, done) = mpsc::channel();
        let accepting = shared.clone();
        std::thread::spawn(move || accept_loop(listener, port, &accepting, &orders, &ack));
        Self { kind, port, shared, control, done }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The `url` of the `[[destinations]]` table.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}{}", self.port, self.kind.root())
    }

    pub fn target(&self) -> &'static str {
        self.kind.target()
    }

    /// The credential this sender accepts.
    pub fn credential(&self) -> String {
        self.state().credential.clone()
    }

    /// From now on only `credential` is accepted (the operator changed the key at the sender).
    pub fn accept_only(&self, credential: &str) {
        self.state().credential = credential.to_owned();
    }

    /// A credential this sender refuses, in the vendor's form.
    pub fn wrong_credential(&self) -> String {
        self.kind.new_credential()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    pub fn effects(&self) -> Vec<Effect> {
        self.state().effects.clone()
    }

    /// The standing of `email` after each accepted change about it, in order.
    pub fn history_of(&self, email: &str) -> Vec<Option<Standing>> {
        self.effects().into_iter().filter(|effect| effect.email == email).map(|effect| effect.standing).collect()
    }

    /// Where `email` stands on the target; `None`: the sender does not hold it.
    pub fn standing(&self, email: &str) -> Option<Standing> {
        let state = self.state();
        state.model.standing(state.kind, email)
    }

    /// The tags the sender keeps on `email` (Buttondown, Mailchimp).
    pub fn tags(&self, email: &str) -> Vec<String> {
        self.state().model.tags(email)
    }

    /// What the sender holds about `email`, as JSON (kind-specific fields).
    pub fn held(&self, email: &str) -> Value {
        self.state().model.held(email)
    }

    /// Every address the sender holds, and where it stands on the target.
    pub fn addresses(&self) -> BTreeMap<String, Option<Standing>> {
        let state = self.state();
        state
            .model
            .emails()
            .into_iter()
            .map(|email| (email.clone(), state.model.standing(state.kind, &email)))
            .collect()
    }

    /// The sender already holds `email`, standing so on the target.
    pub fn seed(&self, email: &str, standing: Standing) {
        let mut state = self.state();
        let kind = state.kind;
        state.model.seed(kind, email, standing);
    }

    /// The sender's validation refuses `email` (a 400 with the vendor's validation code).
    pub fn refuse(&self, email: &str) {
        self.state().refused.insert(email.to_owned());
    }

    /// The next `n` requests get `answer`, whatever they ask.
    pub fn answer_next(&self, n: usize, answer: &Answer) {
        self.state().script.extend(std::iter::repeat_n(answer.clone(), n));
    }

    /// The vendor's "too many requests", asking to wait `seconds`: `Retry-After` (listmonk has no
    /// limit of its own: a proxy in front of it; Buttondown documents it), Brevo's
    /// `x-sib-ratelimit-reset`; Mailchimp documents no header at all.
    pub fn rate_limited(&self, seconds: u64) -> Answer {
        let seconds = seconds.to_string();
        match self.kind {
            Kind::Listmonk => Answer::status(429).with_header("retry-after", &seconds),
            Kind::Buttondown => Answer::json(429, &json!({"code": "rate_limited", "detail": "Request was throttled."}))
                .with_header("retry-after", &seconds),
            Kind::Mailchimp => {
                problem(429, "Too Many Requests", "You have exceeded the limit of 10 simultaneous connections.")
            }
            Kind::Brevo => Answer::json(429, &json!({"code": "too_many_requests", "message": "Too many requests"}))
                .with_header("x-sib-ratelimit-limit", "10")
                .with_header("x-sib-ratelimit-remaining", "0")
                .with_header("x-sib-ratelimit-reset", &seconds),
        }
    }

    /// Whether a 429 of this sender names how long to wait.
    pub fn rate_limit_names_the_wait(&self) -> bool {
        self.kind != Kind::Mailchimp
    }

    /// 503 to every request until [`Self::come_back`].
    pub fn go_down(&self) {
        self.state().down = true;
    }

    /// Answers again, and listens again if its port was closed (on the same port).
    pub fn come_back(&self) {
        let reopen = {
            let mut state = self.state();
            state.down = false;
            std::mem::take(&mut state.port_closed)
        };
        if reopen {
            self.control.send(Control::Open).unwrap();
            self.done.recv_timeout(Duration::from_secs(10)).expect("the port listens again");
        }
    }

    /// Nothing listens on the port until [`Self::come_back`]: connections are refused.
    pub fn close_port(&self) {
        self.state().port_closed = true;
        self.control.send(Control::Close).unwrap();
        // Wakes the accept loop, which then closes the listener.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        self.done.recv_timeout(Duration::from_secs(10)).expect("the port closes");
    }

    /// Every answer takes `delay`.
    pub fn answer_slowly(&self, delay: Duration) {
        self.state().delay = delay;
    }

    /// Brevo's account as the operator shaped it: `f` changes its model.
    fn brevo(&self, f: impl FnOnce(&mut Brevo)) {
        match &mut self.state().model {
            Model::Brevo(model) => f(model),
            _ => panic!("{:?} is not Brevo", self.kind),
        }
    }

    /// Brevo: the account gets the contact attribute `name` of `category` and `kind` (`normal`,
    /// `text`), or loses it (`None`).
    pub fn brevo_attribute(&self, name: &str, described: Option<(&str, &str)>) {
        self.brevo(|model| {
            model.attributes.retain(|(held, _, _)| held != name);
            if let Some((category, kind)) = described {
                model.attributes.push((name.to_owned(), category.to_owned(), kind.to_owned()));
            }
        });
    }

    /// Brevo: a contact attribute the account does not have is refused with a 400 naming it,
    /// instead of being dropped silently (Brevo documents neither; the tests try both).
    pub fn brevo_refuses_unknown_attributes(&self) {
        self.brevo(|model| model.refuses_unknown_attributes = true);
    }
}

impl Drop for SenderApi {
    fn drop(&mut self) {
        if self.control.send(Control::Stop).is_ok() {
            let _ = TcpStream::connect(("127.0.0.1", self.port));
        }
    }
}

/// Accepts connections, one thread each, until told to close the port (then waits to be told to
/// open it again, on the same port) or to stop. Each order is looked at when a connection comes
/// in, so whoever gives one connects once to wake it.
fn accept_loop(
    mut listener: TcpListener,
    port: u16,
    shared: &Arc<Shared>,
    orders: &mpsc::Receiver<Control>,
    ack: &mpsc::Sender<()>,
) {
    loop {
        let Ok((stream, _)) = listener.accept() else { continue };
        match orders.try_recv() {
            Err(mpsc::TryRecvError::Empty) => {
                let shared = shared.clone();
                std::thread::spawn(move || handle(stream, &shared));
                continue;
            }
            Ok(Control::Stop | Control::Open) | Err(mpsc::TryRecvError::Disconnected) => return,
            Ok(Control::Close) => {}
        }
        drop((stream, listener));
        let _ = ack.send(());
        match orders.recv() {
            Ok(Control::Open) => {}
            _ => return,
        }
        listener = TcpListener::bind(("127.0.0.1", port))
            .unwrap_or_else(|error| panic!("listen again on 127.0.0.1:{port}: {error}"));
        let _ = ack.send(());
    }
}

/// Reads one request, records it, answers it (as scripted, or as the vendor would) and closes
/// the connection.
fn handle(mut stream: TcpStream, shared: &Shared) {
    let Some(Request { method, target, headers, body }) = read_request(&stream) else { return };
    let mut request = Recorded { method, target, headers, body, status: 0 };
    let (answer, delay) = {
        let mut state = shared.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let answer = if let Some(scripted) = state.script.pop_front() {
            scripted
        } else if state.down {
            Answer::status(503)
        } else {
            state.answer(&request)
        };
        request.status = answer.status;
        state.requests.push(request);
        (answer, state.delay)
    };
    #[allow(clippy::disallowed_methods, reason = "the sender's own slowness, not a test waiting for something")]
    std::thread::sleep(delay);
    let mut head = format!("HTTP/1.1 {} {}\r\nConnection: close\r\n", answer.status, reason(answer.status));
    for (name, value) in &answer.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if answer.status != 204 {
        head.push_str(&format!("Content-Length: {}\r\n", answer.body.len()));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    if answer.status != 204 {
        let _ = stream.write_all(answer.body.as_bytes());
    }
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Write);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Scripted",
    }
}

/// Percent-decoding of a path segment or query value.
fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// A request taken apart: the path below the API root as decoded segments, the query, the body.
struct Call<'a> {
    method: &'a str,
    segments: Vec<String>,
    query: BTreeMap<String, String>,
    body: Value,
    request: &'a Recorded,
}

impl Call<'_> {
    fn segments(&self) -> Vec<&str> {
        self.segments.iter().map(String::as_str).collect()
    }
}

impl State {
    /// The vendor's answer to `request`, changing the model as the vendor would.
    fn answer(&mut self, request: &Recorded) -> Answer {
        let (path, query) = request.target.split_once('?').unwrap_or((&request.target, ""));
        let Some(below) = path.strip_prefix(self.kind.root()) else {
            return Answer::status(404);
        };
        let call = Call {
            method: &request.method,
            segments: below.split('/').filter(|s| !s.is_empty()).map(decode).collect(),
            query: url::form_urlencoded::parse(query.as_bytes()).into_owned().collect(),
            body: serde_json::from_slice(&request.body).unwrap_or(Value::Null),
            request,
        };
        let credential = self.credential.clone();
        let (kind, refused) = (self.kind, self.refused.clone());
        let mut touched = Vec::new();
        let answer = match &mut self.model {
            Model::Listmonk(model) => model.answer(&call, &credential, &refused, &mut touched),
            Model::Buttondown(model) => model.answer(&call, &credential, &refused, &mut touched),
            Model::Mailchimp(model) => model.answer(&call, &credential, &refused, &mut touched),
            Model::Brevo(model) => model.answer(&call, &credential, &refused, &mut touched),
        };
        if (200..300).contains(&answer.status) {
            for email in touched {
                let standing = self.model.standing(kind, &email);
                self.effects.push(Effect { email, standing });
            }
        }
        answer
    }
}

// ---------------------------------------------------------------------------------------------
// The vendors

enum Model {
    Listmonk(Listmonk),
    Buttondown(Buttondown),
    Mailchimp(Mailchimp),
    Brevo(Brevo),
}

impl Model {
    fn new(kind: Kind) -> Self {
        match kind {
            Kind::Listmonk => Self::Listmonk(Listmonk::default()),
            Kind::Buttondown => Self::Buttondown(Buttondown::default()),
            Kind::Mailchimp => Self::Mailchimp(Mailchimp::default()),
            Kind::Brevo => Self::Brevo(Brevo::default()),
        }
    }

    fn standing(&self, kind: Kind, email: &str) -> Option<Standing> {
        let email = email.to_lowercase();
        match self {
            Self::Listmonk(model) => {
                let list: i64 = kind.target().parse().unwrap();
                let held = model.subscribers.iter().find(|s| s.email == email)?;
                Some(match held.lists.get(&list).map(String::as_str) {
                    Some("confirmed") => Standing::Subscribed,
                    Some("unconfirmed") => Standing::Pending,
                    Some("unsubscribed") => Standing::Unsubscribed,
                    _ => Standing::Other,
                })
            }
            Self::Buttondown(model) => {
                let held = model.subscribers.iter().find(|s| s.email == email)?;
                Some(match held.kind.as_str() {
                    "regular" | "gifted" | "premium" => Standing::Subscribed,
                    "unactivated" => Standing::Pending,
                    "unsubscribed" => Standing::Unsubscribed,
                    _ => Standing::Other,
                })
            }
            Self::Mailchimp(model) => {
                let held = model.members.get(&subscriber_hash(&email))?;
                Some(match held.status.as_str() {
                    "subscribed" => Standing::Subscribed,
                    "pending" => Standing::Pending,
                    "unsubscribed" => Standing::Unsubscribed,
                    _ => Standing::Other,
                })
            }
            Self::Brevo(model) => {
                let list: i64 = kind.target().parse().unwrap();
                let held = model.contacts.iter().find(|c| c.email == email)?;
                Some(if held.lists.contains(&list) { Standing::Subscribed } else { Standing::Unsubscribed })
            }
        }
    }

    fn emails(&self) -> Vec<String> {
        match self {
            Self::Listmonk(model) => model.subscribers.iter().map(|s| s.email.clone()).collect(),
            Self::Buttondown(model) => model.subscribers.iter().map(|s| s.email.clone()).collect(),
            Self::Mailchimp(model) => model.members.values().map(|m| m.email.clone()).collect(),
            Self::Brevo(model) => model.contacts.iter().map(|c| c.email.clone()).collect(),
        }
    }

    fn tags(&self, email: &str) -> Vec<String> {
        let email = email.to_lowercase();
        match self {
            Self::Buttondown(model) => {
                model.subscribers.iter().find(|s| s.email == email).map(|s| s.tags.clone()).unwrap_or_default()
            }
            Self::Mailchimp(model) => model
                .members
                .get(&subscriber_hash(&email))
                .map(|m| m.tags.iter().cloned().collect())
                .unwrap_or_default(),
            Self::Listmonk(_) | Self::Brevo(_) => Vec::new(),
        }
    }

    fn held(&self, email: &str) -> Value {
        let email = email.to_lowercase();
        match self {
            Self::Listmonk(model) => model.subscribers.iter().find(|s| s.email == email).map_or(Value::Null, |s| {
                json!({"id": s.id, "email": s.email, "name": s.name, "status": s.status, "attribs": s.attribs,
                       "lists": s.lists.iter().map(|(id, status)| (id.to_string(), json!(status))).collect::<Map<_, _>>()})
            }),
            Self::Buttondown(model) => {
                model.subscribers.iter().find(|s| s.email == email).map_or(Value::Null, Buttondown::subscriber_json)
            }
            Self::Mailchimp(model) => {
                model.members.get(&subscriber_hash(&email)).map_or(Value::Null, Mailchimp::member_json)
            }
            Self::Brevo(model) => model.contacts.iter().find(|c| c.email == email).map_or(Value::Null, |c| {
                json!({"id": c.id, "email": c.email, "listIds": c.lists, "emailBlacklisted": c.blacklisted,
                       "attributes": c.attributes})
            }),
        }
    }

    fn seed(&mut self, kind: Kind, email: &str, standing: Standing) {
        let email = email.to_lowercase();
        match self {
            Self::Listmonk(model) => {
                let list: i64 = kind.target().parse().unwrap();
                let status = match standing {
                    Standing::Subscribed => "confirmed",
                    Standing::Pending => "unconfirmed",
                    Standing::Unsubscribed => "unsubscribed",
                    Standing::Other => panic!("seed listmonk with a status on the list"),
                };
                model.next_id += 1;
                let name = email.split('@').next().unwrap_or_default().to_owned();
                let lists = BTreeMap::from([(list, status.to_owned())]);
                model.subscribers.push(ListmonkSubscriber {
                    id: model.next_id,
                    email,
                    name,
                    status: "enabled".into(),
                    attribs: json!({}),
                    lists,
                });
            }
            Self::Buttondown(model) => {
                let kind = match standing {
                    Standing::Subscribed => "regular",
                    Standing::Pending => "unactivated",
                    Standing::Unsubscribed => "unsubscribed",
                    Standing::Other => "churned",
                };
                model.subscribers.push(ButtondownSubscriber {
                    id: uuid::Uuid::new_v4().to_string(),
                    email,
                    kind: kind.into(),
                    tags: Vec::new(),
                    metadata: Map::new(),
                });
            }
            Self::Mailchimp(model) => {
                let status = match standing {
                    Standing::Subscribed => "subscribed",
                    Standing::Pending => "pending",
                    Standing::Unsubscribed => "unsubscribed",
                    Standing::Other => "archived",
                };
                model.members.insert(
                    subscriber_hash(&email),
                    Member {
                        email,
                        status: status.into(),
                        tags: BTreeSet::new(),
                        timestamp_opt: None,
                        timestamp_signup: None,
                    },
                );
            }
            Self::Brevo(model) => {
                let list: i64 = kind.target().parse().unwrap();
                let lists = match standing {
                    Standing::Subscribed => BTreeSet::from([list]),
                    // Unlinked from the target, still on another list.
                    Standing::Unsubscribed => BTreeSet::from([BREVO_OTHER_LIST]),
                    Standing::Pending | Standing::Other => panic!("Brevo has no pending contacts"),
                };
                model.next_id += 1;
                model.contacts.push(Contact {
                    id: model.next_id,
                    email,
                    lists,
                    blacklisted: false,
                    attributes: Map::new(),
                });
            }
        }
    }
}

/// Mailchimp's `subscriber_hash`: the hex MD5 of the lower-cased address.
pub fn subscriber_hash(email: &str) -> String {
    hex::encode(Md5::digest(email.to_lowercase().as_bytes()))
}

/// The string field `name` of a JSON body.
fn text<'a>(body: &'a Value, name: &str) -> Option<&'a str> {
    body.get(name).and_then(Value::as_str)
}

fn numbers(body: &Value, name: &str) -> Vec<i64> {
    body.get(name)
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

// --- listmonk (§1.1) ---------------------------------------------------------------------------

/// listmonk v4+: `Authorization: token user:token` (or Basic, kept for compatibility); a bad
/// credential is 403, never 401. Subscribers with a status per list; 409 for an address it holds;
/// `search` is a case-insensitive regular expression over name and email.
#[derive(Default)]
struct Listmonk {
    subscribers: Vec<ListmonkSubscriber>,
    next_id: i64,
}

struct ListmonkSubscriber {
    id: i64,
    email: String,
    name: String,
    status: String,
    attribs: Value,
    /// List id → `unconfirmed`, `confirmed` or `unsubscribed`.
    lists: BTreeMap<i64, String>,
}

/// The lists this listmonk has: the target, and another one.
const LISTMONK_LISTS: [(i64, &str, &str); 2] = [(3, "Newsletter", "double"), (4, "Other", "single")];

impl Listmonk {
    fn answer(
        &mut self,
        call: &Call<'_>,
        credential: &str,
        refused: &BTreeSet<String>,
        touched: &mut Vec<String>,
    ) -> Answer {
        let authorization = call.request.header("authorization").unwrap_or_default();
        let basic = format!("Basic {}", STANDARD.encode(credential));
        if authorization != format!("token {credential}") && authorization != basic {
            return Answer::json(403, &json!({"message": "invalid API credentials"}));
        }
        match (call.method, call.segments().as_slice()) {
            ("POST", ["api", "subscribers"]) => self.create(&call.body, refused, touched),
            ("GET", ["api", "subscribers"]) => self.search(call),
            ("PUT", ["api", "subscribers", "lists"]) => self.change_lists(&call.body, touched),
            ("GET", ["api", "lists", id]) => {
                let Some((id, name, optin)) = LISTMONK_LISTS.iter().find(|(list, ..)| list.to_string() == *id) else {
                    return Answer::json(400, &json!({"message": "List not found."}));
                };
                let count = self.subscribers.iter().filter(|s| s.lists.contains_key(id)).count();
                Answer::json(
                    200,
                    &json!({"data": {"id": id, "uuid": "5e1d2c3b-0000-4000-8000-000000000003", "name": name,
                                      "type": "public", "optin": optin, "subscriber_count": count}}),
                )
            }
            ("DELETE", ["api", "subscribers", id]) => {
                self.subscribers.retain(|s| s.id.to_string() != *id);
                Answer::json(200, &json!({"data": true}))
            }
            _ => Answer::json(404, &json!({"message": "Unknown route"})),
        }
    }

    fn create(&mut self, body: &Value, refused: &BTreeSet<String>, touched: &mut Vec<String>) -> Answer {
        let email = text(body, "email").unwrap_or_default().trim().to_lowercase();
        if !email.contains('@') || refused.contains(&email) {
            return Answer::json(400, &json!({"message": format!("Invalid email: {email}")}));
        }
        if self.subscribers.iter().any(|s| s.email == email) {
            return Answer::json(409, &json!({"message": "E-mail already exists."}));
        }
        let preconfirm = body.get("preconfirm_subscriptions").and_then(Value::as_bool).unwrap_or(false);
        let status = if preconfirm { "confirmed" } else { "unconfirmed" };
        let lists = numbers(body, "lists")
            .into_iter()
            .filter(|id| LISTMONK_LISTS.iter().any(|(list, ..)| list == id))
            .map(|id| (id, status.to_owned()))
            .collect();
        let name = match text(body, "name") {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => email.split('@').next().unwrap_or_default().to_owned(),
        };
        self.next_id += 1;
        let subscriber = ListmonkSubscriber {
            id: self.next_id,
            email: email.clone(),
            name,
            status: text(body, "status").unwrap_or("enabled").to_owned(),
            attribs: body.get("attribs").cloned().unwrap_or(json!({})),
            lists,
        };
        let answer = json!({"data": {"id": subscriber.id, "email": email, "name": subscriber.name, "status": subscriber.status}});
        self.subscribers.push(subscriber);
        touched.push(email);
        Answer::json(200, &answer)
    }

    fn search(&self, call: &Call<'_>) -> Answer {
        let pattern = call.query.get("search").cloned().unwrap_or_default();
        let Some(pattern) = Pattern::parse(&pattern) else {
            // Postgres refuses the expression: listmonk answers the database error.
            return Answer::json(500, &json!({"message": "Error fetching subscribers"}));
        };
        let results: Vec<Value> = self
            .subscribers
            .iter()
            .filter(|s| pattern.is_found_in(&s.name) || pattern.is_found_in(&s.email))
            .map(|s| json!({"id": s.id, "email": s.email, "name": s.name, "status": s.status}))
            .collect();
        let per_page = call.query.get("per_page").and_then(|n| n.parse::<usize>().ok()).unwrap_or(20);
        let total = results.len();
        let page: Vec<Value> = results.into_iter().take(per_page).collect();
        Answer::json(200, &json!({"data": {"results": page, "total": total, "per_page": per_page, "page": 1}}))
    }

    fn change_lists(&mut self, body: &Value, touched: &mut Vec<String>) -> Answer {
        let ids = numbers(body, "ids");
        if ids.is_empty() {
            return Answer::json(400, &json!({"message": "No IDs given."}));
        }
        let lists = numbers(body, "target_list_ids");
        let action = text(body, "action").unwrap_or_default();
        let status = text(body, "status").unwrap_or_default();
        if action == "add" && !["confirmed", "unconfirmed", "unsubscribed"].contains(&status) {
            // Cast to a Postgres enum: a database error.
            return Answer::json(500, &json!({"message": "Error updating subscriptions"}));
        }
        if !["add", "remove", "unsubscribe"].contains(&action) {
            return Answer::json(400, &json!({"message": "Invalid action."}));
        }
        for subscriber in self.subscribers.iter_mut().filter(|s| ids.contains(&s.id)) {
            for list in lists.iter().filter(|id| LISTMONK_LISTS.iter().any(|(list, ..)| list == *id)) {
                match action {
                    "add" => {
                        subscriber.lists.insert(*list, status.to_owned());
                    }
                    "unsubscribe" => {
                        if let Some(current) = subscriber.lists.get_mut(list) {
                            "unsubscribed".clone_into(current);
                        }
                    }
                    _ => {
                        subscriber.lists.remove(list);
                    }
                }
            }
            touched.push(subscriber.email.clone());
        }
        Answer::json(200, &json!({"data": true}))
    }
}

/// The part of a Postgres regular expression signupd's lookups need: literals, `\` escapes,
/// `.`, the anchors `^` and `$`, and `*`, `+`, `?` after one atom. Matched case-insensitively
/// anywhere in the text, as `~*` does. `None` for anything else (the fake would misjudge it).
#[derive(Debug)]
struct Pattern {
    start: bool,
    end: bool,
    atoms: Vec<(Atom, Repeat)>,
}

#[derive(Debug, Clone, Copy)]
enum Atom {
    Any,
    Char(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeat {
    Once,
    Optional,
    Many,
    OneOrMore,
}

impl Pattern {
    fn parse(pattern: &str) -> Option<Self> {
        let mut chars = pattern.chars().peekable();
        let start = chars.next_if_eq(&'^').is_some();
        let (mut atoms, mut end) = (Vec::new(), false);
        while let Some(c) = chars.next() {
            let atom = match c {
                '\\' => Atom::Char(chars.next()?.to_ascii_lowercase()),
                '.' => Atom::Any,
                '$' if chars.peek().is_none() => {
                    end = true;
                    break;
                }
                '(' | ')' | '[' | ']' | '{' | '}' | '|' | '*' | '+' | '?' | '^' | '$' => return None,
                c => Atom::Char(c.to_ascii_lowercase()),
            };
            let repeat = match chars.peek() {
                Some('*') => Repeat::Many,
                Some('+') => Repeat::OneOrMore,
                Some('?') => Repeat::Optional,
                _ => Repeat::Once,
            };
            if repeat != Repeat::Once {
                chars.next();
            }
            atoms.push((atom, repeat));
        }
        Some(Self { start, end, atoms })
    }

    fn is_found_in(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().map(|c| c.to_ascii_lowercase()).collect();
        let starts = if self.start { 0..=0 } else { 0..=text.len() };
        starts.into_iter().any(|at| self.matches_at(&self.atoms, &text[at..]))
    }

    fn matches_at(&self, atoms: &[(Atom, Repeat)], text: &[char]) -> bool {
        let fits = |atom: Atom, c: char| match atom {
            Atom::Any => true,
            Atom::Char(wanted) => wanted == c,
        };
        let Some(((atom, repeat), rest)) = atoms.split_first() else {
            return !self.end || text.is_empty();
        };
        let (least, most) = match repeat {
            Repeat::Once => (1, 1),
            Repeat::Optional => (0, 1),
            Repeat::Many => (0, usize::MAX),
            Repeat::OneOrMore => (1, usize::MAX),
        };
        let mut taken = 0;
        while taken < most && taken < text.len() && fits(*atom, text[taken]) {
            taken += 1;
        }
        (least..=taken).rev().any(|n| self.matches_at(rest, &text[n..]))
    }
}

// --- Buttondown (§1.2) -------------------------------------------------------------------------

/// Buttondown API v1: `Authorization: Token <key>`, 401 otherwise. One newsletter; subscribers
/// with a `type`. A POST for an address it holds is a 400 `email_already_exists` unless
/// `X-Buttondown-Collision-Behavior: add` merges it; `X-Idempotency-Key` replays the first
/// answer. Unknown fields are a 422.
#[derive(Default)]
struct Buttondown {
    subscribers: Vec<ButtondownSubscriber>,
    /// Idempotency key → the answer given.
    replays: BTreeMap<String, Answer>,
}

struct ButtondownSubscriber {
    id: String,
    email: String,
    /// `type`: `regular`, `unactivated`, `unsubscribed`, …
    kind: String,
    tags: Vec<String>,
    metadata: Map<String, Value>,
}

/// The fields `SubscriberInput` has (additionalProperties = false).
const BUTTONDOWN_FIELDS: [&str; 11] = [
    "email_address",
    "type",
    "tags",
    "metadata",
    "notes",
    "referrer_url",
    "utm_campaign",
    "utm_medium",
    "utm_source",
    "referring_subscriber_id",
    "ip_address",
];

impl Buttondown {
    fn subscriber_json(subscriber: &ButtondownSubscriber) -> Value {
        json!({"id": subscriber.id, "email_address": subscriber.email, "type": subscriber.kind,
               "tags": subscriber.tags, "metadata": subscriber.metadata})
    }

    fn answer(
        &mut self,
        call: &Call<'_>,
        credential: &str,
        refused: &BTreeSet<String>,
        touched: &mut Vec<String>,
    ) -> Answer {
        if call.request.header("authorization") != Some(&format!("Token {credential}")) {
            return Answer::json(401, &json!({"code": "authentication_invalid", "detail": "Invalid API key."}));
        }
        match (call.method, call.segments().as_slice()) {
            ("POST", ["subscribers"]) => {
                let key = call.request.header("x-idempotency-key").map(str::to_owned);
                if let Some(replay) = key.as_ref().and_then(|key| self.replays.get(key)) {
                    return replay.clone();
                }
                let answer = self.create(call, refused, touched);
                if let Some(key) = key {
                    self.replays.insert(key, answer.clone());
                }
                answer
            }
            ("PATCH", ["subscribers", id_or_email]) => {
                let wanted = id_or_email.to_lowercase();
                let Some(subscriber) = self.subscribers.iter_mut().find(|s| s.email == wanted || s.id == wanted) else {
                    return Answer::json(404, &json!({"code": "subscriber_not_found", "detail": "Not found."}));
                };
                if let Some(kind) = text(&call.body, "type") {
                    kind.clone_into(&mut subscriber.kind);
                }
                touched.push(subscriber.email.clone());
                Answer::json(200, &Self::subscriber_json(subscriber))
            }
            ("GET", ["subscribers"]) => {
                let size = call.query.get("page_size").and_then(|n| n.parse::<usize>().ok()).unwrap_or(100);
                let page: Vec<Value> = self.subscribers.iter().take(size).map(Self::subscriber_json).collect();
                Answer::json(
                    200,
                    &json!({"results": page, "count": self.subscribers.len(), "next": null, "previous": null}),
                )
            }
            ("DELETE", ["subscribers", id_or_email]) => {
                self.subscribers.retain(|s| s.email != id_or_email.to_lowercase() && s.id != *id_or_email);
                Answer::status(204)
            }
            _ => Answer::json(404, &json!({"code": "not_found", "detail": "Not found."})),
        }
    }

    fn create(&mut self, call: &Call<'_>, refused: &BTreeSet<String>, touched: &mut Vec<String>) -> Answer {
        let Some(fields) = call.body.as_object() else {
            return Answer::json(422, &json!({"detail": [{"type": "model_attributes_type"}]}));
        };
        if let Some(extra) = fields.keys().find(|field| !BUTTONDOWN_FIELDS.contains(&field.as_str())) {
            return Answer::json(422, &json!({"detail": [{"type": "extra_forbidden", "loc": ["body", extra]}]}));
        }
        let email = text(&call.body, "email_address").unwrap_or_default().trim().to_lowercase();
        if !email.contains('@') || refused.contains(&email) {
            return Answer::json(
                400,
                &json!({"code": "email_invalid", "detail": format!("{email} is not a valid email address.")}),
            );
        }
        let kind = text(&call.body, "type");
        if kind.is_some_and(|kind| !["regular", "unsubscribed", "gifted", "unpaid", "unactivated"].contains(&kind)) {
            return Answer::json(400, &json!({"code": "invalid_type", "detail": "This type cannot be set."}));
        }
        let tags: Vec<String> = call
            .body
            .get("tags")
            .and_then(Value::as_array)
            .map(|tags| tags.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let metadata = call.body.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
        let collision = call.request.header("x-buttondown-collision-behavior").unwrap_or("no_op");
        if let Some(held) = self.subscribers.iter_mut().find(|s| s.email == email) {
            if collision != "add" {
                return Answer::json(
                    400,
                    &json!({"code": "email_already_exists", "detail": format!("{email} is already subscribed.")}),
                );
            }
            // Merged: tags and metadata added; one who had unsubscribed is subscribed again.
            for tag in tags {
                if !held.tags.contains(&tag) {
                    held.tags.push(tag);
                }
            }
            held.metadata.extend(metadata);
            match kind {
                Some(kind) => kind.clone_into(&mut held.kind),
                None if held.kind == "unsubscribed" => "regular".clone_into(&mut held.kind),
                None => {}
            }
            touched.push(email);
            return Answer::json(200, &Self::subscriber_json(held));
        }
        let subscriber = ButtondownSubscriber {
            id: uuid::Uuid::new_v4().to_string(),
            email: email.clone(),
            // Without a type, Buttondown's own double opt-in applies.
            kind: kind.unwrap_or("unactivated").to_owned(),
            tags,
            metadata,
        };
        let answer = Answer::json(201, &Self::subscriber_json(&subscriber));
        self.subscribers.push(subscriber);
        touched.push(email);
        answer
    }
}

// --- Mailchimp (§1.3) --------------------------------------------------------------------------

/// Mailchimp Marketing API 3.0: HTTP Basic, any user name, the key as password (or Bearer); 401
/// `API Key Invalid` otherwise. One audience of members addressed by `subscriber_hash`. `PUT` is
/// create-or-update; `subscribed` for a member who unsubscribed is 400 `Member In Compliance
/// State`. Errors are problem JSON with a `title`.
#[derive(Default)]
struct Mailchimp {
    members: BTreeMap<String, Member>,
}

struct Member {
    email: String,
    status: String,
    tags: BTreeSet<String>,
    timestamp_opt: Option<String>,
    timestamp_signup: Option<String>,
}

const MAILCHIMP_STATUSES: [&str; 5] = ["subscribed", "unsubscribed", "cleaned", "pending", "transactional"];

fn problem(status: u16, title: &str, detail: &str) -> Answer {
    let body = json!({"type": "https://mailchimp.com/developer/marketing/docs/errors/", "title": title,
                      "status": status, "detail": detail, "instance": "0f6c3f5e-7f6a-4c39-9d4e-4f2c8a6b1d2e"});
    Answer { status, headers: vec![("content-type".into(), "application/problem+json".into())], body: body.to_string() }
}

impl Mailchimp {
    fn member_json(member: &Member) -> Value {
        json!({"id": subscriber_hash(&member.email), "email_address": member.email, "status": member.status,
               "tags": member.tags.iter().map(|name| json!({"name": name})).collect::<Vec<_>>(),
               "timestamp_opt": member.timestamp_opt.clone().unwrap_or_default(),
               "timestamp_signup": member.timestamp_signup.clone().unwrap_or_default()})
    }

    fn authorized(call: &Call<'_>, credential: &str) -> bool {
        let authorization = call.request.header("authorization").unwrap_or_default();
        if authorization == format!("Bearer {credential}") {
            return true;
        }
        let Some(encoded) = authorization.strip_prefix("Basic ") else { return false };
        let decoded = STANDARD.decode(encoded).ok().and_then(|bytes| String::from_utf8(bytes).ok());
        decoded.and_then(|pair| pair.split_once(':').map(|(_, key)| key == credential)).unwrap_or(false)
    }

    fn answer(
        &mut self,
        call: &Call<'_>,
        credential: &str,
        refused: &BTreeSet<String>,
        touched: &mut Vec<String>,
    ) -> Answer {
        if !Self::authorized(call, credential) {
            return problem(
                401,
                "API Key Invalid",
                "Your API key may be invalid, or you've attempted to access the wrong datacenter.",
            );
        }
        let audience = Kind::Mailchimp.target();
        let not_found = || problem(404, "Resource Not Found", "The requested resource could not be found.");
        match (call.method, call.segments().as_slice()) {
            ("GET", ["lists", id]) if *id == audience => {
                let count = self.members.values().filter(|m| m.status == "subscribed").count();
                Answer::json(
                    200,
                    &json!({"id": audience, "name": "Newsletter", "double_optin": true, "stats": {"member_count": count}}),
                )
            }
            ("PUT", ["lists", id, "members", hash]) if *id == audience => {
                self.upsert(&call.body, hash, refused, touched)
            }
            ("PATCH", ["lists", id, "members", hash]) if *id == audience => {
                let Some(member) = self.members.get_mut(&hash.to_lowercase()) else { return not_found() };
                if let Some(status) = text(&call.body, "status") {
                    if member.status == "unsubscribed" && status == "subscribed" {
                        return compliance_state(&member.email);
                    }
                    status.clone_into(&mut member.status);
                }
                touched.push(member.email.clone());
                Answer::json(200, &Self::member_json(member))
            }
            ("POST", ["lists", id, "members", hash, "tags"]) if *id == audience => {
                let Some(member) = self.members.get_mut(&hash.to_lowercase()) else { return not_found() };
                for tag in call.body.get("tags").and_then(Value::as_array).into_iter().flatten() {
                    let name = text(tag, "name").unwrap_or_default().to_owned();
                    if text(tag, "status") == Some("active") {
                        member.tags.insert(name);
                    } else {
                        member.tags.remove(&name);
                    }
                }
                Answer::status(204)
            }
            ("DELETE", ["lists", id, "members", hash]) if *id == audience => {
                let Some(member) = self.members.get_mut(&hash.to_lowercase()) else { return not_found() };
                "archived".clone_into(&mut member.status);
                Answer::status(204)
            }
            _ => not_found(),
        }
    }

    fn upsert(&mut self, body: &Value, hash: &str, refused: &BTreeSet<String>, touched: &mut Vec<String>) -> Answer {
        let invalid = |detail: &str| problem(400, "Invalid Resource", detail);
        let Some(email) = text(body, "email_address").map(|email| email.trim().to_lowercase()) else {
            return invalid(
                "The resource submitted could not be validated. email_address: This value should not be blank.",
            );
        };
        if hash.to_lowercase() != subscriber_hash(&email) && hash.to_lowercase() != email {
            return invalid("The email address does not match the subscriber hash.");
        }
        if !email.contains('@') || refused.contains(&email) {
            return invalid(&format!("{email} looks fake or invalid, please enter a real email address."));
        }
        let status = text(body, "status");
        if [status, text(body, "status_if_new")].into_iter().flatten().any(|s| !MAILCHIMP_STATUSES.contains(&s)) {
            return invalid("The resource submitted could not be validated. status: Invalid value.");
        }
        let timestamp = |name: &str| text(body, name).map(str::to_owned);
        let hash = subscriber_hash(&email);
        if let Some(member) = self.members.get_mut(&hash) {
            if let Some(status) = status {
                if member.status == "unsubscribed" && status == "subscribed" {
                    return compliance_state(&email);
                }
                status.clone_into(&mut member.status);
            }
        } else {
            let Some(status) = text(body, "status_if_new") else {
                return invalid(
                    "The resource submitted could not be validated. status_if_new: required for a new member.",
                );
            };
            let member = Member {
                email: email.clone(),
                status: status.to_owned(),
                tags: BTreeSet::new(),
                timestamp_opt: None,
                timestamp_signup: None,
            };
            self.members.insert(hash.clone(), member);
        }
        let member = self.members.get_mut(&hash).unwrap();
        if let Some(opt) = timestamp("timestamp_opt") {
            member.timestamp_opt = Some(opt);
        }
        if let Some(signup) = timestamp("timestamp_signup") {
            member.timestamp_signup = Some(signup);
        }
        touched.push(email);
        Answer::json(200, &Self::member_json(member))
    }
}

fn compliance_state(email: &str) -> Answer {
    problem(
        400,
        "Member In Compliance State",
        &format!(
            "{email} is in a compliance state due to unsubscribe, bounce, or compliance review and cannot be subscribed."
        ),
    )
}

// --- Brevo (§1.4) ------------------------------------------------------------------------------

/// Brevo API v3: the key in `api-key`, 401 otherwise. Contacts on lists; `POST /contacts` with
/// `updateEnabled: true` creates (201) or updates an existing contact (204), without it an
/// existing contact is 400 `duplicate_parameter`. `PUT /contacts/{email}` with `unlinkListIds`
/// takes the contact off a list and keeps it. `attributes` are kept only where the account has
/// the attribute (`GET /contacts/attributes` lists them; a new account has Brevo's FIRSTNAME,
/// LASTNAME and SMS); an unknown one is dropped silently, or refused with 400 if so told.
struct Brevo {
    contacts: Vec<Contact>,
    next_id: i64,
    /// The account's contact attributes: name, category, type.
    attributes: Vec<(String, String, String)>,
    refuses_unknown_attributes: bool,
}

impl Default for Brevo {
    fn default() -> Self {
        let attribute = |name: &str| (name.to_owned(), "normal".to_owned(), "text".to_owned());
        Self {
            contacts: Vec::new(),
            next_id: 0,
            attributes: vec![attribute("LASTNAME"), attribute("FIRSTNAME"), attribute("SMS")],
            refuses_unknown_attributes: false,
        }
    }
}

struct Contact {
    id: i64,
    email: String,
    lists: BTreeSet<i64>,
    blacklisted: bool,
    attributes: Map<String, Value>,
}

/// Another list of the Brevo account, besides the target.
const BREVO_OTHER_LIST: i64 = 9;

impl Brevo {
    fn answer(
        &mut self,
        call: &Call<'_>,
        credential: &str,
        refused: &BTreeSet<String>,
        touched: &mut Vec<String>,
    ) -> Answer {
        if call.request.header("api-key") != Some(credential) {
            return Answer::json(401, &json!({"code": "unauthorized", "message": "Key not found"}));
        }
        let target: i64 = Kind::Brevo.target().parse().unwrap();
        let lists = [target, BREVO_OTHER_LIST];
        let not_found = |what: &str| Answer::json(404, &json!({"code": "document_not_found", "message": what}));
        match (call.method, call.segments().as_slice()) {
            ("POST", ["contacts"]) => self.create(&call.body, &lists, refused, touched),
            ("PUT", ["contacts", identifier]) => {
                let wanted = identifier.to_lowercase();
                let Some(contact) = self.contacts.iter_mut().find(|c| c.email == wanted || c.id.to_string() == wanted)
                else {
                    return not_found("Contact does not exist");
                };
                contact.lists.extend(numbers(&call.body, "listIds").into_iter().filter(|id| lists.contains(id)));
                for id in numbers(&call.body, "unlinkListIds") {
                    contact.lists.remove(&id);
                }
                if let Some(blacklisted) = call.body.get("emailBlacklisted").and_then(Value::as_bool) {
                    contact.blacklisted = blacklisted;
                }
                touched.push(contact.email.clone());
                Answer::status(204)
            }
            ("GET", ["contacts", "lists", id]) => {
                let Some(list) = lists.iter().find(|list| list.to_string() == *id) else {
                    return not_found("List ID does not exist");
                };
                let members = self.contacts.iter().filter(|c| c.lists.contains(list)).count();
                let name = if *list == target { "Newsletter" } else { "Other" };
                Answer::json(
                    200,
                    &json!({"id": list, "name": name, "totalBlacklisted": 0, "totalSubscribers": members,
                            "uniqueSubscribers": members, "folderId": 1, "createdAt": "2025-01-01T00:00:00.000+00:00"}),
                )
            }
            ("GET", ["contacts", "attributes"]) => {
                let attributes: Vec<Value> = self
                    .attributes
                    .iter()
                    .map(|(name, category, kind)| json!({"name": name, "category": category, "type": kind}))
                    .collect();
                Answer::json(200, &json!({ "attributes": attributes }))
            }
            ("DELETE", ["contacts", identifier]) => {
                self.contacts.retain(|c| c.email != identifier.to_lowercase());
                Answer::status(204)
            }
            _ => not_found("Not found"),
        }
    }

    fn create(&mut self, body: &Value, lists: &[i64], refused: &BTreeSet<String>, touched: &mut Vec<String>) -> Answer {
        let email = text(body, "email").unwrap_or_default().trim().to_lowercase();
        if !email.contains('@') || refused.contains(&email) {
            return Answer::json(
                400,
                &json!({"code": "invalid_parameter", "message": format!("Invalid email address {email}")}),
            );
        }
        let wanted = numbers(body, "listIds");
        if wanted.iter().any(|id| !lists.contains(id)) {
            return Answer::json(404, &json!({"code": "document_not_found", "message": "List ID does not exist"}));
        }
        let mut attributes = body.get("attributes").and_then(Value::as_object).cloned().unwrap_or_default();
        let unknown: Vec<String> = attributes
            .keys()
            .filter(|name| !self.attributes.iter().any(|(held, _, _)| held == *name))
            .cloned()
            .collect();
        if self.refuses_unknown_attributes && !unknown.is_empty() {
            let message = format!("Attribute {} does not exist", unknown.join(", "));
            return Answer::json(400, &json!({"code": "invalid_parameter", "message": message}));
        }
        attributes.retain(|name, _| !unknown.contains(name));
        let update = body.get("updateEnabled").and_then(Value::as_bool).unwrap_or(false);
        if let Some(contact) = self.contacts.iter_mut().find(|c| c.email == email) {
            if !update {
                return Answer::json(
                    400,
                    &json!({"code": "duplicate_parameter", "message": "Unable to create contact, email is already associated with another Contact"}),
                );
            }
            contact.lists.extend(wanted);
            contact.attributes.extend(attributes);
            touched.push(email);
            return Answer::status(204);
        }
        self.next_id += 1;
        self.contacts.push(Contact {
            id: self.next_id,
            email: email.clone(),
            lists: wanted.into_iter().collect(),
            blacklisted: false,
            attributes,
        });
        touched.push(email);
        Answer::json(201, &json!({"id": self.next_id}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listmonk_search_pattern_is_a_regular_expression_not_a_literal() {
        let escaped = Pattern::parse(r"^jane\.doe\+news@example\.com$").unwrap();
        assert!(escaped.is_found_in("Jane.Doe+news@example.com"));
        assert!(!escaped.is_found_in("janexdoe+news@example.com"));
        let unescaped = Pattern::parse("jane.doe+news@example.com").unwrap();
        assert!(!unescaped.is_found_in("jane.doe+news@example.com"), "+ repeats the e before it");
        assert!(unescaped.is_found_in("janeXdoeeenews@example.com"));
        assert!(Pattern::parse("a(b").is_none());
    }
}
