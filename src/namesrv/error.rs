//! The one place NameServer errors become a `ResponseCode` and a remark.
//!
//! Every processor returns [`ProcessorResult`](super::processor::ProcessorResult): `Ok` with the
//! response Java would send, or a `NamesrvError` that [`NamesrvError::into_response`] turns into
//! Java's code and remark. Outcomes the protocol expects (a KV item not found) are `Ok` responses
//! with their status code, as in Java; an error is a request refused.

use std::net::{AddrParseError, SocketAddr};

use super::config::ConfigError;
use crate::remoting::{RemotingCommand, RemotingError, ResponseCode};

/// A request the NameServer does not serve as asked, with what the client will see.
#[derive(Debug, thiserror::Error)]
pub enum NamesrvError {
    /// A missing or unparsable header field or body: Java's processor throws a
    /// `RemotingCommandException` and the remoting layer answers SYSTEM_ERROR with its text.
    #[error("{0}")]
    BadRequest(#[from] RemotingError),
    /// A check refused the request with a Java response code and Java's remark.
    #[error("{remark}")]
    Refused { code: ResponseCode, remark: String },
    /// UPDATE_NAMESRV_CONFIG with a value the NameServer's config refuses: SYSTEM_ERROR.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A RequestCode the NameServer does not serve (Java's exact remark, leading space included).
    #[error(" request type {0} not supported")]
    NotSupported(i32),
}

impl NamesrvError {
    /// Refused with `code` and the remark `remark`.
    pub fn refused(code: ResponseCode, remark: impl Into<String>) -> Self {
        Self::Refused {
            code,
            remark: remark.into(),
        }
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
            Self::BadRequest(_) | Self::Config(_) => ResponseCode::SYSTEM_ERROR,
        }
    }

    /// The response Java sends for this failure: its code, with the error's text as remark.
    pub fn into_response(self, request: &RemotingCommand) -> RemotingCommand {
        RemotingCommand::response_to(request, self.code().code(), Some(self.to_string()))
    }
}

/// Why a NameServer did not start; `main` prints it and exits.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("bad NameServer bindAddress/listenPort {bind}: {source}")]
    BadBind {
        bind: String,
        #[source]
        source: AddrParseError,
    },
    #[error("cannot listen on {bind}: {source} (is another NameServer running on this port?)")]
    Listen {
        bind: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(code: i32) -> RemotingCommand {
        RemotingCommand::request(code)
    }

    #[test]
    fn not_supported_keeps_javas_remark() {
        let r = NamesrvError::NotSupported(9999).into_response(&request(9999));
        assert_eq!(r.code, ResponseCode::REQUEST_CODE_NOT_SUPPORTED.code());
        assert_eq!(
            r.remark.as_deref(),
            Some(" request type 9999 not supported")
        );
    }

    #[test]
    fn refused_answers_its_code_and_remark() {
        let e = NamesrvError::refused(ResponseCode::NO_PERMISSION, "no");
        let r = e.into_response(&request(318));
        assert_eq!(r.code, ResponseCode::NO_PERMISSION.code());
        assert_eq!(r.remark.as_deref(), Some("no"));
    }

    #[test]
    fn bad_request_is_system_error_with_the_error_text() {
        let e = NamesrvError::from(RemotingError::Header {
            field: "topic",
            what: "missing".into(),
        });
        let text = e.to_string();
        let r = e.into_response(&request(105));
        assert_eq!(r.code, ResponseCode::SYSTEM_ERROR.code());
        assert_eq!(r.remark, Some(text));
    }
}
