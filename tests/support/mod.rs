//! Helpers shared by the integration tests: a blocking raw Remoting client over real TCP.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::BytesMut;
use rmqd::remoting::codec::encode_frame;
use rmqd::remoting::{FrameCodec, RemotingCommand};

pub mod process;

/// One whole frame from a file under `tests/golden/` (`rel`), decoded; nothing may follow it.
pub fn golden_frame(rel: &str) -> RemotingCommand {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = BytesMut::from(&bytes[..]);
    let cmd = FrameCodec::default()
        .decode_frame(&mut buf)
        .unwrap()
        .expect("a whole frame");
    assert!(buf.is_empty(), "{rel}: trailing bytes after the frame");
    cmd
}

pub struct RawClient {
    pub stream: TcpStream,
    buf: BytesMut,
}

impl RawClient {
    pub fn connect(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        Self {
            stream,
            buf: BytesMut::new(),
        }
    }

    /// A client over a stream already connected (its timeouts as they are).
    pub fn from_stream(stream: TcpStream) -> Self {
        Self {
            stream,
            buf: BytesMut::new(),
        }
    }

    pub fn send(&mut self, cmd: &RemotingCommand) {
        let mut out = BytesMut::new();
        encode_frame(cmd, &mut out);
        self.stream.write_all(&out).unwrap();
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Reads the next frame; `None` when the server closed the connection.
    pub fn recv(&mut self) -> Option<RemotingCommand> {
        let codec = FrameCodec::default();
        loop {
            if let Some(cmd) = codec
                .decode_frame(&mut self.buf)
                .expect("server sent a bad frame")
            {
                return Some(cmd);
            }
            let mut chunk = [0u8; 8192];
            match self.stream.read(&mut chunk) {
                Ok(0) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
                Err(e) => panic!("read failed: {e}"),
            }
        }
    }

    /// Sends `cmd` and returns the answer.
    pub fn call(&mut self, cmd: &RemotingCommand) -> RemotingCommand {
        self.send(cmd);
        self.recv().expect("connection closed before the answer")
    }

    /// Sends `cmd` and returns the answer; `None` when the connection breaks, closes or times out
    /// first (a broker that was killed), instead of panicking.
    pub fn try_call(&mut self, cmd: &RemotingCommand) -> Option<RemotingCommand> {
        let mut out = BytesMut::new();
        encode_frame(cmd, &mut out);
        self.stream.write_all(&out).ok()?;
        let codec = FrameCodec::default();
        loop {
            if let Some(cmd) = codec.decode_frame(&mut self.buf).ok()? {
                return Some(cmd);
            }
            let mut chunk = [0u8; 8192];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Sends `cmd` and returns its response, passing over the requests the broker may send first
    /// (NOTIFY_CONSUMER_IDS_CHANGED after a heartbeat, transaction check-backs).
    pub fn call_past_requests(&mut self, cmd: &RemotingCommand) -> RemotingCommand {
        self.send(cmd);
        loop {
            let f = self.recv().expect("connection closed before the answer");
            if f.is_response() {
                return f;
            }
        }
    }

    /// True when the server closes the connection within the read timeout.
    pub fn is_closed_by_server(&mut self) -> bool {
        let mut chunk = [0u8; 64];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
    }
}

/// A broker on a free port with a temporary store: small files, `extra` store keys applied.
pub async fn start_broker(
    dir: &std::path::Path,
    extra: &[(&str, &str)],
) -> rmqd::broker::BrokerController {
    start_broker_with(dir, &[], extra).await
}

/// [`start_broker`] with broker keys (`broker.conf` names) applied as well.
pub async fn start_broker_with(
    dir: &std::path::Path,
    broker_keys: &[(&str, &str)],
    extra: &[(&str, &str)],
) -> rmqd::broker::BrokerController {
    let mut config = rmqd::broker::BrokerConfig {
        listen_port: 0,
        bind_address: "127.0.0.1".into(),
        broker_ip1: "127.0.0.1".into(),
        broker_name: "broker-t".into(),
        ..Default::default()
    };
    for (k, v) in broker_keys {
        assert_eq!(config.set(k, v), Ok(true), "broker key {k}");
    }
    let mut store = rmqd::store::config::MessageStoreConfig::with_root(dir);
    store.set("mappedFileSizeCommitLog", "1048576").unwrap();
    store.set("mappedFileSizeConsumeQueue", "6000").unwrap();
    for (k, v) in extra {
        store.set(k, v).unwrap();
    }
    rmqd::broker::BrokerController::start(config, store)
        .await
        .unwrap()
}

/// A request with the given extFields.
pub fn request(code: rmqd::remoting::RequestCode, pairs: &[(&str, &str)]) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(code.code());
    for (k, v) in pairs {
        cmd.ext_mut().insert(*k, *v);
    }
    cmd
}

/// UPDATE_AND_CREATE_TOPIC with `queues` read and write queues, perm 6; asserts success.
pub fn create_topic(c: &mut RawClient, topic: &str, queues: i32) {
    let q = queues.to_string();
    let r = c.call(&request(
        rmqd::remoting::RequestCode::UPDATE_AND_CREATE_TOPIC,
        &[
            ("topic", topic),
            ("defaultTopic", "TBW102"),
            ("readQueueNums", &q),
            ("writeQueueNums", &q),
            ("perm", "6"),
            ("topicFilterType", "SINGLE_TAG"),
            ("order", "false"),
        ],
    ));
    assert_eq!(r.code, 0, "create topic {topic}: {:?}", r.remark);
}

/// PULL_MESSAGE of up to 32 records of `topic`/`queue` from `offset` for group `CG`, TAG `*`,
/// no suspension.
pub fn pull_request(topic: &str, queue: i32, offset: i64) -> RemotingCommand {
    let (q, o) = (queue.to_string(), offset.to_string());
    request(
        rmqd::remoting::RequestCode::PULL_MESSAGE,
        &[
            ("consumerGroup", "CG"),
            ("topic", topic),
            ("queueId", &q),
            ("queueOffset", &o),
            ("maxMsgNums", "32"),
            ("sysFlag", "4"),
            ("commitOffset", "0"),
            ("suspendTimeoutMillis", "0"),
            ("subscription", "*"),
            ("subVersion", "0"),
            ("expressionType", "TAG"),
        ],
    )
}

/// Sends PULL_MESSAGE `cmd` and returns its answer, sending it again while the answer is
/// PULL_NOT_FOUND for up to 5 s: a put is acknowledged before its consume-queue entry is
/// dispatched (as Java's reput does it), so a pull right after the sends may find nothing yet.
pub fn pull_dispatched(c: &mut RawClient, cmd: &RemotingCommand) -> RemotingCommand {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let r = c.call_past_requests(cmd);
        if r.code != rmqd::remoting::ResponseCode::PULL_NOT_FOUND.code()
            || std::time::Instant::now() > deadline
        {
            return r;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// One stored record of a pull/query body (store-format.md §2.1).
#[derive(Debug, Clone)]
pub struct Record {
    pub queue_offset: i64,
    pub phys_offset: i64,
    pub queue_id: i32,
    pub sys_flag: i32,
    pub prepared_transaction_offset: i64,
    pub reconsume_times: i32,
    pub body: Vec<u8>,
    pub topic: String,
    pub properties: String,
}

/// Splits a body of back-to-back records.
pub fn records(body: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut pos = 0;
    let i32_at = |p: usize| i32::from_be_bytes(body[p..p + 4].try_into().unwrap());
    let i64_at = |p: usize| i64::from_be_bytes(body[p..p + 8].try_into().unwrap());
    while pos < body.len() {
        let total = i32_at(pos) as usize;
        let sys_flag = i32_at(pos + 36);
        let born = if sys_flag & 0x10 != 0 { 20 } else { 8 };
        let store = if sys_flag & 0x20 != 0 { 20 } else { 8 };
        let mut p = pos + 48 + born + 8 + store;
        let reconsume_times = i32_at(p);
        let prepared_transaction_offset = i64_at(p + 4);
        p += 4 + 8;
        let blen = i32_at(p) as usize;
        let rec_body = body[p + 4..p + 4 + blen].to_vec();
        p += 4 + blen;
        let tlen = body[p] as usize;
        let topic = String::from_utf8_lossy(&body[p + 1..p + 1 + tlen]).into_owned();
        p += 1 + tlen;
        let plen = u16::from_be_bytes([body[p], body[p + 1]]) as usize;
        let properties = String::from_utf8_lossy(&body[p + 2..p + 2 + plen]).into_owned();
        out.push(Record {
            queue_offset: i64_at(pos + 20),
            phys_offset: i64_at(pos + 28),
            queue_id: i32_at(pos + 12),
            sys_flag,
            prepared_transaction_offset,
            reconsume_times,
            body: rec_body,
            topic,
            properties,
        });
        pos += total;
    }
    out
}
