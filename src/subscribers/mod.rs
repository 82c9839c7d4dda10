//! The subscribers: what a confirmed person can do with their subscription. Confirming and
//! removing, prepared off the writer thread and checked in it ([`subscription`], shared by the
//! routes, the relays and the command line), and the preference page's use case
//! ([`preferences`]: which of the sender's lists a manage link shows, saving the ticked ones,
//! "remove me from all").
//!
//! Every change here queues its event for the operator's systems in the same command as the
//! change, through the outbound room; nothing here speaks HTTP or SMTP itself.

pub mod preferences;
pub mod subscription;
