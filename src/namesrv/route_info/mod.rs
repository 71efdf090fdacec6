//! `RouteInfoManager`: the NameServer's route tables, as Java's of the same name keeps them —
//! topic -> (broker name -> QueueData), broker name -> BrokerData, cluster -> broker names,
//! (cluster, broker address) -> liveness, filter servers and static-topic mappings — behind one
//! read/write lock.

mod admin;
mod query;
mod register;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use parking_lot::RwLock;
use serde_json::Value;

use crate::common::topic::PERM_WRITE;
use crate::remoting::body::data_version::DataVersion;
use crate::remoting::body::register_broker::TopicConfigSerializeWrapper;
use crate::remoting::body::topic_route::{BrokerData, QueueData};

/// `MixAll.MASTER_ID`.
pub const MASTER_ID: i64 = 0;
/// `TopicSysFlag.FLAG_UNIT` / `FLAG_UNIT_SUB`.
const FLAG_UNIT: i32 = 0x1;
const FLAG_UNIT_SUB: i32 = 0x2;
/// `TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX`.
const SYNC_BROKER_MEMBER_GROUP_PREFIX: &str = "rmq_sys_SYNC_BROKER_MEMBER_";

/// `BrokerAddrInfo`: a broker address within a cluster, the liveness key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BrokerAddrInfo {
    pub cluster_name: String,
    pub broker_addr: String,
}

impl BrokerAddrInfo {
    pub fn new(cluster_name: &str, broker_addr: &str) -> Self {
        Self {
            cluster_name: cluster_name.to_string(),
            broker_addr: broker_addr.to_string(),
        }
    }
}

/// `BrokerLiveInfo`: when the broker last registered, on which connection, with which version.
#[derive(Debug, Clone)]
pub struct BrokerLiveInfo {
    pub last_update: Instant,
    pub heartbeat_timeout: Duration,
    pub data_version: DataVersion,
    pub conn_id: u64,
    pub peer: Option<SocketAddr>,
    pub ha_server_addr: String,
}

/// One REGISTER_BROKER, decoded.
#[derive(Debug, Clone, Default)]
pub struct BrokerRegistration {
    pub cluster_name: String,
    pub broker_addr: String,
    pub broker_name: String,
    pub broker_id: i64,
    pub ha_server_addr: String,
    pub zone_name: Option<String>,
    pub heartbeat_timeout_millis: Option<i64>,
    /// `None` from brokers older than 5.x.
    pub enable_acting_master: Option<bool>,
    pub topic_config_wrapper: TopicConfigSerializeWrapper,
    /// `None` from brokers older than V3_0_11.
    pub filter_server_list: Option<Vec<String>>,
    pub conn_id: u64,
    pub peer: Option<SocketAddr>,
}

/// `RegisterBrokerResult`: for a slave, its live master's HA address and address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterBrokerResult {
    pub ha_server_addr: Option<String>,
    pub master_addr: Option<String>,
}

/// The broker to drop: what UNREGISTER_BROKER carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerIdentity {
    pub cluster_name: String,
    pub broker_addr: String,
    pub broker_name: String,
    pub broker_id: i64,
}

#[derive(Debug, Default)]
struct RouteTables {
    topic_queue_table: BTreeMap<String, BTreeMap<String, QueueData>>,
    broker_addr_table: BTreeMap<String, BrokerData>,
    cluster_addr_table: BTreeMap<String, BTreeSet<String>>,
    broker_live_table: HashMap<BrokerAddrInfo, BrokerLiveInfo>,
    filter_server_table: HashMap<BrokerAddrInfo, Vec<String>>,
    topic_queue_mapping_info_table: BTreeMap<String, BTreeMap<String, Value>>,
}

/// Behaviour switches taken from `NamesrvConfig`.
#[derive(Debug, Clone)]
pub struct RouteOptions {
    pub default_broker_expired_time: Duration,
    pub delete_topic_with_broker_registration: bool,
    pub support_acting_master: bool,
}

impl Default for RouteOptions {
    fn default() -> Self {
        Self {
            default_broker_expired_time: Duration::from_millis(120_000),
            delete_topic_with_broker_registration: false,
            support_acting_master: false,
        }
    }
}

#[derive(Debug, Default)]
pub struct RouteInfoManager {
    tables: RwLock<RouteTables>,
    options: RwLock<RouteOptions>,
}

impl RouteInfoManager {
    pub fn new(options: RouteOptions) -> Self {
        Self {
            tables: RwLock::new(RouteTables::default()),
            options: RwLock::new(options),
        }
    }

    /// Replaces the behaviour switches (after UPDATE_NAMESRV_CONFIG).
    pub fn set_options(&self, options: RouteOptions) {
        *self.options.write() = options;
    }

    /// Java's `unRegisterBroker` for one broker.
    pub fn unregister_broker(&self, who: &BrokerIdentity) {
        let mut t = self.tables.write();
        let key = BrokerAddrInfo::new(&who.cluster_name, &who.broker_addr);
        let live = t.broker_live_table.remove(&key);
        tracing::info!(cluster = %who.cluster_name, broker = %who.broker_addr, found = live.is_some(), "unregister broker");
        t.filter_server_table.remove(&key);
        let mut remove_name = false;
        if let Some(bd) = t.broker_addr_table.get_mut(&who.broker_name) {
            bd.broker_addrs.retain(|_, addr| *addr != who.broker_addr);
            if bd.broker_addrs.is_empty() {
                t.broker_addr_table.remove(&who.broker_name);
                remove_name = true;
            }
        }
        if remove_name {
            if let Some(names) = t.cluster_addr_table.get_mut(&who.cluster_name) {
                names.remove(&who.broker_name);
                if names.is_empty() {
                    t.cluster_addr_table.remove(&who.cluster_name);
                }
            }
            let topics: Vec<String> = t.topic_queue_table.keys().cloned().collect();
            for topic in topics {
                remove_queue_data(&mut t, &topic, &who.broker_name);
            }
        } else {
            wipe_write_if_no_master(&mut t, &who.broker_name);
        }
    }

    /// Drops every broker registered over connection `conn_id` (Java's `onChannelDestroy`).
    pub fn on_connection_closed(&self, conn_id: u64) {
        let keys: Vec<BrokerAddrInfo> = self
            .tables
            .read()
            .broker_live_table
            .iter()
            .filter(|(_, live)| live.conn_id == conn_id)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.unregister_by_addr(&key);
        }
    }

    /// Drops brokers whose last registration is older than their timeout (Java's
    /// `scanNotActiveBroker`). Returns the connection ids of the expired brokers, to be closed.
    pub fn scan_not_active_brokers(&self) -> Vec<u64> {
        let now = Instant::now();
        let expired: Vec<(BrokerAddrInfo, u64)> = self
            .tables
            .read()
            .broker_live_table
            .iter()
            .filter(|(_, l)| now.duration_since(l.last_update) > l.heartbeat_timeout)
            .map(|(k, l)| (k.clone(), l.conn_id))
            .collect();
        for (key, _) in &expired {
            tracing::warn!(cluster = %key.cluster_name, broker = %key.broker_addr, "broker channel expired");
            self.unregister_by_addr(key);
        }
        expired.into_iter().map(|(_, c)| c).collect()
    }

    fn unregister_by_addr(&self, key: &BrokerAddrInfo) {
        let who = {
            let t = self.tables.read();
            t.broker_addr_table
                .values()
                .filter(|bd| bd.cluster == key.cluster_name)
                .find_map(|bd| {
                    bd.broker_addrs
                        .iter()
                        .find(|(_, a)| **a == key.broker_addr)
                        .map(|(id, _)| BrokerIdentity {
                            cluster_name: key.cluster_name.clone(),
                            broker_addr: key.broker_addr.clone(),
                            broker_name: bd.broker_name.clone(),
                            broker_id: *id,
                        })
                })
        };
        match who {
            Some(who) => self.unregister_broker(&who),
            None => {
                self.tables.write().broker_live_table.remove(key);
            }
        }
    }

    /// The DataVersion the broker last registered with.
    pub fn query_broker_topic_config(
        &self,
        cluster: &str,
        broker_addr: &str,
    ) -> Option<DataVersion> {
        self.tables
            .read()
            .broker_live_table
            .get(&BrokerAddrInfo::new(cluster, broker_addr))
            .map(|l| l.data_version)
    }

    pub fn is_broker_topic_config_changed(
        &self,
        cluster: &str,
        broker_addr: &str,
        version: &DataVersion,
    ) -> bool {
        is_broker_topic_config_changed(&self.tables.read(), cluster, broker_addr, version)
    }

    /// Refreshes a broker's liveness (QUERY_DATA_VERSION, BROKER_HEARTBEAT).
    pub fn update_broker_info_update_timestamp(&self, cluster: &str, broker_addr: &str) {
        let key = BrokerAddrInfo::new(cluster, broker_addr);
        if let Some(live) = self.tables.write().broker_live_table.get_mut(&key) {
            live.last_update = Instant::now();
        }
    }

    /// The live brokers' keys (for tests and diagnostics).
    pub fn live_brokers(&self) -> Vec<BrokerAddrInfo> {
        let mut v: Vec<_> = self
            .tables
            .read()
            .broker_live_table
            .keys()
            .cloned()
            .collect();
        v.sort();
        v
    }
}

fn is_broker_topic_config_changed(
    t: &RouteTables,
    cluster: &str,
    broker_addr: &str,
    version: &DataVersion,
) -> bool {
    t.broker_live_table
        .get(&BrokerAddrInfo::new(cluster, broker_addr))
        .is_none_or(|l| l.data_version != *version)
}

fn remove_queue_data(t: &mut RouteTables, topic: &str, broker_name: &str) {
    if let Some(qds) = t.topic_queue_table.get_mut(topic) {
        qds.remove(broker_name);
        if qds.is_empty() {
            t.topic_queue_table.remove(topic);
        }
    }
}

/// After a slave of an acting-master broker left: with no master, its topics lose the write bit.
fn wipe_write_if_no_master(t: &mut RouteTables, broker_name: &str) {
    let Some(bd) = t.broker_addr_table.get(broker_name) else {
        return;
    };
    let no_master = bd
        .broker_addrs
        .keys()
        .next()
        .is_none_or(|&id| id > MASTER_ID);
    if !bd.enable_acting_master || !no_master {
        return;
    }
    for qds in t.topic_queue_table.values_mut() {
        if let Some(qd) = qds.get_mut(broker_name) {
            qd.perm &= !PERM_WRITE;
        }
    }
}
