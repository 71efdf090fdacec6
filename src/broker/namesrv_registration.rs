//! The broker's registration with its NameServers (Java's `BrokerOuterAPI.registerBrokerAll` and
//! the periodic task of `BrokerController`): REGISTER_BROKER to every address in `namesrvAddr`
//! at start, every `registerNameServerPeriod` ms and on demand; UNREGISTER_BROKER to each at stop.

use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;
use tokio::sync::{watch, Mutex as AsyncMutex, Notify};
use tokio::task::JoinHandle;

use super::remoting_client::{ClientError, RemotingClient};
use crate::common::topic::TopicConfig;
use crate::remoting::body::data_version::DataVersion;
use crate::remoting::body::kv_table::KVTable;
use crate::remoting::body::register_broker::{body_crc32, RegisterBrokerBody};
use crate::remoting::command::RemotingCommand;
use crate::remoting::header::namesrv::{
    RegisterBrokerRequestHeader, RegisterBrokerResponseHeader, UnRegisterBrokerRequestHeader,
};
use crate::remoting::header::CommandHeader;
use crate::remoting::request_code::RequestCode;
use crate::remoting::response_code::ResponseCode;

/// What the broker's topic config manager hands over: its DataVersion and every topic.
pub type TopicConfigSource = Arc<dyn Fn() -> (DataVersion, Vec<TopicConfig>) + Send + Sync>;

/// The broker config keys registration uses (Java names in the field docs).
#[derive(Debug, Clone)]
pub struct RegistrationConfig {
    /// `namesrvAddr`: `host:port` list separated by `;`.
    pub namesrv_addr: String,
    /// `brokerClusterName`.
    pub broker_cluster_name: String,
    /// `brokerName`.
    pub broker_name: String,
    /// `brokerId`: 0 = master.
    pub broker_id: i64,
    /// `brokerIP1:listenPort`, the address clients use.
    pub broker_addr: String,
    /// `brokerIP2:haListenPort`.
    pub ha_server_addr: String,
    /// `registerNameServerPeriod`: 30000 ms, clamped to 10000..=60000.
    pub register_name_server_period: u64,
    /// `registerBrokerTimeoutMills`: 24000 ms.
    pub register_broker_timeout_mills: u64,
    /// `compressedRegister`: false. When true the body is deflated and the header says so
    /// (unlike Java 5.x, which deflates but sends `compressed=false`).
    pub compressed_register: bool,
    /// `enableSlaveActingMaster`: false.
    pub enable_slave_acting_master: bool,
    /// `brokerNotActiveTimeoutMillis`: 10000; sent as `heartbeatTimeoutMillis` only with acting master.
    pub broker_not_active_timeout_millis: i64,
}

impl Default for RegistrationConfig {
    fn default() -> Self {
        Self {
            namesrv_addr: String::new(),
            broker_cluster_name: "DefaultCluster".into(),
            broker_name: String::new(),
            broker_id: 0,
            broker_addr: String::new(),
            ha_server_addr: String::new(),
            register_name_server_period: 30_000,
            register_broker_timeout_mills: 24_000,
            compressed_register: false,
            enable_slave_acting_master: false,
            broker_not_active_timeout_millis: 10_000,
        }
    }
}

impl RegistrationConfig {
    /// The NameServer addresses, trimmed, empty entries dropped.
    pub fn namesrv_addrs(&self) -> Vec<String> {
        self.namesrv_addr
            .split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// `Math.max(10000, Math.min(registerNameServerPeriod, 60000))`.
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.register_name_server_period.clamp(10_000, 60_000))
    }
}

#[derive(Debug, Error)]
pub enum RegistrationError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("NameServer {addr} answered code {code}: {remark}")]
    Refused {
        addr: String,
        code: i32,
        remark: String,
    },
}

/// One NameServer's answer to REGISTER_BROKER.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegisterBrokerResult {
    pub master_addr: Option<String>,
    pub ha_server_addr: Option<String>,
    /// The ORDER_TOPIC_CONFIG namespace, when the NameServer sent it.
    pub kv_table: Option<KVTable>,
}

struct Shared {
    config: RegistrationConfig,
    client: RemotingClient,
    topics: TopicConfigSource,
    nudge: Notify,
    /// Serializes registrations so a periodic and an on-demand one do not interleave.
    in_flight: AsyncMutex<()>,
    /// The first successful answer of the latest round (Java's `handleRegisterBrokerResult`
    /// uses the first result: master address for slaves, order topic config).
    last: parking_lot::Mutex<Option<RegisterBrokerResult>>,
}

/// The registration service. `start` spawns the periodic task; `stop` ends it and unregisters.
pub struct NamesrvRegistrationService {
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    task: parking_lot::Mutex<Option<JoinHandle<()>>>,
}

impl NamesrvRegistrationService {
    /// GET_ROUTEINFO_BY_TOPIC to the NameServers in turn: the first route answered, `Ok(None)`
    /// when a NameServer says the topic does not exist, `Err` when none answered.
    pub async fn topic_route(
        &self,
        topic: &str,
    ) -> Result<Option<crate::remoting::body::topic_route::TopicRouteData>, String> {
        use crate::remoting::body::topic_route::TopicRouteData;
        use crate::remoting::header::namesrv::GetRouteInfoRequestHeader;
        use crate::remoting::header::CommandHeader;
        let mut last = String::from("no NameServer address");
        for addr in self.shared.config.namesrv_addrs() {
            let mut req = crate::remoting::RemotingCommand::request(
                crate::remoting::RequestCode::GET_ROUTEINFO_BY_TOPIC.code(),
            );
            GetRouteInfoRequestHeader {
                topic: topic.to_string(),
                accept_standard_json_only: None,
            }
            .write_to(req.ext_mut());
            match self
                .shared
                .client
                .invoke(&addr, req, Duration::from_secs(3))
                .await
            {
                Ok(r) if r.code == 0 => {
                    return TopicRouteData::decode(&r.body.to_bytes())
                        .map(Some)
                        .map_err(|e| e.to_string())
                }
                Ok(r) if r.code == crate::remoting::ResponseCode::TOPIC_NOT_EXIST.code() => {
                    return Ok(None)
                }
                Ok(r) => last = format!("{addr} answered {}: {:?}", r.code, r.remark),
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }

    pub fn new(
        config: RegistrationConfig,
        client: RemotingClient,
        topics: TopicConfigSource,
    ) -> Self {
        let (stop, _) = watch::channel(false);
        Self {
            shared: Arc::new(Shared {
                config,
                client,
                topics,
                nudge: Notify::new(),
                in_flight: AsyncMutex::new(()),
                last: parking_lot::Mutex::new(None),
            }),
            stop,
            task: parking_lot::Mutex::new(None),
        }
    }

    /// Registers at once, then every period and whenever `trigger` is called.
    pub fn start(&self) {
        let shared = self.shared.clone();
        let mut stopped = self.stop.subscribe();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(shared.config.period());
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = shared.nudge.notified() => {}
                    _ = stopped.changed() => return,
                }
                for (addr, r) in register_all(&shared).await {
                    if let Err(e) = r {
                        tracing::warn!(namesrv = %addr, error = %e, "register broker failed");
                    }
                }
            }
        });
        *self.task.lock() = Some(task);
    }

    /// Asks the periodic task to register now (after a topic change) without waiting.
    pub fn trigger(&self) {
        self.shared.nudge.notify_one();
    }

    /// Registers with every NameServer now and returns each one's outcome.
    pub async fn register_now(
        &self,
    ) -> Vec<(String, Result<RegisterBrokerResult, RegistrationError>)> {
        register_all(&self.shared).await
    }

    /// The first successful answer of the latest registration round, if any.
    pub fn last_result(&self) -> Option<RegisterBrokerResult> {
        self.shared.last.lock().clone()
    }

    /// Stops the periodic task, then sends UNREGISTER_BROKER to every NameServer.
    pub async fn stop(&self) {
        let _ = self.stop.send(true);
        let task = self.task.lock().take();
        if let Some(task) = task {
            let _ = task.await;
        }
        let _guard = self.shared.in_flight.lock().await;
        for addr in self.shared.config.namesrv_addrs() {
            if let Err(e) = unregister_one(&self.shared, &addr).await {
                tracing::warn!(namesrv = %addr, error = %e, "unregister broker failed");
            }
        }
    }
}

/// The REGISTER_BROKER request Java's BrokerOuterAPI builds (header + body + CRC), version 479.
pub fn build_register_request(
    config: &RegistrationConfig,
    data_version: DataVersion,
    topics: Vec<TopicConfig>,
) -> RemotingCommand {
    let body = RegisterBrokerBody::new(data_version, topics);
    let bytes = if config.compressed_register {
        body.encode_compressed()
    } else {
        body.encode()
    };
    let header = RegisterBrokerRequestHeader {
        broker_name: config.broker_name.clone(),
        broker_addr: config.broker_addr.clone(),
        cluster_name: config.broker_cluster_name.clone(),
        ha_server_addr: config.ha_server_addr.clone(),
        broker_id: config.broker_id,
        heartbeat_timeout_millis: config
            .enable_slave_acting_master
            .then_some(config.broker_not_active_timeout_millis),
        enable_acting_master: Some(config.enable_slave_acting_master),
        compressed: config.compressed_register,
        body_crc32: body_crc32(&bytes),
    };
    let mut request = RemotingCommand::request(RequestCode::REGISTER_BROKER.code());
    header.write_to(request.ext_mut());
    request.with_body(bytes)
}

async fn register_all(
    shared: &Arc<Shared>,
) -> Vec<(String, Result<RegisterBrokerResult, RegistrationError>)> {
    let _guard = shared.in_flight.lock().await;
    let (version, topics) = (shared.topics)();
    let request = build_register_request(&shared.config, version, topics);
    let timeout = Duration::from_millis(shared.config.register_broker_timeout_mills);
    // Every NameServer concurrently, as Java's brokerOuterExecutor does.
    let mut set = tokio::task::JoinSet::new();
    for addr in shared.config.namesrv_addrs() {
        let (client, request) = (shared.client.clone(), request.clone());
        set.spawn(async move {
            let r = register_one(&client, &addr, request, timeout).await;
            (addr, r)
        });
    }
    let mut out = Vec::new();
    while let Some(joined) = set.join_next().await {
        if let Ok(pair) = joined {
            out.push(pair);
        }
    }
    if let Some(first) = out.iter().find_map(|(_, r)| r.as_ref().ok()) {
        *shared.last.lock() = Some(first.clone());
    }
    out
}

async fn register_one(
    client: &RemotingClient,
    addr: &str,
    request: RemotingCommand,
    timeout: Duration,
) -> Result<RegisterBrokerResult, RegistrationError> {
    let resp = client.invoke(addr, request, timeout).await?;
    if resp.code != ResponseCode::SUCCESS.code() {
        return Err(RegistrationError::Refused {
            addr: addr.to_string(),
            code: resp.code,
            remark: resp.remark.unwrap_or_default(),
        });
    }
    let header = resp
        .ext_fields
        .as_ref()
        .and_then(|e| RegisterBrokerResponseHeader::read_from(e).ok())
        .unwrap_or_default();
    let body = resp.body.to_bytes();
    Ok(RegisterBrokerResult {
        master_addr: header.master_addr,
        ha_server_addr: header.ha_server_addr,
        kv_table: (!body.is_empty())
            .then(|| KVTable::decode(&body).ok())
            .flatten(),
    })
}

async fn unregister_one(shared: &Shared, addr: &str) -> Result<(), RegistrationError> {
    let c = &shared.config;
    let header = UnRegisterBrokerRequestHeader {
        broker_name: c.broker_name.clone(),
        broker_addr: c.broker_addr.clone(),
        cluster_name: c.broker_cluster_name.clone(),
        broker_id: c.broker_id,
    };
    let mut request = RemotingCommand::request(RequestCode::UNREGISTER_BROKER.code());
    header.write_to(request.ext_mut());
    let resp = shared
        .client
        .invoke(addr, request, Duration::from_millis(3000))
        .await?;
    if resp.code != ResponseCode::SUCCESS.code() {
        return Err(RegistrationError::Refused {
            addr: addr.to_string(),
            code: resp.code,
            remark: resp.remark.unwrap_or_default(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_is_clamped_like_java() {
        let mut c = RegistrationConfig::default();
        assert_eq!(c.period(), Duration::from_millis(30_000));
        c.register_name_server_period = 1000;
        assert_eq!(c.period(), Duration::from_millis(10_000));
        c.register_name_server_period = 600_000;
        assert_eq!(c.period(), Duration::from_millis(60_000));
        c.namesrv_addr = " a:9876; ;b:9876;".into();
        assert_eq!(c.namesrv_addrs(), vec!["a:9876", "b:9876"]);
    }
}
