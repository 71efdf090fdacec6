//! Broker configuration, runtime figures and maintenance: GET_BROKER_CONFIG (26),
//! UPDATE_BROKER_CONFIG (25), GET_BROKER_RUNTIME_INFO (28), CLEAN_EXPIRED_CONSUMEQUEUE (306),
//! DELETE_EXPIRED_COMMITLOG (329), QUERY_CONSUME_QUEUE (321).

use std::sync::Arc;

use super::{ok, read_header, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::common::java_properties;
use crate::remoting::body::kv_table::KVTable;
use crate::remoting::body::query_consume_queue::{ConsumeQueueData, QueryConsumeQueueResponseBody};
use crate::remoting::header::query_consume_queue::QueryConsumeQueueRequestHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;

/// Keys UPDATE_BROKER_CONFIG may not touch (Java's default `configBlackList`).
const CONFIG_BLACK_LIST: [&str; 2] = ["configBlackList", "brokerConfigPath"];

pub fn get_broker_config(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let text = java_properties::write(&ctx.all_config_pairs());
    let mut r = ok(request).with_body(text.into_bytes());
    let version = serde_json::to_string(&ctx.topics.data_version()).unwrap_or_default();
    r.ext_mut().insert("version", version);
    Ok(r)
}

pub fn update_broker_config(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let text = String::from_utf8_lossy(&request.body.to_bytes()).into_owned();
    let pairs = java_properties::parse(&text);
    if let Some((k, _)) = pairs
        .iter()
        .find(|(k, _)| CONFIG_BLACK_LIST.contains(&k.as_str()))
    {
        let remark = format!("Can not update config in black list: {k}");
        return Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark));
    }
    ctx.update_config(&pairs)?;
    Ok(ok(request))
}

pub fn get_broker_runtime_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let mut table = KVTable::default();
    let mut put = |k: &str, v: String| {
        table.table.insert(k.to_string(), v);
    };
    let store = ctx.store.runtime_info();
    for (k, v) in store.to_kv() {
        put(k, v);
    }
    put(
        "rmqdForcedDeletedUnconsumedMessages",
        ctx.stats
            .forced_unconsumed
            .load(std::sync::atomic::Ordering::Relaxed)
            .to_string(),
    );
    put("brokerActive", "true".into());
    for (level, next, max) in ctx.schedule.progress() {
        put(
            &format!("scheduleMessageOffset_{level}"),
            format!("{next},{max}"),
        );
    }
    put("brokerVersionDesc", "V5_3_3".into());
    put(
        "brokerVersion",
        crate::remoting::CURRENT_VERSION.to_string(),
    );
    put("bootTimestamp", ctx.boot_timestamp.to_string());
    put(
        "startAcceptSendRequestTimeStamp",
        ctx.boot_timestamp.to_string(),
    );
    let up = crate::broker::stats::now_secs().saturating_sub((ctx.boot_timestamp / 1000) as u64);
    put(
        "runtime",
        format!(
            "[ {} days, {} hours, {} minutes, {} seconds ]",
            up / 86_400,
            up / 3_600 % 24,
            up / 60 % 60,
            up % 60
        ),
    );
    put("putTps", ctx.stats.tps(true));
    put("getTransferredTps", ctx.stats.tps(false));
    put("getTotalTps", ctx.stats.tps(false));
    put("getFoundTps", ctx.stats.tps(false));
    put("getMissTps", "0.00 0.00 0.00".into());
    let [p, g] = ctx.stats.day_totals();
    put("msgPutTotalYesterdayMorning", p.0.to_string());
    put("msgPutTotalTodayMorning", p.1.to_string());
    put("msgPutTotalTodayNow", p.2.to_string());
    put("msgGetTotalYesterdayMorning", g.0.to_string());
    put("msgGetTotalTodayMorning", g.1.to_string());
    put("msgGetTotalTodayNow", g.2.to_string());
    put("pageCacheLockTimeMills", "0".into());
    for pool in ["send", "pull", "litePull", "query", "ack"] {
        put(&format!("{pool}ThreadPoolQueueSize"), "0".into());
        put(&format!("{pool}ThreadPoolQueueCapacity"), "0".into());
        put(
            &format!("{pool}ThreadPoolQueueHeadWaitTimeMills"),
            "0".into(),
        );
    }
    put("EndTransactionQueueSize", "0".into());
    put("EndTransactionThreadPoolQueueCapacity", "0".into());
    for k in ["timerReadBehind", "timerOffsetBehind", "timerCongestNum"] {
        put(k, "0".into());
    }
    put("timerEnqueueTps", "0.0".into());
    put("timerDequeueTps", "0.0".into());
    Ok(ok(request).with_body(table.encode()))
}

pub fn clean_expired_consume_queue(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let removed = ctx.store.clean_expired_consume_queue()?;
    tracing::info!(removed, "CLEAN_EXPIRED_CONSUMEQUEUE");
    Ok(ok(request))
}

pub fn delete_expired_commit_log(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    ctx.store.execute_delete_files_manually();
    Ok(ok(request))
}

pub fn query_consume_queue(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: QueryConsumeQueueRequestHeader = read_header(request)?;
    let Some(units) = ctx
        .store
        .consume_queue_units(&h.topic, h.queue_id, h.index, h.count.max(0))
    else {
        let remark = format!("{}-{} is not exist!", h.topic, h.queue_id);
        return Err(BrokerError::system(remark));
    };
    let body = QueryConsumeQueueResponseBody {
        filter_data: None,
        max_queue_index: ctx.store.max_offset_in_queue(&h.topic, h.queue_id),
        min_queue_index: ctx.store.min_offset_in_queue(&h.topic, h.queue_id),
        queue_data: units
            .into_iter()
            .map(|(physic_offset, physic_size, tags_code)| ConsumeQueueData {
                physic_offset,
                physic_size,
                tags_code,
                ..Default::default()
            })
            .collect(),
        subscription_data: None,
    };
    Ok(ok(request).with_body(body.encode()))
}
