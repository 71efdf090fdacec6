//! Route queries: topic routes, cluster info, topic lists, broker member groups.

use std::collections::BTreeSet;

use super::{
    BrokerAddrInfo, RouteInfoManager, FLAG_UNIT, FLAG_UNIT_SUB, MASTER_ID,
    SYNC_BROKER_MEMBER_GROUP_PREFIX,
};
use crate::common::topic::is_writeable;
use crate::remoting::body::cluster_info::{BrokerMemberGroup, ClusterInfo};
use crate::remoting::body::topic_list::TopicList;
use crate::remoting::body::topic_route::TopicRouteData;

impl RouteInfoManager {
    /// Java's `pickupTopicRouteData`; `None` when no queue or no broker hosts the topic.
    pub fn pickup_topic_route_data(&self, topic: &str) -> Option<TopicRouteData> {
        let t = self.tables.read();
        let qds = t.topic_queue_table.get(topic)?;
        let mut route = TopicRouteData {
            queue_datas: qds.values().cloned().collect(),
            ..TopicRouteData::default()
        };
        for name in qds.keys() {
            let Some(bd) = t.broker_addr_table.get(name) else {
                continue;
            };
            if !t.filter_server_table.is_empty() {
                for addr in bd.broker_addrs.values() {
                    let key = BrokerAddrInfo::new(&bd.cluster, addr);
                    if let Some(list) = t.filter_server_table.get(&key) {
                        route.filter_server_table.insert(addr.clone(), list.clone());
                    }
                }
            }
            route.broker_datas.push(bd.clone());
        }
        if route.broker_datas.is_empty() {
            return None;
        }
        route.topic_queue_mapping_by_broker = t.topic_queue_mapping_info_table.get(topic).cloned();
        if self.options.read().support_acting_master
            && !topic.starts_with(SYNC_BROKER_MEMBER_GROUP_PREFIX)
        {
            apply_acting_master(&mut route);
        }
        Some(route)
    }

    pub fn cluster_info(&self) -> ClusterInfo {
        let t = self.tables.read();
        ClusterInfo {
            broker_addr_table: t.broker_addr_table.clone(),
            cluster_addr_table: t.cluster_addr_table.clone(),
        }
    }

    pub fn all_topic_list(&self) -> TopicList {
        TopicList {
            broker_addr: None,
            topic_list: self
                .tables
                .read()
                .topic_queue_table
                .keys()
                .cloned()
                .collect(),
        }
    }

    /// Java's `getSystemTopicList`: cluster names and broker names, plus one broker address.
    pub fn system_topic_list(&self) -> TopicList {
        let t = self.tables.read();
        let mut list = TopicList::default();
        for (cluster, names) in &t.cluster_addr_table {
            list.topic_list.push(cluster.clone());
            list.topic_list.extend(names.iter().cloned());
        }
        list.broker_addr = t
            .broker_addr_table
            .values()
            .find_map(|bd| bd.broker_addrs.values().next().cloned());
        list
    }

    pub fn topics_by_cluster(&self, cluster: &str) -> TopicList {
        let t = self.tables.read();
        let mut topics = BTreeSet::new();
        for name in t.cluster_addr_table.get(cluster).into_iter().flatten() {
            for (topic, qds) in &t.topic_queue_table {
                if qds.contains_key(name) {
                    topics.insert(topic.clone());
                }
            }
        }
        TopicList {
            broker_addr: None,
            topic_list: topics.into_iter().collect(),
        }
    }

    /// Topics whose first QueueData's sysflag satisfies `pred` (the unit topic lists).
    pub fn topics_by_sys_flag(&self, pred: impl Fn(i32) -> bool) -> TopicList {
        let t = self.tables.read();
        let topic_list = t
            .topic_queue_table
            .iter()
            .filter(|(_, qds)| qds.values().next().is_some_and(|q| pred(q.topic_sys_flag)))
            .map(|(topic, _)| topic.clone())
            .collect();
        TopicList {
            broker_addr: None,
            topic_list,
        }
    }

    pub fn unit_topics(&self) -> TopicList {
        self.topics_by_sys_flag(|f| f & FLAG_UNIT != 0)
    }

    pub fn has_unit_sub_topics(&self) -> TopicList {
        self.topics_by_sys_flag(|f| f & FLAG_UNIT_SUB != 0)
    }

    pub fn has_unit_sub_un_unit_topics(&self) -> TopicList {
        self.topics_by_sys_flag(|f| f & FLAG_UNIT == 0 && f & FLAG_UNIT_SUB != 0)
    }

    pub fn broker_member_group(&self, cluster: &str, broker_name: &str) -> BrokerMemberGroup {
        let t = self.tables.read();
        BrokerMemberGroup {
            broker_addrs: t
                .broker_addr_table
                .get(broker_name)
                .map(|bd| bd.broker_addrs.clone())
                .unwrap_or_default(),
            broker_name: broker_name.to_string(),
            cluster: cluster.to_string(),
        }
    }
}

/// `supportActingMaster`: a masterless, read-only broker group presents its smallest id as 0.
fn apply_acting_master(route: &mut TopicRouteData) {
    let need = route
        .broker_datas
        .iter()
        .any(|bd| !bd.broker_addrs.is_empty() && !bd.broker_addrs.contains_key(&MASTER_ID));
    if !need {
        return;
    }
    for bd in &mut route.broker_datas {
        if bd.broker_addrs.is_empty()
            || bd.broker_addrs.contains_key(&MASTER_ID)
            || !bd.enable_acting_master
        {
            continue;
        }
        let read_only = route
            .queue_datas
            .iter()
            .find(|q| q.broker_name == bd.broker_name)
            .is_some_and(|q| !is_writeable(q.perm));
        if read_only {
            if let Some((&min_id, _)) = bd.broker_addrs.iter().next() {
                if let Some(addr) = bd.broker_addrs.remove(&min_id) {
                    bd.broker_addrs.insert(MASTER_ID, addr);
                }
            }
        }
    }
}
