//! Frame codec:
//!
//! ```text
//! 0      4                      8            8+headerLen
//! | len  | type<<24 | headerLen | header ... | body ...        |
//! ```
//! `len` counts everything after itself; the body is what the header leaves of the frame.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::command::{RemotingCommand, SerializeType};
use super::error::RemotingError;
use super::serialize::{json, rocketmq};

/// Largest `len` value accepted: Java's 16 MiB frame limit minus the length field itself.
pub const MAX_FRAME_LENGTH: usize = 16 * 1024 * 1024 - 4;

/// Most bytes of one header. Clients' headers are a few hundred bytes; the largest legitimate
/// one is a send whose `properties` field carries up to 32 KiB (the stored message's limit).
pub const MAX_HEADER_LENGTH: usize = 1024 * 1024;

/// How much room a partly received frame makes ahead of the bytes that arrived.
const RESERVE_AHEAD: usize = 64 * 1024;

/// Most `extFields` entries of one header (Java's requests carry at most a few dozen).
pub const MAX_EXT_FIELDS: usize = 1024;

/// Decodes complete frames from a buffer; `Ok(None)` while a frame is incomplete.
#[derive(Debug, Clone)]
pub struct FrameCodec {
    max_frame_length: usize,
}

impl Default for FrameCodec {
    fn default() -> Self {
        Self {
            max_frame_length: MAX_FRAME_LENGTH,
        }
    }
}

impl FrameCodec {
    pub fn with_max_frame_length(max_frame_length: usize) -> Self {
        Self { max_frame_length }
    }

    /// The `len` field of the frame at the head of `src`, checked against the limit; `None` until
    /// its 4 bytes have arrived.
    pub fn announced_length(&self, src: &[u8]) -> Result<Option<usize>, RemotingError> {
        let Some(&[a, b, c, d]) = src.get(..4) else {
            return Ok(None);
        };
        let length = i32::from_be_bytes([a, b, c, d]) as i64;
        if length < 4 || length as usize > self.max_frame_length {
            return Err(RemotingError::FrameLength {
                length,
                max: self.max_frame_length,
            });
        }
        Ok(Some(length as usize))
    }

    /// Takes one whole frame off `src` and decodes it.
    pub fn decode_frame(
        &self,
        src: &mut BytesMut,
    ) -> Result<Option<RemotingCommand>, RemotingError> {
        let Some(length) = self.announced_length(src)? else {
            return Ok(None);
        };
        if src.len() < 4 + length {
            // grow with what arrives, not with what is announced: a peer that announces 16 MiB
            // and sends 1 KiB costs 1 KiB (and the buffer's doubling), not 16 MiB
            src.reserve((4 + length - src.len()).min(RESERVE_AHEAD));
            return Ok(None);
        }
        src.advance(4);
        let frame = src.split_to(length).freeze();
        decode_command(frame).map(Some)
    }
}

/// Decodes one frame without its leading length field.
pub fn decode_command(mut frame: Bytes) -> Result<RemotingCommand, RemotingError> {
    let frame_length = frame.len();
    if frame_length < 4 {
        return Err(RemotingError::HeaderLength {
            header_length: 0,
            frame_length,
        });
    }
    let v = frame.get_u32();
    let header_length = (v & 0x00FF_FFFF) as usize;
    let kind = (v >> 24) as u8;
    if header_length > frame_length - 4 {
        return Err(RemotingError::HeaderLength {
            header_length,
            frame_length,
        });
    }
    if header_length > MAX_HEADER_LENGTH {
        return Err(RemotingError::HeaderTooLong {
            header_length,
            max: MAX_HEADER_LENGTH,
        });
    }
    let header = frame.split_to(header_length);
    let mut cmd = match SerializeType::from_byte(kind) {
        Some(SerializeType::Json) => json::decode_header(&header)?,
        Some(SerializeType::RocketMq) => rocketmq::decode_header(&header)?,
        None => return Err(RemotingError::SerializeType(kind)),
    };
    cmd.body = frame.into();
    Ok(cmd)
}

/// Encodes the frame head: length, type and header. The body parts follow it on the wire.
pub fn encode_head(cmd: &RemotingCommand) -> Bytes {
    let mut header = Vec::with_capacity(256);
    header.extend_from_slice(&[0u8; 8]);
    match cmd.serialize_type {
        SerializeType::Json => json::encode_header(cmd, &mut header),
        SerializeType::RocketMq => rocketmq::encode_header(cmd, &mut header),
    }
    let header_length = header.len() - 8;
    let frame_length = 4 + header_length + cmd.body.len();
    header[0..4].copy_from_slice(&(frame_length as i32).to_be_bytes());
    let typed = ((cmd.serialize_type as u32) << 24) | (header_length as u32 & 0x00FF_FFFF);
    header[4..8].copy_from_slice(&typed.to_be_bytes());
    Bytes::from(header)
}

/// Encodes a whole frame into `dst` (head and body copied; for tests, clients and small frames).
pub fn encode_frame(cmd: &RemotingCommand, dst: &mut BytesMut) {
    let head = encode_head(cmd);
    dst.reserve(head.len() + cmd.body.len());
    dst.put_slice(&head);
    cmd.body.parts().iter().for_each(|p| dst.put_slice(p));
}

impl tokio_util::codec::Decoder for FrameCodec {
    type Item = RemotingCommand;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<RemotingCommand>, CodecError> {
        Ok(self.decode_frame(src)?)
    }
}

impl tokio_util::codec::Encoder<RemotingCommand> for FrameCodec {
    type Error = CodecError;

    fn encode(&mut self, cmd: RemotingCommand, dst: &mut BytesMut) -> Result<(), CodecError> {
        encode_frame(&cmd, dst);
        Ok(())
    }
}

/// What a framed stream can fail with: the socket or the bytes.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Remoting(#[from] RemotingError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(cmd: &RemotingCommand) -> RemotingCommand {
        let mut buf = BytesMut::new();
        encode_frame(cmd, &mut buf);
        let out = FrameCodec::default()
            .decode_frame(&mut buf)
            .unwrap()
            .unwrap();
        assert!(buf.is_empty());
        out
    }

    #[test]
    fn roundtrips_both_serializations() {
        for st in [SerializeType::Json, SerializeType::RocketMq] {
            let mut cmd = RemotingCommand::request(310);
            cmd.serialize_type = st;
            cmd.opaque = 77;
            cmd.remark = Some("hi".into());
            cmd.ext_mut().insert("a", "group");
            cmd.ext_mut().insert("i", "k\u{1}v\u{2}");
            cmd.body = Bytes::from_static(b"body").into();
            assert_eq!(roundtrip(&cmd), cmd);
        }
    }

    #[test]
    fn partial_frame_is_none_and_absurd_length_is_error() {
        let mut buf = BytesMut::from(&[0u8, 0, 0, 20, 0, 0][..]);
        assert_eq!(FrameCodec::default().decode_frame(&mut buf), Ok(None));
        let mut buf = BytesMut::from(&[0x7fu8, 0, 0, 0][..]);
        assert!(FrameCodec::default().decode_frame(&mut buf).is_err());
        let mut buf = BytesMut::from(&[0u8, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 0][..]);
        assert!(matches!(
            FrameCodec::default().decode_frame(&mut buf),
            Err(RemotingError::HeaderLength { .. })
        ));
    }
}
