//! Hearing back from the relay that carries signupd's mail (issue "Hear back", in progress):
//! whether a relay's event really comes from it ([`signature`]), and what a hard bounce or a
//! complaint does once it is believed ([`effect`]).

pub mod effect;
pub mod signature;
