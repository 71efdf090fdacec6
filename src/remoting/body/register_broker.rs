//! `RegisterBrokerBody` (REGISTER_BROKER body): the broker's topic configs, its DataVersion and
//! filter servers, in JSON or in Java's compressed form, plus the `bodyCrc32` checksum.
//!
//! JSON (fastjson, alphabetical):
//! `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{…},"mappingDataVersion":{…},
//!   "topicConfigTable":{"T":{TopicConfig}},"topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}`
//!
//! Compressed (`RegisterBrokerBody.encode(true)`): one zlib stream (DeflaterOutputStream, best
//! compression) holding, all ints big-endian:
//! ```text
//! | i32 len | DataVersion JSON | i32 topicCount | topicCount x (i32 len | TopicConfig.encode()) |
//! | i32 len | filterServerList JSON | i32 mappingCount | mappingCount x (i32 len | mapping JSON) |
//! ```
//! `TopicConfig.encode()` is `name read write perm filterType attributesJSON`, space-separated
//! (topicSysFlag and order are not carried). The mapping section is read only from brokers of
//! version >= V5_0_0 (413).

use std::collections::BTreeMap;
use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::data_version::DataVersion;
use super::topic_route::decode_lenient;
use crate::common::topic::TopicConfig;
use crate::remoting::error::RemotingError;

/// V3_0_11: brokers below it send a bare `TopicConfigSerializeWrapper`.
pub const VERSION_V3_0_11: i32 = 37;
/// V5_0_0: compressed bodies from brokers at or above it carry the mapping section.
pub const VERSION_V5_0_0: i32 = 413;
/// Largest inflated body accepted (a bound against decompression bombs).
pub const MAX_INFLATED_BODY: u64 = 64 * 1024 * 1024;

/// `TopicConfigAndMappingSerializeWrapper` (a superset of `TopicConfigSerializeWrapper`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicConfigSerializeWrapper {
    pub data_version: DataVersion,
    pub mapping_data_version: DataVersion,
    pub topic_config_table: BTreeMap<String, TopicConfig>,
    pub topic_queue_mapping_detail_map: BTreeMap<String, Value>,
    pub topic_queue_mapping_info_map: BTreeMap<String, Value>,
}

super::fastjson::fastjson_body!(TopicConfigSerializeWrapper);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RegisterBrokerBody {
    pub filter_server_list: Vec<String>,
    pub topic_config_serialize_wrapper: TopicConfigSerializeWrapper,
}

impl RegisterBrokerBody {
    pub fn new(data_version: DataVersion, topics: impl IntoIterator<Item = TopicConfig>) -> Self {
        let mut body = Self::default();
        body.topic_config_serialize_wrapper.data_version = data_version;
        body.topic_config_serialize_wrapper.topic_config_table = topics
            .into_iter()
            .map(|t| (t.topic_name.clone(), t))
            .collect();
        body
    }

    /// The plain JSON form.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Java's `encode(true)`: the zlib stream described in the module doc.
    pub fn encode_compressed(&self) -> Vec<u8> {
        let w = &self.topic_config_serialize_wrapper;
        let mut raw = Vec::with_capacity(1024);
        put_chunk(&mut raw, &w.data_version.encode());
        raw.extend_from_slice(&(w.topic_config_table.len() as i32).to_be_bytes());
        for tc in w.topic_config_table.values() {
            put_chunk(&mut raw, encode_topic_config_line(tc).as_bytes());
        }
        put_chunk(
            &mut raw,
            &serde_json::to_vec(&self.filter_server_list).unwrap_or_default(),
        );
        raw.extend_from_slice(&(w.topic_queue_mapping_info_map.len() as i32).to_be_bytes());
        for info in w.topic_queue_mapping_info_map.values() {
            put_chunk(&mut raw, &serde_json::to_vec(info).unwrap_or_default());
        }
        let mut enc = ZlibEncoder::new(Vec::with_capacity(raw.len() / 2), Compression::best());
        // Writing into a Vec cannot fail.
        let _ = enc.write_all(&raw);
        enc.finish().unwrap_or_default()
    }

    /// Reads a REGISTER_BROKER body as the Java NameServer does for a broker of `version`.
    /// An absent body means "no topics" with an all-zero DataVersion. JSON is tried first
    /// whatever `compressed` says: 5.x brokers deflate with the flag left false.
    pub fn decode(body: &[u8], compressed: bool, version: i32) -> Result<Self, RemotingError> {
        if body.is_empty() {
            let mut b = Self::default();
            b.topic_config_serialize_wrapper.data_version = DataVersion::zero();
            return Ok(b);
        }
        let looks_json = body
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'{');
        if !looks_json || (compressed && body.first() == Some(&0x78)) {
            return Self::decode_compressed(body, version);
        }
        if version < VERSION_V3_0_11 {
            let wrapper: TopicConfigSerializeWrapper =
                decode_lenient(body, "TopicConfigSerializeWrapper")?;
            return Ok(Self {
                filter_server_list: Vec::new(),
                topic_config_serialize_wrapper: wrapper,
            });
        }
        decode_lenient(body, "RegisterBrokerBody")
    }

    /// Java's `decode(data, true, version)`.
    pub fn decode_compressed(body: &[u8], version: i32) -> Result<Self, RemotingError> {
        let mut r = ZlibDecoder::new(body).take(MAX_INFLATED_BODY);
        let mut out = Self::default();
        let w = &mut out.topic_config_serialize_wrapper;
        w.data_version = DataVersion::decode(&read_chunk(&mut r, "dataVersion")?)
            .map_err(|e| RemotingError::Body(format!("DataVersion: {e}")))?;
        let count = read_i32(&mut r, "topicCount")?;
        for i in 0..count.max(0) {
            let line = read_chunk(&mut r, "topicConfig")?;
            let line = String::from_utf8_lossy(&line);
            let tc = decode_topic_config_line(&line).ok_or_else(|| {
                RemotingError::Body(format!("compressed topic config #{i} {line:?}"))
            })?;
            w.topic_config_table.insert(tc.topic_name.clone(), tc);
        }
        let filters = read_chunk(&mut r, "filterServerList")?;
        out.filter_server_list = serde_json::from_slice(&filters).unwrap_or_default();
        if version >= VERSION_V5_0_0 {
            let n = read_i32(&mut r, "mappingCount")?;
            for _ in 0..n.max(0) {
                let info: Value = serde_json::from_slice(&read_chunk(&mut r, "mapping")?)
                    .map_err(|e| RemotingError::Body(format!("compressed mapping info: {e}")))?;
                let topic = info
                    .get("topic")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                out.topic_config_serialize_wrapper
                    .topic_queue_mapping_info_map
                    .insert(topic, info);
            }
        }
        Ok(out)
    }
}

/// `UtilAll.crc32`: CRC32 of the body masked to 31 bits, as sent in `bodyCrc32`.
pub fn body_crc32(body: &[u8]) -> i32 {
    (crc32fast::hash(body) & 0x7FFF_FFFF) as i32
}

/// `TopicConfig.encode()`: `name read write perm filterType attributesJSON`.
pub fn encode_topic_config_line(tc: &TopicConfig) -> String {
    format!(
        "{} {} {} {} {} {}",
        tc.topic_name,
        tc.read_queue_nums,
        tc.write_queue_nums,
        tc.perm,
        tc.topic_filter_type,
        serde_json::to_string(&tc.attributes).unwrap_or_else(|_| "{}".into())
    )
}

/// `TopicConfig.decode()`: at least five space-separated fields; unparsable attributes are ignored.
pub fn decode_topic_config_line(line: &str) -> Option<TopicConfig> {
    let parts: Vec<&str> = line.split(' ').collect();
    if parts.len() < 5 {
        return None;
    }
    let mut tc = TopicConfig {
        topic_name: parts[0].to_string(),
        read_queue_nums: parts[1].parse().ok()?,
        write_queue_nums: parts[2].parse().ok()?,
        perm: parts[3].parse().ok()?,
        topic_filter_type: parts[4].to_string(),
        ..TopicConfig::default()
    };
    if let Some(attrs) = parts.get(5) {
        tc.attributes = serde_json::from_str(attrs).unwrap_or_default();
    }
    Some(tc)
}

fn put_chunk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn read_i32(r: &mut impl Read, what: &str) -> Result<i32, RemotingError> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)
        .map_err(|e| RemotingError::Body(format!("compressed body, {what}: {e}")))?;
    Ok(i32::from_be_bytes(b))
}

fn read_chunk(r: &mut impl Read, what: &str) -> Result<Vec<u8>, RemotingError> {
    let len = read_i32(r, what)?;
    if len < 0 || len as u64 > MAX_INFLATED_BODY {
        return Err(RemotingError::Body(format!(
            "compressed body, {what}: length {len} out of range"
        )));
    }
    let mut buf = Vec::new();
    r.take(len as u64)
        .read_to_end(&mut buf)
        .map_err(|e| RemotingError::Body(format!("compressed body, {what}: {e}")))?;
    if buf.len() != len as usize {
        return Err(RemotingError::Body(format!(
            "compressed body, {what}: {} of {len} bytes before the end",
            buf.len()
        )));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RegisterBrokerBody {
        let dv = DataVersion {
            counter: 3,
            state_version: 0,
            timestamp: 1_700_000_000_000,
        };
        let mut b = RegisterBrokerBody::new(
            dv,
            [
                TopicConfig::new("TBW102", 8, 8, 7),
                TopicConfig::new("TopicTest", 4, 4, 6),
            ],
        );
        b.topic_config_serialize_wrapper.mapping_data_version = dv;
        b
    }

    #[test]
    fn plain_json_matches_java_shape() {
        let text = String::from_utf8(sample().encode()).unwrap();
        assert!(text.starts_with(r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":0,"timestamp":1700000000000},"mappingDataVersion":"#));
        assert!(text.contains(r#""TopicTest":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}"#));
        assert!(
            text.ends_with(r#""topicQueueMappingDetailMap":{},"topicQueueMappingInfoMap":{}}}"#)
        );
        assert_eq!(
            RegisterBrokerBody::decode(text.as_bytes(), false, 479).unwrap(),
            sample()
        );
    }

    #[test]
    fn compressed_round_trip_with_and_without_flag() {
        let z = sample().encode_compressed();
        assert_eq!(z[0], 0x78);
        for flag in [true, false] {
            let back = RegisterBrokerBody::decode(&z, flag, 479).unwrap();
            let w = &back.topic_config_serialize_wrapper;
            assert_eq!(w.data_version.counter, 3);
            assert_eq!(w.topic_config_table["TopicTest"].perm, 6);
            assert_eq!(w.topic_config_table["TBW102"].read_queue_nums, 8);
        }
    }

    #[test]
    fn truncated_compressed_body_is_an_error() {
        let z = sample().encode_compressed();
        assert!(RegisterBrokerBody::decode(&z[..z.len() / 2], true, 479).is_err());
        assert!(RegisterBrokerBody::decode(b"\x78garbage", true, 479).is_err());
    }

    #[test]
    fn crc_is_masked_to_31_bits() {
        assert_eq!(
            body_crc32(b"123456789"),
            0xCBF4_3926u32 as i32 & 0x7FFF_FFFF
        );
    }
}
