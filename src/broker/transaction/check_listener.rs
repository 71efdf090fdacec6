//! The check service's listener (Java `DefaultTransactionalMessageCheckListener`): what happens
//! to a half message the walk decided on — a CHECK_TRANSACTION_STATE to a producer of its group,
//! or, once checked `transactionCheckMax` times, a move to `TRANS_CHECK_MAX_TIME_TOPIC`.

use bytes::Bytes;

use super::StoredMessage;
use crate::broker::put::stored::transaction_copy;
use crate::broker::BrokerContext;
use crate::common::message::{
    PROPERTY_PRODUCER_GROUP, PROPERTY_REAL_QUEUE_ID, PROPERTY_REAL_TOPIC,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
};
use crate::common::topic::{PERM_READ, PERM_WRITE, RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC};
use crate::remoting::header::check_transaction_state::CheckTransactionStateRequestHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, RequestCode};

/// Java `DefaultTransactionalMessageCheckListener.resolveDiscardMsg`: the message goes to
/// `TRANS_CHECK_MAX_TIME_TOPIC` queue 0, where nobody consumes it.
pub(super) fn resolve_discard_msg(ctx: &BrokerContext, msg: &StoredMessage) {
    tracing::error!(
        uniq_key = msg
            .props
            .get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
            .unwrap_or(""),
        real_topic = msg.props.get(PROPERTY_REAL_TOPIC).unwrap_or(""),
        "half message checked too many times; discarded to TRANS_CHECK_MAX_TIME_TOPIC"
    );
    if let Err(e) = ctx.topics.create_if_absent(
        RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
        1,
        PERM_READ | PERM_WRITE,
        0,
    ) {
        tracing::error!(error = %e, "cannot create TRANS_CHECK_MAX_TIME_TOPIC");
        return;
    }
    let input = transaction_copy(msg, RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, 0);
    let result = ctx.store.put_message(&input).wait_blocking();
    if !result.is_ok() {
        tracing::error!(status = ?result.status, "put to TRANS_CHECK_MAX_TIME_TOPIC failed");
    } else if let Some(real) = msg.props.get(PROPERTY_REAL_TOPIC) {
        ctx.tx_counts.add(real, -1);
    }
}

/// Java `AbstractTransactionalMessageCheckListener.sendCheckMessage`: CHECK_TRANSACTION_STATE
/// (oneway) to a live producer connection of the message's group, with the message as one
/// record under its real topic and queue.
pub(super) fn send_check_message(ctx: &BrokerContext, msg: StoredMessage) {
    let uniq = msg
        .props
        .get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
        .map(str::to_string);
    let mut header = CheckTransactionStateRequestHeader {
        topic: Some(msg.topic.clone()),
        tran_state_table_offset: msg.queue_offset,
        commit_log_offset: msg.phys_offset,
        msg_id: uniq.clone(),
        transaction_id: uniq,
        offset_msg_id: Some(msg.offset_msg_id()),
        ..Default::default()
    };
    header.rpc.broker_name = Some(ctx.config.broker_name.clone());
    let real_topic = msg.props.get(PROPERTY_REAL_TOPIC).unwrap_or("").to_string();
    let real_qid = msg
        .props
        .get(PROPERTY_REAL_QUEUE_ID)
        .and_then(|q| q.parse::<i32>().ok())
        .unwrap_or(0);
    let group = msg.props.get(PROPERTY_PRODUCER_GROUP).unwrap_or("");
    let Some(channel) = ctx.clients.any_producer_channel(group) else {
        tracing::warn!(%group, "transaction check: no producer connection of the group");
        return;
    };
    let mut cmd = RemotingCommand::request(RequestCode::CHECK_TRANSACTION_STATE.code());
    header.write_to(cmd.ext_mut());
    cmd.body = Bytes::from(msg.encode_as(&real_topic, real_qid)).into();
    tracing::info!(
        %group,
        %real_topic,
        commit_log_offset = msg.phys_offset,
        queue_offset = msg.queue_offset,
        "transaction check-back sent"
    );
    channel.conn.invoke_oneway(cmd);
}
