//! The writer task of one connection: drains its queue and writes many frames per syscall with
//! vectored writes, so message bodies borrowed from the store are never copied.

use std::io::IoSlice;

use bytes::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::remoting::codec::encode_head;
use crate::remoting::RemotingCommand;

const MAX_FRAMES_PER_WRITE: usize = 64;
const MAX_SLICES: usize = 512;

/// Runs until every sender is gone or `closed` is cancelled (the connection's read side ended and
/// its requests were answered); what is queued by then is still written.
pub(super) async fn run<W: AsyncWrite + Unpin>(
    mut out: W,
    mut queue: mpsc::UnboundedReceiver<RemotingCommand>,
    closed: CancellationToken,
    peer: std::net::SocketAddr,
) {
    // grows to what the connection's bursts need (at most MAX_SLICES), nothing while idle
    let mut chunks: Vec<Bytes> = Vec::new();
    loop {
        let first = tokio::select! {
            biased;
            cmd = queue.recv() => cmd,
            _ = closed.cancelled() => queue.try_recv().ok(),
        };
        let Some(first) = first else { break };
        push_frame(&mut chunks, &first);
        let mut frames = 1;
        while frames < MAX_FRAMES_PER_WRITE && chunks.len() < MAX_SLICES {
            match queue.try_recv() {
                Ok(cmd) => push_frame(&mut chunks, &cmd),
                Err(_) => break,
            }
            frames += 1;
        }
        if let Err(e) = write_all(&mut out, &mut chunks).await {
            tracing::debug!(%peer, error = %e, "connection write failed, nothing more is written");
            return;
        }
    }
    let _ = out.shutdown().await;
}

fn push_frame(chunks: &mut Vec<Bytes>, cmd: &RemotingCommand) {
    chunks.push(encode_head(cmd));
    chunks.extend(cmd.body.parts().iter().cloned());
}

/// Writes every chunk, retrying partial vectored writes; leaves `chunks` empty.
async fn write_all<W: AsyncWrite + Unpin>(
    out: &mut W,
    chunks: &mut Vec<Bytes>,
) -> std::io::Result<()> {
    let mut first = 0;
    while first < chunks.len() {
        let slices: Vec<IoSlice<'_>> = chunks[first..]
            .iter()
            .take(MAX_SLICES)
            .map(|c| IoSlice::new(c))
            .collect();
        let mut written = out.write_vectored(&slices).await?;
        if written == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        while written > 0 {
            let len = chunks[first].len();
            if written >= len {
                written -= len;
                first += 1;
            } else {
                let rest = chunks[first].split_off(written);
                chunks[first] = rest;
                written = 0;
            }
        }
    }
    chunks.clear();
    out.flush().await
}
