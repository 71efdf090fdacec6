//! fastjson-compatible JSON for bodies: a writer that emits what Java's `JSON.toJSONString` emits
//! and a lenient reader that accepts fastjson's non-standard forms.
//!
//! Writer (`to_vec`): compact; object properties sorted by name; `null` properties omitted;
//! strings escaped as fastjson does (control characters `\u00XX`, non-ASCII raw). Map keys that
//! Java writes bare — integer keys (`{0:"addr"}`) and bean keys such as `MessageQueue`
//! (`{{"brokerName":"b","queueId":0,"topic":"t"}:5}`) — are produced by the `serialize_with`
//! helpers [`mq_key_map`] and [`int_key_map`], which mark the key with [`RAW_KEY_PREFIX`].
//! `to_vec_standard` writes the same document as standard JSON (marked keys become strings).
//! Types using these helpers must be encoded with this module, not `serde_json` directly.
//!
//! Reader (`from_slice`): standard JSON goes straight to serde; anything else is first rewritten
//! into standard JSON by `common::fastjson::normalize` (bare keys quoted, object or array keys
//! turned into strings holding their JSON text, single quotes, stray commas), then given to serde.
//! The helpers' `deserialize` halves re-parse the keys.

use std::collections::BTreeMap;
use std::fmt::Display;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::common::topic::MessageQueue;
use crate::common::{fastjson, lenient};
use crate::remoting::error::RemotingError;
use crate::remoting::serialize::json::write_json_string;

/// Marks a map key whose text is written bare by [`to_vec`].
pub const RAW_KEY_PREFIX: &str = "\u{0}fastjson-raw\u{0}";
pub use crate::common::fastjson::MAX_DEPTH;

/// Encodes `value` as fastjson does.
pub fn to_vec<T: Serialize>(value: &T) -> Result<Vec<u8>, RemotingError> {
    encode(value, false)
}

/// Encodes `value` as standard compact JSON with sorted properties (bare keys quoted).
pub fn to_vec_standard<T: Serialize>(value: &T) -> Result<Vec<u8>, RemotingError> {
    encode(value, true)
}

fn encode<T: Serialize>(value: &T, standard: bool) -> Result<Vec<u8>, RemotingError> {
    let v = serde_json::to_value(value).map_err(|e| RemotingError::Body(e.to_string()))?;
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, &v, standard);
    Ok(out)
}

fn write_value(out: &mut Vec<u8>, v: &Value, standard: bool) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item, standard);
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(out, map, standard),
    }
}

fn write_object(out: &mut Vec<u8>, map: &serde_json::Map<String, Value>, standard: bool) {
    let mut entries: Vec<(&String, &Value)> = map.iter().filter(|(_, v)| !v.is_null()).collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match k.strip_prefix(RAW_KEY_PREFIX) {
            Some(raw) if !standard => out.extend_from_slice(raw.as_bytes()),
            Some(raw) => write_json_string(out, raw),
            None => write_json_string(out, k),
        }
        out.push(b':');
        write_value(out, v, standard);
    }
    out.push(b'}');
}

/// Gives body types Java's codec: `decode` reads what Java or Go wrote (fastjson's dialect
/// included, never panics), `encode` writes what `JSON.toJSONString` writes.
macro_rules! fastjson_body {
    ($($body:ty),+ $(,)?) => {$(
        impl $body {
            pub fn decode(body: &[u8]) -> Result<Self, $crate::remoting::error::RemotingError> {
                $crate::remoting::body::fastjson::from_slice(body)
            }

            pub fn encode(&self) -> Vec<u8> {
                $crate::remoting::body::fastjson::to_vec(self).unwrap_or_default()
            }
        }
    )+};
}
pub(crate) use fastjson_body;

/// Bodies up to this size are bound leniently through a parsed document (which costs up to ~16
/// times the body in memory); larger ones (a broker registering many topics) are read straight
/// into their types, as before.
pub const LENIENT_BODY_MAX: usize = 1024 * 1024;

/// Decodes a body any client wrote, with fastjson's leniency (`common::lenient`: numbers as
/// strings and strings as numbers, enum ordinals, nulls, smart-matched names); never panics.
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, RemotingError> {
    if bytes.len() > LENIENT_BODY_MAX {
        return match serde_json::from_slice(bytes) {
            Ok(v) => Ok(v),
            Err(_) => serde_json::from_str(&normalize(bytes)?)
                .map_err(|e| RemotingError::Body(e.to_string())),
        };
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) => serde_json::from_str(&normalize(bytes)?)
            .map_err(|e| RemotingError::Body(e.to_string()))?,
    };
    lenient::from_value(value).map_err(|e| RemotingError::Body(e.to_string()))
}

/// Rewrites fastjson's non-standard JSON into standard JSON (`common::fastjson`, shared with the
/// store's config files).
pub fn normalize(bytes: &[u8]) -> Result<String, RemotingError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| RemotingError::Body(format!("body is not UTF-8: {e}")))?;
    fastjson::normalize(text).map_err(|e| RemotingError::Body(e.to_string()))
}

/// Reads a Java enum given by name or by ordinal (fastjson accepts both).
pub fn java_enum_index<'de, D: Deserializer<'de>>(d: D, names: &[&str]) -> Result<usize, D::Error> {
    let v = Value::deserialize(d)?;
    let found = match &v {
        Value::String(s) => names.iter().position(|n| n == s),
        Value::Number(n) => n.as_u64().map(|i| i as usize).filter(|&i| i < names.len()),
        _ => None,
    };
    found.ok_or_else(|| {
        D::Error::custom(format!("unknown enum value {v}, expected one of {names:?}"))
    })
}

/// Reads an integer given as a JSON number or a string (Go writes `codeSet` as strings).
pub fn lenient_i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    match Value::deserialize(d)? {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .ok_or_else(|| D::Error::custom(format!("{n} is not an integer"))),
        Value::String(s) => s.trim().parse().map_err(D::Error::custom),
        other => Err(D::Error::custom(format!("{other} is not an integer"))),
    }
}

/// Raw-key text for a key serialized as compact JSON.
fn raw_key<K: Serialize, E: serde::ser::Error>(k: &K) -> Result<String, E> {
    let json = serde_json::to_string(k).map_err(E::custom)?;
    Ok(format!("{RAW_KEY_PREFIX}{json}"))
}

fn strip_raw(key: &str) -> &str {
    key.strip_prefix(RAW_KEY_PREFIX).unwrap_or(key)
}

/// Writes `map` with every key marked raw (written bare by [`to_vec`]).
fn serialize_raw_keys<S: Serializer, K: Serialize, V: Serialize>(
    map: &BTreeMap<K, V>,
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut m = BTreeMap::new();
    for (k, v) in map {
        m.insert(raw_key::<_, S::Error>(k)?, v);
    }
    m.serialize(s)
}

/// `Map<MessageQueue, V>` written with bare object keys (ConsumeStats, TopicStatsTable,
/// ResetOffsetBody). Reading accepts object keys, string keys holding the object's JSON, and
/// the gson array form `[[{mq},v],...]` Go also understands.
pub mod mq_key_map {
    use super::*;

    pub fn serialize<S: Serializer, V: Serialize>(
        map: &BTreeMap<MessageQueue, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        serialize_raw_keys(map, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: DeserializeOwned>(
        d: D,
    ) -> Result<BTreeMap<MessageQueue, V>, D::Error> {
        let mut out = BTreeMap::new();
        match Value::deserialize(d)? {
            Value::Object(map) => {
                for (k, v) in map {
                    let mq = serde_json::from_str(strip_raw(&k)).map_err(D::Error::custom)?;
                    out.insert(mq, lenient::from_value(v).map_err(D::Error::custom)?);
                }
            }
            Value::Array(pairs) => {
                for pair in pairs {
                    let (mq, v): (MessageQueue, V) =
                        lenient::from_value(pair).map_err(D::Error::custom)?;
                    out.insert(mq, v);
                }
            }
            Value::Null => {}
            other => return Err(D::Error::custom(format!("expected a map, found {other}"))),
        }
        Ok(out)
    }
}

/// `Map<Long|Integer, V>` written with bare integer keys (`{0:"addr"}`); reading accepts bare
/// or quoted keys.
pub mod int_key_map {
    use super::*;

    pub fn serialize<S: Serializer, V: Serialize>(
        map: &BTreeMap<i64, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        serialize_raw_keys(map, s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: DeserializeOwned>(
        d: D,
    ) -> Result<BTreeMap<i64, V>, D::Error> {
        let map: BTreeMap<String, V> = BTreeMap::deserialize(d)?;
        map.into_iter()
            .map(|(k, v)| Ok((parse_int_key(strip_raw(&k)).map_err(D::Error::custom)?, v)))
            .collect()
    }

    fn parse_int_key(k: &str) -> Result<i64, impl Display> {
        k.trim()
            .parse::<i64>()
            .map_err(|_| format!("map key {k:?} is not an integer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Sample {
        zeta: i32,
        #[serde(skip_serializing_if = "Option::is_none")]
        absent: Option<String>,
        nothing: Option<String>,
        alpha: f64,
        #[serde(with = "int_key_map")]
        addrs: BTreeMap<i64, String>,
        #[serde(with = "mq_key_map")]
        offsets: BTreeMap<MessageQueue, i64>,
    }

    fn sample() -> Sample {
        Sample {
            zeta: 1,
            absent: None,
            nothing: None,
            alpha: 0.0,
            addrs: [(0, "10.0.0.1:10911".to_string()), (1, "b".to_string())].into(),
            offsets: [(MessageQueue::new("T", "broker-a", 0), 5)].into(),
        }
    }

    const FASTJSON: &str = r#"{"addrs":{0:"10.0.0.1:10911",1:"b"},"alpha":0.0,"offsets":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:5},"zeta":1}"#;

    #[test]
    fn writer_sorts_omits_nulls_and_writes_bare_keys() {
        let out = to_vec(&sample()).unwrap();
        assert_eq!(std::str::from_utf8(&out).unwrap(), FASTJSON);
    }

    #[test]
    fn standard_writer_quotes_bare_keys() {
        let out = String::from_utf8(to_vec_standard(&sample()).unwrap()).unwrap();
        assert!(out.starts_with(
            r#"{"addrs":{"0":"10.0.0.1:10911","1":"b"},"alpha":0.0,"offsets":{"{\"brokerName\""#
        ));
        let back: Sample = from_slice(out.as_bytes()).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn reader_accepts_fastjson_forms() {
        let back: Sample = from_slice(FASTJSON.as_bytes()).unwrap();
        assert_eq!(back, sample());
        let odd = br#"{zeta:1,'alpha':0.5,,"addrs":{ 0 : 'x', },"offsets":[[{"topic":"T","brokerName":"broker-a","queueId":0},5]],}"#;
        let back: Sample = from_slice(odd).unwrap();
        assert_eq!((back.alpha, back.addrs[&0].as_str()), (0.5, "x"));
        assert_eq!(back.offsets.len(), 1);
    }

    #[test]
    fn normalize_rejects_garbage_without_panicking() {
        for bad in [
            &b"{"[..],
            b"{\"a\"",
            b"[1,",
            b"{{}",
            b"\"abc",
            b"{'a':\\",
            b"\xff",
            b"{a b}",
            b"1 2",
        ] {
            assert!(normalize(bad).is_err(), "{:?}", bad);
        }
        let deep = "[".repeat(1000);
        assert!(normalize(deep.as_bytes()).is_err());
        assert_eq!(normalize(b" {a:[1, 2]} ").unwrap(), r#"{"a":[1,2]}"#);
    }

    #[test]
    fn enums_by_name_or_ordinal_and_lenient_ints() {
        #[derive(Deserialize)]
        struct E {
            #[serde(deserialize_with = "model")]
            m: usize,
            #[serde(deserialize_with = "lenient_i64")]
            n: i64,
        }
        fn model<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
            java_enum_index(d, &["BROADCASTING", "CLUSTERING"])
        }
        let e: E = from_slice(br#"{"m":"CLUSTERING","n":"2598919"}"#).unwrap();
        assert_eq!((e.m, e.n), (1, 2598919));
        let e: E = from_slice(br#"{"m":0,"n":7}"#).unwrap();
        assert_eq!((e.m, e.n), (0, 7));
        assert!(from_slice::<E>(br#"{"m":"X","n":1}"#).is_err());
    }
}
