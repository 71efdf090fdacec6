//! `NamesrvConfig` + the NameServer's `NettyServerConfig` keys, with Java's names and defaults,
//! loaded from Java properties text (`namesrv.conf`, UPDATE_NAMESRV_CONFIG bodies).

use std::path::PathBuf;

use thiserror::Error;

use crate::common::config::config_table;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("config key {key}: {value:?} is not a valid {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
}

config_table! {
    /// Every key rmqd's NameServer reads. Defaults are Java's (NamesrvStartup sets listenPort 9876).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct NamesrvConfig: NamesrvValue => ConfigError {
        /// `rocketmqHome`: `$ROCKETMQ_HOME`, else empty.
        "rocketmqHome" rocketmq_home: String = std::env::var("ROCKETMQ_HOME").unwrap_or_default();
        /// `kvConfigPath`: `~/namesrv/kvConfig.json`.
        "kvConfigPath" kv_config_path: PathBuf = namesrv_home().join("kvConfig.json");
        /// `configStorePath`: `~/namesrv/namesrv.properties`.
        "configStorePath" config_store_path: PathBuf = namesrv_home().join("namesrv.properties");
        /// `productEnvName`: `center`.
        "productEnvName" product_env_name: String = "center".into();
        /// `clusterTest`: false.
        "clusterTest" cluster_test: bool = false;
        /// `orderMessageEnable`: false; when true routes carry `orderTopicConf` from the KV store.
        "orderMessageEnable" order_message_enable: bool = false;
        /// `returnOrderTopicConfigToBroker`: true; REGISTER_BROKER answers with the ORDER_TOPIC_CONFIG KVTable.
        "returnOrderTopicConfigToBroker" return_order_topic_config_to_broker: bool = true;
        /// `clientRequestThreadPoolNums`: 8 (accepted, unused: requests run on tokio tasks).
        "clientRequestThreadPoolNums" client_request_thread_pool_nums: i32 = 8;
        /// `defaultThreadPoolNums`: 16 (accepted, unused).
        "defaultThreadPoolNums" default_thread_pool_nums: i32 = 16;
        /// `clientRequestThreadPoolQueueCapacity`: 50000 (accepted, unused).
        "clientRequestThreadPoolQueueCapacity" client_request_thread_pool_queue_capacity: i32 = 50000;
        /// `defaultThreadPoolQueueCapacity`: 10000 (accepted, unused).
        "defaultThreadPoolQueueCapacity" default_thread_pool_queue_capacity: i32 = 10000;
        /// `scanNotActiveBrokerInterval`: 5000 ms between liveness scans.
        "scanNotActiveBrokerInterval" scan_not_active_broker_interval: i64 = 5000;
        /// `unRegisterBrokerQueueCapacity`: 3000 (accepted, unused: unregistration is synchronous).
        "unRegisterBrokerQueueCapacity" un_register_broker_queue_capacity: i32 = 3000;
        /// `supportActingMaster`: false.
        "supportActingMaster" support_acting_master: bool = false;
        /// `enableAllTopicList`: true; false makes GET_ALL_TOPIC_LIST_FROM_NAMESERVER answer "disable".
        "enableAllTopicList" enable_all_topic_list: bool = true;
        /// `enableTopicList`: true; false disables GET_TOPICS_BY_CLUSTER and the unit topic lists.
        "enableTopicList" enable_topic_list: bool = true;
        /// `notifyMinBrokerIdChanged`: false (accepted, unused).
        "notifyMinBrokerIdChanged" notify_min_broker_id_changed: bool = false;
        /// `enableControllerInNamesrv`: false (accepted; no embedded controller).
        "enableControllerInNamesrv" enable_controller_in_namesrv: bool = false;
        /// `needWaitForService`: false; when true routes answer "name server not ready" for
        /// `waitSecondsForService` after start.
        "needWaitForService" need_wait_for_service: bool = false;
        /// `waitSecondsForService`: 45.
        "waitSecondsForService" wait_seconds_for_service: i32 = 45;
        /// `deleteTopicWithBrokerRegistration`: false; when true a registration drops the broker's
        /// topics that are missing from its body.
        "deleteTopicWithBrokerRegistration" delete_topic_with_broker_registration: bool = false;
        /// `configBlackList`: `configBlackList;configStorePath;kvConfigPath`; keys UPDATE_NAMESRV_CONFIG refuses.
        "configBlackList" config_black_list: String = "configBlackList;configStorePath;kvConfigPath".into();
        /// `listenPort`: 9876.
        "listenPort" listen_port: u16 = 9876;
        /// `bindAddress`: `0.0.0.0`.
        "bindAddress" bind_address: String = "0.0.0.0".into();
        /// `serverWorkerThreads`: 8 (accepted, unused).
        "serverWorkerThreads" server_worker_threads: i32 = 8;
        /// `serverChannelMaxIdleTimeSeconds`: 120.
        "serverChannelMaxIdleTimeSeconds" server_channel_max_idle_time_seconds: i32 = 120;
        /// `brokerChannelExpiredTime` (rmqd only): 120000 ms, Java's `BROKER_CHANNEL_EXPIRED_TIME`,
        /// used when a broker sends no `heartbeatTimeoutMillis`.
        "brokerChannelExpiredTime" broker_channel_expired_time: i64 = 120_000;
    }
}

/// `~/namesrv`, where Java keeps the NameServer's files.
fn namesrv_home() -> PathBuf {
    PathBuf::from(std::env::var("HOME").unwrap_or_default()).join("namesrv")
}

/// Reads and renders a NameServer value from trimmed text: booleans as `Boolean.parseBoolean`,
/// numbers in decimal.
pub trait NamesrvValue: Sized {
    fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError>;
    fn render(&self) -> String;
}

macro_rules! number_value {
    ($($t:ty),*) => {$(
        impl NamesrvValue for $t {
            fn parse_value(key: &'static str, raw: &str) -> Result<Self, ConfigError> {
                num(key, raw.trim())
            }
            fn render(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
number_value!(i32, i64, u16);

impl NamesrvValue for bool {
    fn parse_value(_key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        Ok(java_bool(raw.trim()))
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl NamesrvValue for String {
    fn parse_value(_key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        Ok(raw.trim().into())
    }
    fn render(&self) -> String {
        self.clone()
    }
}

impl NamesrvValue for PathBuf {
    fn parse_value(_key: &'static str, raw: &str) -> Result<Self, ConfigError> {
        Ok(raw.trim().into())
    }
    fn render(&self) -> String {
        self.display().to_string()
    }
}

impl NamesrvConfig {
    /// Every key and its current value, sorted by key (GET_NAMESRV_CONFIG).
    pub fn to_properties(&self) -> Vec<(&'static str, String)> {
        let mut p = self.keys_and_values();
        p.sort_by(|a, b| a.0.cmp(b.0));
        p
    }

    /// The GET_NAMESRV_CONFIG body: `key=value\n` per key, like `MixAll.properties2String`.
    pub fn to_properties_text(&self) -> String {
        self.to_properties()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect()
    }

    /// Applies every pair; returns the keys this config does not know (the caller logs them).
    pub fn apply(&mut self, pairs: &[(String, String)]) -> Result<Vec<String>, ConfigError> {
        let mut unknown = Vec::new();
        for (k, v) in pairs {
            if !self.set(k, v)? {
                unknown.push(k.clone());
            }
        }
        Ok(unknown)
    }

    /// Loads `namesrv.conf` text over the defaults; returns the config and the unknown keys
    /// (to be logged, not fatal).
    pub fn from_properties_text(text: &str) -> Result<(Self, Vec<String>), ConfigError> {
        let mut config = Self::default();
        let unknown = config.apply(&parse_properties(text))?;
        Ok((config, unknown))
    }

    /// The keys UPDATE_NAMESRV_CONFIG may not change (`configBlackList` plus Java's fixed ones).
    pub fn black_list(&self) -> Vec<String> {
        let mut keys: Vec<String> = [
            "configBlackList",
            "configStorePath",
            "kvConfigPath",
            "rocketmqHome",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        keys.extend(
            self.config_black_list
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        keys
    }
}

/// `Boolean.parseBoolean`.
fn java_bool(v: &str) -> bool {
    v.eq_ignore_ascii_case("true")
}

fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, ConfigError> {
    v.parse().map_err(|_| ConfigError::BadValue {
        key: key.to_string(),
        value: v.to_string(),
        expected: std::any::type_name::<T>(),
    })
}

/// Parses Java properties text (`java.util.Properties.load` rules; later keys win).
pub fn parse_properties(text: &str) -> Vec<(String, String)> {
    crate::common::java_properties::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_reports_unknown_keys_and_names_bad_values() {
        let mut c = NamesrvConfig::default();
        assert_eq!(c.set("listenPort", "9877"), Ok(true));
        assert_eq!(c.listen_port, 9877);
        assert_eq!(c.set("orderMessageEnable", "TRUE"), Ok(true));
        assert!(c.order_message_enable);
        assert_eq!(c.set("brokerIP1", "1.2.3.4"), Ok(false));
        let err = c.set("scanNotActiveBrokerInterval", "soon").unwrap_err();
        assert!(err.to_string().contains("scanNotActiveBrokerInterval"));
    }

    #[test]
    fn properties_text_parses_like_java() {
        let p = parse_properties(
            "# comment\n! also\n  listenPort = 9876\nkvConfigPath:/tmp/kv.json\nbindAddress 127.0.0.1\nlong=a\\\n   b\nesc=x\\u0041\\ty\n",
        );
        assert_eq!(
            p,
            vec![
                ("listenPort".to_string(), "9876".to_string()),
                ("kvConfigPath".to_string(), "/tmp/kv.json".to_string()),
                ("bindAddress".to_string(), "127.0.0.1".to_string()),
                ("long".to_string(), "ab".to_string()),
                ("esc".to_string(), "xA\ty".to_string()),
            ]
        );
    }

    #[test]
    fn from_properties_text_reports_unknown_keys() {
        let (c, unknown) =
            NamesrvConfig::from_properties_text("listenPort=19876\nbrokerIP1=x\n").unwrap();
        assert_eq!(
            (c.listen_port, unknown),
            (19876, vec!["brokerIP1".to_string()])
        );
        assert!(NamesrvConfig::from_properties_text("listenPort=x").is_err());
    }

    #[test]
    fn properties_text_round_trips() {
        let c = NamesrvConfig::default();
        let mut d = NamesrvConfig {
            listen_port: 1,
            ..NamesrvConfig::default()
        };
        let unknown = d.apply(&parse_properties(&c.to_properties_text())).unwrap();
        assert!(unknown.is_empty());
        assert_eq!(c, d);
    }
}
