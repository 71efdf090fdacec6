//! Long polling over real TCP: many pulls held on one connection (as the Java client holds them)
//! are each woken by the arrival on their own queue, long before their suspend timeout; a tag
//! filter that skips a message does not leave the pull waiting for the timeout; shutdown answers
//! held pulls instead of waiting out their suspend time.

mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rmqd::remoting::{RemotingCommand, RequestCode, ResponseCode};
use support::{create_topic, request as req, RawClient};

/// Far longer than any answer may take: a pull answered after this was not woken.
const SUSPEND_MS: i64 = 20_000;
/// Generous bound for "woken by the arrival" on a loaded 2-core box.
const WOKEN_WITHIN: Duration = Duration::from_secs(8);

fn send_cmd(topic: &str, queue: i32, body: &[u8], tag: &str) -> RemotingCommand {
    let q = queue.to_string();
    let props = format!("TAGS\u{1}{tag}\u{2}");
    let mut cmd = req(
        RequestCode::SEND_MESSAGE_V2,
        &[
            ("a", "PG"),
            ("b", topic),
            ("c", "TBW102"),
            ("d", "4"),
            ("e", &q),
            ("f", "0"),
            ("g", "1700000000000"),
            ("h", "0"),
            ("i", &props),
        ],
    );
    cmd.body = bytes::Bytes::copy_from_slice(body).into();
    cmd
}

fn pull_cmd(topic: &str, queue: i32, offset: i64, sub: &str, opaque: i32) -> RemotingCommand {
    let (q, o, s) = (
        queue.to_string(),
        offset.to_string(),
        SUSPEND_MS.to_string(),
    );
    let mut cmd = req(
        RequestCode::PULL_MESSAGE,
        &[
            ("consumerGroup", "CG"),
            ("topic", topic),
            ("queueId", &q),
            ("queueOffset", &o),
            ("maxMsgNums", "32"),
            ("sysFlag", "6"), // FLAG_SUSPEND | FLAG_SUBSCRIPTION
            ("commitOffset", "0"),
            ("suspendTimeoutMillis", &s),
            ("subscription", sub),
            ("subVersion", "0"),
            ("expressionType", "TAG"),
        ],
    );
    cmd.opaque = opaque;
    cmd
}

/// A consumer connection that keeps one held pull per (topic, queue), like the Java client.
struct Poller {
    conn: RawClient,
    /// opaque -> (topic, queue, offset asked, when sent)
    held: HashMap<i32, (String, i32, i64, Instant)>,
    next_opaque: i32,
    sub: String,
}

impl Poller {
    fn new(addr: std::net::SocketAddr, sub: &str) -> Self {
        let conn = RawClient::connect(addr);
        conn.stream
            .set_read_timeout(Some(Duration::from_millis(SUSPEND_MS as u64 + 10_000)))
            .unwrap();
        Self {
            conn,
            held: HashMap::new(),
            next_opaque: 1000,
            sub: sub.to_string(),
        }
    }

    fn hold(&mut self, topic: &str, queue: i32, offset: i64) {
        self.next_opaque += 1;
        let cmd = pull_cmd(topic, queue, offset, &self.sub, self.next_opaque);
        self.conn.send(&cmd);
        self.held.insert(
            self.next_opaque,
            (topic.to_string(), queue, offset, Instant::now()),
        );
    }

    /// The next answer: (topic, queue, offset asked, held for, response).
    fn answer(&mut self) -> (String, i32, i64, Duration, RemotingCommand) {
        let r = self.conn.recv().expect("pull connection closed");
        let (t, q, o, at) = self
            .held
            .remove(&r.opaque)
            .unwrap_or_else(|| panic!("answer with unknown opaque {}", r.opaque));
        (t, q, o, at.elapsed(), r)
    }
}

/// 2 topics x 8 queues, all 16 pulls held on one connection. Each round sends one message to
/// every queue (in an order unrelated to the hold order, sometimes right after the pulls were
/// written so arrivals race the registration of the hold) and every hold must answer with its
/// message, woken by the arrival rather than by the 20 s suspend timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_held_pull_is_woken_by_the_arrival_on_its_queue() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut producer = RawClient::connect(addr);
        let topics = ["LPA", "LPB"];
        for t in topics {
            create_topic(&mut producer, t, 8);
        }
        let mut poller = Poller::new(addr, "*");
        let mut offsets: HashMap<(String, i32), i64> = HashMap::new();
        for t in topics {
            for q in 0..8 {
                offsets.insert((t.to_string(), q), 0);
                poller.hold(t, q, 0);
            }
        }
        for round in 0..12u32 {
            // Let the holds register in some rounds; race them in the others.
            if round % 3 == 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            for q in (0..8).rev() {
                for t in topics {
                    let body = format!("{t}-{q}-{round}");
                    let r = producer.call(&send_cmd(t, q, body.as_bytes(), "X"));
                    assert_eq!(r.code, 0, "send: {:?}", r.remark);
                }
            }
            for _ in 0..16 {
                let (t, q, asked, held_for, r) = poller.answer();
                assert!(
                    held_for < WOKEN_WITHIN,
                    "round {round}: pull {t}/{q}@{asked} answered after {held_for:?} \
                     (code {}): not woken by the arrival",
                    r.code
                );
                assert_eq!(
                    r.code,
                    ResponseCode::SUCCESS.code(),
                    "{t}/{q}: {:?}",
                    r.remark
                );
                let recs = support::records(&r.body.to_bytes());
                assert_eq!(recs.len(), 1, "{t}/{q}@{asked}");
                assert_eq!(recs[0].body, format!("{t}-{q}-{round}").as_bytes());
                assert_eq!(recs[0].queue_offset, asked);
                let next: i64 = r.ext("nextBeginOffset").unwrap().parse().unwrap();
                assert_eq!(next, asked + 1);
                offsets.insert((t.clone(), q), next);
                poller.hold(&t, q, next);
            }
        }
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// A held pull subscribed to tag A: a C message arriving first must not strand it (the client
/// follows nextBeginOffset), and the A message sent later reaches it well before the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tag_filtered_hold_receives_the_matching_message_after_a_skipped_one() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    tokio::task::spawn_blocking(move || {
        let mut producer = RawClient::connect(addr);
        create_topic(&mut producer, "LPT", 4);
        let mut poller = Poller::new(addr, "A || B");
        for q in 0..4 {
            poller.hold("LPT", q, 0);
        }
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        for q in 0..4 {
            let r = producer.call(&send_cmd("LPT", q, b"skip-me", "C"));
            assert_eq!(r.code, 0);
        }
        std::thread::sleep(Duration::from_millis(300));
        for q in 0..4 {
            let body = format!("want-{q}");
            let r = producer.call(&send_cmd("LPT", q, body.as_bytes(), "A"));
            assert_eq!(r.code, 0);
        }
        let mut got = 0;
        while got < 4 {
            let (t, q, asked, held_for, r) = poller.answer();
            assert!(
                held_for < WOKEN_WITHIN,
                "pull {t}/{q}@{asked} answered after {held_for:?} (code {}): not woken",
                r.code
            );
            let next: i64 = r.ext("nextBeginOffset").unwrap().parse().unwrap();
            if r.code == ResponseCode::SUCCESS.code() {
                let recs = support::records(&r.body.to_bytes());
                assert!(recs.iter().all(|m| m.body != b"skip-me"), "tag C delivered");
                if recs
                    .iter()
                    .any(|m| m.body == format!("want-{q}").as_bytes())
                {
                    got += 1;
                    continue;
                }
            }
            poller.hold(&t, q, next);
        }
        assert!(started.elapsed() < WOKEN_WITHIN * 2);
    })
    .await
    .unwrap();
    broker.shutdown().await;
}

/// Shutdown with pulls held for 20 s: they are answered (PULL_NOT_FOUND) at once and shutdown
/// finishes well inside the server's 10 s grace period, which it used to spend waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_held_pulls_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let broker = support::start_broker(dir.path(), &[]).await;
    let addr = broker.local_addr();
    let poller = tokio::task::spawn_blocking(move || {
        let mut producer = RawClient::connect(addr);
        create_topic(&mut producer, "LPS", 4);
        let mut poller = Poller::new(addr, "*");
        for q in 0..4 {
            poller.hold("LPS", q, 0);
        }
        // Let the holds register.
        std::thread::sleep(Duration::from_millis(300));
        poller
    })
    .await
    .unwrap();
    let started = Instant::now();
    broker.shutdown().await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    tokio::task::spawn_blocking(move || {
        let mut poller = poller;
        for _ in 0..4 {
            let (t, q, _, held_for, r) = poller.answer();
            assert_eq!(r.code, ResponseCode::PULL_NOT_FOUND.code(), "{t}/{q}");
            assert!(held_for < WOKEN_WITHIN, "{t}/{q} held {held_for:?}");
        }
    })
    .await
    .unwrap();
}
