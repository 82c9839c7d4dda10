//! The web room: where a visitor's request arrives. The HTTP endpoints ([`routes`], one file
//! per endpoint family with one error enum each), the access log and the pages' security
//! headers ([`middleware`]), what every page is drawn in ([`frame`]), the state every handler
//! and worker is lent its parts of ([`state`]), and who may call the operator's endpoints
//! ([`api_tokens`], kept only as HMACs).
//!
//! It owns the shape of answers (status, headers, pages), never the decisions behind them: those
//! are the door's, the subscribers', the relays'. Nothing below this room imports it; the
//! operator's endpoints and the assembly stand above it.

pub mod api_tokens;
pub mod frame;
pub mod middleware;
pub mod routes;
pub mod state;
