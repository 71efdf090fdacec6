//! The one place errors become a `ResponseCode` and a remark.

use crate::remoting::{RemotingCommand, RemotingError, ResponseCode};

/// A request the broker cannot serve, with the code and remark the client will see.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    #[error("{0}")]
    BadHeader(#[from] RemotingError),
    #[error("{remark}")]
    Refused { code: ResponseCode, remark: String },
}

impl BrokerError {
    pub fn refused(code: ResponseCode, remark: impl Into<String>) -> Self {
        Self::Refused {
            code,
            remark: remark.into(),
        }
    }

    pub fn code(&self) -> ResponseCode {
        match self {
            // Java logs a missing/unparsable header field and then fails in the handler.
            Self::BadHeader(_) => ResponseCode::SYSTEM_ERROR,
            Self::Refused { code, .. } => *code,
        }
    }

    /// The response Java would send for this failure.
    pub fn into_response(self, request: &RemotingCommand) -> RemotingCommand {
        let code = self.code().code();
        RemotingCommand::response_to(request, code, Some(self.to_string()))
    }
}

/// The answer to a code no processor serves, with Java's exact remark.
pub fn not_supported(request: &RemotingCommand) -> RemotingCommand {
    let remark = format!(" request type {} not supported", request.code);
    RemotingCommand::response_to(
        request,
        ResponseCode::REQUEST_CODE_NOT_SUPPORTED.code(),
        Some(remark),
    )
}
