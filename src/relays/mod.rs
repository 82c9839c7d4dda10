//! Hearing back from the relay that carries signupd's mail (issue "Hear back", in progress):
//! whether a relay's event really comes from it ([`signature`]).

pub mod signature;
