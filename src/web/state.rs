//! The shared state every part of a running signupd works with: request handlers, the
//! background workers and the scheduler. [`crate::app`] builds it once at start; everything
//! else receives it, so nothing depends on the assembly module.
//!
//! [`AppState::writer`] is the only way to write to SQLite; [`AppState::db`] only reads.
//!
//! The background workers do not receive the whole state: each takes the parts it needs
//! ([`AppState::mailer`], [`AppState::deliverer`], [`AppState::intake`]), and so does the
//! door's request path ([`AppState::recorder`]): the rooms below the web do not depend on it.

use std::sync::Arc;

use crate::clock::Clock;
use crate::config::Config;
use crate::config::secrets::Secrets;
use crate::config::tokens::Keyring;
use crate::door::domain_policy::DomainPolicy;
use crate::door::ratelimit::RateLimiter;
use crate::door::signup::{Intake, Recorder};
use crate::door::surge::SurgeModes;
use crate::outbound::destinations::Destination;
use crate::outbound::mail::reference::ReferenceKey;
use crate::outbound::mail::worker::{OnRefusedAddress, RefusedAddress};
use crate::outbound::mail::{Mailer, Transport};
use crate::outbound::webhooks::worker::{Deliverer, Sink};
use crate::outbound::webhooks::{Endpoint, Webhooks};
use crate::relays::configured::Relays;
use crate::relays::hear::Hearing;
use crate::storage::{Db, Writer};
use crate::subscribers::subscription::Subscriptions;
use crate::web::api_tokens::ApiTokens;
use crate::web::frame::Stylesheets;

/// Everything a request handler or background task needs; built once, cloned cheaply.
#[derive(Debug, Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    /// Reads (a pool of `query_only` connections).
    pub db: Db,
    /// Writes: the one thread with the read-write connection.
    pub writer: Writer,
    pub secrets: Arc<Secrets>,
    pub clock: Arc<dyn Clock>,
    /// The per-client signup limits; keys are computed by the caller, counted by the writer.
    pub limiter: Arc<RateLimiter>,
    /// Where mail goes (SMTP or files); built once, its connections kept.
    pub transport: Transport,
    /// For the alert webhook.
    pub http_client: reqwest::Client,
    /// Signs and verifies unsubscribe tokens.
    pub keyring: Arc<Keyring>,
    /// The webhook endpoints with their keys, the destinations with their credentials, and the
    /// HTTP client they share.
    pub webhooks: Webhooks,
    /// The lists' accent stylesheets and the operator's own, made or read at start.
    pub stylesheets: Arc<Stylesheets>,
    /// Blocked domains (reloaded on SIGHUP) and the MX check, asked at the end of step 4 of a
    /// signup.
    pub domains: DomainPolicy,
    /// Which lists are in surge mode, as the last recorded signup said (for the honeypot's
    /// answer, which never reaches the writer).
    pub surge: Arc<SurgeModes>,
    /// The relays whose events are heard at `/api/relay/<name>`, with their credentials.
    pub relays: Arc<Relays>,
    /// Seals each mail's `X-Signupd-Ref` and opens the ones reports bring back; derived from the
    /// hash key once, at start.
    pub references: Arc<ReferenceKey>,
    /// Who may call `/api/v1/` and open the admin page, read at start.
    pub api_tokens: Arc<ApiTokens>,
}

impl AppState {
    /// What confirming and removing need.
    pub fn subscriptions(&self) -> Subscriptions<'_> {
        Subscriptions {
            config: &self.config,
            db: &self.db,
            writer: &self.writer,
            hash_key: &self.secrets.hash_key,
            webhooks: &self.webhooks,
        }
    }

    /// What hearing a relay's event or a refusal at send time needs, at the time of asking.
    pub fn hearing(&self) -> Hearing<'_> {
        Hearing {
            subscriptions: self.subscriptions(),
            references: &self.references,
            client: &self.http_client,
            surge: Some(&self.surge),
            now: self.clock.now(),
        }
    }

    /// What recording a signup needs (the request path of the door).
    pub fn recorder(&self) -> Recorder<'_> {
        Recorder {
            config: &self.config,
            clock: self.clock.as_ref(),
            limiter: &self.limiter,
            writer: &self.writer,
            surge: &self.surge,
            http_client: &self.http_client,
        }
    }

    /// What the intake worker needs.
    pub fn intake(&self) -> Intake {
        Intake {
            db: self.db.clone(),
            writer: self.writer.clone(),
            secrets: self.secrets.clone(),
            clock: self.clock.clone(),
            resend_cooldown: self.config.signup.resend_cooldown,
        }
    }

    /// What a mail worker needs.
    pub fn mailer(&self) -> Mailer {
        Mailer {
            config: self.config.clone(),
            db: self.db.clone(),
            writer: self.writer.clone(),
            secrets: self.secrets.clone(),
            clock: self.clock.clone(),
            transport: self.transport.clone(),
            http_client: self.http_client.clone(),
            keyring: self.keyring.clone(),
            references: self.references.clone(),
            on_refused_address: Some(self.refused_address_hook()),
        }
    }

    /// A permanent refusal of an address at send time is a hard bounce (`relays::hear`). The
    /// writer's prepared commands are not `Send` futures, and the mail workers' runtime moves
    /// tasks between threads: so the suppression runs on a thread of its own (a rare event),
    /// and the worker waits for it.
    fn refused_address_hook(&self) -> OnRefusedAddress {
        let state = self.clone();
        Arc::new(move |refused: RefusedAddress| {
            let state = state.clone();
            let (done, finished) = tokio::sync::oneshot::channel::<()>();
            let spawned = std::thread::Builder::new().name("signupd-bounce".into()).spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                match runtime {
                    Ok(runtime) => runtime.block_on(suppress_refused(&state, &refused)),
                    Err(error) => {
                        tracing::error!(error = %error, "cannot start the runtime to suppress a refused address")
                    }
                }
                let _ = done.send(());
            });
            Box::pin(async move {
                match spawned {
                    Ok(_) => {
                        let _ = finished.await;
                    }
                    Err(error) => {
                        tracing::error!(error = %error, "cannot start the thread to suppress a refused address")
                    }
                }
            })
        })
    }

    /// What the webhook worker of `endpoint` needs.
    pub fn deliverer(&self, endpoint: Arc<Endpoint>) -> Deliverer {
        self.delivering_to(Sink::Endpoint(endpoint))
    }

    /// What the worker of `destination` needs.
    pub fn destination_deliverer(&self, destination: Arc<Destination>) -> Deliverer {
        self.delivering_to(Sink::Destination(destination))
    }

    fn delivering_to(&self, sink: Sink) -> Deliverer {
        Deliverer {
            config: self.config.clone(),
            db: self.db.clone(),
            writer: self.writer.clone(),
            clock: self.clock.clone(),
            webhooks: self.webhooks.clone(),
            http_client: self.http_client.clone(),
            sink,
            holder: uuid::Uuid::new_v4().simple().to_string(),
        }
    }
}

/// Suppresses an address the SMTP server refused for good, as a relay's hard bounce would.
async fn suppress_refused(state: &AppState, refused: &RefusedAddress) {
    if let Err(error) =
        crate::relays::hear::refused_at_send(state.hearing(), &refused.lists, &refused.email, &refused.status).await
    {
        tracing::error!(
            lists = ?refused.lists,
            error = %error,
            "an address the SMTP server refused for good could not be suppressed"
        );
    }
}
