//! ROCKETMQ binary header (type 1):
//!
//! ```text
//! code:i16 | language:u8 | version:i16 | opaque:i32 | flag:i32 |
//! remarkLen:i32 | remark | extLen:i32 | { keyLen:i16 key valLen:i32 val }*
//! ```
//! A zero-length string decodes as absent, as in Java.

use crate::remoting::codec::MAX_EXT_FIELDS;
use crate::remoting::command::{ExtFields, LanguageCode, RemotingCommand, SerializeType};
use crate::remoting::error::RemotingError;

const FIXED_LEN: usize = 21;

pub fn encode_header(cmd: &RemotingCommand, out: &mut Vec<u8>) {
    out.extend_from_slice(&(cmd.code as i16).to_be_bytes());
    out.push(cmd.language.code());
    out.extend_from_slice(&(cmd.version as i16).to_be_bytes());
    out.extend_from_slice(&cmd.opaque.to_be_bytes());
    out.extend_from_slice(&cmd.flag.to_be_bytes());
    let remark = cmd.remark.as_deref().unwrap_or("").as_bytes();
    out.extend_from_slice(&(remark.len() as i32).to_be_bytes());
    out.extend_from_slice(remark);
    let len_at = out.len();
    out.extend_from_slice(&0i32.to_be_bytes());
    if let Some(ext) = &cmd.ext_fields {
        for (k, v) in ext.iter() {
            out.extend_from_slice(&(k.len() as i16).to_be_bytes());
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(&(v.len() as i32).to_be_bytes());
            out.extend_from_slice(v.as_bytes());
        }
    }
    let ext_len = (out.len() - len_at - 4) as i32;
    out[len_at..len_at + 4].copy_from_slice(&ext_len.to_be_bytes());
}

pub fn decode_header(bytes: &[u8]) -> Result<RemotingCommand, RemotingError> {
    let mut r = Reader { bytes, pos: 0 };
    if bytes.len() < FIXED_LEN {
        return Err(RemotingError::Binary {
            offset: 0,
            what: "header shorter than 21 bytes",
        });
    }
    let code = r.i16()? as i32;
    let language = LanguageCode::from_byte(r.u8()?);
    let version = r.i16()? as i32;
    let opaque = r.i32()?;
    let flag = r.i32()?;
    let remark_len = r.len32("remark length")?;
    let remark = r.str(remark_len, "remark")?.map(str::to_owned);
    let ext_len = r.len32("extFields length")?;
    let ext_end = r.pos + ext_len;
    if ext_end > bytes.len() {
        return Err(RemotingError::Binary {
            offset: r.pos,
            what: "extFields longer than header",
        });
    }
    // each entry carries 6 bytes of lengths; the rest is names and values
    let mut ext = ExtFields::with_capacity(ext_len / 16 + 1, ext_len);
    while r.pos < ext_end {
        let klen = r.i16()? as u16 as usize;
        let key = r.str(klen, "ext key")?;
        let vlen = r.len32("ext value length")?;
        let val = r.str(vlen, "ext value")?;
        if r.pos > ext_end {
            return Err(RemotingError::Binary {
                offset: r.pos,
                what: "ext entry crosses block end",
            });
        }
        if let (Some(k), Some(v)) = (key, val) {
            if ext.len() >= MAX_EXT_FIELDS {
                return Err(RemotingError::TooManyExtFields {
                    max: MAX_EXT_FIELDS,
                });
            }
            ext.push_unchecked(k, v);
        }
    }
    // one sort instead of a scan per entry: linear-logarithmic in what the frame carries
    ext.dedup_keep_last();
    Ok(RemotingCommand {
        code,
        language,
        version,
        opaque,
        flag,
        remark,
        ext_fields: (ext_len > 0).then_some(ext),
        serialize_type: SerializeType::RocketMq,
        ..RemotingCommand::default()
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], RemotingError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or(RemotingError::Binary {
            offset: self.pos,
            what,
        })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, RemotingError> {
        Ok(self.take(1, "language")?[0])
    }

    fn i16(&mut self) -> Result<i16, RemotingError> {
        let b = self.take(2, "int16")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, RemotingError> {
        let b = self.take(4, "int32")?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn len32(&mut self, what: &'static str) -> Result<usize, RemotingError> {
        let at = self.pos;
        let v = self.i32()?;
        if v < 0 || v as usize > self.bytes.len() - self.pos {
            return Err(RemotingError::Binary { offset: at, what });
        }
        Ok(v as usize)
    }

    fn str(&mut self, n: usize, what: &'static str) -> Result<Option<&'a str>, RemotingError> {
        let at = self.pos;
        let b = self.take(n, what)?;
        if b.is_empty() {
            return Ok(None);
        }
        std::str::from_utf8(b)
            .map(Some)
            .map_err(|_| RemotingError::Binary { offset: at, what })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's worked example: a route query for `TopicTest`, 41 header bytes.
    const ROUTE_QUERY: [u8; 41] = [
        0x00, 0x69, 0x00, 0x01, 0xdf, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x14, 0x00,
        0x05, b't', b'o', b'p', b'i', b'c', 0, 0, 0, 9, b'T', b'o', b'p', b'i', b'c', b'T', b'e',
        b's', b't',
    ];

    #[test]
    fn decodes_reference_route_query() {
        let cmd = decode_header(&ROUTE_QUERY).unwrap();
        assert_eq!(
            (cmd.code, cmd.version, cmd.opaque, cmd.flag),
            (105, 479, 1, 0)
        );
        assert_eq!(cmd.ext("topic"), Some("TopicTest"));
        assert_eq!(cmd.remark, None);
    }

    #[test]
    fn encodes_reference_route_query_bytes() {
        let mut cmd = RemotingCommand::request(105);
        cmd.opaque = 1;
        cmd.ext_mut().insert("topic", "TopicTest");
        let mut out = Vec::new();
        encode_header(&cmd, &mut out);
        assert_eq!(out, ROUTE_QUERY);
    }

    #[test]
    fn rejects_lengths_past_the_header() {
        let mut bad = ROUTE_QUERY;
        bad[20] = 0x7f;
        assert!(decode_header(&bad).is_err());
        assert!(decode_header(&ROUTE_QUERY[..30]).is_err());
    }
}
