//! Outbound: everything signupd sends. Mail ([`mail`]: the messages and the sealed reference
//! each carries, the SMTP and file transports, the relay's trust and refusals, the workers, the
//! operator's alerts), subscriber events for the operator's systems ([`webhooks`]: queued with
//! the change, signed, delivered in order by one worker per endpoint or destination), the
//! operator's sender as a receiver of those events ([`destinations`]), and why an HTTP delivery
//! failed and when to try again ([`delivery`]).
//!
//! Each queue is durable in SQLite before anything is sent, so a crash or an outage delays a
//! message and never loses it. Nothing here decides who is subscribed: it carries what the door
//! and the subscribers decided.

pub mod delivery;
pub mod destinations;
pub mod mail;
pub mod webhooks;
