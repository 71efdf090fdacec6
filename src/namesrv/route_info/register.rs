//! REGISTER_BROKER: Java's `RouteInfoManager.registerBroker`, in the order Java takes its steps —
//! name the broker, check the address against a newer registration, record the address, take the
//! topics of a master (or prime slave), record liveness, and tell a slave its master.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{
    is_broker_topic_config_changed, remove_queue_data, BrokerAddrInfo, BrokerLiveInfo,
    BrokerRegistration, RegisterBrokerResult, RouteInfoManager, RouteTables, MASTER_ID,
};
use crate::common::topic::{TopicConfig, PERM_WRITE};
use crate::remoting::body::topic_route::{BrokerData, QueueData};

/// How a registration takes part in the topic routes.
struct TopicRole {
    /// The broker name or this id's address is new: every topic is (re)written.
    register_first: bool,
    /// A master, or the lowest-id slave of a 5.x broker: its topics enter the routes.
    serves_topics: bool,
    /// A prime slave of an acting-master group: its queues enter without the write bit.
    wipe_write: bool,
}

impl RouteInfoManager {
    /// Java's `registerBroker`: `None` means "register broker failed" (a single-topic
    /// registration from a broker id not yet registered).
    pub fn register_broker(&self, reg: BrokerRegistration) -> Option<RegisterBrokerResult> {
        let mut t = self.tables.write();
        let new_name = add_broker_name(&mut t, &reg);
        let old_addr = t.broker_addr_table[&reg.broker_name]
            .broker_addrs
            .get(&reg.broker_id)
            .cloned();
        if yields_to_newer_registration(&t, &reg, old_addr.as_deref()) {
            tracing::warn!(broker = %reg.broker_addr, old = ?old_addr, "registration conflicts with a newer broker; ignored");
            t.broker_live_table
                .remove(&BrokerAddrInfo::new(&reg.cluster_name, &reg.broker_addr));
            return Some(RegisterBrokerResult::default());
        }
        if old_addr.is_none() && reg.topic_config_wrapper.topic_config_table.len() == 1 {
            tracing::warn!(broker = %reg.broker_addr, "single-topic registration before the broker registered");
            return None;
        }
        let role = record_address(&mut t, &reg, new_name)?;
        if role.serves_topics {
            self.update_topics(&mut t, &reg, role.register_first, role.wipe_write);
        }
        let timeout = reg
            .heartbeat_timeout_millis
            .map(|ms| Duration::from_millis(ms.max(0) as u64))
            .unwrap_or(self.options.read().default_broker_expired_time);
        record_liveness(&mut t, &reg, timeout);
        Some(master_of(&t, &reg))
    }

    /// The topic part of a registration: queue datas for changed topics, deleted topics, mappings.
    fn update_topics(
        &self,
        t: &mut RouteTables,
        reg: &BrokerRegistration,
        register_first: bool,
        wipe_write: bool,
    ) {
        let wrapper = &reg.topic_config_wrapper;
        if self.options.read().delete_topic_with_broker_registration
            && wrapper.topic_queue_mapping_info_map.is_empty()
        {
            remove_topics_not_registered(t, reg);
        }
        let version_changed = is_broker_topic_config_changed(
            t,
            &reg.cluster_name,
            &reg.broker_addr,
            &wrapper.data_version,
        );
        for tc in wrapper.topic_config_table.values() {
            let topic_changed = version_changed
                || t.topic_queue_table
                    .get(&tc.topic_name)
                    .is_none_or(|qds| !qds.contains_key(&reg.broker_name));
            if register_first || topic_changed {
                let mut tc = tc.clone();
                if wipe_write {
                    tc.perm &= !PERM_WRITE;
                }
                create_and_update_queue_data(t, &reg.broker_name, &tc);
            }
        }
        if version_changed || register_first {
            record_queue_mappings(t, reg);
        }
    }
}

/// Adds the broker name to its cluster and its BrokerData (new: `true`), and takes the
/// registration's acting-master flag and zone. One address has one id: a slave switched to
/// master drops its old id.
fn add_broker_name(t: &mut RouteTables, reg: &BrokerRegistration) -> bool {
    t.cluster_addr_table
        .entry(reg.cluster_name.clone())
        .or_default()
        .insert(reg.broker_name.clone());
    let new_name = !t.broker_addr_table.contains_key(&reg.broker_name);
    let bd = t
        .broker_addr_table
        .entry(reg.broker_name.clone())
        .or_insert_with(|| BrokerData::new(&reg.cluster_name, &reg.broker_name));
    bd.enable_acting_master = reg.enable_acting_master.unwrap_or(false);
    bd.zone_name = reg.zone_name.clone();
    bd.broker_addrs
        .retain(|id, addr| !(*addr == reg.broker_addr && *id != reg.broker_id));
    new_name
}

/// The broker id was registered from another address whose live entry has a newer
/// `stateVersion`: this registration loses.
fn yields_to_newer_registration(
    t: &RouteTables,
    reg: &BrokerRegistration,
    old_addr: Option<&str>,
) -> bool {
    let Some(old) = old_addr.filter(|a| *a != reg.broker_addr) else {
        return false;
    };
    t.broker_live_table
        .get(&BrokerAddrInfo::new(&reg.cluster_name, old))
        .is_some_and(|old_live| {
            old_live.data_version.state_version
                > reg.topic_config_wrapper.data_version.state_version
        })
}

/// Records the id's address and decides how the registration takes part in the topic routes.
fn record_address(
    t: &mut RouteTables,
    reg: &BrokerRegistration,
    new_name: bool,
) -> Option<TopicRole> {
    let bd = t.broker_addr_table.get_mut(&reg.broker_name)?;
    let prev = bd
        .broker_addrs
        .insert(reg.broker_id, reg.broker_addr.clone());
    let is_old_version_broker = reg.enable_acting_master.is_none();
    let is_master = reg.broker_id == MASTER_ID;
    let min_id = bd.broker_addrs.keys().next().copied();
    let is_prime_slave = !is_old_version_broker && !is_master && min_id == Some(reg.broker_id);
    Some(TopicRole {
        register_first: new_name || prev.as_deref().unwrap_or("").is_empty(),
        serves_topics: is_master || is_prime_slave,
        wipe_write: is_prime_slave && bd.enable_acting_master,
    })
}

/// Refreshes the broker's liveness entry and its filter servers.
fn record_liveness(t: &mut RouteTables, reg: &BrokerRegistration, timeout: Duration) {
    let key = BrokerAddrInfo::new(&reg.cluster_name, &reg.broker_addr);
    let prev_live = t.broker_live_table.insert(
        key.clone(),
        BrokerLiveInfo {
            last_update: Instant::now(),
            heartbeat_timeout: timeout,
            data_version: reg.topic_config_wrapper.data_version,
            conn_id: reg.conn_id,
            peer: reg.peer,
            ha_server_addr: reg.ha_server_addr.clone(),
        },
    );
    if prev_live.is_none() {
        tracing::info!(cluster = %reg.cluster_name, broker = %reg.broker_addr, ha = %reg.ha_server_addr, "new broker registered");
    }
    match &reg.filter_server_list {
        Some(list) if list.is_empty() => {
            t.filter_server_table.remove(&key);
        }
        Some(list) => {
            t.filter_server_table.insert(key, list.clone());
        }
        None => {}
    }
}

/// For a slave: its live master's HA address and address; empty for a master.
fn master_of(t: &RouteTables, reg: &BrokerRegistration) -> RegisterBrokerResult {
    let mut result = RegisterBrokerResult::default();
    if reg.broker_id == MASTER_ID {
        return result;
    }
    let master = t
        .broker_addr_table
        .get(&reg.broker_name)
        .and_then(|bd| bd.broker_addrs.get(&MASTER_ID));
    if let Some(master_addr) = master {
        let master_key = BrokerAddrInfo::new(&reg.cluster_name, master_addr);
        if let Some(live) = t.broker_live_table.get(&master_key) {
            result.ha_server_addr = Some(live.ha_server_addr.clone());
            result.master_addr = Some(master_addr.clone());
        }
    }
    result
}

/// `deleteTopicWithBrokerRegistration`: the broker's queues of topics it no longer registers go.
fn remove_topics_not_registered(t: &mut RouteTables, reg: &BrokerRegistration) {
    let table = &reg.topic_config_wrapper.topic_config_table;
    let stale: Vec<String> = t
        .topic_queue_table
        .iter()
        .filter(|(topic, qds)| qds.contains_key(&reg.broker_name) && !table.contains_key(*topic))
        .map(|(topic, _)| topic.clone())
        .collect();
    for topic in stale {
        remove_queue_data(t, &topic, &reg.broker_name);
    }
}

/// Static-topic mappings, keyed by the mapping's `bname` (the registering broker's name if absent).
fn record_queue_mappings(t: &mut RouteTables, reg: &BrokerRegistration) {
    for (topic, info) in &reg.topic_config_wrapper.topic_queue_mapping_info_map {
        let bname = info
            .get("bname")
            .and_then(Value::as_str)
            .unwrap_or(&reg.broker_name)
            .to_string();
        t.topic_queue_mapping_info_table
            .entry(topic.clone())
            .or_default()
            .insert(bname, info.clone());
    }
}

fn create_and_update_queue_data(t: &mut RouteTables, broker_name: &str, tc: &TopicConfig) {
    let qd = QueueData {
        broker_name: broker_name.to_string(),
        perm: tc.perm,
        read_queue_nums: tc.read_queue_nums,
        topic_sys_flag: tc.topic_sys_flag,
        write_queue_nums: tc.write_queue_nums,
    };
    t.topic_queue_table
        .entry(tc.topic_name.clone())
        .or_default()
        .insert(broker_name.to_string(), qd);
}
