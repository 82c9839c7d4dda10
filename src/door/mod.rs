//! The door: who may sign up, and what a signup leaves behind. A valid request is recorded in
//! one writer command with its rate-limit counts ([`signup`], whose intake worker applies the
//! state table afterwards on a jittered tick); who the client is and how much it may ask
//! ([`ratelimit`]); which email domains are accepted ([`domain_policy`]: the blocked domains file
//! and the MX check); which lists a person must press a button for ([`surge`]).
//!
//! It decides and records; it does not answer HTTP (the web room does), and the only thing it
//! sends is the operator's surge alert. It takes from the state only the parts a
//! `Recorder` lends it.

pub mod domain_policy;
pub mod ratelimit;
pub mod signup;
pub mod surge;
