//! Pipelined 16 KiB sends (the benchmark's async-16k load): several connections each write
//! hundreds of requests without waiting for answers. Every request must be read, stored and
//! acknowledged, and the broker must keep answering other connections meanwhile — requests may
//! never sit unread in the socket while the broker idles.

mod support;

use std::collections::HashSet;
use std::io::Write;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use rmqd::remoting::codec::encode_frame;
use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use support::{create_topic, request as req, RawClient};

const CONNS: usize = 4;
const PER_CONN: usize = 200;
const BODY: usize = 16 * 1024;
const QUEUES: i32 = 8;
/// Generous on a loaded 2-core box; a stall shows as tens of seconds or a read timeout.
const ALL_ACKED_WITHIN: Duration = Duration::from_secs(30);

fn send_cmd(topic: &str, queue: i32, opaque: i32, body: &[u8]) -> RemotingCommand {
    let q = queue.to_string();
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "PG"),
            ("b", topic),
            ("c", "TBW102"),
            ("d", "8"),
            ("e", &q),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", "WAIT\u{1}true\u{2}"),
        ],
    );
    cmd.opaque = opaque;
    cmd.body = bytes::Bytes::copy_from_slice(body).into();
    cmd
}

/// Writes every request of one connection at once from its own thread (the socket applies
/// backpressure), reads the answers on this thread. Returns (queueId, queueOffset) per answer.
fn pipeline(addr: std::net::SocketAddr, conn: usize) -> Vec<(i32, i64)> {
    let mut c = RawClient::connect(addr);
    c.stream.set_read_timeout(Some(ALL_ACKED_WITHIN)).unwrap();
    let mut out = c.stream.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let body = vec![b'x'; BODY];
        let mut buf = BytesMut::new();
        for i in 0..PER_CONN {
            let opaque = (conn * PER_CONN + i) as i32;
            encode_frame(
                &send_cmd("PIPE", i as i32 % QUEUES, opaque, &body),
                &mut buf,
            );
        }
        out.write_all(&buf).unwrap();
    });
    let mut acks = Vec::with_capacity(PER_CONN);
    let mut seen = HashSet::new();
    for _ in 0..PER_CONN {
        let r = c
            .recv()
            .expect("connection closed before every send was answered");
        assert_eq!(r.code, ResponseCode::SUCCESS.code(), "{:?}", r.remark);
        assert!(seen.insert(r.opaque), "opaque {} answered twice", r.opaque);
        let q = r.ext("queueId").unwrap().parse().unwrap();
        let o = r.ext("queueOffset").unwrap().parse().unwrap();
        acks.push((q, o));
    }
    writer.join().unwrap();
    acks
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_16k_sends_are_all_acknowledged_while_other_requests_are_served() {
    let dir = tempfile::tempdir().unwrap();
    // 4 MiB commit-log files: the load rolls through several files.
    let broker = support::start_broker(dir.path(), &[("mappedFileSizeCommitLog", "4194304")]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut admin = RawClient::connect(addr);
        create_topic(&mut admin, "PIPE", QUEUES);
        let started = Instant::now();
        let senders: Vec<_> = (0..CONNS)
            .map(|conn| std::thread::spawn(move || pipeline(addr, conn)))
            .collect();
        // Another connection keeps asking while the pipelines are in flight: each answer must
        // come back promptly (the read timeout of RawClient is 5 s).
        let mut probes = 0;
        while !senders.iter().all(|s| s.is_finished()) && probes < 200 {
            let asked = Instant::now();
            let r = admin.call(&req(
                RequestCode::GET_MAX_OFFSET,
                &[("topic", "PIPE"), ("queueId", "0")],
            ));
            assert_eq!(r.code, 0);
            assert!(asked.elapsed() < Duration::from_secs(5));
            probes += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut all: Vec<(i32, i64)> = senders
            .into_iter()
            .flat_map(|s| s.join().unwrap())
            .collect();
        let took = started.elapsed();
        assert!(took < ALL_ACKED_WITHIN, "acknowledged after {took:?}");
        // Every queue got consecutive offsets 0..n with no gap or duplicate.
        all.sort();
        for q in 0..QUEUES {
            let offsets: Vec<i64> = all.iter().filter(|a| a.0 == q).map(|a| a.1).collect();
            let expected: Vec<i64> = (0..offsets.len() as i64).collect();
            assert_eq!(offsets, expected, "queue {q}");
        }
        assert_eq!(all.len(), CONNS * PER_CONN);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}
