//! Hearing back from the relay that carries signupd's mail (`docs/operations.md`, "Bounces and
//! complaints"): whether a relay's event really comes from it ([`signature`]), what its payload
//! or a mail-borne report says ([`event`], [`payload`], [`report`]), and what a hard bounce or a
//! complaint does once it is believed ([`effect`]).

pub mod configured;
pub mod effect;
pub mod event;
pub mod hear;
pub mod payload;
pub mod report;
pub mod signature;
