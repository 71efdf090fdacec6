//! rmqd: a RocketMQ-compatible broker (Remoting wire protocol, Java store format) with an embedded NameServer.
#![deny(unsafe_code)]
// Processors return `Result<RemotingCommand, BrokerError>`, and some helpers still carry a
// response on both sides; a command is 144 bytes since `extFields` keeps its pairs in one
// buffer, which the default 128-byte limit counts as large. Boxing it would add an allocation to
// exactly the paths the buffer saves one on.
#![allow(clippy::result_large_err)]

pub mod broker;
pub mod common;
pub mod namesrv;
pub mod remoting;
pub mod server;
pub mod store;
