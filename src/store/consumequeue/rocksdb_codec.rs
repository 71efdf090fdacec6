//! Key and value layouts of Java 5.5.0's RocksDB consume queue (`storeType=defaultRocksDB`,
//! Java `RocksDBConsumeQueueTable` / `RocksDBConsumeQueueOffsetTable`): pure, no RocksDB needed.
//!
//! Every integer is big-endian; topics are UTF-8, prefixed by their byte length.
//!
//! ```text
//! CF "default", one unit per (topic, queueId, cqOffset)           key: 19 + n bytes
//! +--------+----+-------------+----+---------+----+--------------+
//! | i32 n  | 01 | topic (n B) | 01 | i32 qid | 01 | i64 cqOffset |
//! +--------+----+-------------+----+---------+----+--------------+
//! value (28 B): i64 phyOffset | i32 size | i64 tagsCode | i64 storeTimestamp
//!
//! CF "offset", per (topic, queueId) a "max" and a lazy "min"        key: 14 + n bytes
//! +--------+----+-------------+----+-----------+----+---------+
//! | i32 n  | 01 | topic (n B) | 01 | "max"/"min" | 01 | i32 qid |
//! +--------+----+-------------+----+-----------+----+---------+
//! value (16 B): i64 phyOffset (start of that unit's record) | i64 cqOffset (inclusive)
//!
//! dispatch checkpoint: the "max" key of topic CHECKPOINT_TOPIC, qid 0;
//! value (8 B): i64 end offset of the furthest dispatched record
//!
//! queue bounds for deleteRange: [n|01|topic|01|qid|00, n|01|topic|01|qid|02)
//! ```
//!
//! Java writes keys through direct buffers of 300 bytes, so no key is longer (a topic of at most
//! 281 bytes); the encoders refuse longer ones and the decoders never panic.

/// Separator bytes of the key layouts (Java `AbstractRocksDBStorage.CTRL_0/1/2`).
pub const CTRL_0: u8 = 0x00;
pub const CTRL_1: u8 = 0x01;
pub const CTRL_2: u8 = 0x02;

/// Java `RocksDBConsumeQueueStore.MAX_KEY_LEN`: the size of the direct key buffers.
pub const MAX_KEY_LEN: usize = 300;
/// A unit key without its topic bytes (Java `CQ_KEY_LENGTH_WITHOUT_TOPIC_BYTES`).
pub const CQ_KEY_OVERHEAD: usize = 4 + 1 + 1 + 4 + 1 + 8;
/// An offset key without its topic bytes (Java `OFFSET_KEY_LENGTH_WITHOUT_TOPIC_BYTES`).
pub const OFFSET_KEY_OVERHEAD: usize = 4 + 1 + 1 + 3 + 1 + 4;
/// The longest topic a unit key can hold.
pub const MAX_TOPIC_LEN: usize = MAX_KEY_LEN - CQ_KEY_OVERHEAD;
/// Unit value: phy, size, tagsCode, storeTimestamp (Java `CQ_UNIT_SIZE`).
pub const CQ_VALUE_LEN: usize = 8 + 4 + 8 + 8;
/// Offset value: phy, cqOffset (Java `OFFSET_VALUE_LENGTH`).
pub const OFFSET_VALUE_LEN: usize = 16;
/// Checkpoint value: the max end phy offset.
pub const CHECKPOINT_VALUE_LEN: usize = 8;
/// The offset CF's pseudo topic of the dispatch checkpoint (Java
/// `TopicValidator.RMQ_SYS_ROCKSDB_OFFSET_TOPIC`).
pub const CHECKPOINT_TOPIC: &str = "CHECKPOINT_TOPIC";
/// Column family of the units (RocksDB's default CF).
pub const CF_DEFAULT: &str = "default";
/// Column family of the max/min keys and the checkpoint (Java `OFFSET_COLUMN_FAMILY`).
pub const CF_OFFSET: &str = "offset";

const MAX_TAG: &[u8; 3] = b"max";
const MIN_TAG: &[u8; 3] = b"min";

/// Why bytes are not a key or value of this layout; every variant says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RocksCqCodecError {
    #[error("topic of {len} bytes makes a key longer than {MAX_KEY_LEN} bytes")]
    TopicTooLong { len: usize },
    #[error("{what}: {len} bytes, expected {expected}")]
    Length {
        what: &'static str,
        len: usize,
        expected: usize,
    },
    #[error("{what}: topic length {declared} at byte 0 does not fit a key of {len} bytes")]
    TopicLength {
        what: &'static str,
        declared: i32,
        len: usize,
    },
    #[error("{what}: byte {offset} is {found:#04x}, expected {expected:#04x}")]
    Separator {
        what: &'static str,
        offset: usize,
        found: u8,
        expected: u8,
    },
    #[error("{what}: topic bytes at 5..{end} are not UTF-8")]
    TopicUtf8 { what: &'static str, end: usize },
    #[error("offset key: bytes {offset}..{} are {found:?}, expected \"max\" or \"min\"", offset + 3)]
    OffsetKind { offset: usize, found: [u8; 3] },
}

type Result<T> = std::result::Result<T, RocksCqCodecError>;

/// A unit value (CF `default`): the file CQ's 20-byte unit plus the store time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqValue {
    pub phy_offset: i64,
    pub size: i32,
    pub tags_code: i64,
    pub store_timestamp: i64,
}

/// A decoded unit key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqKey<'a> {
    pub topic: &'a str,
    pub queue_id: i32,
    pub cq_offset: i64,
}

/// Which of a queue's two offset keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetKind {
    Max,
    Min,
}

/// A decoded offset-CF key (the checkpoint decodes as topic `CHECKPOINT_TOPIC`, `Max`, qid 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetKey<'a> {
    pub topic: &'a str,
    pub kind: OffsetKind,
    pub queue_id: i32,
}

/// An offset-CF value: a unit's record start and its cq offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhyAndCqOffset {
    pub phy_offset: i64,
    pub cq_offset: i64,
}

/// `i32 n | 01 | topic | 01`, the prefix both key kinds share.
fn put_topic_prefix(out: &mut Vec<u8>, topic: &[u8]) {
    out.extend_from_slice(&(topic.len() as i32).to_be_bytes());
    out.push(CTRL_1);
    out.extend_from_slice(topic);
    out.push(CTRL_1);
}

fn check_topic(topic: &str, overhead: usize) -> Result<&[u8]> {
    let b = topic.as_bytes();
    if b.len() + overhead > MAX_KEY_LEN {
        return Err(RocksCqCodecError::TopicTooLong { len: b.len() });
    }
    Ok(b)
}

/// Unit key of `(topic, queue_id, cq_offset)`.
pub fn encode_cq_key(topic: &str, queue_id: i32, cq_offset: i64) -> Result<Vec<u8>> {
    let t = check_topic(topic, CQ_KEY_OVERHEAD)?;
    let mut out = Vec::with_capacity(CQ_KEY_OVERHEAD + t.len());
    put_topic_prefix(&mut out, t);
    out.extend_from_slice(&queue_id.to_be_bytes());
    out.push(CTRL_1);
    out.extend_from_slice(&cq_offset.to_be_bytes());
    Ok(out)
}

/// The `[start, end)` keys of a `deleteRange` over every unit of one queue (Java
/// `buildDeleteCQKey`): the unit keys' separator after the queue id, 0x01, lies between.
pub fn queue_range_bounds(topic: &str, queue_id: i32) -> Result<(Vec<u8>, Vec<u8>)> {
    let t = check_topic(topic, CQ_KEY_OVERHEAD)?;
    let mut start = Vec::with_capacity(CQ_KEY_OVERHEAD - 8 + t.len());
    put_topic_prefix(&mut start, t);
    start.extend_from_slice(&queue_id.to_be_bytes());
    let mut end = start.clone();
    start.push(CTRL_0);
    end.push(CTRL_2);
    Ok((start, end))
}

/// The 28-byte unit value.
pub fn encode_cq_value(v: &CqValue) -> [u8; CQ_VALUE_LEN] {
    let mut b = [0u8; CQ_VALUE_LEN];
    b[..8].copy_from_slice(&v.phy_offset.to_be_bytes());
    b[8..12].copy_from_slice(&v.size.to_be_bytes());
    b[12..20].copy_from_slice(&v.tags_code.to_be_bytes());
    b[20..].copy_from_slice(&v.store_timestamp.to_be_bytes());
    b
}

/// Offset-CF key of a queue's `max` or `min`.
pub fn encode_offset_key(topic: &str, kind: OffsetKind, queue_id: i32) -> Result<Vec<u8>> {
    let t = check_topic(topic, OFFSET_KEY_OVERHEAD)?;
    let mut out = Vec::with_capacity(OFFSET_KEY_OVERHEAD + t.len());
    put_topic_prefix(&mut out, t);
    out.extend_from_slice(match kind {
        OffsetKind::Max => MAX_TAG,
        OffsetKind::Min => MIN_TAG,
    });
    out.push(CTRL_1);
    out.extend_from_slice(&queue_id.to_be_bytes());
    Ok(out)
}

/// The 16-byte offset value.
pub fn encode_offset_value(v: &PhyAndCqOffset) -> [u8; OFFSET_VALUE_LEN] {
    let mut b = [0u8; OFFSET_VALUE_LEN];
    b[..8].copy_from_slice(&v.phy_offset.to_be_bytes());
    b[8..].copy_from_slice(&v.cq_offset.to_be_bytes());
    b
}

/// The checkpoint's key: `CHECKPOINT_TOPIC`, `max`, qid 0.
pub fn checkpoint_key() -> Vec<u8> {
    let mut out = Vec::with_capacity(OFFSET_KEY_OVERHEAD + CHECKPOINT_TOPIC.len());
    put_topic_prefix(&mut out, CHECKPOINT_TOPIC.as_bytes());
    out.extend_from_slice(MAX_TAG);
    out.push(CTRL_1);
    out.extend_from_slice(&0i32.to_be_bytes());
    out
}

/// The checkpoint's 8-byte value.
pub fn encode_checkpoint_value(max_phy_offset: i64) -> [u8; CHECKPOINT_VALUE_LEN] {
    max_phy_offset.to_be_bytes()
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    i32::from_be_bytes(a)
}

fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(a)
}

fn exact_len(what: &'static str, b: &[u8], expected: usize) -> Result<()> {
    if b.len() != expected {
        return Err(RocksCqCodecError::Length {
            what,
            len: b.len(),
            expected,
        });
    }
    Ok(())
}

fn separator(what: &'static str, b: &[u8], offset: usize) -> Result<()> {
    match b.get(offset) {
        Some(&CTRL_1) => Ok(()),
        found => Err(RocksCqCodecError::Separator {
            what,
            offset,
            found: found.copied().unwrap_or(0),
            expected: CTRL_1,
        }),
    }
}

/// Checks `i32 n | 01 | topic | 01` against a key that must be `overhead + n` long and returns
/// the topic; the length is checked before any byte past the prefix is read.
fn decode_topic_prefix<'a>(what: &'static str, b: &'a [u8], overhead: usize) -> Result<&'a str> {
    if b.len() < overhead {
        return Err(RocksCqCodecError::Length {
            what,
            len: b.len(),
            expected: overhead,
        });
    }
    let declared = be_i32(b, 0);
    let n = usize::try_from(declared)
        .ok()
        .filter(|&n| n.checked_add(overhead) == Some(b.len()));
    let Some(n) = n else {
        return Err(RocksCqCodecError::TopicLength {
            what,
            declared,
            len: b.len(),
        });
    };
    separator(what, b, 4)?;
    separator(what, b, 5 + n)?;
    std::str::from_utf8(&b[5..5 + n]).map_err(|_| RocksCqCodecError::TopicUtf8 { what, end: 5 + n })
}

/// Decodes a unit key (exactly `19 + n` bytes).
pub fn decode_cq_key(b: &[u8]) -> Result<CqKey<'_>> {
    const WHAT: &str = "unit key";
    let topic = decode_topic_prefix(WHAT, b, CQ_KEY_OVERHEAD)?;
    let at = 6 + topic.len();
    separator(WHAT, b, at + 4)?;
    Ok(CqKey {
        topic,
        queue_id: be_i32(b, at),
        cq_offset: be_i64(b, at + 5),
    })
}

/// Decodes a 28-byte unit value.
pub fn decode_cq_value(b: &[u8]) -> Result<CqValue> {
    exact_len("unit value", b, CQ_VALUE_LEN)?;
    Ok(CqValue {
        phy_offset: be_i64(b, 0),
        size: be_i32(b, 8),
        tags_code: be_i64(b, 12),
        store_timestamp: be_i64(b, 20),
    })
}

/// Decodes an offset-CF key (exactly `14 + n` bytes, `max` or `min`).
pub fn decode_offset_key(b: &[u8]) -> Result<OffsetKey<'_>> {
    const WHAT: &str = "offset key";
    let topic = decode_topic_prefix(WHAT, b, OFFSET_KEY_OVERHEAD)?;
    let at = 6 + topic.len();
    let kind = match &b[at..at + 3] {
        t if t == MAX_TAG => OffsetKind::Max,
        t if t == MIN_TAG => OffsetKind::Min,
        t => {
            let mut found = [0u8; 3];
            found.copy_from_slice(t);
            return Err(RocksCqCodecError::OffsetKind { offset: at, found });
        }
    };
    separator(WHAT, b, at + 3)?;
    Ok(OffsetKey {
        topic,
        kind,
        queue_id: be_i32(b, at + 4),
    })
}

/// Decodes a 16-byte offset value.
pub fn decode_offset_value(b: &[u8]) -> Result<PhyAndCqOffset> {
    exact_len("offset value", b, OFFSET_VALUE_LEN)?;
    Ok(PhyAndCqOffset {
        phy_offset: be_i64(b, 0),
        cq_offset: be_i64(b, 8),
    })
}

/// Decodes the 8-byte checkpoint value.
pub fn decode_checkpoint_value(b: &[u8]) -> Result<i64> {
    exact_len("checkpoint value", b, CHECKPOINT_VALUE_LEN)?;
    Ok(be_i64(b, 0))
}

/// Whether an offset-CF key is the checkpoint's.
pub fn is_checkpoint_key(b: &[u8]) -> bool {
    b == checkpoint_key().as_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // The byte strings below were written by Java's rocketmq-rocksdb 1.0.6 jar (RocksDB 8.4.4)
    // with the 5.5.0 layouts and read back with `ldb` (see the fact sheet's §2).
    const JAVA_UNIT_KEY: &str = "00000009 01 546f70696354657374 01 00000001 01 0000000000000001";
    const JAVA_UNIT_VALUE: &str = "00000000000003e8 000000c8 0000000000001234 0000018bcfe56801";
    const JAVA_LITE_KEY: &str = "00000009 01 254c4d51252450246c 01 00000000 01 0000000000000000";
    const JAVA_CHECKPOINT_KEY: &str =
        "00000010 01 434845434b504f494e545f544f504943 01 6d6178 01 00000000";

    #[test]
    fn unit_key_matches_java_bytes() {
        let k = encode_cq_key("TopicTest", 1, 1).unwrap();
        assert_eq!(k, hex(JAVA_UNIT_KEY));
        let d = decode_cq_key(&k).unwrap();
        assert_eq!((d.topic, d.queue_id, d.cq_offset), ("TopicTest", 1, 1));
        let lite = encode_cq_key("%LMQ%$P$l", 0, 0).unwrap();
        assert_eq!(lite, hex(JAVA_LITE_KEY));
    }

    #[test]
    fn unit_value_matches_java_bytes() {
        let v = CqValue {
            phy_offset: 1000,
            size: 200,
            tags_code: 0x1234,
            store_timestamp: 1_700_000_000_001,
        };
        assert_eq!(encode_cq_value(&v).to_vec(), hex(JAVA_UNIT_VALUE));
        assert_eq!(decode_cq_value(&hex(JAVA_UNIT_VALUE)).unwrap(), v);
    }

    #[test]
    fn offset_key_and_value_match_java_bytes() {
        let k = encode_offset_key("TopicTest", OffsetKind::Max, 1).unwrap();
        assert_eq!(
            k,
            hex("00000009 01 546f70696354657374 01 6d6178 01 00000001")
        );
        let min = encode_offset_key("TopicTest", OffsetKind::Min, 1).unwrap();
        assert_eq!(&min[15..18], b"min");
        let v = PhyAndCqOffset {
            phy_offset: 4000,
            cq_offset: 4,
        };
        let java = hex("0000000000000fa0 0000000000000004");
        assert_eq!(encode_offset_value(&v).to_vec(), java);
        assert_eq!(decode_offset_value(&java).unwrap(), v);
        let d = decode_offset_key(&min).unwrap();
        assert_eq!(
            (d.topic, d.kind, d.queue_id),
            ("TopicTest", OffsetKind::Min, 1)
        );
    }

    #[test]
    fn checkpoint_matches_java_bytes() {
        assert_eq!(checkpoint_key(), hex(JAVA_CHECKPOINT_KEY));
        assert!(is_checkpoint_key(&hex(JAVA_CHECKPOINT_KEY)));
        let key = checkpoint_key();
        let d = decode_offset_key(&key).unwrap();
        assert_eq!(
            (d.topic, d.kind, d.queue_id),
            (CHECKPOINT_TOPIC, OffsetKind::Max, 0)
        );
        assert_eq!(
            encode_checkpoint_value(4200).to_vec(),
            hex("0000000000001068")
        );
        assert_eq!(
            decode_checkpoint_value(&hex("0000000000001068")).unwrap(),
            4200
        );
        assert!(decode_offset_value(&hex("0000000000001068")).is_err());
    }

    #[test]
    fn queue_bounds_enclose_exactly_that_queues_units() {
        let (start, end) = queue_range_bounds("TopicTest", 1).unwrap();
        assert_eq!(start, hex("00000009 01 546f70696354657374 01 00000001 00"));
        assert_eq!(end, hex("00000009 01 546f70696354657374 01 00000001 02"));
        for (q, off, inside) in [
            (1, 0, true),
            (1, i64::MAX, true),
            (1, -1, true),
            (0, 9, false),
            (2, 0, false),
        ] {
            let k = encode_cq_key("TopicTest", q, off).unwrap();
            assert_eq!(k >= start && k < end, inside, "qid {q} offset {off}");
        }
    }

    #[test]
    fn topic_length_limit_is_javas_300_byte_key() {
        let t = "t".repeat(MAX_TOPIC_LEN);
        assert_eq!(encode_cq_key(&t, 0, 0).unwrap().len(), MAX_KEY_LEN);
        let long = "t".repeat(MAX_TOPIC_LEN + 1);
        assert_eq!(
            encode_cq_key(&long, 0, 0),
            Err(RocksCqCodecError::TopicTooLong {
                len: MAX_TOPIC_LEN + 1
            })
        );
        assert!(queue_range_bounds(&long, 0).is_err());
        assert!(encode_offset_key(&"t".repeat(287), OffsetKind::Max, 0).is_err());
    }

    #[test]
    fn decoders_reject_malformed_bytes() {
        let good = hex(JAVA_UNIT_KEY);
        assert!(decode_cq_key(&good[..good.len() - 1]).is_err());
        let mut bad = good.clone();
        bad[3] = 0x0a; // topic length 10 no longer fits
        assert!(matches!(
            decode_cq_key(&bad),
            Err(RocksCqCodecError::TopicLength { .. })
        ));
        let mut bad = good.clone();
        bad[0] = 0xff; // negative length
        assert!(matches!(
            decode_cq_key(&bad),
            Err(RocksCqCodecError::TopicLength { .. })
        ));
        let mut bad = good.clone();
        bad[19] = 0x00; // separator before the cq offset
        assert!(matches!(
            decode_cq_key(&bad),
            Err(RocksCqCodecError::Separator { offset: 19, .. })
        ));
        let mut bad = good.clone();
        bad[5] = 0xff;
        assert!(matches!(
            decode_cq_key(&bad),
            Err(RocksCqCodecError::TopicUtf8 { .. })
        ));
        let mut key = encode_offset_key("T", OffsetKind::Max, 0).unwrap();
        key[7] = b'X';
        assert!(matches!(
            decode_offset_key(&key),
            Err(RocksCqCodecError::OffsetKind { offset: 7, .. })
        ));
        assert!(decode_cq_value(&[0u8; 27]).is_err());
        assert!(decode_cq_value(&[0u8; 29]).is_err());
        for n in 0..40 {
            let junk = vec![0x01u8; n];
            let _ = decode_cq_key(&junk);
            let _ = decode_offset_key(&junk);
        }
    }
}
