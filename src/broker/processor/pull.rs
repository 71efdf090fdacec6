//! PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361): check group, topic, queue and subscription as
//! Java's `PullMessageProcessor` does, read from the store with a tag-code or SQL92 filter, answer the
//! records unchanged (zero copy), and hold a pull at the end of its queue until a message arrives
//! (long polling) or its suspend timeout passes.

use std::sync::Arc;

use super::{read_header, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::long_polling::deadline_after;
use crate::broker::BrokerContext;
use crate::common::filter::{SqlFilter, SQL92};
use crate::common::properties::Properties;
use crate::common::tag::TagFilter;
use crate::common::topic::is_readable;
use crate::remoting::body::subscription_data::SubscriptionData;
use crate::remoting::command::Body;
use crate::remoting::header::pull_message::{PullMessageRequestHeader, PullMessageResponseHeader};
use crate::remoting::header::CommandHeader;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::get::{GetMessageResult, GetMessageStatus, MessageFilter};
use crate::store::message::decode_record;

const FLAG_COMMIT_OFFSET: i32 = 0x1;
const FLAG_SUSPEND: i32 = 0x2;
const FLAG_SUBSCRIPTION: i32 = 0x4;

/// Every answer carries the pull header's offsets, a refusal's too (the Java client unboxes them).
pub async fn pull_message(
    ctx: &BrokerContext,
    conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let header: PullMessageRequestHeader = match read_header(request) {
        Ok(h) => h,
        Err(e) => return Ok(with_offsets(e.into_response(request), 0, 0, 0)),
    };
    match check(ctx, conn, &header) {
        Ok(filter) => Ok(pull(ctx, request, &header, filter).await),
        Err(e) => Ok(with_offsets(
            e.into_response(request),
            header.queue_offset,
            0,
            0,
        )),
    }
}

/// The four offsets the Java client unboxes on every pull answer, success or not.
fn with_offsets(mut response: RemotingCommand, next: i64, min: i64, max: i64) -> RemotingCommand {
    let header = PullMessageResponseHeader {
        suggest_which_broker_id: 0,
        next_begin_offset: next,
        min_offset: min,
        max_offset: max,
        ..Default::default()
    };
    header.write_to(response.ext_mut());
    response
}

/// Permission, group, topic, queue and subscription checks; the filter to pull with.
fn check(
    ctx: &BrokerContext,
    conn: &Connection,
    h: &PullMessageRequestHeader,
) -> Result<PullFilter, BrokerError> {
    if !is_readable(ctx.broker_permission()) {
        let remark = format!(
            "the broker[{}] pulling message is forbidden",
            ctx.config.broker_ip1
        );
        return Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark));
    }
    let group = ctx.groups.find_or_create(&h.consumer_group)?;
    if !group.consume_enable {
        let remark = format!("subscription group no permission, {}", h.consumer_group);
        return Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark));
    }
    let Some(tc) = ctx.topics.select(&h.topic) else {
        let remark = format!(
            "topic[{}] not exist, apply first please! consumer: {}",
            h.topic, conn.peer
        );
        return Err(BrokerError::refused(ResponseCode::TOPIC_NOT_EXIST, remark));
    };
    if !is_readable(tc.perm) {
        let remark = format!("the topic[{}] pulling message is forbidden", h.topic);
        return Err(BrokerError::refused(ResponseCode::NO_PERMISSION, remark));
    }
    if h.queue_id < 0 || h.queue_id >= tc.read_queue_nums {
        let remark = format!(
            "queueId[{}] is illegal, topic:[{}] topicConfig.readQueueNums:[{}] consumer:[{}]",
            h.queue_id, h.topic, tc.read_queue_nums, conn.peer
        );
        return Err(BrokerError::refused(
            ResponseCode::INVALID_PARAMETER,
            remark,
        ));
    }
    subscription_filter(ctx, h)
}

/// A pull whose subscription version is newer than the broker's is answered SUBSCRIPTION_NOT_LATEST
/// by Java, so that the broker never filters with an expression the client has since replaced.
/// The Java client bumps the version on every rebalance and then sends a heartbeat that it drops
/// when its periodic heartbeat holds the lock at that moment: the consumer then stalls until the
/// next heartbeat, up to 30 s (apache/rocketmq#3434). rmqd, answering the rebalance's requests
/// faster, meets that race more often. When the broker's subscription is TAG `*` and the pull
/// asks for TAG filtering, no newer expression can need a message the broker would deliver
/// anyway (both clients filter tags again on their side), so the pull is served.
fn newer_version_changes_nothing(sub: &SubscriptionData, h: &PullMessageRequestHeader) -> bool {
    let is_tag = |t: &str| t.is_empty() || t == "TAG";
    is_tag(&sub.expression_type)
        && sub.sub_string.trim() == "*"
        && is_tag(h.expression_type.as_deref().unwrap_or(""))
}

fn subscription_filter(
    ctx: &BrokerContext,
    h: &PullMessageRequestHeader,
) -> Result<PullFilter, BrokerError> {
    let from_request = h.sys_flag & FLAG_SUBSCRIPTION != 0;
    let (expression, expression_type) = if from_request {
        (
            h.subscription.clone().unwrap_or_default(),
            h.expression_type.clone().unwrap_or_default(),
        )
    } else {
        let Some(sub) = ctx.clients.subscription(&h.consumer_group, &h.topic) else {
            let code = ResponseCode::SUBSCRIPTION_NOT_EXIST;
            let remark = if ctx.clients.has_consumer_group(&h.consumer_group) {
                "the consumer's subscription not exist"
            } else {
                "the consumer's group info not exist"
            };
            return Err(BrokerError::refused(code, remark));
        };
        if sub.sub_version < h.sub_version && !newer_version_changes_nothing(&sub, h) {
            return Err(BrokerError::refused(
                ResponseCode::SUBSCRIPTION_NOT_LATEST,
                "the consumer's subscription not latest",
            ));
        }
        (sub.sub_string.clone(), sub.expression_type.clone())
    };
    if expression_type.is_empty() || expression_type == "TAG" {
        return Ok(PullFilter::Tags(TagFilter::parse(&expression)));
    }
    let sql = sql_filter(&expression, &expression_type, from_request)?;
    if !ctx.config.enable_property_filter {
        let remark =
            format!("The broker does not support consumer to filter message by {expression_type}");
        return Err(BrokerError::system(remark));
    }
    Ok(PullFilter::Sql(sql))
}

/// Compiles a non-TAG subscription. Java compiles the request's own expression
/// (SUBSCRIPTION_PARSE_FAILED) or looks up the filter data its heartbeat registered, which does
/// not exist when the expression did not compile (FILTER_DATA_NOT_EXIST).
fn sql_filter(
    expression: &str,
    expression_type: &str,
    from_request: bool,
) -> Result<Arc<SqlFilter>, BrokerError> {
    let compiled = if expression_type == SQL92 {
        SqlFilter::compile_cached(expression).ok()
    } else {
        None
    };
    compiled.ok_or_else(|| {
        if from_request {
            let remark = "parse the consumer's subscription failed";
            BrokerError::refused(ResponseCode::SUBSCRIPTION_PARSE_FAILED, remark)
        } else {
            let remark =
                "The broker's consumer filter data is not exist!Your expression may be wrong!";
            BrokerError::refused(ResponseCode::FILTER_DATA_NOT_EXIST, remark)
        }
    })
}

/// The two-stage filter of one pull (Java `ExpressionMessageFilter`).
pub(crate) enum PullFilter {
    /// TAG: the tag code in the consume queue. The client re-checks the tag string, so the
    /// commit-log stage passes everything.
    Tags(TagFilter),
    /// SQL92: every consume-queue entry passes (rmqd keeps no bloom-filter bitmaps); the record's
    /// properties decide in the commit-log stage.
    Sql(Arc<SqlFilter>),
}

impl PullFilter {
    /// False for `*`: the store is then read without a filter.
    pub(crate) fn filters_anything(&self) -> bool {
        !matches!(self, PullFilter::Tags(t) if t.all)
    }
}

impl MessageFilter for PullFilter {
    fn is_matched_by_consume_queue(&self, tags_code: i64) -> bool {
        match self {
            PullFilter::Tags(t) => t.matches_code(tags_code),
            PullFilter::Sql(_) => true,
        }
    }

    fn is_matched_by_commit_log(&self, record: &[u8]) -> bool {
        match self {
            PullFilter::Tags(_) => true,
            PullFilter::Sql(sql) => sql_matches_record(sql, record),
        }
    }
}

/// Decodes the record's properties and evaluates; a record that does not decode does not match.
fn sql_matches_record(sql: &SqlFilter, record: &[u8]) -> bool {
    decode_record(record)
        .is_some_and(|view| sql.matches(&Properties::decode_bytes(view.properties)))
}

async fn pull(
    ctx: &BrokerContext,
    request: &RemotingCommand,
    h: &PullMessageRequestHeader,
    filter: PullFilter,
) -> RemotingCommand {
    if h.sys_flag & FLAG_COMMIT_OFFSET != 0 && !ctx.config.is_slave() {
        ctx.offsets
            .commit(&h.consumer_group, &h.topic, h.queue_id, h.commit_offset);
    }
    if let Some(reset) = ctx
        .offsets
        .take_reset(&h.consumer_group, &h.topic, h.queue_id)
    {
        let min = ctx.store.min_offset_in_queue(&h.topic, h.queue_id);
        let max = ctx.store.max_offset_in_queue(&h.topic, h.queue_id);
        let r = RemotingCommand::response_to(
            request,
            ResponseCode::PULL_OFFSET_MOVED.code(),
            Some("OFFSET_RESET".into()),
        );
        return with_offsets(r, reset, min, max);
    }
    let filter = filter.filters_anything().then_some(filter);
    let max_bytes = h.max_msg_bytes.filter(|b| *b > 0).unwrap_or(i32::MAX);
    // how long the last read took (Java's GROUP_GET_LATENCY)
    let read_ms = std::sync::atomic::AtomicU64::new(0);
    let get = || {
        let started = std::time::Instant::now();
        let dyn_filter = filter.as_ref().map(|f| f as &dyn MessageFilter);
        let r = ctx.store.get_message(
            &h.topic,
            h.queue_id,
            h.queue_offset,
            h.max_msg_nums.max(1),
            max_bytes,
            dyn_filter,
        );
        read_ms.store(
            started.elapsed().as_millis() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        r
    };
    let mut result = get();
    if h.sys_flag & FLAG_SUSPEND != 0 && response_code(&result, h) == ResponseCode::PULL_NOT_FOUND {
        let millis = if ctx.config.long_polling_enable {
            h.suspend_timeout_millis
        } else {
            ctx.config.short_polling_time_mills as i64
        };
        let deadline = deadline_after(millis);
        crate::broker::metrics::mark_long_polled();
        result = ctx
            .pull_hold
            .hold(&h.topic, h.queue_id, deadline, || {
                let r = get();
                if response_code(&r, h) == ResponseCode::PULL_NOT_FOUND {
                    Err(r)
                } else {
                    Ok(r)
                }
            })
            .await;
    }
    if ctx.metrics.enabled() {
        if h.sys_flag & FLAG_SUBSCRIPTION != 0 {
            ctx.clients
                .compensate_subscription(&h.consumer_group, &h.topic);
        }
        // Java's pull offset table: what the lag gauges count in flight and ready from
        ctx.offsets.commit_pull(
            &h.consumer_group,
            &h.topic,
            h.queue_id,
            result.next_begin_offset,
        );
    }
    if result.status == GetMessageStatus::FOUND {
        ctx.metrics.message_out(
            &h.consumer_group,
            &h.topic,
            result.messages.len() as u64,
            result.buffer_total_size as u64,
        );
        ctx.stats.got(
            &h.consumer_group,
            &h.topic,
            result.messages.len() as u64,
            result.buffer_total_size as u64,
            read_ms.load(std::sync::atomic::Ordering::Relaxed),
        );
    }
    pull_response(request, h, result)
}

/// Java's mapping from the store's status to the pull response code.
fn response_code(r: &GetMessageResult, h: &PullMessageRequestHeader) -> ResponseCode {
    use GetMessageStatus::*;
    match r.status {
        FOUND => ResponseCode::SUCCESS,
        MESSAGE_WAS_REMOVING | NO_MATCHED_MESSAGE => ResponseCode::PULL_RETRY_IMMEDIATELY,
        NO_MATCHED_LOGIC_QUEUE | NO_MESSAGE_IN_QUEUE if h.queue_offset != 0 => {
            ResponseCode::PULL_OFFSET_MOVED
        }
        NO_MATCHED_LOGIC_QUEUE | NO_MESSAGE_IN_QUEUE | OFFSET_FOUND_NULL | OFFSET_OVERFLOW_ONE => {
            ResponseCode::PULL_NOT_FOUND
        }
        OFFSET_OVERFLOW_BADLY | OFFSET_TOO_SMALL | OFFSET_RESET => ResponseCode::PULL_OFFSET_MOVED,
    }
}

fn pull_response(
    request: &RemotingCommand,
    h: &PullMessageRequestHeader,
    r: GetMessageResult,
) -> RemotingCommand {
    let code = response_code(&r, h);
    let remark = format!("{:?}", r.status);
    let mut response = RemotingCommand::response_to(request, code.code(), Some(remark));
    let (next, min, max) = (r.next_begin_offset, r.min_offset, r.max_offset);
    if code == ResponseCode::SUCCESS {
        response.body = Body::from(r.messages);
    }
    with_offsets(response, next, min, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random and truncated records (torn reads, garbage lengths) never panic the SQL92 stage and
    /// never match.
    #[test]
    fn sql_stage_never_panics_on_arbitrary_record_bytes() {
        let sql = SqlFilter::compile("a > 5 OR a IS NULL").unwrap();
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let n = (next() % 300) as usize;
            let mut bytes: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            if bytes.len() >= 8 && next() % 2 == 0 {
                bytes[0..4].copy_from_slice(&(n as i32).to_be_bytes());
                // the commit log's MAGIC_V1
                bytes[4..8].copy_from_slice(&0xDAA3_20A7_u32.to_be_bytes());
            }
            let _ = sql_matches_record(&sql, &bytes);
        }
        assert!(!sql_matches_record(&sql, &[]));
    }
}
