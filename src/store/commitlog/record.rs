//! Commit-log record encoding and checked decoding (store-format.md §2).
//!
//! ```text
//!  0 TOTALSIZE i32 | 4 MAGIC i32 | 8 BODYCRC i32 | 12 QUEUEID i32 | 16 FLAG i32
//! 20 QUEUEOFFSET i64 | 28 PHYSICALOFFSET i64 | 36 SYSFLAG i32 | 40 BORNTIMESTAMP i64
//! 48 BORNHOST 8|20 | STORETIMESTAMP i64 | STOREHOST 8|20 | RECONSUMETIMES i32
//!    PREPARED_TX_OFFSET i64 | BODYLEN i32 + body | TOPICLEN i8 (v1) / i16 (v2) + topic
//!    PROPLEN i16 + properties
//! blank (end of file): i32 remaining-bytes | i32 0xCBD43194
//! ```

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use crate::store::message::{push_host, sysflag};

pub const MAGIC_V1: i32 = 0xDAA320A7_u32 as i32;
pub const MAGIC_V2: i32 = 0xDAA320AB_u32 as i32;
pub const BLANK_MAGIC: i32 = 0xCBD43194_u32 as i32;
/// Bytes a blank record takes; every record leaves at least this much room in its file.
pub const END_FILE_MIN_BLANK_LENGTH: usize = 8;
pub const POS_QUEUE_OFFSET: usize = 20;
pub const POS_PHYS_OFFSET: usize = 28;
pub const POS_SYSFLAG: usize = 36;
pub const POS_BORN_HOST: usize = 48;

/// Masked CRC32 Java stores as BODYCRC.
pub fn body_crc(body: &[u8]) -> i32 {
    if body.is_empty() {
        return 0;
    }
    (crc32fast::hash(body) & 0x7FFF_FFFF) as i32
}

/// Record length for the given part sizes.
pub fn record_len(
    v2: bool,
    born_v6: bool,
    store_v6: bool,
    body: usize,
    topic: usize,
    props: usize,
) -> usize {
    91 + body
        + topic
        + props
        + usize::from(v2)
        + 12 * usize::from(born_v6)
        + 12 * usize::from(store_v6)
}

/// Header fields of a record to encode (offsets and store timestamp are patched at append).
pub struct RecordHeader<'a> {
    pub queue_id: i32,
    pub flag: i32,
    pub sys_flag: i32,
    pub born_timestamp: i64,
    pub born_host: &'a std::net::SocketAddr,
    pub store_host: &'a std::net::SocketAddr,
    pub reconsume_times: i32,
    pub prepared_transaction_offset: i64,
}

/// Where an encoded record needs its late fields written.
#[derive(Debug, Clone, Copy)]
pub struct PatchPoints {
    pub start: usize,
    pub len: usize,
    pub store_ts_pos: usize,
}

/// Appends one record to `buf` with QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP zero.
/// `extra_props` (batch-level properties) is appended after `props`, inserting a `0x02` if
/// `props` does not end with one. Returns the patch points, or `Err(prop_len)` if the properties
/// exceed 32767 bytes.
pub fn encode_into(
    buf: &mut Vec<u8>,
    h: &RecordHeader<'_>,
    body: &[u8],
    topic: &[u8],
    props: &[u8],
    extra_props: &[u8],
    v2: bool,
) -> Result<PatchPoints, usize> {
    let sep = !extra_props.is_empty() && !props.is_empty() && props.last() != Some(&2);
    let prop_len = props.len() + extra_props.len() + usize::from(sep);
    if prop_len > i16::MAX as usize {
        return Err(prop_len);
    }
    let born_v6 = h.born_host.is_ipv6();
    let store_v6 = h.store_host.is_ipv6();
    let len = record_len(v2, born_v6, store_v6, body.len(), topic.len(), prop_len);
    let mut sys_flag = h.sys_flag & !(sysflag::BORNHOST_V6 | sysflag::STOREHOST_V6);
    if born_v6 {
        sys_flag |= sysflag::BORNHOST_V6;
    }
    if store_v6 {
        sys_flag |= sysflag::STOREHOST_V6;
    }
    let start = buf.len();
    buf.reserve(len);
    buf.extend_from_slice(&(len as i32).to_be_bytes());
    buf.extend_from_slice(&(if v2 { MAGIC_V2 } else { MAGIC_V1 }).to_be_bytes());
    buf.extend_from_slice(&body_crc(body).to_be_bytes());
    buf.extend_from_slice(&h.queue_id.to_be_bytes());
    buf.extend_from_slice(&h.flag.to_be_bytes());
    buf.extend_from_slice(&[0u8; 16]); // queue offset + physical offset, patched at append
    buf.extend_from_slice(&sys_flag.to_be_bytes());
    buf.extend_from_slice(&h.born_timestamp.to_be_bytes());
    push_host(buf, h.born_host);
    let store_ts_pos = buf.len() - start;
    buf.extend_from_slice(&[0u8; 8]);
    push_host(buf, h.store_host);
    buf.extend_from_slice(&h.reconsume_times.to_be_bytes());
    buf.extend_from_slice(&h.prepared_transaction_offset.to_be_bytes());
    buf.extend_from_slice(&(body.len() as i32).to_be_bytes());
    buf.extend_from_slice(body);
    if v2 {
        buf.extend_from_slice(&(topic.len() as i16).to_be_bytes());
    } else {
        buf.push(topic.len() as u8);
    }
    buf.extend_from_slice(topic);
    buf.extend_from_slice(&(prop_len as i16).to_be_bytes());
    buf.extend_from_slice(props);
    if sep {
        buf.push(2);
    }
    buf.extend_from_slice(extra_props);
    debug_assert_eq!(buf.len() - start, len);
    Ok(PatchPoints {
        start,
        len,
        store_ts_pos,
    })
}

/// Writes the late fields into an encoded record.
pub fn patch(rec: &mut [u8], pp: &PatchPoints, queue_offset: i64, phys: i64, store_ts: i64) {
    rec[POS_QUEUE_OFFSET..POS_QUEUE_OFFSET + 8].copy_from_slice(&queue_offset.to_be_bytes());
    rec[POS_PHYS_OFFSET..POS_PHYS_OFFSET + 8].copy_from_slice(&phys.to_be_bytes());
    rec[pp.store_ts_pos..pp.store_ts_pos + 8].copy_from_slice(&store_ts.to_be_bytes());
}

/// The 8-byte end-of-file blank record for `remaining` bytes.
pub fn blank_record(remaining: usize) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&(remaining as i32).to_be_bytes());
    b[4..].copy_from_slice(&BLANK_MAGIC.to_be_bytes());
    b
}

/// A decoded record borrowing its bytes.
#[derive(Debug, Clone)]
pub struct RecordView<'a> {
    pub total_size: i32,
    pub magic: i32,
    pub body_crc: i32,
    pub queue_id: i32,
    pub flag: i32,
    pub queue_offset: i64,
    pub phys_offset: i64,
    pub sys_flag: i32,
    pub born_timestamp: i64,
    pub born_host: SocketAddr,
    pub store_timestamp: i64,
    pub store_host: SocketAddr,
    pub reconsume_times: i32,
    pub prepared_transaction_offset: i64,
    pub body: &'a [u8],
    pub topic: &'a [u8],
    pub properties: &'a [u8],
}

impl RecordView<'_> {
    pub fn topic_str(&self) -> &str {
        std::str::from_utf8(self.topic).unwrap_or("")
    }
    pub fn tran_type(&self) -> i32 {
        self.sys_flag & sysflag::TRANSACTION_MASK
    }
}

/// What lies at a commit-log position.
#[derive(Debug, Clone)]
pub enum Decoded<'a> {
    Record(RecordView<'a>),
    /// End-of-file blank: continue at the next file.
    Blank,
    /// Zero / unknown magic: end of valid data.
    End,
}

/// Why a record that looked started is invalid ("half message").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    Truncated { need: usize, have: usize },
    BadLength { total: i32, computed: usize },
    BadCrc { stored: i32, computed: i32 },
    BadField(&'static str),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Truncated { need, have } => {
                write!(f, "record needs {need} bytes, {have} available")
            }
            RecordError::BadLength { total, computed } => {
                write!(f, "TOTALSIZE {total} but fields add up to {computed}")
            }
            RecordError::BadCrc { stored, computed } => {
                write!(f, "BODYCRC {stored} but body hashes to {computed}")
            }
            RecordError::BadField(w) => write!(f, "invalid {w}"),
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], RecordError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or(RecordError::Truncated {
            need: self.pos.saturating_add(n),
            have: self.b.len(),
        })?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn i32(&mut self) -> Result<i32, RecordError> {
        let s = self.take(4)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn i64(&mut self) -> Result<i64, RecordError> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(i64::from_be_bytes(a))
    }
    fn i16(&mut self) -> Result<i16, RecordError> {
        let s = self.take(2)?;
        Ok(i16::from_be_bytes([s[0], s[1]]))
    }
    fn host(&mut self, v6: bool) -> Result<SocketAddr, RecordError> {
        let ip = if v6 {
            let s = self.take(16)?;
            let mut a = [0u8; 16];
            a.copy_from_slice(s);
            IpAddr::V6(Ipv6Addr::from(a))
        } else {
            let s = self.take(4)?;
            IpAddr::V4(Ipv4Addr::new(s[0], s[1], s[2], s[3]))
        };
        let port = self.i32()?;
        Ok(SocketAddr::new(ip, port as u16))
    }
}

/// Reads the 8-byte prefix at the start of `buf`: `(total_size, magic)`.
pub fn peek_header(buf: &[u8]) -> Option<(i32, i32)> {
    let h = buf.get(..8)?;
    Some((
        i32::from_be_bytes([h[0], h[1], h[2], h[3]]),
        i32::from_be_bytes([h[4], h[5], h[6], h[7]]),
    ))
}

/// Whether `buf` (the `size` bytes a consume-queue unit `(offset, size)` selects) is the record
/// the unit claims: TOTALSIZE == `size`, a v1/v2 magic, PHYSICALOFFSET == `offset`. A damaged unit
/// (wrong size, pointing into the middle of a record) fails; Java hands such bytes out as they are.
pub fn is_unit_record(buf: &[u8], offset: i64, size: i32) -> bool {
    let Some((total, magic)) = peek_header(buf) else {
        return false;
    };
    let Some(p) = buf.get(POS_PHYS_OFFSET..POS_PHYS_OFFSET + 8) else {
        return false;
    };
    let phys = i64::from_be_bytes([p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]]);
    total == size && (magic == MAGIC_V1 || magic == MAGIC_V2) && phys == offset
}

/// Decodes the record at the start of `buf` (Java `checkMessageAndReturnSize`).
pub fn decode(buf: &[u8], check_crc: bool) -> Result<Decoded<'_>, RecordError> {
    let Some((total, magic)) = peek_header(buf) else {
        return Ok(Decoded::End);
    };
    match magic {
        BLANK_MAGIC => return Ok(Decoded::Blank),
        MAGIC_V1 | MAGIC_V2 => {}
        _ => return Ok(Decoded::End),
    }
    if total < 8 || total as usize > buf.len() {
        return Err(RecordError::Truncated {
            need: total.max(0) as usize,
            have: buf.len(),
        });
    }
    let rec = &buf[..total as usize];
    let mut r = Reader { b: rec, pos: 8 };
    let body_crc_stored = r.i32()?;
    let queue_id = r.i32()?;
    let flag = r.i32()?;
    let queue_offset = r.i64()?;
    let phys_offset = r.i64()?;
    let sys_flag = r.i32()?;
    let born_timestamp = r.i64()?;
    let born_host = r.host(sys_flag & sysflag::BORNHOST_V6 != 0)?;
    let store_timestamp = r.i64()?;
    let store_host = r.host(sys_flag & sysflag::STOREHOST_V6 != 0)?;
    let reconsume_times = r.i32()?;
    let prepared_transaction_offset = r.i64()?;
    let body_len = r.i32()?;
    if body_len < 0 {
        return Err(RecordError::BadField("BODYLENGTH"));
    }
    let body = r.take(body_len as usize)?;
    let v2 = magic == MAGIC_V2;
    let topic_len = if v2 {
        r.i16()? as i32
    } else {
        r.take(1)?[0] as i8 as i32
    };
    if topic_len < 0 {
        return Err(RecordError::BadField("TOPICLENGTH"));
    }
    let topic = r.take(topic_len as usize)?;
    let prop_len = r.i16()?;
    let properties = r.take(prop_len.max(0) as usize)?;
    let computed = record_len(
        v2,
        sys_flag & sysflag::BORNHOST_V6 != 0,
        sys_flag & sysflag::STOREHOST_V6 != 0,
        body.len(),
        topic.len(),
        properties.len(),
    );
    if computed != total as usize {
        return Err(RecordError::BadLength { total, computed });
    }
    if check_crc && !body.is_empty() {
        let c = body_crc(body);
        if c != body_crc_stored {
            return Err(RecordError::BadCrc {
                stored: body_crc_stored,
                computed: c,
            });
        }
    }
    Ok(Decoded::Record(RecordView {
        total_size: total,
        magic,
        body_crc: body_crc_stored,
        queue_id,
        flag,
        queue_offset,
        phys_offset,
        sys_flag,
        born_timestamp,
        born_host,
        store_timestamp,
        store_host,
        reconsume_times,
        prepared_transaction_offset,
        body,
        topic,
        properties,
    }))
}

#[cfg(test)]
mod unit_record_tests {
    use super::*;

    #[test]
    fn a_unit_must_point_at_the_start_of_a_record_of_its_size() {
        let mut b = vec![0u8; 64];
        b[..4].copy_from_slice(&64_i32.to_be_bytes());
        b[4..8].copy_from_slice(&MAGIC_V1.to_be_bytes());
        b[POS_PHYS_OFFSET..POS_PHYS_OFFSET + 8].copy_from_slice(&1000_i64.to_be_bytes());
        assert!(is_unit_record(&b, 1000, 64));
        assert!(!is_unit_record(&b[..57], 1000, 57), "wrong size");
        assert!(!is_unit_record(&b, 1064, 64), "another record's offset");
        assert!(
            !is_unit_record(&b[..20], 1000, 20),
            "too short to be a record"
        );
        b[4] ^= 1;
        assert!(!is_unit_record(&b, 1000, 64), "no magic");
    }
}
