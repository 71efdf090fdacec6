//! LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42): orderly consumers lock the queues they consume
//! (Java `AdminBrokerProcessor.lockBatchMQ` / `unlockBatchMQ`, single-broker case).

use std::sync::Arc;

use super::{ok, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::remoting::body::lock_batch::{
    LockBatchRequestBody, LockBatchResponseBody, UnlockBatchRequestBody,
};
use crate::remoting::RemotingCommand;
use crate::server::Connection;

fn bad_body(e: impl std::fmt::Display) -> BrokerError {
    BrokerError::system(format!("decode request body failed: {e}"))
}

pub fn lock_batch_mq(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = LockBatchRequestBody::decode(&request.body.to_bytes()).map_err(bad_body)?;
    let locked =
        ctx.locks
            .try_lock_batch(&body.consumer_group, &body.mq_set, &body.client_id, conn.id);
    let response = LockBatchResponseBody {
        lock_ok_mq_set: locked,
    };
    Ok(ok(request).with_body(response.encode()))
}

pub fn unlock_batch_mq(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = UnlockBatchRequestBody::decode(&request.body.to_bytes()).map_err(bad_body)?;
    ctx.locks
        .unlock_batch(&body.consumer_group, &body.mq_set, &body.client_id);
    Ok(ok(request))
}
