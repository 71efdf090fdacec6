//! A connection flood against the `rmqd` binary over real TCP: idle connections, connections
//! trickling a frame a byte at a time and connections that announce 16 MiB frames and send 1 MiB
//! of them, all at once, while a well-behaved client measures its round trips to the broker and to
//! the embedded NameServer. Both keep answering, and the process's anonymous memory stays within
//! the receive budget plus a few KiB per connection (before the budget: 1 MiB per large frame).
//! Quick by default; `RMQD_FLOOD=big` floods with ten times as many connections (sized to
//! `ulimit -n`).

mod support;

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmqd::remoting::{RemotingCommand, RequestCode};
use support::process::{nofile_limit, RmqdProcess};
use support::RawClient;

const MIB: usize = 1024 * 1024;

/// Round trips (µs) of one well-behaved client, each tagged with whether the flood was on.
fn good_client(
    addr: SocketAddr,
    request: RemotingCommand,
    flood: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> Vec<(bool, u128)> {
    let mut c = RawClient::connect(addr);
    let mut out = Vec::new();
    let mut opaque = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut req = request.clone();
        opaque += 1;
        req.opaque = opaque;
        let during = flood.load(Ordering::Relaxed);
        let t = Instant::now();
        let resp = c.call(&req);
        assert_eq!(resp.opaque, opaque);
        out.push((during, t.elapsed().as_micros()));
        std::thread::sleep(Duration::from_millis(2));
    }
    out
}

fn percentiles(rtts: &[(bool, u128)], during: bool) -> (u128, u128, u128, usize) {
    let mut v: Vec<u128> = rtts
        .iter()
        .filter(|(d, _)| *d == during)
        .map(|(_, r)| *r)
        .collect();
    v.sort_unstable();
    assert!(!v.is_empty(), "no round trips measured (flood {during})");
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.99), v[v.len() - 1], v.len())
}

/// Writes what the socket takes of `bytes` without blocking.
fn write_some(s: &mut TcpStream, bytes: &[u8]) {
    let mut sent = 0;
    while sent < bytes.len() {
        match s.write(&bytes[sent..]) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) => panic!("write: {e}"),
        }
    }
}

#[test]
fn broker_and_namesrv_keep_answering_through_a_connection_flood() {
    let big = std::env::var("RMQD_FLOOD").as_deref() == Ok("big");
    let scale = if big { 10 } else { 1 };
    // each connection costs one descriptor here and one in the broker (both under this limit)
    let limit = nofile_limit();
    let wanted = 460 * scale;
    let room = limit.saturating_sub(200).min(wanted);
    let (idle, trickle, large) = (room * 30 / 46, room * 10 / 46, room * 6 / 46);
    let budget = 32 * MIB;
    let dir = tempfile::tempdir().unwrap();
    let broker = RmqdProcess::start(
        dir.path(),
        &dir.path().join("store"),
        &format!(
            "mappedFileSizeCommitLog=1048576\nrmqdReceiveBufferBudget={budget}\nrmqdMaxConnections={}",
            room + 100
        ),
    );
    let (flood, stop) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let mut route = RemotingCommand::request(RequestCode::GET_ROUTEINFO_BY_TOPIC.code());
    route.ext_mut().insert("topic", "TBW102");
    let clients: Vec<_> = [
        (broker.addr, RemotingCommand::request(9999)),
        (broker.namesrv, route),
    ]
    .into_iter()
    .map(|(addr, req)| {
        let (f, s) = (flood.clone(), stop.clone());
        std::thread::spawn(move || good_client(addr, req, f, s))
    })
    .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let before = broker.status_kib("RssAnon");

    flood.store(true, Ordering::Relaxed);
    let t = Instant::now();
    let idle_conns: Vec<TcpStream> = (0..idle)
        .map(|_| TcpStream::connect(broker.addr).unwrap())
        .collect();
    let small_frame = {
        let mut b = bytes::BytesMut::new();
        rmqd::remoting::codec::encode_frame(&RemotingCommand::request(9999), &mut b);
        b.to_vec()
    };
    let mut trickling: Vec<TcpStream> = (0..trickle)
        .map(|i| {
            let target = if i % 2 == 0 {
                broker.addr
            } else {
                broker.namesrv
            };
            let s = TcpStream::connect(target).unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect();
    let mut announce = ((16 * MIB - 4) as u32).to_be_bytes().to_vec();
    announce.extend_from_slice(&(20u32).to_be_bytes());
    announce.extend_from_slice(&vec![b' '; MIB]);
    let large_conns: Vec<TcpStream> = (0..large)
        .map(|i| {
            let target = if i % 4 == 3 {
                broker.namesrv
            } else {
                broker.addr
            };
            let mut s = TcpStream::connect(target).unwrap();
            s.set_nonblocking(true).unwrap();
            write_some(&mut s, &announce);
            s
        })
        .collect();
    let opened = t.elapsed();
    // trickle one byte per connection every 100 ms for 2 s: no frame completes
    for step in 0..20 {
        for s in &mut trickling {
            let _ = s.write(&small_frame[step % 4..step % 4 + 1]);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let during = broker.status_kib("RssAnon");
    flood.store(false, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    let results: Vec<Vec<(bool, u128)>> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    drop((idle_conns, trickling, large_conns));

    let grown = during.saturating_sub(before);
    println!(
        "flood: {idle} idle + {trickle} trickling + {large} x 16 MiB announced (1 MiB sent) \
         connections (ulimit -n {limit}), opened in {opened:?}; RssAnon +{grown} KiB at a {} KiB \
         budget",
        budget / 1024
    );
    for (name, rtts) in ["broker", "namesrv"].iter().zip(&results) {
        let (q50, q99, qmax, qn) = percentiles(rtts, false);
        let (f50, f99, fmax, fn_) = percentiles(rtts, true);
        println!(
            "{name}: quiet p50 {q50} us p99 {q99} us max {qmax} us ({qn}); flood p50 {f50} us \
             p99 {f99} us max {fmax} us ({fn_})"
        );
        assert!(
            fmax < 2_000_000,
            "{name} took {fmax} us to answer during the flood"
        );
    }
    let conns = (idle + trickle + large) as u64;
    let bound = (budget / 1024) as u64 + conns * 40;
    assert!(
        grown < bound,
        "RssAnon grew {grown} KiB (bound {bound} KiB)"
    );
}
