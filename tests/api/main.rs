//! HTTP- and process-level tests, compiled as one binary. Every test gets its own temporary data
//! directory (a real SQLite file) and a real server on 127.0.0.1 port 0, or runs the real
//! `signupd` binary.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test, with its location")]

mod admin_page;
mod attribution;
mod cli;
mod client_identity;
mod config_choice;
mod confirm;
mod crash;
mod credentials;
mod destinations;
mod dkim;
mod docs;
mod doctor;
mod doctor_dns;
mod domains;
mod edges;
mod fields;
mod flood;
mod grafana;
mod health;
mod healthcheck;
mod helpers;
mod import;
mod inbox_link;
mod ingest_mail;
mod languages;
mod loader;
mod log_privacy;
mod lookup;
mod mail;
mod malformed_head;
mod manage;
mod multilingual;
mod multilist;
mod operator;
mod operator_api;
mod preferences;
mod presentation;
mod process;
mod relay_events;
mod relay_refusals;
mod relay_tls;
mod relays;
mod scanner;
mod send_test_mail;
mod sender_apis;
mod signup;
mod signup_abuse;
mod signup_input;
mod smtp_server;
mod snippet;
mod startup;
mod status;
mod surge;
mod webhook_receiver;
mod webhooks;
