//! QUERY_ASSIGNMENT (400), SET_MESSAGE_REQUEST_MODE (401) and GET_ALL_MESSAGE_REQUEST_MODE (402),
//! as Java's `QueryAssignmentProcessor`: the broker assigns a consumer its queues, each with the
//! (topic, group)'s mode. POP with `popShareQueueNum` ≤ 0 (or ≥ clients − 1) gives every client
//! one queue per broker with queueId −1 (pop from all); `%RETRY%` topics are always PULL.
//!
//! The queues are the readable queues of the topic's route from the NameServers (every broker
//! group that has the topic), cached 30 s; this broker's own without a NameServer.

use std::sync::Arc;

use super::{ok, ProcessorResult};
use crate::broker::error::BrokerError;
use crate::broker::BrokerContext;
use crate::common::topic::{is_lmq, is_retry_topic, MessageQueue};
use crate::remoting::body::pop::{
    MessageQueueAssignment, QueryAssignmentRequestBody, QueryAssignmentResponseBody,
    SetMessageRequestModeRequestBody,
};
use crate::remoting::command::Body;
use crate::remoting::{RemotingCommand, ResponseCode};
use crate::server::Connection;
use crate::store::lmq::LMQ_QUEUE_ID;

pub async fn query_assignment(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = QueryAssignmentRequestBody::decode(&request.body.to_bytes())?;
    let mode = ctx
        .pop
        .modes
        .get(&body.topic, &body.consumer_group)
        .unwrap_or_else(|| default_mode(ctx, &body));
    // Java answers a set: one assignment per distinct queue (POP's −1 queues collapse)
    // an LMQ has no route: in CLUSTERING its one queue is this broker's queue 0 (Java, whether
    // or not enableLmq is on)
    let all = if is_lmq(&body.topic) && body.message_model != "BROADCASTING" {
        Some(vec![MessageQueue::new(
            &body.topic,
            &ctx.config.broker_name,
            LMQ_QUEUE_ID,
        )])
    } else {
        ctx.topic_subscribe_queues(&body.topic).await
    };
    let queues = assign(ctx, &body, &mode, all).map(|mut qs| {
        let mut seen = std::collections::HashSet::new();
        qs.retain(|mq| seen.insert(mq.clone()));
        qs
    });
    let out = QueryAssignmentResponseBody {
        message_queue_assignments: queues.map(|qs| {
            qs.into_iter()
                .map(|mq| MessageQueueAssignment {
                    attachments: None,
                    message_queue: mq,
                    mode: mode.mode.clone(),
                })
                .collect()
        }),
    };
    let mut r = ok(request);
    r.body = Body::from(out.encode());
    Ok(r)
}

fn default_mode(
    ctx: &BrokerContext,
    b: &QueryAssignmentRequestBody,
) -> SetMessageRequestModeRequestBody {
    let mode = if is_retry_topic(&b.topic) {
        "PULL".to_string()
    } else {
        ctx.config.default_message_request_mode.clone()
    };
    let share = if mode == "POP" {
        ctx.config.default_pop_share_queue_num
    } else {
        0
    };
    SetMessageRequestModeRequestBody {
        consumer_group: b.consumer_group.clone(),
        mode,
        pop_share_queue_num: share,
        topic: b.topic.clone(),
    }
}

/// `None` tells the client to keep its assignment (unknown topic, no clients, unknown strategy).
fn assign(
    ctx: &BrokerContext,
    b: &QueryAssignmentRequestBody,
    mode: &SetMessageRequestModeRequestBody,
    all: Option<Vec<MessageQueue>>,
) -> Option<Vec<MessageQueue>> {
    let mut all = all?;
    if b.message_model == "BROADCASTING" {
        return Some(all);
    }
    if !ctx.config.server_load_balancer_enable {
        return Some(all);
    }
    let mut cids = ctx.clients.consumer_ids(&b.consumer_group);
    if cids.is_empty() {
        return None;
    }
    all.sort_by(|x, y| {
        (&x.topic, &x.broker_name, x.queue_id).cmp(&(&y.topic, &y.broker_name, y.queue_id))
    });
    cids.sort();
    let strategy = Strategy::named(&b.strategy_name)?;
    if mode.mode != "POP" {
        return Some(strategy.allocate(&b.client_id, &all, &cids));
    }
    let share = mode.pop_share_queue_num;
    if share <= 0 || share as usize >= cids.len().saturating_sub(1) {
        return Some(
            all.iter()
                .map(|mq| MessageQueue::new(&mq.topic, &mq.broker_name, -1))
                .collect(),
        );
    }
    let Some(index) = cids.iter().position(|c| c == &b.client_id) else {
        return Some(Vec::new());
    };
    if all.is_empty() {
        return Some(Vec::new());
    }
    if cids.len() > all.len() {
        return Some(vec![all[index % all.len()].clone()]);
    }
    let mut out = strategy.allocate(&b.client_id, &all, &cids);
    let mut i = index;
    for _ in 0..share {
        i = (i + 1) % cids.len();
        out.extend(strategy.allocate(&cids[i], &all, &cids));
    }
    Some(out)
}

/// The client-side strategies Java's broker knows by name.
enum Strategy {
    Averagely,
    AveragelyByCircle,
}

impl Strategy {
    fn named(name: &str) -> Option<Self> {
        match name {
            "AVG" => Some(Self::Averagely),
            "AVG_BY_CIRCLE" => Some(Self::AveragelyByCircle),
            _ => None,
        }
    }

    fn allocate(&self, cid: &str, all: &[MessageQueue], cids: &[String]) -> Vec<MessageQueue> {
        let Some(index) = cids.iter().position(|c| c == cid) else {
            return Vec::new();
        };
        let (n, c) = (all.len(), cids.len());
        if n == 0 {
            return Vec::new();
        }
        match self {
            Self::Averagely => {
                let rem = n % c;
                let size = if n <= c {
                    1
                } else if rem > 0 && index < rem {
                    n / c + 1
                } else {
                    n / c
                };
                let start = if rem > 0 && index < rem {
                    index * size
                } else {
                    index * size + rem
                };
                let range = size.min(n.saturating_sub(start));
                (0..range).map(|i| all[(start + i) % n].clone()).collect()
            }
            Self::AveragelyByCircle => (index..n).step_by(c).map(|i| all[i].clone()).collect(),
        }
    }
}

pub fn set_message_request_mode(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    let body = SetMessageRequestModeRequestBody::decode(&request.body.to_bytes())?;
    if is_retry_topic(&body.topic) {
        return Err(BrokerError::refused(
            ResponseCode::NO_PERMISSION,
            "retry topic is not allowed to set mode",
        ));
    }
    if ctx.topics.select(&body.topic).is_none() {
        return Err(BrokerError::refused(
            ResponseCode::TOPIC_NOT_EXIST,
            format!("topic[{}] not exist", body.topic),
        ));
    }
    // Java looks the group up with findSubscriptionGroupConfig, which creates it when
    // autoCreateSubscriptionGroup is on
    if ctx.groups.find_or_create(&body.consumer_group).is_err() {
        return Err(BrokerError::refused(
            ResponseCode::SUBSCRIPTION_GROUP_NOT_EXIST,
            "subscription group does not exist",
        ));
    }
    if let Err(e) = ctx.pop.modes.set(body) {
        // as Java's ConfigManager: a file that cannot be written is logged; the mode serves
        tracing::error!(error = %e, "cannot write messageRequestMode.json");
    }
    Ok(ok(request))
}

pub fn get_all_message_request_mode(
    ctx: &BrokerContext,
    _conn: &Arc<Connection>,
    request: &RemotingCommand,
) -> ProcessorResult {
    if ctx.pop.modes.is_empty() {
        return Err(BrokerError::system(
            "No message request mode in this broker",
        ));
    }
    let mut r = ok(request);
    r.body = Body::from(ctx.pop.modes.encode_compact());
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averagely_as_java_allocates() {
        let all: Vec<MessageQueue> = (0..5).map(|q| MessageQueue::new("T", "b", q)).collect();
        let cids: Vec<String> = vec!["a".into(), "b".into()];
        let q = |v: Vec<MessageQueue>| v.into_iter().map(|m| m.queue_id).collect::<Vec<_>>();
        assert_eq!(
            q(Strategy::Averagely.allocate("a", &all, &cids)),
            vec![0, 1, 2]
        );
        assert_eq!(
            q(Strategy::Averagely.allocate("b", &all, &cids)),
            vec![3, 4]
        );
        assert_eq!(
            q(Strategy::AveragelyByCircle.allocate("b", &all, &cids)),
            vec![1, 3]
        );
        assert!(Strategy::Averagely.allocate("z", &all, &cids).is_empty());
    }
}
