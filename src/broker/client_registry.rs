//! Producers and consumers known to the broker, per group and connection: registered by
//! HEART_BEAT, dropped by UNREGISTER_CLIENT, by their connection closing, or when their heartbeats
//! stop (the Go client never unregisters). When a consumer group changes, the rest of the group
//! gets NOTIFY_CONSUMER_IDS_CHANGED so it rebalances at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;

use crate::remoting::body::heartbeat::{ConsumeFromWhere, ConsumeType, MessageModel};
use crate::remoting::body::subscription_data::SubscriptionData;
use crate::remoting::header::notify_consumer_ids_changed::NotifyConsumerIdsChangedRequestHeader;
use crate::remoting::header::CommandHeader;
use crate::remoting::{LanguageCode, RemotingCommand, RequestCode};
use crate::server::Connection;

/// One client connection in a group.
#[derive(Debug, Clone)]
pub struct ClientChannel {
    pub conn: Arc<Connection>,
    pub client_id: String,
    pub language: LanguageCode,
    pub version: i32,
    pub last_update: Instant,
}

/// A consumer group's members and what they subscribed.
#[derive(Debug, Clone)]
pub struct ConsumerGroupInfo {
    pub group_name: String,
    pub consume_type: ConsumeType,
    pub message_model: MessageModel,
    pub consume_from_where: ConsumeFromWhere,
    pub subscriptions: HashMap<String, SubscriptionData>,
    pub channels: HashMap<u64, ClientChannel>,
}

/// The consumer side of one HEART_BEAT.
pub struct ConsumerRegistration {
    pub group: String,
    pub consume_type: ConsumeType,
    pub message_model: MessageModel,
    pub consume_from_where: ConsumeFromWhere,
    pub subscriptions: Vec<SubscriptionData>,
}

/// Java's `ConsumerGroupInfo.updateSubscription`: a topic added or dropped is a change (the group
/// is told); a newer `subVersion` of a known topic replaces its expression quietly. Consumers of
/// one group whose heartbeats differ only in expression (a Java and a Go client, say) therefore do
/// not trigger a rebalance on every heartbeat.
fn update_subscriptions(
    table: &mut HashMap<String, SubscriptionData>,
    subs: HashMap<String, SubscriptionData>,
) -> bool {
    let mut changed = false;
    table.retain(|topic, _| {
        let keep = subs.contains_key(topic);
        changed |= !keep;
        keep
    });
    for (topic, sub) in subs {
        match table.get(&topic) {
            None => {
                table.insert(topic, sub);
                changed = true;
            }
            Some(old) if sub.sub_version > old.sub_version => {
                table.insert(topic, sub);
            }
            Some(_) => {}
        }
    }
    changed
}

#[derive(Default)]
pub struct ClientRegistry {
    producers: DashMap<String, HashMap<u64, ClientChannel>>,
    consumers: DashMap<String, ConsumerGroupInfo>,
    /// Java's `consumerCompensationTable`: topics groups pulled with their subscription in the
    /// request (pull and lite-pull consumers, which heartbeat none), with when it was last seen;
    /// kept 10 minutes (Java's `subscriptionExpiredTimeout`) so lag is reported for them.
    compensation: DashMap<String, HashMap<String, Instant>>,
}

/// Java `subscriptionExpiredTimeout` (ms, 600 000).
const COMPENSATION_TTL: Duration = Duration::from_secs(600);

impl ClientRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register_producer(&self, group: &str, channel: ClientChannel) {
        self.producers
            .entry(group.to_string())
            .or_default()
            .insert(channel.conn.id, channel);
    }

    /// Registers or refreshes a consumer (the heartbeat's subscriptions replace the group's, as
    /// in Java); notifies a clustering group when a member joined or the subscriptions changed.
    pub fn register_consumer(
        &self,
        reg: ConsumerRegistration,
        channel: ClientChannel,
        notify: bool,
    ) {
        let conn_id = channel.conn.id;
        let broadcasting = reg.message_model == MessageModel::Broadcasting;
        let changed = {
            let mut info =
                self.consumers
                    .entry(reg.group.clone())
                    .or_insert_with(|| ConsumerGroupInfo {
                        group_name: reg.group.clone(),
                        consume_type: reg.consume_type,
                        message_model: reg.message_model,
                        consume_from_where: reg.consume_from_where,
                        subscriptions: HashMap::new(),
                        channels: HashMap::new(),
                    });
            info.consume_type = reg.consume_type;
            info.message_model = reg.message_model;
            info.consume_from_where = reg.consume_from_where;
            let subs: HashMap<String, SubscriptionData> = reg
                .subscriptions
                .into_iter()
                .map(|s| (s.topic.clone(), s))
                .collect();
            // an empty set: a heartbeat without subscriptions (kept as they are)
            let subs_changed =
                !subs.is_empty() && update_subscriptions(&mut info.subscriptions, subs);
            let joined = info.channels.insert(conn_id, channel).is_none();
            joined || subs_changed
        };
        if changed && notify && !broadcasting {
            self.notify_group(&reg.group);
        }
    }

    /// UNREGISTER_CLIENT for one group on one connection.
    pub fn unregister(
        &self,
        conn_id: u64,
        producer_group: Option<&str>,
        consumer_group: Option<&str>,
    ) {
        if let Some(g) = producer_group {
            self.remove_producer(g, conn_id);
        }
        if let Some(g) = consumer_group {
            if self.remove_consumer(g, conn_id) {
                self.notify_group(g);
            }
        }
    }

    /// Drops every registration of a closed connection and tells the affected groups.
    pub fn on_connection_closed(&self, conn_id: u64) {
        let groups: Vec<String> = self.producers.iter().map(|e| e.key().clone()).collect();
        groups.iter().for_each(|g| self.remove_producer(g, conn_id));
        let groups: Vec<String> = self.consumers.iter().map(|e| e.key().clone()).collect();
        for g in groups {
            if self.remove_consumer(&g, conn_id) {
                self.notify_group(&g);
            }
        }
    }

    /// Drops channels whose last heartbeat is older than `expiry`; returns how many.
    pub fn scan_not_active(&self, expiry: Duration) -> usize {
        let stale = |c: &ClientChannel| c.last_update.elapsed() > expiry;
        let mut dropped = Vec::new();
        for e in self.consumers.iter() {
            e.channels
                .values()
                .filter(|c| stale(c))
                .for_each(|c| dropped.push(c.conn.id));
        }
        for e in self.producers.iter() {
            e.values()
                .filter(|c| stale(c))
                .for_each(|c| dropped.push(c.conn.id));
        }
        self.compensation.retain(|_, topics| {
            topics.retain(|_, seen| seen.elapsed() <= COMPENSATION_TTL);
            !topics.is_empty()
        });
        dropped.sort_unstable();
        dropped.dedup();
        for id in &dropped {
            tracing::info!(
                conn = id,
                "client heartbeat expired, dropping its registrations"
            );
            self.on_connection_closed(*id);
        }
        dropped.len()
    }

    fn remove_producer(&self, group: &str, conn_id: u64) {
        let empty = match self.producers.get_mut(group) {
            Some(mut m) => {
                m.remove(&conn_id);
                m.is_empty()
            }
            None => false,
        };
        if empty {
            self.producers.remove_if(group, |_, m| m.is_empty());
        }
    }

    /// True when the connection was a member (and others remain to be told).
    fn remove_consumer(&self, group: &str, conn_id: u64) -> bool {
        let (removed, empty) = match self.consumers.get_mut(group) {
            Some(mut info) => (
                info.channels.remove(&conn_id).is_some(),
                info.channels.is_empty(),
            ),
            None => (false, false),
        };
        if empty {
            self.consumers
                .remove_if(group, |_, info| info.channels.is_empty());
        }
        removed && !empty
    }

    /// NOTIFY_CONSUMER_IDS_CHANGED (oneway) to every member of the group.
    pub fn notify_group(&self, group: &str) {
        let Some(info) = self.consumers.get(group) else {
            return;
        };
        for channel in info.channels.values() {
            let mut cmd = RemotingCommand::request(RequestCode::NOTIFY_CONSUMER_IDS_CHANGED.code());
            let header = NotifyConsumerIdsChangedRequestHeader {
                consumer_group: group.to_string(),
                ..Default::default()
            };
            header.write_to(cmd.ext_mut());
            channel.conn.invoke_oneway(cmd);
        }
    }

    pub fn consumer_group(&self, group: &str) -> Option<ConsumerGroupInfo> {
        self.consumers.get(group).map(|g| g.clone())
    }

    pub fn has_consumer_group(&self, group: &str) -> bool {
        self.consumers.contains_key(group)
    }

    /// The client ids of a consumer group (GET_CONSUMER_LIST_BY_GROUP).
    pub fn consumer_ids(&self, group: &str) -> Vec<String> {
        self.consumers
            .get(group)
            .map(|g| g.channels.values().map(|c| c.client_id.clone()).collect())
            .unwrap_or_default()
    }

    pub fn subscription(&self, group: &str, topic: &str) -> Option<SubscriptionData> {
        self.consumers
            .get(group)
            .and_then(|g| g.subscriptions.get(topic).cloned())
    }

    /// Online consumer groups subscribed to `topic`.
    pub fn groups_of_topic(&self, topic: &str) -> Vec<String> {
        self.consumers
            .iter()
            .filter(|g| g.subscriptions.contains_key(topic))
            .map(|g| g.key().clone())
            .collect()
    }

    /// Java `compensateSubscribeData`: `group` pulled `topic` with its subscription.
    pub fn compensate_subscription(&self, group: &str, topic: &str) {
        if let Some(mut g) = self.compensation.get_mut(group) {
            match g.get_mut(topic) {
                Some(seen) => *seen = Instant::now(),
                None => {
                    g.insert(topic.to_string(), Instant::now());
                }
            }
            return;
        }
        self.compensation
            .entry(group.to_string())
            .or_default()
            .insert(topic.to_string(), Instant::now());
    }

    /// Java `ConsumerManager.findSubscriptionData(group, topic)` found something: a member of the
    /// group subscribes to `topic`, else the group pulled or popped it lately (the compensation
    /// table: a POP consumer's heartbeat lists its topic and `%RETRY%<group>`, never the pop retry
    /// topic `%RETRY%<group>_<topic>`, which only its pops name).
    pub fn finds_subscription(&self, group: &str, topic: &str) -> bool {
        if self
            .consumers
            .get(group)
            .is_some_and(|g| g.subscriptions.contains_key(topic))
        {
            return true;
        }
        self.compensation
            .get(group)
            .is_some_and(|g| g.contains_key(topic))
    }

    /// The topics a group consumes: its members' subscriptions, else (Java
    /// `getConsumerGroupInfo(group, true)`) what it pulled with a subscription lately.
    pub fn subscribed_topics(&self, group: &str) -> Option<Vec<String>> {
        if let Some(g) = self.consumers.get(group) {
            return Some(g.subscriptions.keys().cloned().collect());
        }
        self.compensation
            .get(group)
            .map(|g| g.keys().cloned().collect())
    }

    /// Every consumer group with its members.
    pub fn consumer_table(&self) -> Vec<ConsumerGroupInfo> {
        self.consumers.iter().map(|g| g.value().clone()).collect()
    }

    /// Every producer group with its connections.
    pub fn producer_table(&self) -> Vec<(String, Vec<ClientChannel>)> {
        self.producers
            .iter()
            .map(|g| (g.key().clone(), g.values().cloned().collect()))
            .collect()
    }

    pub fn producer_channels(&self, group: &str) -> Vec<ClientChannel> {
        self.producers
            .get(group)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The connection of a consumer by client id, for relaying admin requests to it.
    pub fn find_consumer_channel(&self, group: &str, client_id: &str) -> Option<ClientChannel> {
        self.consumers.get(group).and_then(|g| {
            g.channels
                .values()
                .find(|c| c.client_id == client_id)
                .cloned()
        })
    }

    /// The connection of a producer by client id, whatever its group (Java
    /// `ProducerManager.findChannel`: where PUSH_REPLY_MESSAGE_TO_CLIENT goes).
    pub fn find_producer_by_client_id(&self, client_id: &str) -> Option<ClientChannel> {
        self.producers.iter().find_map(|g| {
            g.values()
                .find(|c| c.client_id == client_id && !c.conn.is_closed())
                .cloned()
        })
    }

    /// Any live producer connection of a group (transaction check-back).
    pub fn any_producer_channel(&self, group: &str) -> Option<ClientChannel> {
        self.producers
            .get(group)
            .and_then(|m| m.values().find(|c| !c.conn.is_closed()).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(topic: &str, expr: &str, version: i64) -> (String, SubscriptionData) {
        let s = SubscriptionData {
            topic: topic.into(),
            sub_string: expr.into(),
            sub_version: version,
            ..Default::default()
        };
        (topic.into(), s)
    }

    #[test]
    fn a_popped_topic_is_found_beside_the_heartbeat_subscriptions() {
        let r = ClientRegistry::new();
        assert!(!r.finds_subscription("g", "%RETRY%g_T"));
        r.compensate_subscription("g", "T");
        r.compensate_subscription("g", "%RETRY%g_T");
        assert!(r.finds_subscription("g", "T"));
        assert!(r.finds_subscription("g", "%RETRY%g_T"));
        assert!(!r.finds_subscription("g", "OTHER"));
        assert!(!r.finds_subscription("h", "T"));
    }

    #[test]
    fn only_added_or_dropped_topics_are_a_change() {
        let mut table = HashMap::new();
        assert!(update_subscriptions(
            &mut table,
            HashMap::from([sub("T", "*", 10), sub("%RETRY%g", "*", 10)])
        ));
        // another member of the group with another expression: replaced when newer, no change
        assert!(!update_subscriptions(
            &mut table,
            HashMap::from([sub("T", "A || B", 20), sub("%RETRY%g", "*", 20)])
        ));
        assert_eq!(table["T"].sub_string, "A || B");
        // an older version is ignored
        assert!(!update_subscriptions(
            &mut table,
            HashMap::from([sub("T", "*", 5), sub("%RETRY%g", "*", 5)])
        ));
        assert_eq!(table["T"].sub_string, "A || B");
        // a topic dropped
        assert!(update_subscriptions(
            &mut table,
            HashMap::from([sub("T", "*", 30)])
        ));
        assert!(!table.contains_key("%RETRY%g"));
    }
}
