//! Broker configuration, runtime figures and maintenance: GET_BROKER_CONFIG (26),
//! UPDATE_BROKER_CONFIG (25), GET_BROKER_RUNTIME_INFO (28), CLEAN_EXPIRED_CONSUMEQUEUE (306),
//! DELETE_EXPIRED_COMMITLOG (329), QUERY_CONSUME_QUEUE (321), and the figures operators' tools
//! read: VIEW_BROKER_STATS_DATA (315), GET_ALL_PRODUCER_INFO (328).

use std::sync::Arc;

use super::{ok, read_header, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::stats::Period;
use crate::broker::BrokerContext;
use crate::common::java_properties;
use crate::remoting::body::broker_stats::{
    BrokerStatsData, BrokerStatsItem, ProducerInfo, ProducerTableInfo,
};
use crate::remoting::body::kv_table::KVTable;
use crate::remoting::body::query_consume_queue::{ConsumeQueueData, QueryConsumeQueueResponseBody};
use crate::remoting::header::query_consume_queue::QueryConsumeQueueRequestHeader;
use crate::remoting::header::view_broker_stats_data::ViewBrokerStatsDataRequestHeader;
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

/// Java `prepareRuntimeInfo`: the store's figures (`StoreStatsService` and disk ratios), the
/// schedule progress, then the broker's own keys, each formatted as Java formats it.
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
        put(&k, v);
    }
    put(
        "rmqdForcedDeletedUnconsumedMessages",
        ctx.stats
            .forced_unconsumed
            .load(std::sync::atomic::Ordering::Relaxed)
            .to_string(),
    );
    for (level, next, max) in ctx.schedule.progress() {
        put(
            &format!("scheduleMessageOffset_{level}"),
            format!("{next},{max}"),
        );
    }
    put("brokerActive", "true".into());
    put("brokerVersionDesc", "V5_3_3".into());
    put(
        "brokerVersion",
        crate::remoting::CURRENT_VERSION.to_string(),
    );
    let (put_now, get_now) = ctx.stats.message_totals();
    let [p, g] = ctx.stats.day_totals();
    put("msgPutTotalYesterdayMorning", p.0.to_string());
    put("msgPutTotalTodayMorning", p.1.to_string());
    put("msgPutTotalTodayNow", put_now.to_string());
    put("msgGetTotalYesterdayMorning", g.0.to_string());
    put("msgGetTotalTodayMorning", g.1.to_string());
    put("msgGetTotalTodayNow", get_now.to_string());
    // rmqd's put takes no lock that a put can be stuck in; Java reports 0 outside its put lock
    put("pageCacheLockTimeMills", "0".into());
    // Java's BrokerConfig key (default 0): sends before it are refused
    put("startAcceptSendRequestTimeStamp", "0".into());
    for k in ["timerReadBehind", "timerOffsetBehind", "timerCongestNum"] {
        put(k, "0".into());
    }
    put("timerEnqueueTps", "0.0".into());
    put("timerDequeueTps", "0.0".into());
    // no transient store pool: Java answers Integer.MAX_VALUE then
    put("remainTransientStoreBufferNumbs", i32::MAX.to_string());
    put(
        "remainHowManyDataToFlush",
        human_readable_bytes(store.remain_to_flush.max(0) as u64),
    );
    if let Some((total, free)) = store.root_dir_space {
        put(
            "commitLogDirCapacity",
            format!(
                "Total : {}, Free : {}.",
                human_readable_bytes(total),
                human_readable_bytes(free)
            ),
        );
    }
    // rmqd runs requests on its network workers, with no queue in front of them: the sizes and
    // waits are 0; the capacities are Java's defaults, as a tool comparing them expects
    for (pool, capacity) in [
        ("send", 10_000),
        ("pull", 100_000),
        ("litePull", 100_000),
        ("query", 20_000),
        ("ack", 100_000),
    ] {
        put(&format!("{pool}ThreadPoolQueueSize"), "0".into());
        put(
            &format!("{pool}ThreadPoolQueueCapacity"),
            capacity.to_string(),
        );
        put(
            &format!("{pool}ThreadPoolQueueHeadWaitTimeMills"),
            "0".into(),
        );
    }
    put("EndTransactionQueueSize", "0".into());
    put("EndTransactionThreadPoolQueueCapacity", "100000".into());
    Ok(ok(request).with_body(table.encode()))
}

/// Java's `channel.remoteAddress().toString()`: "/127.0.0.1:5000"; an IPv6 host in full form
/// without brackets ("/0:0:0:0:0:0:0:1:5000").
fn java_channel_addr(addr: &std::net::SocketAddr) -> String {
    match addr {
        std::net::SocketAddr::V4(a) => format!("/{a}"),
        std::net::SocketAddr::V6(a) => {
            let s = a.ip().segments();
            let host: Vec<String> = s.iter().map(|x| format!("{x:x}")).collect();
            format!("/{}:{}", host.join(":"), a.port())
        }
    }
}

/// Java `MixAll.humanReadableByteCount(bytes, false)`: "512 B", "1.5 KiB", "46.0 GiB".
fn human_readable_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let exp = ((bytes as f64).ln() / 1024f64.ln()) as i32;
    let pre = b"KMGTPE"[(exp - 1) as usize] as char;
    format!("{:.1} {pre}iB", bytes as f64 / 1024f64.powi(exp))
}

/// VIEW_BROKER_STATS_DATA (315): one stats item's sum, TPS and average per call over the last
/// minute, hour and day; SYSTEM_ERROR "The stats <name> <key> not exist" when nothing was counted
/// under the key, as Java answers.
pub fn view_broker_stats_data(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let h: ViewBrokerStatsDataRequestHeader = read_header(request)?;
    let Some(item) = ctx.stats.item(&h.stats_name, &h.stats_key) else {
        return Err(BrokerError::system(format!(
            "The stats <{}> <{}> not exist",
            h.stats_name, h.stats_key
        )));
    };
    let of = |p| {
        let s = item.snapshot(p);
        BrokerStatsItem {
            avgpt: s.avgpt,
            sum: s.sum as i64,
            tps: s.tps,
        }
    };
    let body = BrokerStatsData {
        stats_minute: of(Period::Minute),
        stats_hour: of(Period::Hour),
        stats_day: of(Period::Day),
    };
    Ok(ok(request).with_body(body.encode()))
}

/// GET_ALL_PRODUCER_INFO (328): every producer connection by group (Java `ProducerManager
/// .getProducerTable`).
pub fn get_all_producer_info(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let now = crate::broker::now_millis();
    let mut table = ProducerTableInfo::default();
    for (group, channels) in ctx.clients.producer_table() {
        let infos = channels
            .into_iter()
            .map(|c| ProducerInfo {
                client_id: c.client_id,
                language: c.language.name().to_string(),
                last_update_timestamp: now - c.last_update.elapsed().as_millis() as i64,
                remote_ip: java_channel_addr(&c.conn.peer),
                version: c.version,
            })
            .collect();
        table.data.insert(group, infos);
    }
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

#[cfg(test)]
mod tests {
    use super::{human_readable_bytes, java_channel_addr};

    #[test]
    fn channel_addresses_read_as_javas() {
        assert_eq!(
            java_channel_addr(&"127.0.0.1:5000".parse().unwrap()),
            "/127.0.0.1:5000"
        );
        assert_eq!(
            java_channel_addr(&"[::1]:5000".parse().unwrap()),
            "/0:0:0:0:0:0:0:1:5000"
        );
    }

    #[test]
    fn byte_counts_read_as_javas() {
        assert_eq!(human_readable_bytes(0), "0 B");
        assert_eq!(human_readable_bytes(1023), "1023 B");
        assert_eq!(human_readable_bytes(1536), "1.5 KiB");
        assert_eq!(human_readable_bytes(46 * (1 << 30)), "46.0 GiB");
    }
}
