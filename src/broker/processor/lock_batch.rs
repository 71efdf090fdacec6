//! LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42): orderly consumers lock the queues they consume
//! (Java `AdminBrokerProcessor.lockBatchMQ` / `unlockBatchMQ`, single-broker case).

use crate::broker::BrokerContext;
use crate::remoting::body::lock_batch::{
    LockBatchRequestBody, LockBatchResponseBody, UnlockBatchRequestBody,
};
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;

fn bad_body(request: &RemotingCommand, e: impl std::fmt::Display) -> RemotingCommand {
    RemotingCommand::response_to(
        request,
        ResponseCode::SYSTEM_ERROR.code(),
        Some(format!("decode request body failed: {e}")),
    )
}

pub fn lock_batch_mq(
    ctx: &BrokerContext,
    conn: &Connection,
    request: &RemotingCommand,
) -> RemotingCommand {
    let body = match LockBatchRequestBody::decode(&request.body.to_bytes()) {
        Ok(b) => b,
        Err(e) => return bad_body(request, e),
    };
    let locked =
        ctx.locks
            .try_lock_batch(&body.consumer_group, &body.mq_set, &body.client_id, conn.id);
    let response = LockBatchResponseBody {
        lock_ok_mq_set: locked,
    };
    RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None)
        .with_body(response.encode())
}

pub fn unlock_batch_mq(ctx: &BrokerContext, request: &RemotingCommand) -> RemotingCommand {
    let body = match UnlockBatchRequestBody::decode(&request.body.to_bytes()) {
        Ok(b) => b,
        Err(e) => return bad_body(request, e),
    };
    ctx.locks
        .unlock_batch(&body.consumer_group, &body.mq_set, &body.client_id);
    RemotingCommand::response_to(request, ResponseCode::SUCCESS.code(), None)
}
