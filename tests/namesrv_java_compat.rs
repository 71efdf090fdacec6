//! Differential check against the real Java NameServer (the oracle). Runs only when
//! `RMQD_JAVA_NAMESRV=host:port` names a running Java NameServer (see
//! reference/compat-testing.md §1 for starting one); otherwise every test returns early.
//! The same requests go to the Java NameServer over TCP and to ours in process; code, remark,
//! response header keys and body bytes must match. Use a NameServer of your own: the test
//! registers and unregisters brokers named `rmqd-compat-<pid>` / `rmqd-admin-<pid>` and leaves
//! empty KV namespaces `RMQD_NS_<pid>` behind (Java has no request that removes a namespace).

mod namesrv_support;

use std::sync::Arc;
use std::time::Duration;

use namesrv_support::*;
use rmqd::broker::namesrv_registration::{NamesrvRegistrationService, TopicConfigSource};
use rmqd::broker::remoting_client::RemotingClient;
use rmqd::namesrv::NameServer;
use rmqd::remoting::body::topic_list::TopicList;
use rmqd::remoting::RemotingCommand;

fn java_addr() -> Option<String> {
    std::env::var("RMQD_JAVA_NAMESRV")
        .ok()
        .filter(|s| !s.is_empty())
}

async fn both(
    client: &RemotingClient,
    java: &str,
    ours: &NameServer,
    req: RemotingCommand,
) -> (RemotingCommand, RemotingCommand) {
    let j = client
        .invoke(java, req.clone(), Duration::from_secs(5))
        .await
        .expect("java namesrv answers");
    let o = ours.process(1, peer(), req).expect("a response");
    (j, o)
}

fn assert_same(what: &str, j: &RemotingCommand, o: &RemotingCommand) {
    assert_eq!(j.code, o.code, "{what}: code");
    assert_eq!(j.remark, o.remark, "{what}: remark");
    assert_eq!(body_text(j), body_text(o), "{what}: body");
    let keys = |c: &RemotingCommand| {
        let mut k: Vec<(String, String)> = c
            .ext_fields
            .iter()
            .flat_map(|e| e.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        k.sort();
        k
    };
    assert_eq!(keys(j), keys(o), "{what}: extFields");
}

#[tokio::test]
async fn same_answers_as_the_java_namesrv() {
    let Some(java) = java_addr() else {
        eprintln!("RMQD_JAVA_NAMESRV not set; skipping");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ours = Arc::new(name_server(dir.path(), |_| {}));
    let client = RemotingClient::default();
    let tag = std::process::id();
    let name = format!("rmqd-compat-{tag}");
    let cluster = format!("RmqdCompat{tag}");
    let mut cfg = broker_config(&name, 0, "127.0.0.1:10911");
    cfg.broker_cluster_name = cluster.clone();
    cfg.namesrv_addr = java.clone();
    let topic = format!("RmqdCompatTopic{tag}");
    let source_topic = topic.clone();
    let source: TopicConfigSource = Arc::new(move || {
        (
            version(1),
            vec![
                rmqd::common::topic::TopicConfig::new(&source_topic, 4, 4, 6),
                rmqd::common::topic::TopicConfig::new("TBW102", 8, 8, 7),
            ],
        )
    });

    // Our broker side registers with the Java NameServer, plain then compressed.
    let svc = NamesrvRegistrationService::new(cfg.clone(), client.clone(), source.clone());
    let r = svc.register_now().await;
    assert!(r[0].1.is_ok(), "plain registration: {r:?}");
    let mut zcfg = cfg.clone();
    zcfg.compressed_register = true;
    let zsvc = NamesrvRegistrationService::new(zcfg, client.clone(), source.clone());
    let r = zsvc.register_now().await;
    assert!(r[0].1.is_ok(), "compressed registration: {r:?}");

    // The same registration into ours, then compare the answers.
    let (version, topics) = source();
    let reg = rmqd::broker::namesrv_registration::build_register_request(&cfg, version, topics);
    let (j, o) = both(&client, &java, &ours, reg.clone()).await;
    assert_eq!((j.code, o.code), (0, 0));

    for v in [479, 317] {
        let (j, o) = both(&client, &java, &ours, route_request(&topic, v)).await;
        assert_same(&format!("route v{v}"), &j, &o);
    }
    let (j, o) = both(
        &client,
        &java,
        &ours,
        route_request("NoSuchTopicAnywhere", 479),
    )
    .await;
    assert_same("missing route", &j, &o);
    let (j, o) = both(&client, &java, &ours, request(9999, 479, &[])).await;
    assert_same("unknown code", &j, &o);
    let member = request(
        901,
        479,
        &[("clusterName", &cluster), ("brokerName", &name)],
    );
    let (j, o) = both(&client, &java, &ours, member).await;
    assert_same("member group", &j, &o);
    let (j, o) = both(
        &client,
        &java,
        &ours,
        request(224, 479, &[("cluster", &cluster)]),
    )
    .await;
    // Java's topic set has hash order; compare the members.
    let sorted = |c: &RemotingCommand| {
        let mut l = TopicList::decode(&c.body.to_bytes()).unwrap().topic_list;
        l.sort();
        l
    };
    assert_eq!(
        (j.code, sorted(&j)),
        (o.code, sorted(&o)),
        "topics by cluster"
    );

    let mut bad = reg.clone();
    bad.ext_mut().insert("bodyCrc32", "1");
    let (j, o) = both(&client, &java, &ours, bad).await;
    assert_same("wrong crc", &j, &o);

    let ns = format!("RMQD_NS_{tag}");
    let put = request(
        100,
        479,
        &[("namespace", &ns), ("key", "k"), ("value", "v")],
    );
    let (j, o) = both(&client, &java, &ours, put).await;
    assert_same("put kv", &j, &o);
    let (j, o) = both(
        &client,
        &java,
        &ours,
        request(101, 479, &[("namespace", &ns), ("key", "k")]),
    )
    .await;
    assert_same("get kv", &j, &o);
    let (j, o) = both(
        &client,
        &java,
        &ours,
        request(219, 479, &[("namespace", &ns)]),
    )
    .await;
    assert_same("kv list", &j, &o);
    let (j, o) = both(
        &client,
        &java,
        &ours,
        request(102, 479, &[("namespace", &ns), ("key", "k")]),
    )
    .await;
    assert_same("delete kv", &j, &o);
    let (j, o) = both(
        &client,
        &java,
        &ours,
        request(101, 479, &[("namespace", &ns), ("key", "k")]),
    )
    .await;
    assert_same("get deleted kv", &j, &o);

    let (j, o) = both(
        &client,
        &java,
        &ours,
        request(205, 479, &[("brokerName", &name)]),
    )
    .await;
    assert_same("wipe write perm", &j, &o);
    let (j, o) = both(
        &client,
        &java,
        &ours,
        request(327, 479, &[("brokerName", &name)]),
    )
    .await;
    assert_same("add write perm", &j, &o);

    // Unregister (Java unregisters in a batch thread, so poll).
    svc.stop().await;
    let mut gone = false;
    for _ in 0..50 {
        let r = client
            .invoke(&java, route_request(&topic, 479), Duration::from_secs(5))
            .await
            .unwrap();
        if r.code == 17 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "route still present after UNREGISTER_BROKER");
}

#[tokio::test]
async fn same_admin_answers_as_the_java_namesrv() {
    let Some(java) = java_addr() else {
        eprintln!("RMQD_JAVA_NAMESRV not set; skipping");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ours = Arc::new(name_server(dir.path(), |_| {}));
    let client = RemotingClient::default();
    let tag = std::process::id() + 7;
    let name = format!("rmqd-admin-{tag}");
    let cluster = format!("RmqdAdmin{tag}");
    let topic = format!("RmqdAdminTopic{tag}");
    let mut cfg = broker_config(&name, 0, "127.0.0.2:10911");
    cfg.broker_cluster_name = cluster.clone();
    let reg = rmqd::broker::namesrv_registration::build_register_request(
        &cfg,
        version(3),
        vec![rmqd::common::topic::TopicConfig::new(&topic, 2, 2, 6)],
    );
    // Java refuses a one-topic registration from a broker it does not know yet, but keeps an
    // empty BrokerData for it; so do we.
    let (j, o) = both(&client, &java, &ours, reg.clone()).await;
    assert_same("single-topic first registration", &j, &o);
    assert_eq!(j.remark.as_deref(), Some("register broker failed"));
    let reg = rmqd::broker::namesrv_registration::build_register_request(
        &cfg,
        version(3),
        vec![
            rmqd::common::topic::TopicConfig::new(&topic, 2, 2, 6),
            rmqd::common::topic::TopicConfig::new("TBW102", 8, 8, 7),
        ],
    );
    let (j, o) = both(&client, &java, &ours, reg.clone()).await;
    assert_same("register", &j, &o);

    // ROCKETMQ binary header in, same answer out.
    let mut bin = route_request(&topic, 479);
    bin.serialize_type = rmqd::remoting::SerializeType::RocketMq;
    let (j, o) = both(&client, &java, &ours, bin).await;
    assert_same("route via binary header", &j, &o);

    let (j, o) = both(&client, &java, &ours, request(106, 479, &[])).await;
    let pick = |c: &RemotingCommand| {
        let info =
            rmqd::remoting::body::cluster_info::ClusterInfo::decode(&c.body.to_bytes()).unwrap();
        (
            info.broker_addr_table.get(&name).cloned(),
            info.cluster_addr_table.get(&cluster).cloned(),
        )
    };
    assert_eq!(pick(&j), pick(&o), "cluster info entry");
    assert!(body_text(&j).contains(r#""brokerAddrs":{0:"127.0.0.2:10911"}"#));

    let ident = [
        ("brokerName", name.as_str()),
        ("brokerAddr", "127.0.0.2:10911"),
        ("clusterName", cluster.as_str()),
        ("brokerId", "0"),
    ];
    for v in [3, 4] {
        let mut q = request(322, 479, &ident);
        q.body = version(v).encode().into();
        let (j, o) = both(&client, &java, &ours, q).await;
        assert_same(&format!("query data version {v}"), &j, &o);
    }
    let hb = request(
        904,
        479,
        &[
            ("clusterName", &cluster),
            ("brokerAddr", "127.0.0.2:10911"),
            ("brokerName", &name),
        ],
    );
    let (j, o) = both(&client, &java, &ours, hb).await;
    assert_same("broker heartbeat", &j, &o);

    let mut black = request(318, 479, &[]);
    black.body = b"kvConfigPath=/tmp/x\n".to_vec().into();
    let (j, o) = both(&client, &java, &ours, black).await;
    assert_same("update config black list", &j, &o);
    let (j, o) = both(&client, &java, &ours, request(319, 479, &[])).await;
    assert_eq!(
        (j.code, j.remark.clone()),
        (o.code, o.remark.clone()),
        "get config"
    );

    let new_topic = format!("{topic}-reg");
    let mut rt = request(217, 479, &[("topic", &new_topic)]);
    rt.body = format!(r#"{{"brokerDatas":[],"filterServerTable":{{}},"queueDatas":[{{"brokerName":"{name}","perm":4,"readQueueNums":1,"topicSysFlag":0,"writeQueueNums":1}}]}}"#).into_bytes().into();
    let (j, o) = both(&client, &java, &ours, rt).await;
    assert_same("register topic", &j, &o);
    let (j, o) = both(&client, &java, &ours, route_request(&new_topic, 317)).await;
    assert_same("registered topic route", &j, &o);

    let del = request(
        216,
        479,
        &[("topic", &new_topic), ("clusterName", &cluster)],
    );
    let (j, o) = both(&client, &java, &ours, del).await;
    assert_same("delete topic", &j, &o);
    let (j, o) = both(&client, &java, &ours, route_request(&new_topic, 479)).await;
    assert_same("deleted topic route", &j, &o);

    // Deviation: Java 5.3.3 accepts a REGISTER_BROKER without brokerAddr (and registers a null
    // address); we answer SYSTEM_ERROR naming the field.
    let mut missing = reg.clone();
    missing.ext_mut().remove("brokerAddr");
    let o = ours.process(1, peer(), missing).unwrap();
    assert_eq!(o.code, 1, "{:?}", o.remark);

    let un = request(104, 479, &ident);
    let (j, o) = both(&client, &java, &ours, un).await;
    assert_same("unregister", &j, &o);
}

/// Manual harness for the real Java broker and mqadmin against our NameServer: serves ours on
/// `RMQD_NAMESRV_SERVE=host:port` for `RMQD_NAMESRV_SERVE_SECS` seconds (default 60).
/// `RMQD_NAMESRV_SERVE=127.0.0.1:19878 cargo test --test namesrv_java_compat serve -- --ignored`
/// With `RMQD_NAMESRV_SERVE_SEED=1` a broker is registered first (for Go/Java client route checks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn serve_ours_for_java_tools() {
    let Ok(addr) = std::env::var("RMQD_NAMESRV_SERVE") else {
        return;
    };
    let secs: u64 = std::env::var("RMQD_NAMESRV_SERVE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let ns = Arc::new(name_server(dir.path(), |_| {}));
    if std::env::var("RMQD_NAMESRV_SERVE_SEED").is_ok() {
        // A registered broker-a (127.0.0.1:10911, TBW102 + TopicTest) for client route checks.
        let cfg = broker_config("broker-a", 0, "127.0.0.1:10911");
        ns.process(0, peer(), register(&cfg, 1, topics())).unwrap();
    }
    serve_on(ns.clone(), &addr).await;
    tokio::time::sleep(Duration::from_secs(secs)).await;
    eprintln!(
        "live brokers at the end: {:?}",
        ns.route_info().live_brokers()
    );
}
