//! `BrokerConfig`: the broker's own keys from `broker.conf`, with Java's names and defaults, plus
//! the server keys Java keeps in `NettyServerConfig` and rmqd's keys for its embedded NameServer.
//! Store keys go to the store's config; `config/broker.conf` documents every key.

use std::net::{IpAddr, Ipv4Addr, UdpSocket};

use crate::common::config::config_table;

/// A bad value in a config file; start-up stops with this message.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bad value {value:?} for key `{key}`: {expected}")]
pub struct ConfigError {
    pub key: String,
    pub value: String,
    pub expected: &'static str,
}

impl ConfigError {
    pub fn new(key: &str, value: &str, expected: &'static str) -> Self {
        Self {
            key: key.to_string(),
            value: value.to_string(),
            expected,
        }
    }
}

/// How the embedded NameServer is chosen: `auto` starts it when no NameServer address is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddedNamesrv {
    Auto,
    On,
    Off,
}

/// Reads and renders a broker value: numbers trimmed, booleans `true`/`false` only (any case),
/// strings as given.
pub trait BrokerValue: Sized {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError>;
    fn render(&self) -> String;
}

macro_rules! number_value {
    ($($t:ty),*) => {$(
        impl BrokerValue for $t {
            fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
                num(key, raw)
            }
            fn render(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
number_value!(i32, i64, u16, u64, usize);

impl BrokerValue for bool {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        boolean(key, raw)
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl BrokerValue for String {
    fn parse_value(_key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        Ok(raw.to_string())
    }
    fn render(&self) -> String {
        self.clone()
    }
}

impl BrokerValue for Option<String> {
    fn parse_value(_key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        Ok((!raw.is_empty()).then(|| raw.to_string()))
    }
    fn render(&self) -> String {
        self.clone().unwrap_or_default()
    }
}

impl BrokerValue for EmbeddedNamesrv {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        match raw.to_ascii_lowercase().as_str() {
            "auto" => Ok(EmbeddedNamesrv::Auto),
            "true" => Ok(EmbeddedNamesrv::On),
            "false" => Ok(EmbeddedNamesrv::Off),
            _ => Err(ConfigError::new(key, raw, "auto, true or false")),
        }
    }
    fn render(&self) -> String {
        match self {
            EmbeddedNamesrv::Auto => "auto",
            EmbeddedNamesrv::On => "true",
            EmbeddedNamesrv::Off => "false",
        }
        .to_string()
    }
}

config_table! {
    /// The broker's keys. Listed keys are answered by GET_BROKER_CONFIG in this order.
    #[derive(Debug, Clone, PartialEq)]
    pub struct BrokerConfig: BrokerValue => ConfigError {
        /// Cluster the broker registers in (`DefaultCluster`).
        "brokerClusterName" broker_cluster_name: String = "DefaultCluster".into();
        /// Broker group name (the host name, else `DEFAULT_BROKER`).
        "brokerName" broker_name: String = default_broker_name();
        /// 0 for a master.
        "brokerId" broker_id: i64 = 0;
        /// Address registered for clients (the first non-loopback IPv4 address).
        "brokerIP1" broker_ip1: String = local_address();
        /// HA address (empty).
        "brokerIP2" broker_ip2: String = String::new();
        /// Client port (10911).
        "listenPort" listen_port: u16 = 10911;
        /// Listen address (`0.0.0.0`).
        "bindAddress" bind_address: String = "0.0.0.0".into();
        /// `;`-separated NameServer addresses (none: the embedded NameServer decides).
        "namesrvAddr" namesrv_addr: Option<String> = None;
        /// ASYNC_MASTER, SYNC_MASTER or SLAVE (ASYNC_MASTER).
        "brokerRole" broker_role: String = "ASYNC_MASTER".into(), parse = broker_role;
        /// Read/write permission bits (6).
        "brokerPermission" broker_permission: i32 = 6;
        /// Create unknown topics on send (true).
        "autoCreateTopicEnable" auto_create_topic_enable: bool = true;
        /// Create unknown groups on use (true).
        "autoCreateSubscriptionGroup" auto_create_subscription_group: bool = true;
        /// Create a topic named after the cluster (true).
        "clusterTopicEnable" cluster_topic_enable: bool = true;
        /// Create a topic named after the broker (true).
        "brokerTopicEnable" broker_topic_enable: bool = true;
        /// Queues of an auto-created topic (8).
        "defaultTopicQueueNums" default_topic_queue_nums: i32 = 8;
        /// ms between registrations with the NameServers (30 000).
        "registerNameServerPeriod" register_name_server_period: u64 = 30_000;
        /// ms between consumer offset persists (5 000).
        "flushConsumerOffsetInterval" flush_consumer_offset_interval: u64 = 5_000;
        /// Hold pulls that find nothing until a message arrives (true).
        "longPollingEnable" long_polling_enable: bool = true;
        /// ms a pull is held when long polling is off (1 000).
        "shortPollingTimeMills" short_polling_time_mills: u64 = 1_000;
        /// Accepted for compatibility (true).
        [unlisted] "transferMsgByHeap" transfer_msg_by_heap: bool = true;
        /// ms after which a silent client connection is dropped (120 000).
        [unlisted] "channelNotActiveInterval" channel_not_active_interval: u64 = 120_000;
        /// ms a LOCK_BATCH_MQ lock lives without renewal (Java's system property
        /// `rocketmq.broker.rebalance.lockMaxLiveTime`, default 60 000).
        [unlisted] "rebalanceLockMaxLiveTime" | "rocketmq.broker.rebalance.lockMaxLiveTime"
            rebalance_lock_max_live_time: u64 = 60_000;
        /// SQL92 and property filters (false).
        "enablePropertyFilter" enable_property_filter: bool = false;
        /// Reset offsets on the broker rather than through the clients (true).
        "useServerSideResetOffset" use_server_side_reset_offset: bool = true;
        /// Create the trace topic (false).
        "traceTopicEnable" trace_topic_enable: bool = false;
        /// Stored as MSG_REGION in every sent message and answered in every send response (Java
        /// default `DefaultRegion`).
        "regionId" region_id: String = "DefaultRegion".into();
        /// Stored as TRACE_ON in every sent message and answered in every send response (Java
        /// default true).
        "traceOn" trace_on: bool = true;
        /// Refuse half (transactional) messages with NO_PERMISSION (Java default false).
        "rejectTransactionMessage" reject_transaction_message: bool = false;
        /// ms a half message is left alone before its first check-back (Java default 6 000).
        "transactionTimeOut" transaction_time_out: u64 = 6_000;
        /// Check-backs per half message before it is discarded (Java default 15).
        "transactionCheckMax" transaction_check_max: i32 = 15;
        /// ms between two check runs (Java default 30 000).
        "transactionCheckInterval" transaction_check_interval: u64 = 30_000;
        /// RECALL_MESSAGE (370) cancels timer messages before they are due; false answers it
        /// NO_PERMISSION (Java default false).
        "recallMessageEnable" recall_message_enable: bool = false;
        /// Recall also while the broker's permission forbids writes (Java default true).
        "allowRecallWhenBrokerNotWriteable" allow_recall_when_broker_not_writeable: bool = true;
        /// Store replies in `<cluster>_REPLY_TOPIC` as well as pushing them (Java default true).
        "storeReplyMessageEnable" store_reply_message_enable: bool = true;
        /// Queues of the revive topic `rmq_sys_REVIVE_LOG_<cluster>`, where POP checkpoints and
        /// acks are kept (8). Receipts name a queue: keep it when a store changes brokers.
        "reviveQueueNum" revive_queue_num: i32 = 8;
        /// ms between two scans of a revive queue (1 000).
        "reviveInterval" revive_interval: u64 = 1_000;
        /// Pop retry topics named `%RETRY%<group>+<topic>` instead of `%RETRY%<group>_<topic>`
        /// (false).
        "enableRetryTopicV2" enable_retry_topic_v2: bool = false;
        /// With V2 retry topics, also pop from the V1 one (true).
        "retrieveMessageFromPopRetryTopicV1" retrieve_message_from_pop_retry_topic_v1: bool = true;
        /// Percent of pops that read the retry topic first (20).
        "popFromRetryProbability" pop_from_retry_probability: i32 = 20;
        /// The request mode of a (topic, group) nobody set: PULL or POP (PULL).
        "defaultMessageRequestMode" default_message_request_mode: String = "PULL".into();
        /// `popShareQueueNum` of a (topic, group) nobody set when the default mode is POP (-1).
        "defaultPopShareQueueNum" default_pop_share_queue_num: i32 = -1;
        /// Held POP requests per (topic, group, queue) (1 024); more are answered POLLING_FULL.
        "popPollingSize" pop_polling_size: usize = 1_024;
        /// Held POP requests in all (100 000).
        "maxPopPollingSize" max_pop_polling_size: usize = 100_000;
        /// Assign queues on the broker (QUERY_ASSIGNMENT) by the load-balancing strategy; false:
        /// every client gets every queue (true).
        "serverLoadBalancerEnable" server_load_balancer_enable: bool = true;
        /// Connections the kernel queues before they are accepted (Java's NettyServerConfig, 1024).
        "serverSocketBacklog" server_socket_backlog: i32 = 1024;
        /// s of silence after which a connection is closed (120).
        "serverChannelMaxIdleTimeSeconds" server_channel_max_idle_time_seconds: u64 = 120;
        /// DISABLE or PROM: serve Prometheus `/metrics` on `metricsPromExporterHost`:
        /// `metricsPromExporterPort` (DISABLE). Java's OTLP_GRPC and LOG exporters are not
        /// built: rmqd logs an error and exports nothing.
        "metricsExporterType" metrics_exporter_type: String = "DISABLE".into();
        /// Port of `/metrics` (5557).
        "metricsPromExporterPort" metrics_prom_exporter_port: u16 = 5557;
        /// Address `/metrics` binds (empty: `brokerIP1`, as Java).
        "metricsPromExporterHost" metrics_prom_exporter_host: String = String::new();
        /// `k1:v1,k2:v2` labels added to every series (empty).
        "metricsLabel" metrics_label: String = String::new();
        /// With the store's `enableLmq`: false (Java's default) counts every `%LMQ%` topic and
        /// group under the one stats key `%LMQ%` (Java `LmqBrokerStatsManager`).
        "enableLmqStats" enable_lmq_stats: bool = false;
        /// With `storeType=defaultRocksDB`: topics, groups and offsets in one RocksDB,
        /// `config/metadata`, instead of three (false; Java 5.5.0's key).
        "useSingleRocksDBForAllConfigs" use_single_rocksdb_for_all_configs: bool = false;
        /// Lite topics (Java 5.5): (client, lite topic) subscriptions the broker keeps at most;
        /// one more is refused with LITE_SUBSCRIPTION_QUOTA_EXCEEDED (2018).
        "maxLiteSubscriptionCount" max_lite_subscription_count: i64 = 100_000;
        /// Lite topics: no lite queue expires before the broker has run this long, nor one
        /// whose newest message is younger (ms; Java's spelling).
        "minLiteTTl" min_lite_ttl: i64 = 900_000;
        /// Lite topics: ms between two scans for expired lite queues.
        "liteTtlCheckInterval" lite_ttl_check_interval: u64 = 120_000;
        /// The trace topic's name (`RMQ_SYS_TRACE_TOPIC`).
        [unlisted] "msgTraceTopicName" msg_trace_topic_name: String = "RMQ_SYS_TRACE_TOPIC".into();
        /// rmqd: also serve the VIP channel on `listenPort - 2`, as the Java broker always does
        /// (true). Java clients before 4.5.1, Spring Cloud Stream's binder and rocketmq-dashboard
        /// send there by default.
        [unlisted] "rmqdFastChannelEnable" fast_channel_enable: bool = true;
        /// rmqd: most client connections at once (10 000).
        [unlisted] "rmqdMaxConnections" server_max_connections: usize = 10_000;
        /// rmqd: most requests in flight at once (65 536).
        [unlisted] "rmqdMaxInFlightRequests" server_max_in_flight: usize = 65_536;
        /// rmqd: bytes of frames larger than 64 KiB being received at once, over every
        /// connection of the process (512 MiB). A frame waits (its connection stops reading) until
        /// its announced size fits; one larger than the whole budget closes its connection.
        [unlisted] "rmqdReceiveBufferBudget" receive_buffer_budget: usize =
            crate::server::DEFAULT_RECEIVE_BUDGET;
        /// rmqd: `auto` (start one when no `namesrvAddr` is given), `true` or `false`.
        [unlisted] "rmqdEmbeddedNamesrv" embedded_namesrv: EmbeddedNamesrv = EmbeddedNamesrv::Auto;
        /// rmqd: the embedded NameServer's port (9876).
        [unlisted] "rmqdEmbeddedNamesrvListenPort" embedded_namesrv_listen_port: u16 = 9876;
        /// rmqd: the embedded NameServer's address (`127.0.0.1`).
        [unlisted] "rmqdEmbeddedNamesrvBindAddress" embedded_namesrv_bind_address: String =
            "127.0.0.1".into();
    }
    // Java keys with no effect in a single rmqd process, accepted silently.
    ignored {
        "rocketmqHome",
        "sendMessageThreadPoolNums",
        "pullMessageThreadPoolNums",
        "useReentrantLockWhenPutMessage",
        "waitTimeMillsInSendQueue",
        "sendThreadPoolQueueCapacity",
        "pullThreadPoolQueueCapacity",
        "brokerFastFailureEnable",
        "osPageCacheBusyTimeOutMills",
    }
}

impl BrokerConfig {
    /// `ip:port` clients use to reach this broker (what is registered and written as store host).
    pub fn broker_addr(&self) -> String {
        format!("{}:{}", self.broker_ip1, self.listen_port)
    }

    /// The VIP channel's port: `listenPort - 2` as in Java's `BrokerController`, 0 (any free
    /// port) when that is below 1 or the main port was chosen at random.
    pub fn fast_listen_port(&self, listen_port_configured: bool) -> u16 {
        match self.listen_port.checked_sub(2) {
            Some(p) if p > 0 && listen_port_configured => p,
            _ => 0,
        }
    }

    pub fn is_slave(&self) -> bool {
        self.broker_role == "SLAVE"
    }

    /// The broker's listed keys and current values, for GET_BROKER_CONFIG.
    pub fn key_values(&self) -> Vec<(String, String)> {
        self.keys_and_values()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }
}

pub fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, ConfigError> {
    v.trim()
        .parse()
        .map_err(|_| ConfigError::new(key, v, "a number"))
}

pub fn boolean(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError::new(key, v, "true or false")),
    }
}

/// `brokerRole`, stored upper-case.
fn broker_role(key: &str, v: &str) -> Result<String, ConfigError> {
    let up = v.trim().to_ascii_uppercase();
    if ["ASYNC_MASTER", "SYNC_MASTER", "SLAVE"].contains(&up.as_str()) {
        Ok(up)
    } else {
        Err(ConfigError::new(
            key,
            v,
            "one of ASYNC_MASTER, SYNC_MASTER, SLAVE",
        ))
    }
}

/// Java's default broker name: the host name, else `DEFAULT_BROKER`.
fn default_broker_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "DEFAULT_BROKER".into())
}

/// The first non-loopback IPv4 address, found by routing a UDP socket (no packet is sent); falls
/// back to 127.0.0.1 like a host with no network.
pub fn local_address() -> String {
    let probe = || -> Option<IpAddr> {
        let s = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).ok()?;
        s.connect((Ipv4Addr::new(10, 255, 255, 254), 9)).ok()?;
        Some(s.local_addr().ok()?.ip())
    };
    match probe() {
        Some(ip) if !ip.is_loopback() && !ip.is_unspecified() => ip.to_string(),
        _ => "127.0.0.1".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_keys_set_and_bad_values_name_the_key() {
        let mut c = BrokerConfig::default();
        assert_eq!(c.set("brokerName", "broker-a"), Ok(true));
        assert_eq!(c.set("listenPort", "20911"), Ok(true));
        assert_eq!(c.set("fileReservedTime", "48"), Ok(false));
        let err = c.set("listenPort", "abc").unwrap_err();
        assert_eq!(err.key, "listenPort");
        assert!(err.to_string().contains("listenPort"));
        assert!(c.set("brokerRole", "MASTER").is_err());
        assert_eq!(c.broker_addr(), format!("{}:20911", c.broker_ip1));
        assert_eq!(
            c.set("rocketmq.broker.rebalance.lockMaxLiveTime", "5"),
            Ok(true)
        );
        assert_eq!(c.rebalance_lock_max_live_time, 5);
        assert_eq!(c.set("sendMessageThreadPoolNums", "x"), Ok(true));
        assert!(c.set("longPollingEnable", "yes").is_err());
        assert_eq!(c.set("brokerRole", "slave"), Ok(true));
        assert!(c.is_slave());
    }

    #[test]
    fn get_broker_config_lists_java_keys_in_order() {
        let keys: Vec<String> = BrokerConfig::default()
            .key_values()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let expected = "brokerClusterName brokerName brokerId brokerIP1 brokerIP2 listenPort \
            bindAddress namesrvAddr brokerRole brokerPermission autoCreateTopicEnable \
            autoCreateSubscriptionGroup clusterTopicEnable brokerTopicEnable defaultTopicQueueNums \
            registerNameServerPeriod flushConsumerOffsetInterval longPollingEnable \
            shortPollingTimeMills enablePropertyFilter useServerSideResetOffset traceTopicEnable \
            regionId traceOn rejectTransactionMessage transactionTimeOut transactionCheckMax \
            transactionCheckInterval recallMessageEnable allowRecallWhenBrokerNotWriteable \
            storeReplyMessageEnable reviveQueueNum reviveInterval \
            enableRetryTopicV2 retrieveMessageFromPopRetryTopicV1 popFromRetryProbability \
            defaultMessageRequestMode defaultPopShareQueueNum popPollingSize maxPopPollingSize \
            serverLoadBalancerEnable serverSocketBacklog \
            serverChannelMaxIdleTimeSeconds metricsExporterType metricsPromExporterPort \
            metricsPromExporterHost metricsLabel enableLmqStats useSingleRocksDBForAllConfigs \
            maxLiteSubscriptionCount minLiteTTl liteTtlCheckInterval";
        assert_eq!(keys, expected.split_whitespace().collect::<Vec<_>>());
    }
}
