//! The process-wide receive budget (`rmqdReceiveBufferBudget`) over real TCP against the `rmqd`
//! binary: connections that announce large frames and trickle them hold at most the budget
//! (before it, each held what it had received: 100 × 512 KiB here); a frame that does not fit
//! waits with its connection unread while small requests are answered at once; when the holders
//! finish or close, the waiting frames go through; a frame larger than the whole budget closes
//! its connection with a log line; a silent holder is closed by `serverChannelMaxIdleTimeSeconds`
//! read from broker.conf, which frees its share.

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use rmqd::remoting::codec::encode_frame;
use rmqd::remoting::{RemotingCommand, ResponseCode};
use support::process::RmqdProcess;
use support::RawClient;

const MIB: usize = 1024 * 1024;

/// A whole request frame (an unknown code, answered REQUEST_CODE_NOT_SUPPORTED) of exactly
/// `total` bytes, length field included.
fn frame_of(total: usize, opaque: i32) -> Vec<u8> {
    let mut cmd = RemotingCommand::request(9999);
    cmd.opaque = opaque;
    let mut head = BytesMut::new();
    encode_frame(&cmd, &mut head);
    cmd.body = bytes::Bytes::from(vec![b'x'; total - head.len()]).into();
    let mut out = BytesMut::new();
    encode_frame(&cmd, &mut out);
    assert_eq!(out.len(), total);
    out.to_vec()
}

/// Connects and writes `prefix` without blocking on a full socket; returns how much went out.
fn announce(addr: SocketAddr, prefix: &[u8]) -> (TcpStream, usize) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_nonblocking(true).unwrap();
    let mut sent = 0;
    while sent < prefix.len() {
        match s.write(&prefix[sent..]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("write: {e}"),
        }
    }
    s.set_nonblocking(false).unwrap();
    (s, sent)
}

/// Writes the rest of `frame` and returns the broker's answer code (blocking, 30 s at most).
fn finish(mut s: TcpStream, frame: &[u8], sent: usize) -> Option<i32> {
    s.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(&frame[sent..]).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    RawClient::from_stream(s).recv().map(|r| r.code)
}

/// Round trips of a small request, in microseconds, sorted.
fn small_round_trips(addr: SocketAddr, n: usize) -> Vec<u128> {
    let mut c = RawClient::connect(addr);
    let mut rtts: Vec<u128> = (0..n)
        .map(|i| {
            let mut req = RemotingCommand::request(9999);
            req.opaque = i as i32;
            let t = Instant::now();
            let resp = c.call(&req);
            assert_eq!(resp.code, ResponseCode::REQUEST_CODE_NOT_SUPPORTED.code());
            t.elapsed().as_micros()
        })
        .collect();
    rtts.sort_unstable();
    rtts
}

#[test]
fn large_frames_wait_for_the_receive_budget_and_memory_stays_near_it() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 4 * MIB;
    let broker = RmqdProcess::start(
        dir.path(),
        &dir.path().join("store"),
        &format!("mappedFileSizeCommitLog=1048576\nrmqdReceiveBufferBudget={budget}\nserverChannelMaxIdleTimeSeconds=60"),
    );
    let addr = broker.addr;
    small_round_trips(addr, 20);
    std::thread::sleep(Duration::from_millis(300));
    let before = broker.status_kib("RssAnon");

    // four holders announce 1 MiB each (the whole budget) and send 1 KiB
    let hog_frames: Vec<Vec<u8>> = (0..4).map(|i| frame_of(MIB, i)).collect();
    let hogs: Vec<(TcpStream, usize)> = hog_frames
        .iter()
        .map(|f| announce(addr, &f[..1024]))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // a hundred more announce 1 MiB and send half of it: they wait, unread
    let waiters = 100;
    let frame = frame_of(MIB, 7);
    let waiting: Vec<(TcpStream, usize)> = (0..waiters)
        .map(|_| announce(addr, &frame[..MIB / 2]))
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    let during = broker.status_kib("RssAnon");
    let grown_kib = during.saturating_sub(before);
    let rtts = small_round_trips(addr, 50);
    let ns_rtts = small_round_trips(broker.namesrv, 20);
    println!(
        "RssAnon +{grown_kib} KiB with {waiters} x 512 KiB trickled at a {} KiB budget; small \
         request p50 {} us max {} us; NameServer p50 {} us max {} us",
        budget / 1024,
        rtts[rtts.len() / 2],
        rtts[rtts.len() - 1],
        ns_rtts[ns_rtts.len() / 2],
        ns_rtts[ns_rtts.len() - 1]
    );
    // the budget plus what a waiting connection holds on its own (8 KiB read buffer, its task)
    let bound_kib = (budget / 1024) as u64 + waiters as u64 * 40;
    assert!(
        grown_kib < bound_kib,
        "RssAnon grew {grown_kib} KiB (bound {bound_kib} KiB)"
    );
    assert!(
        rtts[rtts.len() - 1] < 1_000_000,
        "small requests waited: {rtts:?}"
    );
    assert!(
        ns_rtts[ns_rtts.len() - 1] < 1_000_000,
        "NameServer waited: {ns_rtts:?}"
    );

    // a frame larger than the whole budget is refused: its connection is closed, with a log line
    let (mut over, _) = announce(addr, &((8 * MIB - 4) as u32).to_be_bytes());
    over.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert!(
        matches!(over.read(&mut [0u8; 16]), Ok(0) | Err(_)),
        "not closed"
    );
    assert!(
        broker.log_text().contains("rmqdReceiveBufferBudget"),
        "no log line names the budget"
    );

    // two holders finish their frames, two close: every waiting frame then goes through
    let t = Instant::now();
    let mut threads = Vec::new();
    for (i, (s, sent)) in hogs.into_iter().enumerate() {
        if i < 2 {
            let f = hog_frames[i].clone();
            threads.push(std::thread::spawn(move || finish(s, &f, sent)));
        }
    }
    for (s, sent) in waiting {
        let f = frame.clone();
        threads.push(std::thread::spawn(move || finish(s, &f, sent)));
    }
    let answered = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .filter(|code| *code == Some(ResponseCode::REQUEST_CODE_NOT_SUPPORTED.code()))
        .count();
    println!("{answered} waiting frames answered in {:?}", t.elapsed());
    assert_eq!(answered, 2 + waiters);
}

#[test]
fn a_silent_holder_is_closed_after_the_idle_time_and_frees_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let broker = RmqdProcess::start(
        dir.path(),
        &dir.path().join("store"),
        &format!(
            "mappedFileSizeCommitLog=1048576\nrmqdReceiveBufferBudget={}\nserverChannelMaxIdleTimeSeconds=2",
            2 * MIB
        ),
    );
    let addr = broker.addr;
    let t0 = Instant::now();
    let hog = frame_of(2 * MIB, 1);
    let (mut hog, _) = announce(addr, &hog[..1024]);
    std::thread::sleep(Duration::from_millis(700));
    let frame = frame_of(MIB, 2);
    let (s, sent) = announce(addr, &frame[..4096]);
    let waiter = std::thread::spawn(move || (finish(s, &frame, sent), t0.elapsed()));
    hog.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let closed = matches!(hog.read(&mut [0u8; 16]), Ok(0) | Err(_));
    let hog_closed_at = t0.elapsed();
    let (code, answered_at) = waiter.join().unwrap();
    println!("holder closed at {hog_closed_at:?}, waiting frame answered at {answered_at:?}");
    assert!(closed && hog_closed_at >= Duration::from_millis(1900));
    assert_eq!(code, Some(ResponseCode::REQUEST_CODE_NOT_SUPPORTED.code()));
    assert!(
        answered_at >= Duration::from_millis(1900),
        "the waiting frame went through while the budget was held"
    );
}
