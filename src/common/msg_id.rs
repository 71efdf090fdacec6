//! Offset message ids (`MessageDecoder.createMessageId` / `decodeMessageId`): the store host, its
//! port and the commit-log offset, rendered as upper-case hex.
//!
//! ```text
//! IPv4: | ip: 4 | port: i32 | commitLogOffset: i64 |  = 16 bytes = 32 hex chars
//! IPv6: | ip:16 | port: i32 | commitLogOffset: i64 |  = 28 bytes = 56 hex chars
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum MsgIdError {
    #[error("message id {id:?}: length {len}, expected 32 (IPv4) or 56 (IPv6)")]
    Length { id: String, len: usize },
    #[error("message id {id:?}: not hex at char {at}")]
    Hex { id: String, at: usize },
}

/// A decoded offset message id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageId {
    pub store_host: SocketAddr,
    pub commit_log_offset: i64,
}

/// Encodes an offset msgId; the port is written as a 4-byte int as Java does.
pub fn encode_msg_id(store_host: SocketAddr, commit_log_offset: i64) -> String {
    // On the put path: a stack buffer, one String allocation.
    let mut raw = [0u8; 28];
    let n = match store_host.ip() {
        IpAddr::V4(ip) => {
            raw[..4].copy_from_slice(&ip.octets());
            4
        }
        IpAddr::V6(ip) => {
            raw[..16].copy_from_slice(&ip.octets());
            16
        }
    };
    raw[n..n + 4].copy_from_slice(&(store_host.port() as i32).to_be_bytes());
    raw[n + 4..n + 12].copy_from_slice(&commit_log_offset.to_be_bytes());
    to_hex_upper(&raw[..n + 12])
}

/// Decodes an offset msgId (32 chars = IPv4, 56 = IPv6; case-insensitive hex).
pub fn decode_msg_id(id: &str) -> Result<MessageId, MsgIdError> {
    let bytes = from_hex(id)?;
    let ip_len = match bytes.len() {
        16 => 4,
        28 => 16,
        _ => {
            return Err(MsgIdError::Length {
                id: id.to_string(),
                len: id.len(),
            })
        }
    };
    let (ip, rest) = bytes.split_at(ip_len);
    let ip: IpAddr = if ip_len == 4 {
        Ipv4Addr::from(<[u8; 4]>::try_from(ip).unwrap_or_default()).into()
    } else {
        Ipv6Addr::from(<[u8; 16]>::try_from(ip).unwrap_or_default()).into()
    };
    let port = i32::from_be_bytes(rest[..4].try_into().unwrap_or_default());
    let offset = i64::from_be_bytes(rest[4..12].try_into().unwrap_or_default());
    Ok(MessageId {
        store_host: SocketAddr::new(ip, port as u16),
        commit_log_offset: offset,
    })
}

/// Upper-case hex, as Java's `UtilAll.bytes2string`.
pub fn to_hex_upper(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    // Bytes first, one UTF-8 check of the ASCII result: `String::push` per nibble cost ~10% of
    // a 128-byte append (an offset msgId is made for every put).
    let mut out = vec![0u8; bytes.len() * 2];
    for (o, b) in out.chunks_exact_mut(2).zip(bytes) {
        o[0] = HEX[(b >> 4) as usize];
        o[1] = HEX[(b & 0xf) as usize];
    }
    String::from_utf8(out).unwrap_or_default()
}

fn from_hex(id: &str) -> Result<Vec<u8>, MsgIdError> {
    let raw = id.as_bytes();
    if raw.len() != 32 && raw.len() != 56 {
        return Err(MsgIdError::Length {
            id: id.to_string(),
            len: raw.len(),
        });
    }
    let nibble = |at: usize| -> Result<u8, MsgIdError> {
        (raw[at] as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or(MsgIdError::Hex {
                id: id.to_string(),
                at,
            })
    };
    (0..raw.len() / 2)
        .map(|i| Ok(nibble(2 * i)? << 4 | nibble(2 * i + 1)?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_id_matches_reference_example() {
        let host: SocketAddr = "192.168.1.10:10911".parse().unwrap();
        let id = encode_msg_id(host, 0x1A2B);
        assert_eq!(id, "C0A8010A00002A9F0000000000001A2B");
        let back = decode_msg_id(&id.to_lowercase()).unwrap();
        assert_eq!((back.store_host, back.commit_log_offset), (host, 0x1A2B));
    }

    #[test]
    fn ipv6_id_is_56_chars_and_round_trips() {
        let host: SocketAddr = "[fe80::1]:10911".parse().unwrap();
        let id = encode_msg_id(host, 1 << 40);
        assert_eq!(id.len(), 56);
        assert!(id.starts_with("FE800000"));
        assert_eq!(decode_msg_id(&id).unwrap().commit_log_offset, 1 << 40);
    }

    #[test]
    fn bad_ids_are_errors() {
        assert!(matches!(
            decode_msg_id("ABC"),
            Err(MsgIdError::Length { .. })
        ));
        let bad = "Z0A8010A00002A9F0000000000001A2B";
        assert_eq!(
            decode_msg_id(bad),
            Err(MsgIdError::Hex {
                id: bad.into(),
                at: 0
            })
        );
        assert!(decode_msg_id("é0A8010A00002A9F000000000001A2B").is_err());
    }
}
