//! The `/metrics` HTTP endpoint: HTTP/1.x GET or HEAD, one response per connection. A request
//! head over 8 KiB or slower than 5 s is dropped; any path answers, as Java's exporter does.

use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::broker::periodic::BackgroundTask;
use crate::broker::BrokerContext;

const MAX_HEAD: usize = 8 * 1024;
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Binds `addr` and serves scrapes until stopped.
pub async fn serve(
    addr: SocketAddr,
    ctx: Weak<BrokerContext>,
) -> std::io::Result<(SocketAddr, BackgroundTask)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    tracing::info!(%local, "serving Prometheus metrics on /metrics");
    let task = BackgroundTask::spawn("metrics-http", move |stop| async move {
        loop {
            let accepted = tokio::select! {
                _ = stop.cancelled() => return,
                a = listener.accept() => a,
            };
            let Ok((stream, _)) = accepted else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let ctx = ctx.clone();
            tokio::spawn(async move {
                if let Err(e) = answer(stream, ctx).await {
                    tracing::debug!(error = %e, "metrics request dropped");
                }
            });
        }
    });
    Ok((local, task))
}

async fn answer(mut stream: TcpStream, ctx: Weak<BrokerContext>) -> std::io::Result<()> {
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
        b"GET" | b"HEAD" => match ctx.upgrade() {
            Some(ctx) => {
                let text = tokio::task::spawn_blocking(move || super::text::render(&ctx))
                    .await
                    .unwrap_or_default();
                ("200 OK", text, method == b"GET")
            }
            None => ("503 Service Unavailable", "broker stopped\n".into(), true),
        },
        _ => ("405 Method Not Allowed", "GET or HEAD\n".into(), true),
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
    stream.write_all(&out).await?;
    stream.shutdown().await
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
