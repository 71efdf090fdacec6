//! The SEND_BATCH_MESSAGE body: client-encoded messages back to back (`MessageDecoder.encodeMessage`,
//! read by the broker's `MessageExtEncoder.encodeBatch`).
//!
//! ```text
//! | totalSize: i32 | magic: i32 (0) | bodyCRC: i32 (0) | flag: i32 | bodyLen: i32 | body |
//! | propertiesLen: i16 | properties |
//! ```
//! Like Java, the reader walks the fields in order and ignores `magic`/`bodyCRC`; unlike Java it
//! refuses a record whose `totalSize` is not the length its fields give (the store always did).

use thiserror::Error;

/// Fixed bytes of one record besides body and properties.
pub const BATCH_RECORD_OVERHEAD: usize = 4 * 5 + 2;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum BatchError {
    #[error("batch record {index} at byte {offset}: {what}")]
    Truncated {
        index: usize,
        offset: usize,
        what: &'static str,
    },
    #[error("batch record {index} at byte {offset}: negative {what} {value}")]
    Negative {
        index: usize,
        offset: usize,
        what: &'static str,
        value: i64,
    },
    #[error("batch record {index} at byte {offset}: totalSize {declared}, fields take {actual}")]
    SizeMismatch {
        index: usize,
        offset: usize,
        declared: i32,
        actual: usize,
    },
}

/// One message of a batch, borrowing the request body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMessage<'a> {
    pub flag: i32,
    pub body: &'a [u8],
    /// The raw properties string (§8.1); decode with `Properties::decode_bytes`.
    pub properties: &'a [u8],
}

impl BatchMessage<'_> {
    pub fn encoded_len(&self) -> usize {
        BATCH_RECORD_OVERHEAD + self.body.len() + self.properties.len()
    }
}

/// Splits a batch body into its messages.
pub fn decode_batch(body: &[u8]) -> Result<Vec<BatchMessage<'_>>, BatchError> {
    let mut out = Vec::new();
    let mut r = Reader {
        buf: body,
        pos: 0,
        index: 0,
    };
    while r.pos < body.len() {
        out.push(r.record()?);
        r.index += 1;
    }
    Ok(out)
}

/// Encodes messages as a client does (magic and CRC written as 0).
pub fn encode_batch(messages: &[BatchMessage<'_>], out: &mut Vec<u8>) {
    for m in messages {
        out.extend_from_slice(&(m.encoded_len() as i32).to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
        out.extend_from_slice(&m.flag.to_be_bytes());
        out.extend_from_slice(&(m.body.len() as i32).to_be_bytes());
        out.extend_from_slice(m.body);
        out.extend_from_slice(&(m.properties.len() as i16).to_be_bytes());
        out.extend_from_slice(m.properties);
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    index: usize,
}

impl<'a> Reader<'a> {
    fn record(&mut self) -> Result<BatchMessage<'a>, BatchError> {
        let start = self.pos;
        let total_size = self.int("totalSize")?;
        let _magic = self.take(4, "magicCode")?;
        let _crc = self.take(4, "bodyCRC")?;
        let flag = self.int("flag")?;
        let body_len = self.int("bodyLength")?;
        let body = self.take(self.length(body_len as i64, "bodyLength")?, "body")?;
        // Java (`MessageDecoder.decodeMessageClient`) reads properties only when the length is
        // positive: a negative one means none.
        let prop_len = i16::from_be_bytes(self.array::<2>("propertiesLength")?).max(0);
        let properties = self.take(prop_len as usize, "properties")?;
        if usize::try_from(total_size) != Ok(self.pos - start) {
            return Err(BatchError::SizeMismatch {
                index: self.index,
                offset: start,
                declared: total_size,
                actual: self.pos - start,
            });
        }
        Ok(BatchMessage {
            flag,
            body,
            properties,
        })
    }

    fn length(&self, value: i64, what: &'static str) -> Result<usize, BatchError> {
        usize::try_from(value).map_err(|_| BatchError::Negative {
            index: self.index,
            offset: self.pos,
            what,
            value,
        })
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], BatchError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or(BatchError::Truncated {
            index: self.index,
            offset: self.pos,
            what,
        })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], BatchError> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn int(&mut self, what: &'static str) -> Result<i32, BatchError> {
        Ok(i32::from_be_bytes(self.array::<4>(what)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_pins_layout() {
        let msgs = [
            BatchMessage {
                flag: 7,
                body: b"hi",
                properties: b"TAGS\x01A\x02",
            },
            BatchMessage {
                flag: 0,
                body: b"",
                properties: b"",
            },
        ];
        let mut out = Vec::new();
        encode_batch(&msgs, &mut out);
        assert_eq!(&out[..4], &(22 + 2 + 7i32).to_be_bytes());
        assert_eq!(&out[12..16], &7i32.to_be_bytes());
        assert_eq!(out.len(), 31 + 22);
        assert_eq!(decode_batch(&out).unwrap(), msgs);
    }

    #[test]
    fn truncated_and_negative_lengths_are_errors() {
        let mut out = Vec::new();
        let m = BatchMessage {
            flag: 1,
            body: b"abc",
            properties: b"",
        };
        encode_batch(&[m], &mut out);
        assert!(matches!(
            decode_batch(&out[..out.len() - 1]),
            Err(BatchError::Truncated { index: 0, .. })
        ));
        out[16..20].copy_from_slice(&(-1i32).to_be_bytes());
        assert!(matches!(
            decode_batch(&out),
            Err(BatchError::Negative { .. })
        ));
        assert_eq!(decode_batch(&[]).unwrap(), vec![]);
        out[16..20].copy_from_slice(&3i32.to_be_bytes());
        out[..4].copy_from_slice(&26i32.to_be_bytes());
        assert!(matches!(
            decode_batch(&out),
            Err(BatchError::SizeMismatch {
                declared: 26,
                actual: 25,
                ..
            })
        ));
    }

    /// Java reads a message's properties only when their length is positive.
    #[test]
    fn a_negative_properties_length_reads_as_no_properties() {
        let mut out = Vec::new();
        let m = BatchMessage {
            flag: 0,
            body: b"abc",
            properties: b"",
        };
        encode_batch(&[m], &mut out);
        let at = out.len() - 2;
        out[at..].copy_from_slice(&(-5i16).to_be_bytes());
        let decoded = decode_batch(&out).unwrap();
        assert_eq!(decoded.len(), 1);
        assert!(decoded[0].properties.is_empty());
        assert_eq!(decoded[0].body, b"abc");
    }
}
