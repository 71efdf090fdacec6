//! The real `rmqd` binary as a child process with its log in a file, and the raw sends, pulls and
//! runtime-info reads the fault tests make against it.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rmqd::remoting::{RemotingCommand, RequestCode};

use super::{request, RawClient};

/// A running `rmqd`; killed (SIGKILL) when dropped.
pub struct RmqdProcess {
    child: Option<Child>,
    pub addr: SocketAddr,
    /// The embedded NameServer.
    pub namesrv: SocketAddr,
    pub log: PathBuf,
}

/// True when this process runs as root (the fault tests mount file systems).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// This process's soft limit of open files (`ulimit -n`), which the broker child inherits.
pub fn nofile_limit() -> usize {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("Max open files"))?;
            line.split_whitespace().nth(3)?.parse().ok()
        })
        .unwrap_or(1024)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl RmqdProcess {
    /// Starts `rmqd -c <conf>` with the store at `store_root` and `extra` lines appended to the
    /// config; the config and the log live in `work` (not on the file system under test).
    pub fn start(work: &Path, store_root: &Path, extra: &str) -> Self {
        let (port, ns) = (free_port(), free_port());
        let conf = work.join("broker.conf");
        std::fs::write(
            &conf,
            format!(
                "brokerName=fault\nlistenPort={port}\nbindAddress=127.0.0.1\nbrokerIP1=127.0.0.1\n\
                 rmqdFastChannelEnable=false\nrmqdEmbeddedNamesrvListenPort={ns}\n\
                 storePathRootDir={}\n{extra}\n",
                store_root.display()
            ),
        )
        .unwrap();
        let log = work.join(format!("rmqd-{port}.log"));
        let out = std::fs::File::create(&log).unwrap();
        // RMQD_TEST_BIN: another build, e.g. the one before a fix
        let bin = std::env::var_os("RMQD_TEST_BIN").unwrap_or(env!("CARGO_BIN_EXE_rmqd").into());
        let child = Command::new(bin)
            .arg("-c")
            .arg(&conf)
            .env("RMQD_LOG", "info")
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        let mut p = Self {
            child: Some(child),
            addr: ([127, 0, 0, 1], port).into(),
            namesrv: ([127, 0, 0, 1], ns).into(),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        let namesrv = !extra.contains("rmqdEmbeddedNamesrv=false");
        while TcpStream::connect(p.addr).is_err()
            || (namesrv && TcpStream::connect(p.namesrv).is_err())
        {
            if let Some(st) = p.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("rmqd exited with {st} before listening:\n{}", p.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "rmqd did not listen on {}",
                p.addr
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        p
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// The exit status if the process has ended (a crash shows here).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut().unwrap().try_wait().unwrap()
    }

    /// SIGKILL and reap.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A field of `/proc/<pid>/status` in KiB (`VmRSS`, `RssAnon`, `VmHWM`...).
    pub fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc/<pid>/status"))
    }

    /// CPU time (user + system) the process has used, in clock ticks.
    pub fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = after.split_whitespace().collect();
        f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
    }
}

impl Drop for RmqdProcess {
    fn drop(&mut self) {
        self.kill9();
        if std::thread::panicking() {
            let log = self.log_text();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("--- rmqd log tail ({}) ---", self.log.display());
            tail.iter().rev().for_each(|l| eprintln!("{l}"));
        }
    }
}

/// SEND_MESSAGE_V2 of `body` to `topic`/`queue` with a UNIQ_KEY; returns the response.
pub fn send(
    c: &mut RawClient,
    topic: &str,
    queue: i32,
    body: &[u8],
    uniq: &str,
) -> RemotingCommand {
    let q = queue.to_string();
    let props = format!("UNIQ_KEY\u{1}{uniq}\u{2}WAIT\u{1}true\u{2}");
    let mut cmd = request(
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
    c.call(&cmd)
}

/// Every record of `topic`/`queue` from offset 0 (bodies in queue order), pulled 32 at a time.
pub fn pull_all(c: &mut RawClient, topic: &str, queue: i32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let r = c.call(&super::pull_request(topic, queue, out.len() as i64));
        match r.code {
            0 => {}
            // PULL_NOT_FOUND: the end of the queue
            19 => return out,
            code => panic!(
                "pull {topic}/{queue} at {}: {code} {:?}",
                out.len(),
                r.remark
            ),
        }
        let recs = super::records(&r.body.to_bytes());
        if recs.is_empty() {
            return out;
        }
        for rec in recs {
            assert_eq!(rec.queue_offset, out.len() as i64, "pull skipped an offset");
            out.push(rec.body);
        }
    }
}

/// Every readable record of `topic`/`queue` from offset 0, following the broker's
/// `nextBeginOffset` past units whose record it cannot read (it skips them rather than serve
/// bytes that are not a record).
pub fn pull_readable(c: &mut RawClient, topic: &str, queue: i32) -> Vec<super::Record> {
    let mut out: Vec<super::Record> = Vec::new();
    let mut next = 0i64;
    loop {
        let r = c.call(&super::pull_request(topic, queue, next));
        let begin = r.ext("nextBeginOffset").and_then(|v| v.parse::<i64>().ok());
        match r.code {
            0 => {
                let recs = super::records(&r.body.to_bytes());
                if let Some(last) = recs.last() {
                    next = last.queue_offset + 1;
                }
                for rec in &recs {
                    assert!(
                        out.last().is_none_or(|p| p.queue_offset < rec.queue_offset),
                        "pull {topic}/{queue}: offsets out of order"
                    );
                }
                out.extend(recs);
            }
            // PULL_NOT_FOUND: the end of the queue
            19 => return out,
            // PULL_RETRY_IMMEDIATELY: a whole batch was skipped; go on from where the broker says
            20 => {
                let b = begin.expect("PULL_RETRY_IMMEDIATELY without nextBeginOffset");
                assert!(b > next, "pull {topic}/{queue} at {next}: no progress");
                next = b;
            }
            code => panic!("pull {topic}/{queue} at {next}: {code} {:?}", r.remark),
        }
    }
}

/// GET_BROKER_RUNTIME_INFO as a map.
pub fn runtime_info(c: &mut RawClient) -> HashMap<String, String> {
    let r = c.call(&request(RequestCode::GET_BROKER_RUNTIME_INFO, &[]));
    assert_eq!(r.code, 0, "runtime info: {:?}", r.remark);
    let v: serde_json::Value = serde_json::from_slice(&r.body.to_bytes()).unwrap();
    v["table"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect()
}

/// Runs `cmd args...`; Err with its stderr when it cannot run or fails.
pub fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
