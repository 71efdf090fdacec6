//! GLUE: the broker — tokio lives here. Server, dispatch, processors, metadata, services.

pub mod client_registry;
pub mod config;
pub mod dispatch;
pub mod error;
pub mod lite;
pub mod long_polling;
pub mod metadata;
pub mod metrics;
pub mod namesrv_registration;
pub mod periodic;
pub mod pop;
pub mod processor;
pub mod put;
pub mod rebalance_lock;
pub mod remoting_client;
pub mod schedule_message_service;
pub mod stats;
pub mod timer_message_service;
pub mod transaction;

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;

pub use config::BrokerConfig;

use crate::server::{self, ServerConfig, ServerHandle};
use client_registry::ClientRegistry;
use error::{BrokerError, StartError};
use long_polling::PullRequestHoldService;
use metadata::groups::SubscriptionGroupManager;
use metadata::offsets::ConsumerOffsetManager;
use metadata::topics::TopicConfigManager;
use namesrv_registration::{NamesrvRegistrationService, RegistrationConfig, TopicConfigSource};
use periodic::{PeriodicService, TickOn};
use rebalance_lock::RebalanceLockManager;
use remoting_client::RemotingClient;
use schedule_message_service::ScheduleMessageService;
use stats::BrokerStats;
use timer_message_service::TimerMessageService;
use transaction::check_service::TransactionalMessageCheckService;

use crate::common::topic::SCHEDULE_CONSUMER_GROUP;
use crate::store::config::MessageStoreConfig;
use crate::store::message::PutMessageResult;
use crate::store::MessageStore;
use crate::store::{ForcedDeletion, MessageArrival};

/// Everything a processor may need, shared by all requests.
pub struct BrokerContext {
    pub config: BrokerConfig,
    pub store: Arc<MessageStore>,
    pub topics: TopicConfigManager,
    pub groups: SubscriptionGroupManager,
    pub offsets: ConsumerOffsetManager,
    pub clients: ClientRegistry,
    pub pull_hold: PullRequestHoldService,
    /// POP consumption: queue locks, held POP requests, request modes.
    pub pop: Arc<pop::PopService>,
    /// Lite topics' subscriptions, events, held POP_LITE requests and FIFO state (memory only).
    pub lite: Arc<lite::LiteService>,
    pub locks: RebalanceLockManager,
    pub schedule: Arc<ScheduleMessageService>,
    pub timer: Arc<TimerMessageService>,
    pub stats: BrokerStats,
    /// Prometheus counters (`metricsExporterType=PROM`); counts nothing when off.
    pub metrics: metrics::BrokerMetrics,
    /// Half messages per real topic (`config/transactionMetrics`, Java's TransactionMetrics).
    pub tx_counts: transaction::counts::TransactionCounts,
    /// `brokerIP1:listenPort`, written into every record as the store host.
    pub store_host: SocketAddr,
    pub boot_timestamp: i64,
    broker_permission: AtomicI32,
    /// Keys changed by UPDATE_BROKER_CONFIG, reported back by GET_BROKER_CONFIG.
    overrides: Mutex<Vec<(String, String)>>,
    /// Registration with the NameServers; `None` when no NameServer address is configured.
    registration: Option<NamesrvRegistrationService>,
    /// Topic routes from the NameServers for QUERY_ASSIGNMENT: topic → (when, queues).
    #[allow(clippy::type_complexity)]
    route_cache: Mutex<
        std::collections::HashMap<
            String,
            (
                std::time::Instant,
                Option<Vec<crate::common::topic::MessageQueue>>,
            ),
        >,
    >,
}

impl BrokerContext {
    /// A forced deletion (disk pressure) took messages: says, per consumer group, how many it had
    /// not consumed yet, and counts them for GET_BROKER_RUNTIME_INFO.
    fn count_forced_deletion(&self, forced: &ForcedDeletion) {
        for (group, lost) in self.offsets.unconsumed_dropped(&forced.queues) {
            tracing::warn!(
                group = %group,
                unconsumed = lost,
                "forced cleanup deleted messages this consumer group had not consumed"
            );
            self.stats
                .forced_unconsumed
                .fetch_add(lost as u64, Ordering::Relaxed);
        }
    }

    pub fn broker_permission(&self) -> i32 {
        self.broker_permission.load(Ordering::Relaxed)
    }

    pub fn region_id(&self) -> &str {
        &self.config.region_id
    }

    /// `traceOn` as Java writes it: `"true"` / `"false"`.
    pub fn trace_on(&self) -> &'static str {
        if self.config.trace_on {
            "true"
        } else {
            "false"
        }
    }

    /// `<brokerClusterName>_REPLY_TOPIC`, where replies of request/reply are sent (Java
    /// `MixAll.REPLY_TOPIC_POSTFIX`), created at start.
    pub fn reply_topic(&self) -> String {
        format!("{}_REPLY_TOPIC", self.config.broker_cluster_name)
    }

    /// Java `TopicValidator.isSystemTopic` as it answers in a started broker: the fixed set plus
    /// the topics `TopicConfigManager.init` registers with `addSystemTopic` (the cluster and
    /// broker topics, the trace topic when enabled, the reply topic).
    pub fn is_system_topic(&self, topic: &str) -> bool {
        let c = &self.config;
        crate::common::topic::is_system_topic(topic)
            || topic == c.broker_cluster_name
            || topic == c.broker_name
            || (c.trace_topic_enable && topic == c.msg_trace_topic_name)
            || topic == self.reply_topic()
    }

    /// Writes `consumerOrderInfo.json` (orderly pops), dropping what Java's `autoClean` drops.
    pub fn persist_order_info(&self) {
        let r = self.pop.order.persist(
            |topic| self.topics.select(topic).map(|tc| tc.read_queue_nums),
            |group| self.groups.find(group).is_some(),
            now_millis(),
        );
        if let Err(e) = r {
            tracing::error!(error = %e, "cannot write consumerOrderInfo.json");
        }
    }

    /// The queues a consumer of `topic` may be assigned (Java `TopicRouteInfoManager
    /// .getTopicSubscribeInfo`): every readable queue of every broker in the topic's route from
    /// the NameServers, kept 30 s (`loadBalancePollNameServerInterval`); this broker's own
    /// queues when no NameServer is configured or none answers. `None`: the topic exists nowhere.
    /// Offers a lite LMQ to its subscribers (one per group, of `group` only when given) and
    /// wakes the POP_LITE held for the chosen clients.
    pub fn lite_dispatch(&self, group: Option<&str>, lmq: &str, exclude: Option<&str>) {
        self.lite.dispatch_and_wake(group, lmq, exclude);
    }

    pub async fn topic_subscribe_queues(
        &self,
        topic: &str,
    ) -> Option<Vec<crate::common::topic::MessageQueue>> {
        use crate::common::topic::{is_readable, MessageQueue};
        const FRESH: std::time::Duration = std::time::Duration::from_secs(30);
        if let Some((at, qs)) = self.route_cache.lock().get(topic) {
            if at.elapsed() < FRESH {
                return qs.clone();
            }
        }
        let local = || {
            self.topics.select(topic).map(|tc| {
                (0..tc.read_queue_nums)
                    .map(|q| MessageQueue::new(topic, &self.config.broker_name, q))
                    .collect::<Vec<_>>()
            })
        };
        let Some(reg) = &self.registration else {
            return local();
        };
        let queues = match reg.topic_route(topic).await {
            Ok(Some(route)) => Some(
                route
                    .queue_datas
                    .iter()
                    .filter(|qd| is_readable(qd.perm))
                    .flat_map(|qd| {
                        (0..qd.read_queue_nums)
                            .map(|q| MessageQueue::new(topic, &qd.broker_name, q))
                    })
                    .collect::<Vec<_>>(),
            ),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(topic, error = %e, "no route from the NameServers; assigning this broker's queues");
                return local();
            }
        };
        let mut cache = self.route_cache.lock();
        if cache.len() > 10_000 {
            cache.retain(|_, (at, _)| at.elapsed() < FRESH);
        }
        cache.insert(
            topic.to_string(),
            (std::time::Instant::now(), queues.clone()),
        );
        queues
    }

    /// Asks the registration service to register with the NameServers now (topic changes).
    pub fn register_to_namesrv_soon(&self) {
        if let Some(r) = &self.registration {
            r.trigger();
        }
    }

    /// Broker and store keys with their effective values (GET_BROKER_CONFIG).
    pub fn all_config_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = self.config.key_values();
        pairs.extend(
            self.store
                .config()
                .keys_and_values()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v)),
        );
        for (k, v) in self.overrides.lock().iter() {
            match pairs.iter_mut().find(|(pk, _)| pk == k) {
                Some(slot) => slot.1 = v.clone(),
                None => pairs.push((k.clone(), v.clone())),
            }
        }
        if let Some(p) = pairs.iter_mut().find(|(k, _)| k == "brokerPermission") {
            p.1 = self.broker_permission().to_string();
        }
        pairs
    }

    /// UPDATE_BROKER_CONFIG: values are checked like the config file's; `brokerPermission`
    /// applies at once, the rest is recorded and reported (most keys need a restart, as in Java).
    pub fn update_config(&self, pairs: &[(String, String)]) -> Result<(), BrokerError> {
        let mut probe_broker = self.config.clone();
        let mut probe_store = self.store.config().clone();
        for (k, v) in pairs {
            let for_broker = probe_broker.set(k, v)?;
            let known = probe_store.set(k, v)? || for_broker;
            if !known {
                tracing::warn!(key = %k, "UPDATE_BROKER_CONFIG: unknown key recorded");
            }
        }
        self.broker_permission
            .store(probe_broker.broker_permission, Ordering::Relaxed);
        let mut overrides = self.overrides.lock();
        for (k, v) in pairs {
            overrides.retain(|(ok, _)| ok != k);
            overrides.push((k.clone(), v.clone()));
        }
        drop(overrides);
        self.register_to_namesrv_soon();
        Ok(())
    }
}

/// A running broker: its listener and its background services.
pub struct BrokerController {
    pub ctx: Arc<BrokerContext>,
    server: ServerHandle,
    /// The VIP channel (`listenPort - 2`): the same handler on a second listener.
    fast_server: Option<ServerHandle>,
    services: Vec<PeriodicService>,
    transaction_check: TransactionalMessageCheckService,
    /// `/metrics` (address, task) when `metricsExporterType=PROM`.
    metrics_http: Option<(SocketAddr, periodic::BackgroundTask)>,
}

impl BrokerController {
    /// Opens the store (taking its lock first), loads the metadata, starts serving on
    /// `listenPort` and starts the background services.
    pub async fn start(
        config: BrokerConfig,
        store_config: MessageStoreConfig,
    ) -> Result<Self, StartError> {
        let budget = server::ReceiveBudget::new(config.receive_buffer_budget);
        Self::start_with_budget(config, store_config, budget).await
    }

    /// [`Self::start`] drawing on a receive budget shared with other servers of the process (the
    /// embedded NameServer's).
    pub async fn start_with_budget(
        mut config: BrokerConfig,
        store_config: MessageStoreConfig,
        receive_budget: server::ReceiveBudget,
    ) -> Result<Self, StartError> {
        let listen_port_configured = config.listen_port != 0;
        if !listen_port_configured {
            config.listen_port = free_port(&config.bind_address)?;
        }
        let store_host = resolve(&config.broker_ip1, config.listen_port)?;
        let lmq = store_config.enable_lmq;
        let rocksdb_configs = store_config.is_rocksdb_store();
        let store = tokio::task::spawn_blocking(move || MessageStore::open(store_config)).await??;
        let store = Arc::new(store);
        let paths = store.paths();
        // storeType=defaultRocksDB: Java 5.5.0 keeps these three tables in RocksDBs
        let mut kv = if rocksdb_configs {
            let m =
                metadata::kv::KvMirrors::open(paths, config.use_single_rocksdb_for_all_configs)?;
            (Some(m.topics), Some(m.groups), Some(m.offsets))
        } else {
            (None, None, None)
        };
        let topics =
            TopicConfigManager::load_with(&config, paths.topics_json(), kv.0.take())?.with_lmq(lmq);
        let groups = SubscriptionGroupManager::load_with(
            paths.subscription_group_json(),
            config.auto_create_subscription_group,
            kv.1.take(),
        )?
        .with_lmq(lmq);
        let offsets = match kv.2.take() {
            Some(kv) => ConsumerOffsetManager::load_with_kv(paths.consumer_offset_json(), kv)?,
            None if lmq => ConsumerOffsetManager::load_lmq(&paths.config_dir())?,
            None => ConsumerOffsetManager::load(paths.consumer_offset_json())?,
        };
        if rocksdb_configs {
            // the RocksDBs and the files agree from the start (versions included)
            groups.persist()?;
            offsets.persist()?;
        }
        let pop = Arc::new(pop::PopService::new(
            pop::request_mode::MessageRequestModeManager::load(
                paths.config_dir().join("messageRequestMode.json"),
            ),
            pop::order_info::ConsumerOrderInfoManager::load(
                paths.config_dir().join("consumerOrderInfo.json"),
            ),
            config.revive_queue_num,
        ));
        let tx_counts = transaction::counts::TransactionCounts::load(
            paths.config_dir().join("transactionMetrics"),
        );
        let schedule = Arc::new(ScheduleMessageService::load(store.clone())?);
        let timer = Arc::new(TimerMessageService::load(store.clone())?);
        let locks =
            RebalanceLockManager::new(Duration::from_millis(config.rebalance_lock_max_live_time));
        let stats = BrokerStats::new(&config.broker_cluster_name)
            .collapsing_lmq(lmq && !config.enable_lmq_stats);
        let metrics =
            metrics::BrokerMetrics::new(config.metrics_exporter_type.eq_ignore_ascii_case("PROM"));
        let ctx = Arc::new_cyclic(|weak: &Weak<BrokerContext>| BrokerContext {
            registration: registration_service(&config, weak.clone()),
            route_cache: Mutex::new(Default::default()),
            broker_permission: AtomicI32::new(config.broker_permission),
            config,
            store,
            topics,
            groups,
            offsets,
            clients: ClientRegistry::new(),
            pull_hold: PullRequestHoldService::new(),
            pop,
            lite: Arc::new(lite::LiteService::new()),
            locks,
            schedule,
            timer,
            stats,
            metrics,
            tx_counts,
            store_host,
            boot_timestamp: now_millis(),
            overrides: Mutex::new(Vec::new()),
        });
        let weak = Arc::downgrade(&ctx);
        ctx.store
            .set_arrival_listener(Arc::new(move |arrival: &MessageArrival<'_>| {
                if let Some(ctx) = weak.upgrade() {
                    ctx.pull_hold
                        .notify_arrival(arrival.topic, arrival.queue_id);
                    if arrival.queue_id == 0
                        && arrival
                            .topic
                            .starts_with(crate::common::topic::LITE_TOPIC_PREFIX)
                    {
                        // a lite queue's arrival is an event for one subscriber per group
                        // (Java LiteEventDispatcher.dispatch), not a wake-up of every pop
                        ctx.lite_dispatch(None, arrival.topic, None);
                    } else {
                        ctx.pop.notify_arrival(arrival.topic, arrival.queue_id);
                    }
                }
            }));
        let weak = Arc::downgrade(&ctx);
        ctx.store
            .set_cleanup_listener(Arc::new(move |forced: &ForcedDeletion| {
                if let Some(ctx) = weak.upgrade() {
                    ctx.count_forced_deletion(forced);
                }
            }));
        // Java's delivery paths count a delayed message put back under its topic as a put
        // (TOPIC_PUT_*, BROKER_PUT_NUMS); the schedule service also as a get of its queue by
        // SCHEDULE_CONSUMER and in the messages in/out families (enableScheduleMessageStats)
        let weak = Arc::downgrade(&ctx);
        ctx.schedule.set_delivery_listener(Arc::new(
            move |topic: &str, result: &PutMessageResult| {
                let (Some(ctx), Some(a)) = (weak.upgrade(), result.append.as_ref()) else {
                    return;
                };
                let (msgs, bytes) = (a.msg_num.max(1) as u64, a.wrote_bytes.max(0) as u64);
                let (group, queue_topic) = (
                    SCHEDULE_CONSUMER_GROUP,
                    schedule_message_service::SCHEDULE_TOPIC,
                );
                ctx.stats.group_get(group, queue_topic, msgs, bytes);
                ctx.metrics.message_out(group, queue_topic, msgs, bytes);
                ctx.stats.put(topic, msgs, bytes);
                ctx.metrics
                    .message_in(topic, metrics::MessageType::Delay, msgs, bytes);
            },
        ));
        let weak = Arc::downgrade(&ctx);
        ctx.timer
            .set_delivery_listener(Arc::new(move |topic: &str, result: &PutMessageResult| {
                if let (Some(ctx), Some(a)) = (weak.upgrade(), result.append.as_ref()) {
                    ctx.stats.put(topic, 1, a.wrote_bytes.max(0) as u64);
                }
            }));
        ctx.topics.persist()?;
        let metrics_http = metrics::http::start(&ctx)
            .await
            .map_err(StartError::Metrics)?;
        let (server, fast_server) =
            Self::serve(&ctx, listen_port_configured, receive_budget).await?;
        let services = Self::start_services(&ctx);
        ctx.schedule.start();
        ctx.timer.start();
        let transaction_check = TransactionalMessageCheckService::default();
        if !ctx.config.is_slave() {
            transaction_check.start(&ctx);
        }
        if let Some(r) = &ctx.registration {
            r.start();
        }
        Ok(Self {
            ctx,
            server,
            fast_server,
            services,
            transaction_check,
            metrics_http,
        })
    }

    /// Opens the client port and, unless disabled, the VIP channel (Java's fast remoting server)
    /// with the same handler and limits.
    async fn serve(
        ctx: &Arc<BrokerContext>,
        listen_port_configured: bool,
        receive_budget: server::ReceiveBudget,
    ) -> Result<(ServerHandle, Option<ServerHandle>), StartError> {
        let c = &ctx.config;
        // the VIP channel draws from the client port's connection and in-flight budgets
        let limits = server::SharedLimits::new(c.server_max_connections, c.server_max_in_flight);
        let server_config = |bind| {
            let mut s = ServerConfig::new(bind);
            s.idle_timeout = Duration::from_secs(c.server_channel_max_idle_time_seconds.max(1));
            s.max_connections = c.server_max_connections;
            s.max_in_flight = c.server_max_in_flight;
            s.backlog = c.server_socket_backlog.max(1) as u32;
            s.shared_limits = Some(limits.clone());
            s.receive_budget = receive_budget.clone();
            s
        };
        let handler = Arc::new(dispatch::BrokerHandler { ctx: ctx.clone() });
        let bind = resolve(&c.bind_address, c.listen_port)?;
        let server = server::serve(server_config(bind), handler.clone())
            .await
            .map_err(|source| StartError::Listen {
                bind,
                port: c.listen_port,
                source,
            })?;
        tracing::info!(addr = %server.local_addr, store_host = %ctx.store_host, "broker listening");
        if !c.fast_channel_enable {
            return Ok((server, None));
        }
        let bind = resolve(&c.bind_address, c.fast_listen_port(listen_port_configured))?;
        match server::serve(server_config(bind), handler).await {
            Ok(fast) => {
                tracing::info!(addr = %fast.local_addr, "VIP channel listening");
                Ok((server, Some(fast)))
            }
            Err(source) => {
                server.shutdown(Duration::from_secs(1)).await;
                Err(StartError::FastListen { bind, source })
            }
        }
    }

    fn start_services(ctx: &Arc<BrokerContext>) -> Vec<PeriodicService> {
        let c = &ctx.config;
        let offsets_every = Duration::from_millis(c.flush_consumer_offset_interval.max(100));
        let expiry = Duration::from_millis(c.channel_not_active_interval.max(1_000));
        let (a, b, d, e, f) = (
            ctx.clone(),
            ctx.clone(),
            ctx.clone(),
            ctx.clone(),
            ctx.clone(),
        );
        let revive_every = Duration::from_millis(c.revive_interval.max(100));
        let mut reviver = pop::revive::Reviver::new(c.revive_queue_num);
        vec![
            PeriodicService::start(
                "consumer-offset-persist",
                offsets_every,
                offsets_every,
                TickOn::BlockingPool,
                move || {
                    if let Err(e) = a.offsets.persist() {
                        tracing::error!(error = %e, "cannot write consumerOffset.json");
                    }
                },
            ),
            PeriodicService::start(
                "client-liveness",
                Duration::from_secs(10),
                Duration::from_secs(10),
                TickOn::Worker,
                move || {
                    b.clients.scan_not_active(expiry);
                    b.pull_hold.prune();
                    b.pop.prune();
                    // a lite client whose channel closed is forgotten, its events go to the
                    // others of its group (Java: the registry's channel-close housekeeping)
                    for client in b.lite.disconnected() {
                        processor::lite::remove_client(&b, &client);
                    }
                    b.lite.hold.prune();
                },
            ),
            PeriodicService::start(
                "stats-sampler",
                Duration::from_secs(1),
                Duration::from_secs(1),
                TickOn::BlockingPool,
                move || {
                    d.store.sample_stats();
                    d.stats.sample();
                },
            ),
            {
                let ctx = ctx.clone();
                let mut scan = lite::lifecycle::TtlScan::new();
                let every = Duration::from_millis(c.lite_ttl_check_interval.max(100));
                PeriodicService::start("lite-ttl", every, every, TickOn::BlockingPool, move || {
                    scan.run(&ctx, now_millis());
                })
            },
            {
                let ctx = ctx.clone();
                // Java's TransactionMetricsFlushService, every transactionMetricFlushInterval (10 s)
                PeriodicService::start(
                    "transaction-metrics-persist",
                    Duration::from_secs(10),
                    Duration::from_secs(10),
                    TickOn::BlockingPool,
                    move || ctx.tx_counts.persist(),
                )
            },
            PeriodicService::start(
                "pop-order-info-persist",
                Duration::from_secs(10),
                Duration::from_secs(10),
                TickOn::BlockingPool,
                move || f.persist_order_info(),
            ),
            PeriodicService::start(
                "pop-revive",
                revive_every,
                revive_every,
                TickOn::BlockingPool,
                move || reviver.tick(&e),
            ),
        ]
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr
    }

    /// Where `/metrics` is served, when it is.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_http.as_ref().map(|(a, _)| *a)
    }

    /// The VIP channel's address, when it is open.
    pub fn fast_local_addr(&self) -> Option<SocketAddr> {
        self.fast_server.as_ref().map(|s| s.local_addr)
    }

    /// Stops accepting, finishes in-flight requests, persists metadata, flushes and closes the store.
    pub async fn shutdown(self) {
        if let Some(r) = &self.ctx.registration {
            r.stop().await;
        }
        self.ctx.pull_hold.close();
        self.ctx.pop.hold.close();
        match &self.fast_server {
            Some(fast) => {
                tokio::join!(
                    self.server.shutdown(Duration::from_secs(10)),
                    fast.shutdown(Duration::from_secs(10))
                );
            }
            None => self.server.shutdown(Duration::from_secs(10)).await,
        }
        for s in self.services {
            s.stop().await;
        }
        if let Some((_, task)) = self.metrics_http {
            task.stop().await;
        }
        self.ctx.schedule.stop().await;
        self.ctx.timer.stop().await;
        self.transaction_check.stop().await;
        self.ctx.persist_order_info();
        self.ctx.tx_counts.persist();
        if let Err(e) = self.ctx.offsets.persist() {
            tracing::error!(error = %e, "cannot write consumerOffset.json at shutdown");
        }
        let store = self.ctx.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.shutdown()).await;
    }
}

/// The registration service, fed with the broker's topics through a weak handle (the context
/// owns the service, so a strong one would be a cycle).
fn registration_service(
    c: &BrokerConfig,
    ctx: Weak<BrokerContext>,
) -> Option<NamesrvRegistrationService> {
    let addrs = c.namesrv_addr.clone().filter(|a| !a.trim().is_empty())?;
    let config = RegistrationConfig {
        namesrv_addr: addrs,
        broker_cluster_name: c.broker_cluster_name.clone(),
        broker_name: c.broker_name.clone(),
        broker_id: c.broker_id,
        broker_addr: c.broker_addr(),
        ha_server_addr: format!(
            "{}:{}",
            if c.broker_ip2.is_empty() {
                &c.broker_ip1
            } else {
                &c.broker_ip2
            },
            c.listen_port as u32 + 1
        ),
        register_name_server_period: c.register_name_server_period,
        ..Default::default()
    };
    let source: TopicConfigSource = Arc::new(move || match ctx.upgrade() {
        Some(ctx) => (
            ctx.topics.data_version(),
            ctx.topics
                .all()
                .iter()
                .map(|t| registered_view(&ctx, t))
                .collect(),
        ),
        None => (Default::default(), Vec::new()),
    });
    Some(NamesrvRegistrationService::new(
        config,
        RemotingClient::default(),
        source,
    ))
}

/// Java ANDs the broker's permission into each topic's when the broker lacks read or write.
fn registered_view(
    ctx: &BrokerContext,
    t: &crate::common::topic::TopicConfig,
) -> crate::common::topic::TopicConfig {
    let mut t = t.clone();
    let broker_perm = ctx.broker_permission();
    if broker_perm & (crate::common::topic::PERM_READ | crate::common::topic::PERM_WRITE)
        != (crate::common::topic::PERM_READ | crate::common::topic::PERM_WRITE)
    {
        t.perm &= broker_perm;
    }
    t
}

fn resolve(host: &str, port: u16) -> Result<SocketAddr, StartError> {
    let (host, port) = (host.to_string(), port);
    match (host.as_str(), port).to_socket_addrs() {
        Ok(mut addrs) => addrs.next().ok_or(StartError::NoAddress { host, port }),
        Err(source) => Err(StartError::Resolve { host, port, source }),
    }
}

fn free_port(bind: &str) -> Result<u16, StartError> {
    let free = |source| StartError::FreePort {
        bind: bind.to_string(),
        source,
    };
    let l = std::net::TcpListener::bind((bind, 0)).map_err(free)?;
    l.local_addr().map(|a| a.port()).map_err(free)
}

pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
