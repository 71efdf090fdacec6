//! Helpers shared by the NameServer tests: configs, requests shaped like the Java broker's and
//! clients', and a tiny TCP front end (the real server lives in broker/server).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use rmqd::broker::namesrv_registration::{build_register_request, RegistrationConfig};
use rmqd::common::topic::TopicConfig;
use rmqd::namesrv::{NameServer, NamesrvConfig};
use rmqd::remoting::body::data_version::DataVersion;
use rmqd::remoting::codec::{encode_frame, FrameCodec};
use rmqd::remoting::RemotingCommand;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const PEER: &str = "127.0.0.1:50000";

pub fn peer() -> SocketAddr {
    PEER.parse().unwrap()
}

/// A NameServer whose KV and config files live in `dir`.
pub fn name_server(dir: &std::path::Path, tweak: impl FnOnce(&mut NamesrvConfig)) -> NameServer {
    let mut c = NamesrvConfig {
        kv_config_path: dir.join("kvConfig.json"),
        config_store_path: dir.join("namesrv.properties"),
        ..NamesrvConfig::default()
    };
    tweak(&mut c);
    NameServer::new(c)
}

pub fn broker_config(name: &str, id: i64, addr: &str) -> RegistrationConfig {
    RegistrationConfig {
        broker_cluster_name: "DefaultCluster".into(),
        broker_name: name.into(),
        broker_id: id,
        broker_addr: addr.into(),
        ha_server_addr: addr.replace("10911", "10912"),
        ..RegistrationConfig::default()
    }
}

pub fn version(counter: i64) -> DataVersion {
    DataVersion {
        counter,
        state_version: 0,
        timestamp: 1_700_000_000_000,
    }
}

pub fn topics() -> Vec<TopicConfig> {
    vec![
        TopicConfig::new("TBW102", 8, 8, 7),
        TopicConfig::new("TopicTest", 4, 4, 6),
    ]
}

/// REGISTER_BROKER as the Java broker builds it.
pub fn register(
    cfg: &RegistrationConfig,
    counter: i64,
    topics: Vec<TopicConfig>,
) -> RemotingCommand {
    build_register_request(cfg, version(counter), topics)
}

pub fn request(code: i32, version: i32, ext: &[(&str, &str)]) -> RemotingCommand {
    let mut r = RemotingCommand::request(code);
    r.version = version;
    for (k, v) in ext {
        r.ext_mut().insert(*k, *v);
    }
    r
}

pub fn route_request(topic: &str, version: i32) -> RemotingCommand {
    request(105, version, &[("topic", topic)])
}

pub fn body_text(cmd: &RemotingCommand) -> String {
    String::from_utf8(cmd.body.to_bytes().to_vec()).unwrap()
}

/// Serves `ns` on an ephemeral port: one task per connection, requests answered in order.
pub async fn serve(ns: Arc<NameServer>) -> SocketAddr {
    serve_on(ns, "127.0.0.1:0").await
}

/// Serves `ns` on `addr`.
pub async fn serve_on(ns: Arc<NameServer>, addr: &str) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let addr = listener.local_addr().unwrap();
    static CONN: AtomicU64 = AtomicU64::new(1);
    tokio::spawn(async move {
        while let Ok((mut stream, peer)) = listener.accept().await {
            let ns = ns.clone();
            let conn_id = CONN.fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move {
                let codec = FrameCodec::default();
                let mut buf = BytesMut::new();
                'conn: loop {
                    while let Ok(Some(req)) = codec.decode_frame(&mut buf) {
                        if let Some(resp) = ns.process(conn_id, peer, req) {
                            let mut out = BytesMut::new();
                            encode_frame(&resp, &mut out);
                            if stream.write_all(&out).await.is_err() {
                                break 'conn;
                            }
                        }
                    }
                    match stream.read_buf(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                ns.on_connection_closed(conn_id);
            });
        }
    });
    addr
}
