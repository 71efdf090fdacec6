//! One processor file per concern, one function per RequestCode (called from `dispatch.rs`).

pub mod ack_message;
pub mod admin_broker;
pub mod admin_group;
pub mod admin_topic;
pub mod client_manage;
pub mod consumer_manage;
pub mod consumer_send_msg_back;
pub mod end_transaction;
pub mod lite;
pub mod lock_batch;
pub mod notification;
pub mod pop_message;
pub mod pull;
pub mod query;
pub mod query_assignment;
pub mod recall;
pub mod reply_message;
pub mod send;

use crate::broker::error::BrokerError;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};

/// What every processor returns: `Ok` with the response Java sends (whatever its code, for the
/// outcomes the protocol expects), or the `BrokerError` that `broker/error.rs` turns into Java's
/// code and remark.
///
/// Every processor has one signature, async or not:
/// `fn(ctx: &BrokerContext, conn: &Arc<Connection>, request: &RemotingCommand) -> ProcessorResult`.
pub type ProcessorResult = Result<RemotingCommand, BrokerError>;

/// Reads a request's typed header; a missing or bad field is `BadRequest` naming it.
pub(crate) fn read_header<H: CommandHeader>(request: &RemotingCommand) -> Result<H, BrokerError> {
    Ok(H::read_from(
        request.ext_fields.as_ref().unwrap_or(&Default::default()),
    )?)
}

/// A SUCCESS response carrying `h`.
pub(crate) fn success_with<H: CommandHeader>(request: &RemotingCommand, h: H) -> RemotingCommand {
    let mut r = RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None);
    h.write_to(r.ext_mut());
    r
}

/// A SUCCESS response with no header.
pub(crate) fn ok(request: &RemotingCommand) -> RemotingCommand {
    RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None)
}

/// A response with `code` and `remark` that is not a failure of the request (a status the
/// client reads, such as PULL_NOT_FOUND or QUERY_NOT_FOUND).
pub(crate) fn reply(
    request: &RemotingCommand,
    code: ResponseCode,
    remark: impl Into<String>,
) -> RemotingCommand {
    RemotingCommand::response_to(request, code.code(), Some(remark.into()))
}

/// The response for `result`, as the connection sends it (`None`: nothing is sent).
pub(crate) fn respond(
    result: ProcessorResult,
    request: &RemotingCommand,
) -> Option<RemotingCommand> {
    match result {
        Ok(response) => Some(response),
        Err(BrokerError::NoResponse) => None,
        Err(e) => Some(e.into_response(request)),
    }
}
