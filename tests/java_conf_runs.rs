//! Issue 5, item 6: rmqd runs with each master `broker.conf` the Java distribution ships, unchanged
//! (read from `../shared/fixtures/java-conf/`, else the copy in `tests/fixtures/java-conf/`), the way
//! `mqbroker -c <file> -n <namesrv>` runs it: the defaults the file leaves out are Java's (port
//! 10911, store under `$HOME/store`), a message sent is stored, and SIGTERM stops it cleanly.

mod support;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmqd::remoting::RequestCode;
use support::{request, RawClient};

const MASTER_FILES: [&str; 4] = [
    "java-conf/broker.conf",
    "java-conf/2m-noslave/broker-a.properties",
    "java-conf/2m-2s-async/broker-a.properties",
    "java-conf/2m-2s-sync/broker-a.properties",
];

fn fixture(rel: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/fixtures").join(rel);
    if shared.exists() {
        shared
    } else {
        root.join("tests/fixtures").join(rel)
    }
}

struct Broker(Child);

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_listening(addr: SocketAddr, child: &mut Child, what: &str) {
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what}: rmqd exited with {status} before listening on {addr}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what}: rmqd not listening on {addr} within 30 s");
}

fn sigterm_and_wait(child: &mut Child, what: &str) -> std::process::ExitStatus {
    let pid = child.id().to_string();
    Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < end,
            "{what}: rmqd still running 20 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn rmqd_runs_with_each_java_master_conf() {
    let port = 10911;
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    // a NameServer address nothing answers on: registration fails and is retried, as with Java
    let dead_ns = TcpListener::bind("127.0.0.1:0").unwrap();
    let ns = dead_ns.local_addr().unwrap().to_string();
    drop(dead_ns);
    for rel in MASTER_FILES {
        assert!(
            TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err(),
            "port {port} is in use: this test runs rmqd with Java's default listenPort; stop what listens there"
        );
        let src = fixture(rel);
        let text = std::fs::read_to_string(&src).unwrap();
        let home = tempfile::tempdir().unwrap();
        let conf = home.path().join(src.file_name().unwrap());
        std::fs::write(&conf, &text).unwrap();
        let log = std::fs::File::create(home.path().join("rmqd.log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_rmqd"))
            .arg("-c")
            .arg(&conf)
            .arg("-n")
            .arg(&ns)
            .env("HOME", home.path())
            .env("RUST_LOG", "info")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let mut broker = Broker(child);
        wait_listening(addr, &mut broker.0, rel);

        let mut c = RawClient::connect(addr);
        let mut send = request(
            RequestCode::SEND_MESSAGE_V2,
            &[
                ("a", "PG_CONF"),
                ("b", "ConfTopic"),
                ("c", "TBW102"),
                ("d", "4"),
                ("e", "0"),
                ("f", "0"),
                ("g", "1700000000000"),
                ("h", "0"),
                ("i", "KEYS\u{1}conf\u{2}"),
            ],
        );
        send.body = bytes::Bytes::from_static(b"hello from a Java broker.conf").into();
        let r = c.call(&send);
        assert_eq!(r.code, 0, "{rel}: send answered {} {:?}", r.code, r.remark);
        let cfg = c.call(&request(RequestCode::GET_BROKER_CONFIG, &[]));
        assert_eq!(cfg.code, 0, "{rel}: GET_BROKER_CONFIG {:?}", cfg.remark);
        let body = String::from_utf8_lossy(&cfg.body.to_bytes()).into_owned();
        for line in text.lines().map(str::trim) {
            if line.starts_with('#') || !line.contains('=') {
                continue;
            }
            let (k, v) = line.split_once('=').unwrap();
            let want = format!("{}={}", k.trim(), v.trim());
            assert!(
                body.lines().any(|l| l.trim() == want),
                "{rel}: the running broker does not report {want}"
            );
        }
        drop(c);

        let status = sigterm_and_wait(&mut broker.0, rel);
        assert!(status.success(), "{rel}: rmqd exited with {status}");
        let store = home.path().join("store");
        assert!(
            store
                .join("commitlog")
                .join("00000000000000000000")
                .exists(),
            "{rel}: no CommitLog under $HOME/store (Java's default storePathRootDir)"
        );
        assert!(
            store.join("consumequeue/ConfTopic").is_dir(),
            "{rel}: the message was not dispatched"
        );
        assert!(
            !store.join("abort").exists(),
            "{rel}: abort file left after a clean SIGTERM"
        );
    }
}
