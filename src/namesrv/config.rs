//! `NamesrvConfig` + the NameServer's `NettyServerConfig` keys, with Java's names and defaults,
//! loaded from Java properties text (`namesrv.conf`, UPDATE_NAMESRV_CONFIG bodies).

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("config key {key}: {value:?} is not a valid {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
}

/// Every key rmqd's NameServer reads. Defaults are Java's (NamesrvStartup sets listenPort 9876).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamesrvConfig {
    /// `rocketmqHome`: `$ROCKETMQ_HOME`, else empty.
    pub rocketmq_home: String,
    /// `kvConfigPath`: `~/namesrv/kvConfig.json`.
    pub kv_config_path: PathBuf,
    /// `configStorePath`: `~/namesrv/namesrv.properties`.
    pub config_store_path: PathBuf,
    /// `productEnvName`: `center`.
    pub product_env_name: String,
    /// `clusterTest`: false.
    pub cluster_test: bool,
    /// `orderMessageEnable`: false; when true routes carry `orderTopicConf` from the KV store.
    pub order_message_enable: bool,
    /// `returnOrderTopicConfigToBroker`: true; REGISTER_BROKER answers with the ORDER_TOPIC_CONFIG KVTable.
    pub return_order_topic_config_to_broker: bool,
    /// `clientRequestThreadPoolNums`: 8 (accepted, unused: requests run on tokio tasks).
    pub client_request_thread_pool_nums: i32,
    /// `defaultThreadPoolNums`: 16 (accepted, unused).
    pub default_thread_pool_nums: i32,
    /// `clientRequestThreadPoolQueueCapacity`: 50000 (accepted, unused).
    pub client_request_thread_pool_queue_capacity: i32,
    /// `defaultThreadPoolQueueCapacity`: 10000 (accepted, unused).
    pub default_thread_pool_queue_capacity: i32,
    /// `scanNotActiveBrokerInterval`: 5000 ms between liveness scans.
    pub scan_not_active_broker_interval: i64,
    /// `unRegisterBrokerQueueCapacity`: 3000 (accepted, unused: unregistration is synchronous).
    pub un_register_broker_queue_capacity: i32,
    /// `supportActingMaster`: false.
    pub support_acting_master: bool,
    /// `enableAllTopicList`: true; false makes GET_ALL_TOPIC_LIST_FROM_NAMESERVER answer "disable".
    pub enable_all_topic_list: bool,
    /// `enableTopicList`: true; false disables GET_TOPICS_BY_CLUSTER and the unit topic lists.
    pub enable_topic_list: bool,
    /// `notifyMinBrokerIdChanged`: false (accepted, unused).
    pub notify_min_broker_id_changed: bool,
    /// `enableControllerInNamesrv`: false (accepted; no embedded controller).
    pub enable_controller_in_namesrv: bool,
    /// `needWaitForService`: false; when true routes answer "name server not ready" for
    /// `waitSecondsForService` after start.
    pub need_wait_for_service: bool,
    /// `waitSecondsForService`: 45.
    pub wait_seconds_for_service: i32,
    /// `deleteTopicWithBrokerRegistration`: false; when true a registration drops the broker's
    /// topics that are missing from its body.
    pub delete_topic_with_broker_registration: bool,
    /// `configBlackList`: `configBlackList;configStorePath;kvConfigPath`; keys UPDATE_NAMESRV_CONFIG refuses.
    pub config_black_list: String,
    /// `listenPort`: 9876.
    pub listen_port: u16,
    /// `bindAddress`: `0.0.0.0`.
    pub bind_address: String,
    /// `serverWorkerThreads`: 8 (accepted, unused).
    pub server_worker_threads: i32,
    /// `serverChannelMaxIdleTimeSeconds`: 120.
    pub server_channel_max_idle_time_seconds: i32,
    /// `brokerChannelExpiredTime` (rmqd only): 120000 ms, Java's `BROKER_CHANNEL_EXPIRED_TIME`,
    /// used when a broker sends no `heartbeatTimeoutMillis`.
    pub broker_channel_expired_time: i64,
}

impl Default for NamesrvConfig {
    fn default() -> Self {
        let home = std::env::var("HOME").unwrap_or_default();
        let base = PathBuf::from(home).join("namesrv");
        Self {
            rocketmq_home: std::env::var("ROCKETMQ_HOME").unwrap_or_default(),
            kv_config_path: base.join("kvConfig.json"),
            config_store_path: base.join("namesrv.properties"),
            product_env_name: "center".into(),
            cluster_test: false,
            order_message_enable: false,
            return_order_topic_config_to_broker: true,
            client_request_thread_pool_nums: 8,
            default_thread_pool_nums: 16,
            client_request_thread_pool_queue_capacity: 50000,
            default_thread_pool_queue_capacity: 10000,
            scan_not_active_broker_interval: 5000,
            un_register_broker_queue_capacity: 3000,
            support_acting_master: false,
            enable_all_topic_list: true,
            enable_topic_list: true,
            notify_min_broker_id_changed: false,
            enable_controller_in_namesrv: false,
            need_wait_for_service: false,
            wait_seconds_for_service: 45,
            delete_topic_with_broker_registration: false,
            config_black_list: "configBlackList;configStorePath;kvConfigPath".into(),
            listen_port: 9876,
            bind_address: "0.0.0.0".into(),
            server_worker_threads: 8,
            server_channel_max_idle_time_seconds: 120,
            broker_channel_expired_time: 120_000,
        }
    }
}

impl NamesrvConfig {
    /// Sets one key from its properties text. `Ok(false)`: not a key of this config.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        let v = value.trim();
        match key {
            "rocketmqHome" => self.rocketmq_home = v.into(),
            "kvConfigPath" => self.kv_config_path = v.into(),
            "configStorePath" => self.config_store_path = v.into(),
            "productEnvName" => self.product_env_name = v.into(),
            "clusterTest" => self.cluster_test = java_bool(v),
            "orderMessageEnable" => self.order_message_enable = java_bool(v),
            "returnOrderTopicConfigToBroker" => {
                self.return_order_topic_config_to_broker = java_bool(v)
            }
            "clientRequestThreadPoolNums" => self.client_request_thread_pool_nums = num(key, v)?,
            "defaultThreadPoolNums" => self.default_thread_pool_nums = num(key, v)?,
            "clientRequestThreadPoolQueueCapacity" => {
                self.client_request_thread_pool_queue_capacity = num(key, v)?
            }
            "defaultThreadPoolQueueCapacity" => {
                self.default_thread_pool_queue_capacity = num(key, v)?
            }
            "scanNotActiveBrokerInterval" => self.scan_not_active_broker_interval = num(key, v)?,
            "unRegisterBrokerQueueCapacity" => {
                self.un_register_broker_queue_capacity = num(key, v)?
            }
            "supportActingMaster" => self.support_acting_master = java_bool(v),
            "enableAllTopicList" => self.enable_all_topic_list = java_bool(v),
            "enableTopicList" => self.enable_topic_list = java_bool(v),
            "notifyMinBrokerIdChanged" => self.notify_min_broker_id_changed = java_bool(v),
            "enableControllerInNamesrv" => self.enable_controller_in_namesrv = java_bool(v),
            "needWaitForService" => self.need_wait_for_service = java_bool(v),
            "waitSecondsForService" => self.wait_seconds_for_service = num(key, v)?,
            "deleteTopicWithBrokerRegistration" => {
                self.delete_topic_with_broker_registration = java_bool(v)
            }
            "configBlackList" => self.config_black_list = v.into(),
            "listenPort" => self.listen_port = num(key, v)?,
            "bindAddress" => self.bind_address = v.into(),
            "serverWorkerThreads" => self.server_worker_threads = num(key, v)?,
            "serverChannelMaxIdleTimeSeconds" => {
                self.server_channel_max_idle_time_seconds = num(key, v)?
            }
            "brokerChannelExpiredTime" => self.broker_channel_expired_time = num(key, v)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Every key and its current value, sorted by key (GET_NAMESRV_CONFIG).
    pub fn to_properties(&self) -> Vec<(&'static str, String)> {
        let mut p = vec![
            ("rocketmqHome", self.rocketmq_home.clone()),
            ("kvConfigPath", self.kv_config_path.display().to_string()),
            (
                "configStorePath",
                self.config_store_path.display().to_string(),
            ),
            ("productEnvName", self.product_env_name.clone()),
            ("clusterTest", self.cluster_test.to_string()),
            ("orderMessageEnable", self.order_message_enable.to_string()),
            (
                "returnOrderTopicConfigToBroker",
                self.return_order_topic_config_to_broker.to_string(),
            ),
            (
                "clientRequestThreadPoolNums",
                self.client_request_thread_pool_nums.to_string(),
            ),
            (
                "defaultThreadPoolNums",
                self.default_thread_pool_nums.to_string(),
            ),
            (
                "clientRequestThreadPoolQueueCapacity",
                self.client_request_thread_pool_queue_capacity.to_string(),
            ),
            (
                "defaultThreadPoolQueueCapacity",
                self.default_thread_pool_queue_capacity.to_string(),
            ),
            (
                "scanNotActiveBrokerInterval",
                self.scan_not_active_broker_interval.to_string(),
            ),
            (
                "unRegisterBrokerQueueCapacity",
                self.un_register_broker_queue_capacity.to_string(),
            ),
            (
                "supportActingMaster",
                self.support_acting_master.to_string(),
            ),
            ("enableAllTopicList", self.enable_all_topic_list.to_string()),
            ("enableTopicList", self.enable_topic_list.to_string()),
            (
                "notifyMinBrokerIdChanged",
                self.notify_min_broker_id_changed.to_string(),
            ),
            (
                "enableControllerInNamesrv",
                self.enable_controller_in_namesrv.to_string(),
            ),
            ("needWaitForService", self.need_wait_for_service.to_string()),
            (
                "waitSecondsForService",
                self.wait_seconds_for_service.to_string(),
            ),
            (
                "deleteTopicWithBrokerRegistration",
                self.delete_topic_with_broker_registration.to_string(),
            ),
            ("configBlackList", self.config_black_list.clone()),
            ("listenPort", self.listen_port.to_string()),
            ("bindAddress", self.bind_address.clone()),
            (
                "serverWorkerThreads",
                self.server_worker_threads.to_string(),
            ),
            (
                "serverChannelMaxIdleTimeSeconds",
                self.server_channel_max_idle_time_seconds.to_string(),
            ),
            (
                "brokerChannelExpiredTime",
                self.broker_channel_expired_time.to_string(),
            ),
        ];
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
