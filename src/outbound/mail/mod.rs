//! Mail: messages from templates, the SMTP and file transports, the durable outbox
//! worker with retries, alerts and the sending budget.
//!
//! Layout: `message` (building mails), `reference` (the sealed `X-Signupd-Ref` a mail about a
//! subscriber carries), `transport` (SMTP or files), `failure` (what a failed send means, and whose it
//! is), `relay` (the SMTP
//! conversation, step by step, and its failures in words), `relay_login` (the relay's user name
//! and password, read afresh after a refusal), `relay_trust` (the relay's
//! certificate), `relay_hold` (the queue waits while the relay refuses signupd), `queue` (the
//! claim and settle commands of the writer), `worker` (look, claim, send, settle, retry),
//! `alert` (operator alerts without addresses).

pub mod alert;
pub mod failure;
pub mod message;
pub mod queue;
pub mod reference;
pub mod relay;
pub mod relay_hold;
pub mod relay_login;
pub mod relay_trust;
pub mod transport;
pub mod worker;

pub use failure::SendError;
pub use transport::{Delivered, Transport};
pub use worker::{MailOutcome, Mailer, WORKERS, run_worker, try_execute_batch, try_execute_task};
