//! broker (under construction)

pub mod namesrv_registration;
pub mod remoting_client;
