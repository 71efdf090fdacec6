//! Memory a connection costs the broker process, measured as its resident set over real TCP: an
//! idle connection costs a few kilobytes (it was ~93 KiB: a 64 KiB read buffer and a 16 KiB
//! write batch allocated up front), and a connection that announces a 16 MiB frame and sends
//! 1 KiB costs what it sent plus the read-ahead (it was ~1.8 MiB: the announced length was
//! reserved). The listen backlog is Java's `serverSocketBacklog` (1024; it was 128).

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Broker(Child);

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(dir: &std::path::Path) -> (Broker, SocketAddr) {
    let port = free_port();
    let ns = free_port();
    let conf = dir.join("broker.conf");
    let store = dir.join("store");
    std::fs::write(
        &conf,
        format!(
            "brokerName=mem\nlistenPort={port}\nbindAddress=127.0.0.1\nbrokerIP1=127.0.0.1\n\
             rmqdFastChannelEnable=false\nrmqdEmbeddedNamesrvListenPort={ns}\n\
             storePathRootDir={}\nmappedFileSizeCommitLog=1048576\n",
            store.display()
        ),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_rmqd"))
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "rmqd did not listen on {addr}");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Broker(child), addr)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// Opens `n` connections, each given `first` to send, and returns the resident growth per
/// connection in KiB once the broker has taken them in.
fn cost_per_connection(
    pid: u32,
    addr: SocketAddr,
    n: usize,
    first: &[u8],
) -> (f64, Vec<TcpStream>) {
    std::thread::sleep(Duration::from_millis(300));
    let before = rss_kib(pid);
    let conns: Vec<TcpStream> = (0..n)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(first).unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let after = rss_kib(pid);
    (after.saturating_sub(before) as f64 / n as f64, conns)
}

#[test]
fn connections_cost_kilobytes_and_the_backlog_is_javas() {
    let dir = tempfile::tempdir().unwrap();
    let (broker, addr) = start(dir.path());
    let pid = broker.0.id();

    let (idle, _idle_conns) = cost_per_connection(pid, addr, 500, b"");
    assert!(idle < 16.0, "an idle connection costs {idle:.1} KiB");

    // one answered request, then quiet: the read buffer it filled is given back (it was kept:
    // 8 KiB more per connection)
    let header =
        br#"{"code":999999,"flag":0,"language":"JAVA","opaque":1,"version":453,"extFields":{}}"#;
    let mut request = ((4 + header.len()) as u32).to_be_bytes().to_vec();
    request.extend_from_slice(&(header.len() as u32).to_be_bytes());
    request.extend_from_slice(header);
    let (quiet, _quiet_conns) = cost_per_connection(pid, addr, 500, &request);
    assert!(
        quiet < 16.0,
        "a connection quiet after one request costs {quiet:.1} KiB"
    );

    let mut announce = ((16 * 1024 * 1024 - 8) as u32).to_be_bytes().to_vec();
    announce.extend_from_slice(&[b'x'; 1024]);
    let (large, _large_conns) = cost_per_connection(pid, addr, 100, &announce);
    assert!(
        large < 256.0,
        "a connection that announced 16 MiB and sent 1 KiB costs {large:.1} KiB"
    );

    let ss = Command::new("ss")
        .args(["-ltnH", &format!("sport = :{}", addr.port())])
        .output()
        .expect("ss (iproute2)");
    let line = String::from_utf8_lossy(&ss.stdout).to_string();
    // State Recv-Q Send-Q ...: for a listening socket Send-Q is the backlog
    let backlog: u32 = line
        .split_whitespace()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // the kernel caps a backlog at net.core.somaxconn
    let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(4096);
    assert_eq!(backlog, 1024.min(somaxconn), "listen backlog ({line:?})");
    println!(
        "idle {idle:.1} KiB, quiet after a request {quiet:.1} KiB, announced-16MiB {large:.1} \
         KiB per connection, backlog {backlog}"
    );
}
