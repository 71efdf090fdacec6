//! The connection server over real TCP: unknown codes, oneway, and every kind of malformed frame
//! closing only its own connection while the process and other connections carry on.

mod support;

use rmqd::broker::{BrokerConfig, BrokerController};
use rmqd::remoting::{RemotingCommand, ResponseCode, SerializeType};
use rmqd::store::config::MessageStoreConfig;
use support::RawClient;

async fn start_broker() -> BrokerController {
    let config = BrokerConfig {
        listen_port: 0,
        bind_address: "127.0.0.1".into(),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap().keep();
    let mut store = MessageStoreConfig::with_root(dir);
    store.set("mappedFileSizeCommitLog", "1048576").unwrap();
    BrokerController::start(config, store).await.unwrap()
}

fn unknown_code_request(opaque: i32) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(9999);
    cmd.opaque = opaque;
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_code_gets_not_supported_with_java_remark() {
    let broker = start_broker().await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        for st in [SerializeType::Json, SerializeType::RocketMq] {
            let mut c = RawClient::connect(addr);
            let mut req = unknown_code_request(42);
            req.serialize_type = st;
            let resp = c.call(&req);
            assert_eq!(resp.code, ResponseCode::REQUEST_CODE_NOT_SUPPORTED.code());
            assert_eq!(resp.opaque, 42);
            assert!(resp.is_response());
            assert_eq!(
                resp.remark.as_deref(),
                Some(" request type 9999 not supported")
            );
        }
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oneway_request_gets_no_answer() {
    let broker = start_broker().await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        let mut oneway = unknown_code_request(1);
        oneway.mark_oneway();
        c.send(&oneway);
        let resp = c.call(&unknown_code_request(2));
        assert_eq!(resp.opaque, 2, "the oneway request must not be answered");
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// Frames that must close the connection: (name, bytes).
fn malformed_frames() -> Vec<(&'static str, Vec<u8>)> {
    let mut random = Vec::new();
    let mut x: u32 = 0x1234_5678;
    for _ in 0..4096 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        random.push((x >> 24) as u8);
    }
    random[0] = 0x7f;
    vec![
        ("absurd length", vec![0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
        ("negative length", vec![0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0]),
        (
            "header longer than frame",
            vec![0, 0, 0, 8, 0, 0, 0, 100, 1, 2, 3, 4],
        ),
        (
            "broken json",
            [&[0u8, 0, 0, 9, 0, 0, 0, 5][..], b"{\"co:"].concat(),
        ),
        (
            "unknown serialize type",
            [&[0u8, 0, 0, 6, 7, 0, 0, 2][..], b"{}"].concat(),
        ),
        ("short binary header", vec![0, 0, 0, 7, 1, 0, 0, 3, 0, 1, 2]),
        ("random bytes", random),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_close_only_their_connection() {
    let broker = start_broker().await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut healthy = RawClient::connect(addr);
        for (name, bytes) in malformed_frames() {
            let mut bad = RawClient::connect(addr);
            bad.send_raw(&bytes);
            assert!(
                bad.is_closed_by_server(),
                "{name}: connection should be closed"
            );
            let resp = healthy.call(&unknown_code_request(7));
            assert_eq!(
                resp.opaque, 7,
                "{name}: healthy connection must keep working"
            );
        }
        // A frame cut short, then the peer hangs up: the server just drops the connection.
        let mut cut = RawClient::connect(addr);
        cut.send_raw(&[0, 0, 0, 100, 0, 0, 0, 10, b'{']);
        drop(cut);
        assert_eq!(healthy.call(&unknown_code_request(8)).opaque, 8);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// A request with `n` distinct extFields, in either serialization.
fn many_ext_fields(n: usize, st: SerializeType) -> RemotingCommand {
    let mut cmd = unknown_code_request(9);
    cmd.serialize_type = st;
    let ext = cmd.ext_mut();
    for i in 0..n {
        ext.push_unchecked(&format!("k{i}"), "v");
    }
    cmd
}

/// Work per frame is bounded: a header with 100k distinct extFields (1.3 MB, far under the frame
/// limit) used to take seconds of CPU to decode; it is refused at the 1025th entry, and a header
/// over 1 MiB is refused before it is parsed. Only the sender's connection closes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_are_refused_without_stalling_others() {
    let broker = start_broker().await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut healthy = RawClient::connect(addr);
        for st in [SerializeType::Json, SerializeType::RocketMq] {
            let ok = healthy.call(&many_ext_fields(1024, st));
            assert_eq!(
                (ok.opaque, ok.code),
                (9, 3),
                "{st:?}: 1024 extFields are served"
            );
            for n in [1025, 100_000] {
                let mut bad = RawClient::connect(addr);
                bad.send(&many_ext_fields(n, st));
                assert!(bad.is_closed_by_server(), "{st:?}: {n} extFields");
                assert_eq!(healthy.call(&unknown_code_request(10)).opaque, 10);
            }
        }
        let mut long = unknown_code_request(11);
        long.remark = Some("x".repeat(1024 * 1024 + 1));
        let mut bad = RawClient::connect(addr);
        bad.send(&long);
        assert!(bad.is_closed_by_server(), "a header over 1 MiB");
        assert_eq!(healthy.call(&unknown_code_request(12)).opaque, 12);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_requests_all_answered_by_opaque() {
    let broker = start_broker().await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut c = RawClient::connect(addr);
        for i in 0..200 {
            c.send(&unknown_code_request(i));
        }
        let mut seen: Vec<i32> = (0..200).map(|_| c.recv().unwrap().opaque).collect();
        seen.sort();
        assert_eq!(seen, (0..200).collect::<Vec<_>>());
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
