//! The one place errors become a `ResponseCode` and a remark.
//!
//! Every processor returns [`ProcessorResult`](super::processor::ProcessorResult): `Ok` with the
//! response Java would send, or a `BrokerError` that [`BrokerError::into_response`] turns into
//! Java's code and remark. Outcomes the protocol expects (not found, offset moved, flush timeout)
//! are `Ok` responses with their status code, as in Java; an error is a request refused.

use std::net::SocketAddr;

use crate::broker::config::ConfigError;
use crate::broker::metadata::MetadataError;
use crate::remoting::{RemotingCommand, RemotingError, ResponseCode};
use crate::store::StoreError;

/// A request the broker does not serve as asked, with what the client will see.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// A missing or unparsable header field or body: Java's handler fails on it and the remoting
    /// layer answers SYSTEM_ERROR with the exception's text.
    #[error("{0}")]
    BadRequest(#[from] RemotingError),
    /// A check refused the request with a Java response code; `remark` is Java's text (`None`
    /// where Java sends no remark).
    #[error("{}", remark.as_deref().unwrap_or(""))]
    Refused {
        code: ResponseCode,
        remark: Option<String>,
    },
    /// Topic, subscription-group or offset metadata could not be changed or written.
    #[error("{0}")]
    Metadata(#[from] MetadataError),
    /// The store failed the request.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// UPDATE_BROKER_CONFIG with a value the broker's config refuses.
    #[error("{0}")]
    BrokerConfig(#[from] ConfigError),
    /// UPDATE_BROKER_CONFIG with a value the store's config refuses.
    #[error("{0}")]
    StoreConfig(#[from] crate::store::ConfigError),
    /// A RequestCode this broker does not serve (Java's exact remark, leading space included).
    #[error(" request type {0} not supported")]
    NotSupported(i32),
    /// Java's processor returns `null`: nothing is sent (END_TRANSACTION with UNKNOW state).
    #[error("no response")]
    NoResponse,
}

impl BrokerError {
    /// Refused with `code` and the remark `remark`.
    pub fn refused(code: ResponseCode, remark: impl Into<String>) -> Self {
        Self::Refused {
            code,
            remark: Some(remark.into()),
        }
    }

    /// Refused with `code` and no remark.
    pub fn code_only(code: ResponseCode) -> Self {
        Self::Refused { code, remark: None }
    }

    /// A failure Java reports as SYSTEM_ERROR with `remark`.
    pub fn system(remark: impl Into<String>) -> Self {
        Self::refused(ResponseCode::SYSTEM_ERROR, remark)
    }

    /// The response code Java answers this failure with.
    pub fn code(&self) -> ResponseCode {
        match self {
            Self::Refused { code, .. } => *code,
            Self::NotSupported(_) => ResponseCode::REQUEST_CODE_NOT_SUPPORTED,
            Self::BadRequest(_)
            | Self::Metadata(_)
            | Self::Store(_)
            | Self::BrokerConfig(_)
            | Self::StoreConfig(_)
            | Self::NoResponse => ResponseCode::SYSTEM_ERROR,
        }
    }

    /// The response Java sends for this failure ([`respond`](super::processor::respond) sends
    /// nothing for `NoResponse`).
    pub fn into_response(self, request: &RemotingCommand) -> RemotingCommand {
        let remark = match &self {
            Self::Refused { remark: None, .. } => None,
            _ => Some(self.to_string()),
        };
        RemotingCommand::response_to(request, self.code().code(), remark)
    }
}

/// Why a broker did not start; `main` prints it and exits.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot open the message store: {0}")]
    Store(#[from] StoreError),
    #[error("store start-up panicked: {0}")]
    StorePanicked(#[from] tokio::task::JoinError),
    #[error("{0}")]
    Metadata(#[from] MetadataError),
    #[error("cannot resolve {host}:{port}: {source}")]
    Resolve {
        host: String,
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("no address for {host}:{port}")]
    NoAddress { host: String, port: u16 },
    #[error("cannot find a free port on {bind}: {source}")]
    FreePort {
        bind: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen on {bind}: {source} (is another broker using listenPort {port}?)")]
    Listen {
        bind: SocketAddr,
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "cannot open the VIP channel on {bind} (listenPort - 2, as the Java broker does): {source}; \
         free that port, move listenPort, or set rmqdFastChannelEnable=false"
    )]
    FastListen {
        bind: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Metrics(String),
}
