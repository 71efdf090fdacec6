//! The `/metrics` HTTP endpoint: HTTP/1.x GET or HEAD, one response per connection. A request
//! head over 8 KiB or slower than 5 s, and a response not taken within 5 s, are dropped; at most
//! 16 connections at once (more are closed at accept); one render at a time, and scrapes within a
//! second share it. Any path answers, as Java's exporter does.

use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::broker::periodic::BackgroundTask;
use crate::broker::BrokerContext;

const MAX_HEAD: usize = 8 * 1024;
const READ_TIMEOUT: Duration = Duration::from_secs(5);
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_CONNECTIONS: usize = 16;
/// Scrapes this close together get the same text.
const REUSE: Duration = Duration::from_secs(1);

/// The last render, shared by scrapes within `REUSE`; its lock also lets one render run at once.
type Cache = Arc<tokio::sync::Mutex<Option<(std::time::Instant, Arc<String>)>>>;

/// Binds `addr` and serves scrapes until stopped.
pub async fn serve(
    addr: SocketAddr,
    ctx: Weak<BrokerContext>,
) -> std::io::Result<(SocketAddr, BackgroundTask)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    tracing::info!(%local, "serving Prometheus metrics on /metrics");
    let task = BackgroundTask::spawn("metrics-http", move |stop| async move {
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        let cache: Cache = Arc::default();
        loop {
            let accepted = tokio::select! {
                _ = stop.cancelled() => return,
                a = listener.accept() => a,
            };
            let Ok((stream, _)) = accepted else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                drop(stream);
                continue;
            };
            let (ctx, cache) = (ctx.clone(), cache.clone());
            tokio::spawn(async move {
                if let Err(e) = answer(stream, ctx, cache).await {
                    tracing::debug!(error = %e, "metrics request dropped");
                }
                drop(slot);
            });
        }
    });
    Ok((local, task))
}

/// The exposition, rendered at most once per `REUSE` and never twice at once; `None` when the
/// broker is gone or the render failed.
async fn render(ctx: &Weak<BrokerContext>, cache: &Cache) -> Option<Arc<String>> {
    let mut last = cache.lock().await;
    if let Some((at, text)) = last.as_ref() {
        if at.elapsed() < REUSE {
            return Some(text.clone());
        }
    }
    let ctx = ctx.upgrade()?;
    let text = Arc::new(
        tokio::task::spawn_blocking(move || super::text::render(&ctx))
            .await
            .ok()?,
    );
    *last = Some((std::time::Instant::now(), text.clone()));
    Some(text)
}

async fn answer(
    mut stream: TcpStream,
    ctx: Weak<BrokerContext>,
    cache: Cache,
) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
            let n = stream.read(&mut buf).await?;
            if n == 0 || head.len() + n > MAX_HEAD {
                return Err(std::io::Error::other(
                    "request head incomplete or too large",
                ));
            }
            head.extend_from_slice(&buf[..n]);
        }
        Ok(())
    };
    tokio::time::timeout(READ_TIMEOUT, read)
        .await
        .map_err(|_| std::io::Error::other("request head too slow"))??;
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let method = line.split(|&b| b == b' ').next().unwrap_or_default();
    let (status, body, send_body) = match method {
        b"GET" | b"HEAD" => match render(&ctx, &cache).await {
            Some(text) => ("200 OK", text, method == b"GET"),
            None if ctx.strong_count() == 0 => (
                "503 Service Unavailable",
                Arc::new("broker stopped\n".to_string()),
                true,
            ),
            None => (
                "500 Internal Server Error",
                Arc::new("metrics render failed; see the broker log\n".to_string()),
                true,
            ),
        },
        _ => (
            "405 Method Not Allowed",
            Arc::new("GET or HEAD\n".to_string()),
            true,
        ),
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if send_body {
        out.extend_from_slice(body.as_bytes());
    }
    let write = async {
        stream.write_all(&out).await?;
        stream.shutdown().await
    };
    tokio::time::timeout(WRITE_TIMEOUT, write)
        .await
        .map_err(|_| std::io::Error::other("response not taken in time"))?
}

/// Starts the endpoint when `metricsExporterType=PROM`; other exporter types are not built.
pub async fn start(
    ctx: &Arc<BrokerContext>,
) -> Result<Option<(SocketAddr, BackgroundTask)>, String> {
    let cfg = &ctx.config;
    match cfg.metrics_exporter_type.to_ascii_uppercase().as_str() {
        "DISABLE" | "" => return Ok(None),
        "PROM" => {}
        other => {
            tracing::error!(
                metrics_exporter_type = other,
                "rmqd exports metrics only as PROM (Prometheus /metrics); nothing is exported"
            );
            return Ok(None);
        }
    }
    let host = if cfg.metrics_prom_exporter_host.trim().is_empty() {
        cfg.broker_ip1.clone()
    } else {
        cfg.metrics_prom_exporter_host.trim().to_string()
    };
    let port = cfg.metrics_prom_exporter_port;
    let addr = tokio::net::lookup_host((host.as_str(), port))
        .await
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| format!("cannot resolve metricsPromExporterHost {host}"))?;
    serve(addr, Arc::downgrade(ctx))
        .await
        .map(Some)
        .map_err(|e| {
            format!(
                "cannot serve metrics on {addr}: {e} (set metricsPromExporterPort to a free port, \
             or metricsExporterType=DISABLE)"
            )
        })
}
