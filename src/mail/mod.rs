//! Mail: messages from templates, the SMTP and file transports, the durable outbox
//! worker with retries, alerts and the sending budget.
//!
//! Layout: `message` (building mails), `reference` (the sealed `X-Signupd-Ref` a mail about a
//! subscriber carries), `transport` (SMTP or files; failure classes), `queue`
//! (the claim and settle commands of the writer), `worker` (look, claim, send, settle, retry),
//! `alert` (operator alerts without addresses).

pub mod alert;
pub mod message;
pub mod queue;
pub mod reference;
pub mod transport;
pub mod worker;

pub use transport::{Delivered, SendError, Transport};
pub use worker::{MailOutcome, Mailer, WORKERS, run_worker, try_execute_batch, try_execute_task};
