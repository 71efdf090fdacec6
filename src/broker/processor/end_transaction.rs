//! END_TRANSACTION (37): a producer (after its local transaction, or answering a check-back
//! with `fromTransactionCheck`) commits or rolls back a half message, found by commit-log
//! offset. Commit re-puts it to its real topic and queue with the transaction type COMMIT;
//! both write the op record that finishes the half message (Java `EndTransactionProcessor`).
//! An UNKNOW (0) answer, or any other value, gets no response at all, as in Java.

use super::{read_header, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::put::stored::transaction_commit;
use crate::broker::transaction::{
    delete_prepare_message, immunity_time_for_end, look_message_by_offset, StoredMessage,
};
use crate::broker::{now_millis, BrokerContext};
use crate::common::message::{
    PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS, PROPERTY_PRODUCER_GROUP, PROPERTY_REAL_TOPIC,
    TRANSACTION_COMMIT_TYPE, TRANSACTION_ROLLBACK_TYPE,
};
use crate::remoting::header::end_transaction::EndTransactionRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::message::{MessageInput, PutMessageStatus};

/// `NoResponse` for UNKNOW or an unknown value, as Java answers `null`.
pub async fn end_transaction(
    ctx: &BrokerContext,
    conn: &std::sync::Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let header = read_header::<EndTransactionRequestHeader>(request)?;
    if ctx.config.is_slave() {
        tracing::warn!("message store is slave mode, so end transaction is forbidden");
        return Err(BrokerError::code_only(ResponseCode::SLAVE_NOT_AVAILABLE));
    }
    let peer = conn.peer;
    let action = header.commit_or_rollback;
    let source = if header.from_transaction_check {
        "check-back answer"
    } else {
        "end of local transaction"
    };
    if action != TRANSACTION_COMMIT_TYPE && action != TRANSACTION_ROLLBACK_TYPE {
        tracing::warn!(%peer, source, action, msg_id = %header.msg_id, remark = ?request.remark,
            "transaction still pending or unknown state; no response");
        return Err(BrokerError::NoResponse);
    }
    if action == TRANSACTION_ROLLBACK_TYPE || header.from_transaction_check {
        tracing::info!(%peer, source, action, msg_id = %header.msg_id, "end transaction");
    }
    let half = look_message_by_offset(&ctx.store, header.commit_log_offset)
        .ok_or_else(|| BrokerError::system("Find prepared transaction message failed"))?;
    if reject_commit_or_rollback(ctx, &header, &half) {
        tracing::warn!(msg_id = %header.msg_id, commit_log_offset = header.commit_log_offset,
            "end transaction after the check immunity time refused; wait for the check-back");
        return Err(BrokerError::code_only(ResponseCode::ILLEGAL_OPERATION));
    }
    check_prepare_message(&half, &header).map_err(BrokerError::system)?;
    if action == TRANSACTION_ROLLBACK_TYPE {
        delete_prepare_message(ctx, &half).await;
        // Java labels a rollback with the half message's REAL_TOPIC
        if let Some(real) = half.props.get(PROPERTY_REAL_TOPIC) {
            ctx.tx_counts.add(real, -1);
            ctx.metrics.transaction_finished(real, None);
        }
        return Ok(super::ok(request));
    }
    let msg = transaction_commit(&half, action, header.commit_log_offset);
    send_final_message(ctx, &msg).await?;
    ctx.tx_counts.add(&msg.topic, -1);
    ctx.metrics
        .transaction_finished(&msg.topic, Some(half.born_timestamp));
    delete_prepare_message(ctx, &half).await;
    Ok(super::ok(request))
}

/// Java `rejectCommitOrRollback`: a producer's own (not check-back) answer that comes after the
/// message's CHECK_IMMUNITY_TIME_IN_SECONDS is refused; the check-back decides instead.
fn reject_commit_or_rollback(
    ctx: &BrokerContext,
    header: &EndTransactionRequestHeader,
    half: &StoredMessage,
) -> bool {
    if header.from_transaction_check {
        return false;
    }
    match half
        .props
        .get(PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS)
        .filter(|s| !s.is_empty())
    {
        Some(secs) => {
            let immunity = immunity_time_for_end(secs, ctx.config.transaction_time_out as i64);
            now_millis() - half.born_timestamp > immunity
        }
        None => false,
    }
}

/// Java `checkPrepareMessage`: the half message must be the one the producer names.
fn check_prepare_message(
    half: &StoredMessage,
    header: &EndTransactionRequestHeader,
) -> Result<(), &'static str> {
    if half.props.get(PROPERTY_PRODUCER_GROUP) != Some(header.producer_group.as_str()) {
        return Err("The producer group wrong");
    }
    if half.queue_offset != header.tran_state_table_offset {
        return Err("The transaction state table offset wrong");
    }
    if half.phys_offset != header.commit_log_offset {
        return Err("The commit log offset wrong");
    }
    Ok(())
}

/// Java `sendFinalMessage`: the put's outcome with END_TRANSACTION's own remarks.
async fn send_final_message(ctx: &BrokerContext, msg: &MessageInput) -> Result<(), BrokerError> {
    if msg.topic.is_empty() {
        return Err(BrokerError::system("UNKNOWN_ERROR DEFAULT"));
    }
    let result = ctx.store.put_message(msg).wait().await;
    super::send::count_put(ctx, &msg.topic, &result, None);
    use PutMessageStatus::*;
    let (code, remark) = match result.status {
        PUT_OK | FLUSH_DISK_TIMEOUT | FLUSH_SLAVE_TIMEOUT | SLAVE_NOT_AVAILABLE => return Ok(()),
        CREATE_MAPPED_FILE_FAILED => (ResponseCode::SYSTEM_ERROR, "Create mapped file failed.".to_string()),
        MESSAGE_ILLEGAL | PROPERTIES_SIZE_EXCEEDED => (
            ResponseCode::MESSAGE_ILLEGAL,
            format!(
                "The message is illegal, maybe msg body or properties length not matched. msg body length limit {}B, msg properties length limit 32KB.",
                ctx.store.config().max_message_size
            ),
        ),
        SERVICE_NOT_AVAILABLE => (ResponseCode::SERVICE_NOT_AVAILABLE, "Service not available now.".to_string()),
        OS_PAGE_CACHE_BUSY => (
            ResponseCode::SYSTEM_ERROR,
            "OS page cache busy, please try another machine".to_string(),
        ),
        UNKNOWN_ERROR => (ResponseCode::SYSTEM_ERROR, "UNKNOWN_ERROR".to_string()),
    };
    Err(BrokerError::refused(code, remark))
}
