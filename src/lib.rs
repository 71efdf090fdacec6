//! rmqd: a RocketMQ-compatible broker (Remoting wire protocol, Java store format) with an embedded NameServer.
#![deny(unsafe_code)]

pub mod broker;
pub mod common;
pub mod namesrv;
pub mod remoting;
pub mod server;
pub mod store;
