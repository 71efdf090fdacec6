//! `BrokerConfig`: the broker's own keys from `broker.conf`, with Java's names and defaults, plus
//! the server keys Java keeps in `NettyServerConfig` and rmqd's keys for its embedded NameServer.
//! Store keys go to the store's config; `config/broker.conf` documents every key.

use std::net::{IpAddr, Ipv4Addr, UdpSocket};

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

#[derive(Debug, Clone, PartialEq)]
pub struct BrokerConfig {
    pub broker_cluster_name: String,
    pub broker_name: String,
    pub broker_id: i64,
    pub broker_ip1: String,
    pub broker_ip2: String,
    pub listen_port: u16,
    pub bind_address: String,
    pub namesrv_addr: Option<String>,
    pub broker_role: String,
    pub broker_permission: i32,
    pub auto_create_topic_enable: bool,
    pub auto_create_subscription_group: bool,
    pub cluster_topic_enable: bool,
    pub broker_topic_enable: bool,
    pub default_topic_queue_nums: i32,
    pub register_name_server_period: u64,
    pub flush_consumer_offset_interval: u64,
    pub long_polling_enable: bool,
    pub short_polling_time_mills: u64,
    pub transfer_msg_by_heap: bool,
    pub channel_not_active_interval: u64,
    /// ms a LOCK_BATCH_MQ lock lives without renewal (Java's system property
    /// `rocketmq.broker.rebalance.lockMaxLiveTime`, default 60 000).
    pub rebalance_lock_max_live_time: u64,
    pub enable_property_filter: bool,
    /// Refuse half (transactional) messages with NO_PERMISSION (Java default false).
    pub reject_transaction_message: bool,
    /// Stored as MSG_REGION in every sent message and answered in every send response (Java
    /// default `DefaultRegion`).
    pub region_id: String,
    /// Stored as TRACE_ON in every sent message and answered in every send response (Java
    /// default true).
    pub trace_on: bool,
    /// ms a half message is left alone before its first check-back (Java default 6 000).
    pub transaction_time_out: u64,
    /// Check-backs per half message before it is discarded (Java default 15).
    pub transaction_check_max: i32,
    /// ms between two check runs (Java default 30 000).
    pub transaction_check_interval: u64,
    /// Store replies in `<cluster>_REPLY_TOPIC` as well as pushing them (Java default true).
    pub store_reply_message_enable: bool,
    pub use_server_side_reset_offset: bool,
    pub trace_topic_enable: bool,
    pub msg_trace_topic_name: String,
    pub server_channel_max_idle_time_seconds: u64,
    pub server_max_connections: usize,
    pub server_max_in_flight: usize,
    pub embedded_namesrv: EmbeddedNamesrv,
    pub embedded_namesrv_listen_port: u16,
    pub embedded_namesrv_bind_address: String,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        Self {
            broker_cluster_name: "DefaultCluster".into(),
            broker_name: default_broker_name(),
            broker_id: 0,
            broker_ip1: local_address(),
            broker_ip2: String::new(),
            listen_port: 10911,
            bind_address: "0.0.0.0".into(),
            namesrv_addr: None,
            broker_role: "ASYNC_MASTER".into(),
            broker_permission: 6,
            auto_create_topic_enable: true,
            auto_create_subscription_group: true,
            cluster_topic_enable: true,
            broker_topic_enable: true,
            default_topic_queue_nums: 8,
            register_name_server_period: 30_000,
            flush_consumer_offset_interval: 5_000,
            long_polling_enable: true,
            short_polling_time_mills: 1_000,
            transfer_msg_by_heap: true,
            channel_not_active_interval: 120_000,
            rebalance_lock_max_live_time: 60_000,
            enable_property_filter: false,
            reject_transaction_message: false,
            region_id: "DefaultRegion".into(),
            trace_on: true,
            transaction_time_out: 6_000,
            transaction_check_max: 15,
            transaction_check_interval: 30_000,
            store_reply_message_enable: true,
            use_server_side_reset_offset: true,
            trace_topic_enable: false,
            msg_trace_topic_name: "RMQ_SYS_TRACE_TOPIC".into(),
            server_channel_max_idle_time_seconds: 120,
            server_max_connections: 10_000,
            server_max_in_flight: 65_536,
            embedded_namesrv: EmbeddedNamesrv::Auto,
            embedded_namesrv_listen_port: 9876,
            embedded_namesrv_bind_address: "127.0.0.1".into(),
        }
    }
}

impl BrokerConfig {
    /// Applies one key. `Ok(false)`: not a broker key (the caller offers it to the store).
    pub fn set(&mut self, key: &str, v: &str) -> Result<bool, ConfigError> {
        match key {
            "brokerClusterName" => self.broker_cluster_name = v.to_string(),
            "brokerName" => self.broker_name = v.to_string(),
            "brokerId" => self.broker_id = num(key, v)?,
            "brokerIP1" => self.broker_ip1 = v.to_string(),
            "brokerIP2" => self.broker_ip2 = v.to_string(),
            "listenPort" => self.listen_port = num(key, v)?,
            "bindAddress" => self.bind_address = v.to_string(),
            "namesrvAddr" => self.namesrv_addr = (!v.is_empty()).then(|| v.to_string()),
            "brokerRole" => {
                self.broker_role = one_of(key, v, &["ASYNC_MASTER", "SYNC_MASTER", "SLAVE"])?
            }
            "brokerPermission" => self.broker_permission = num(key, v)?,
            "autoCreateTopicEnable" => self.auto_create_topic_enable = boolean(key, v)?,
            "autoCreateSubscriptionGroup" => self.auto_create_subscription_group = boolean(key, v)?,
            "clusterTopicEnable" => self.cluster_topic_enable = boolean(key, v)?,
            "brokerTopicEnable" => self.broker_topic_enable = boolean(key, v)?,
            "defaultTopicQueueNums" => self.default_topic_queue_nums = num(key, v)?,
            "registerNameServerPeriod" => self.register_name_server_period = num(key, v)?,
            "flushConsumerOffsetInterval" => self.flush_consumer_offset_interval = num(key, v)?,
            "longPollingEnable" => self.long_polling_enable = boolean(key, v)?,
            "shortPollingTimeMills" => self.short_polling_time_mills = num(key, v)?,
            "transferMsgByHeap" => self.transfer_msg_by_heap = boolean(key, v)?,
            "channelNotActiveInterval" => self.channel_not_active_interval = num(key, v)?,
            "rebalanceLockMaxLiveTime" | "rocketmq.broker.rebalance.lockMaxLiveTime" => {
                self.rebalance_lock_max_live_time = num(key, v)?
            }
            "enablePropertyFilter" => self.enable_property_filter = boolean(key, v)?,
            "useServerSideResetOffset" => self.use_server_side_reset_offset = boolean(key, v)?,
            "rejectTransactionMessage" => self.reject_transaction_message = boolean(key, v)?,
            "regionId" => self.region_id = v.to_string(),
            "traceOn" => self.trace_on = boolean(key, v)?,
            "transactionTimeOut" => self.transaction_time_out = num(key, v)?,
            "transactionCheckMax" => self.transaction_check_max = num(key, v)?,
            "transactionCheckInterval" => self.transaction_check_interval = num(key, v)?,
            "storeReplyMessageEnable" => self.store_reply_message_enable = boolean(key, v)?,
            "traceTopicEnable" => self.trace_topic_enable = boolean(key, v)?,
            "msgTraceTopicName" => self.msg_trace_topic_name = v.to_string(),
            "serverChannelMaxIdleTimeSeconds" => {
                self.server_channel_max_idle_time_seconds = num(key, v)?
            }
            "rmqdMaxConnections" => self.server_max_connections = num(key, v)?,
            "rmqdMaxInFlightRequests" => self.server_max_in_flight = num(key, v)?,
            "rmqdEmbeddedNamesrv" => {
                self.embedded_namesrv = match v.to_ascii_lowercase().as_str() {
                    "auto" => EmbeddedNamesrv::Auto,
                    "true" => EmbeddedNamesrv::On,
                    "false" => EmbeddedNamesrv::Off,
                    _ => return Err(ConfigError::new(key, v, "auto, true or false")),
                }
            }
            "rmqdEmbeddedNamesrvListenPort" => self.embedded_namesrv_listen_port = num(key, v)?,
            "rmqdEmbeddedNamesrvBindAddress" => self.embedded_namesrv_bind_address = v.to_string(),
            // Java keys with no effect in a single rmqd process, accepted silently.
            "rocketmqHome"
            | "sendMessageThreadPoolNums"
            | "pullMessageThreadPoolNums"
            | "useReentrantLockWhenPutMessage"
            | "waitTimeMillsInSendQueue"
            | "sendThreadPoolQueueCapacity"
            | "pullThreadPoolQueueCapacity"
            | "brokerFastFailureEnable"
            | "osPageCacheBusyTimeOutMills" => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `ip:port` clients use to reach this broker (what is registered and written as store host).
    pub fn broker_addr(&self) -> String {
        format!("{}:{}", self.broker_ip1, self.listen_port)
    }

    pub fn is_slave(&self) -> bool {
        self.broker_role == "SLAVE"
    }

    /// The broker's keys and current values, for GET_BROKER_CONFIG.
    pub fn key_values(&self) -> Vec<(String, String)> {
        let kv = |k: &str, v: String| (k.to_string(), v);
        vec![
            kv("brokerClusterName", self.broker_cluster_name.clone()),
            kv("brokerName", self.broker_name.clone()),
            kv("brokerId", self.broker_id.to_string()),
            kv("brokerIP1", self.broker_ip1.clone()),
            kv("brokerIP2", self.broker_ip2.clone()),
            kv("listenPort", self.listen_port.to_string()),
            kv("bindAddress", self.bind_address.clone()),
            kv("namesrvAddr", self.namesrv_addr.clone().unwrap_or_default()),
            kv("brokerRole", self.broker_role.clone()),
            kv("brokerPermission", self.broker_permission.to_string()),
            kv(
                "autoCreateTopicEnable",
                self.auto_create_topic_enable.to_string(),
            ),
            kv(
                "autoCreateSubscriptionGroup",
                self.auto_create_subscription_group.to_string(),
            ),
            kv("clusterTopicEnable", self.cluster_topic_enable.to_string()),
            kv("brokerTopicEnable", self.broker_topic_enable.to_string()),
            kv(
                "defaultTopicQueueNums",
                self.default_topic_queue_nums.to_string(),
            ),
            kv(
                "registerNameServerPeriod",
                self.register_name_server_period.to_string(),
            ),
            kv(
                "flushConsumerOffsetInterval",
                self.flush_consumer_offset_interval.to_string(),
            ),
            kv("longPollingEnable", self.long_polling_enable.to_string()),
            kv(
                "shortPollingTimeMills",
                self.short_polling_time_mills.to_string(),
            ),
            kv(
                "enablePropertyFilter",
                self.enable_property_filter.to_string(),
            ),
            kv(
                "useServerSideResetOffset",
                self.use_server_side_reset_offset.to_string(),
            ),
            kv("traceTopicEnable", self.trace_topic_enable.to_string()),
            kv("regionId", self.region_id.clone()),
            kv("traceOn", self.trace_on.to_string()),
            kv(
                "rejectTransactionMessage",
                self.reject_transaction_message.to_string(),
            ),
            kv("transactionTimeOut", self.transaction_time_out.to_string()),
            kv(
                "transactionCheckMax",
                self.transaction_check_max.to_string(),
            ),
            kv(
                "transactionCheckInterval",
                self.transaction_check_interval.to_string(),
            ),
            kv(
                "storeReplyMessageEnable",
                self.store_reply_message_enable.to_string(),
            ),
            kv(
                "serverChannelMaxIdleTimeSeconds",
                self.server_channel_max_idle_time_seconds.to_string(),
            ),
        ]
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

fn one_of(key: &str, v: &str, allowed: &[&str]) -> Result<String, ConfigError> {
    let up = v.trim().to_ascii_uppercase();
    if allowed.contains(&up.as_str()) {
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
    }
}
