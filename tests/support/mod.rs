//! Helpers shared by the integration tests: a blocking raw Remoting client over real TCP.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::BytesMut;
use rmqd::remoting::codec::encode_frame;
use rmqd::remoting::{FrameCodec, RemotingCommand};

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
