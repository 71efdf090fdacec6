//! JSON header (type 0). Written the way fastjson writes Java's `RemotingCommand`: compact, fields
//! in alphabetical order, nulls omitted, enums by name, extFields values as strings. Read leniently:
//! any order, missing fields, numbers or booleans where strings are usual, unknown fields.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::remoting::codec::MAX_EXT_FIELDS;
use crate::remoting::command::{ExtFields, LanguageCode, RemotingCommand, SerializeType};
use crate::remoting::error::RemotingError;

/// Appends `cmd`'s header as JSON to `out`.
pub fn encode_header(cmd: &RemotingCommand, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"code\":");
    push_int(out, cmd.code as i64);
    if let Some(ext) = &cmd.ext_fields {
        out.extend_from_slice(b",\"extFields\":{");
        for (i, (k, v)) in ext.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_json_string(out, k);
            out.push(b':');
            write_json_string(out, v);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b",\"flag\":");
    push_int(out, cmd.flag as i64);
    out.extend_from_slice(b",\"language\":");
    write_json_string(out, cmd.language.name());
    out.extend_from_slice(b",\"opaque\":");
    push_int(out, cmd.opaque as i64);
    if let Some(remark) = &cmd.remark {
        out.extend_from_slice(b",\"remark\":");
        write_json_string(out, remark);
    }
    out.extend_from_slice(b",\"serializeTypeCurrentRPC\":\"");
    out.extend_from_slice(cmd.serialize_type.name().as_bytes());
    out.extend_from_slice(b"\",\"version\":");
    push_int(out, cmd.version as i64);
    out.push(b'}');
}

/// Decodes a JSON header. The body is attached by the caller.
///
/// Reads the tokens straight into the command (serde_json's tokenizer, a visitor per field), with
/// no `serde_json::Value` tree: field names are matched without allocating and unknown fields are
/// skipped. Same results as reading into a `Map<String, Value>` first: the last of repeated keys
/// wins and extFields come out sorted by key, nulls dropped.
pub fn decode_header(bytes: &[u8]) -> Result<RemotingCommand, RemotingError> {
    let json = |e: serde_json::Error| RemotingError::Json(e.to_string());
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let raw = RawHeader::deserialize(&mut de).map_err(json)?;
    de.end().map_err(json)?;
    raw.into_command()
}

/// The header's fields as read, converted once the whole object is in.
#[derive(Default)]
struct RawHeader {
    code: Scalar,
    version: Scalar,
    opaque: Scalar,
    flag: Scalar,
    language: Scalar,
    remark: Scalar,
    ext: Ext,
}

impl RawHeader {
    fn into_command(self) -> Result<RemotingCommand, RemotingError> {
        let mut cmd = RemotingCommand {
            code: self.code.to_i32("code")?,
            version: self.version.to_i32("version")?,
            opaque: self.opaque.to_i32("opaque")?,
            flag: self.flag.to_i32("flag")?,
            serialize_type: SerializeType::Json,
            ..RemotingCommand::default()
        };
        cmd.language = match self.language {
            Scalar::Str(s) => LanguageCode::from_name(&s),
            Scalar::I64(n) => LanguageCode::from_byte(u64::try_from(n).unwrap_or(7).min(255) as u8),
            Scalar::U64(n) => LanguageCode::from_byte(n.min(255) as u8),
            Scalar::F64(_) => LanguageCode::from_byte(7),
            _ => LanguageCode::Java,
        };
        cmd.remark = self.remark.into_text();
        cmd.ext_fields = match self.ext {
            Ext::Absent => None,
            Ext::Object(pairs) => Some(pairs.into_iter().collect()),
            Ext::NotObject => return Err(RemotingError::Json("extFields is not an object".into())),
        };
        Ok(cmd)
    }
}

/// One JSON value where a scalar is expected; arrays and objects keep their JSON text.
#[derive(Default, Debug)]
enum Scalar {
    #[default]
    Null,
    Str(String),
    I64(i64),
    U64(u64),
    F64(f64),
    Bool(bool),
    Composite(String),
}

impl Scalar {
    /// An int header field: a number, a numeric string, or null/absent for 0.
    fn to_i32(&self, field: &'static str) -> Result<i32, RemotingError> {
        let bad = |what: &str| RemotingError::Header {
            field,
            what: what.to_string(),
        };
        let wide = |v: Option<i64>| {
            v.and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| bad("not a 32-bit integer"))
        };
        match self {
            Scalar::Null => Ok(0),
            Scalar::I64(v) => wide(Some(*v)),
            Scalar::U64(v) => wide(i64::try_from(*v).ok()),
            Scalar::F64(_) => wide(None),
            Scalar::Str(s) => s.trim().parse().map_err(|_| bad("not a number")),
            Scalar::Bool(_) | Scalar::Composite(_) => Err(bad("not a number")),
        }
    }

    /// The string Java's `toString()` would give for the value; `None` for null.
    fn into_text(self) -> Option<String> {
        Some(match self {
            Scalar::Null => return None,
            Scalar::Str(s) | Scalar::Composite(s) => s,
            Scalar::I64(v) => v.to_string(),
            Scalar::U64(v) => v.to_string(),
            Scalar::F64(v) => serde_json::Number::from_f64(v)
                .map(|n| n.to_string())
                .unwrap_or_default(),
            Scalar::Bool(b) => b.to_string(),
        })
    }
}

/// The extFields member: absent/null, an object (pairs sorted by key, last repeat wins, nulls
/// dropped), or something else (an error once the header is read).
#[derive(Default)]
enum Ext {
    #[default]
    Absent,
    Object(Vec<(String, String)>),
    NotObject,
}

/// Top-level member names, matched without allocating.
enum Field {
    Code,
    Version,
    Opaque,
    Flag,
    Language,
    Remark,
    ExtFields,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a header field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "code" => Field::Code,
                    "version" => Field::Version,
                    "opaque" => Field::Opaque,
                    "flag" => Field::Flag,
                    "language" => Field::Language,
                    "remark" => Field::Remark,
                    "extFields" => Field::ExtFields,
                    _ => Field::Other,
                })
            }
        }
        d.deserialize_identifier(V)
    }
}

impl<'de> Deserialize<'de> for RawHeader {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawHeader;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawHeader, A::Error> {
                let mut h = RawHeader::default();
                while let Some(field) = map.next_key::<Field>()? {
                    match field {
                        Field::Code => h.code = map.next_value()?,
                        Field::Version => h.version = map.next_value()?,
                        Field::Opaque => h.opaque = map.next_value()?,
                        Field::Flag => h.flag = map.next_value()?,
                        Field::Language => h.language = map.next_value()?,
                        Field::Remark => h.remark = map.next_value()?,
                        Field::ExtFields => h.ext = map.next_value()?,
                        Field::Other => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                Ok(h)
            }
        }
        d.deserialize_map(V)
    }
}

/// A member nobody reads, skipped without allocating; its strings are still checked for UTF-8
/// (serde's `IgnoredAny` would not check them).
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Skip;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
                while seq.next_element::<Skip>()?.is_some() {}
                Ok(Skip)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
                while map.next_key::<Skip>()?.is_some() {
                    map.next_value::<Skip>()?;
                }
                Ok(Skip)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::I64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::U64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar, A::Error> {
        let v = Value::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Scalar::Composite(v.to_string()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar, A::Error> {
        let v = Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Scalar::Composite(v.to_string()))
    }
}

impl<'de> Deserialize<'de> for Ext {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ext;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("extFields")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Ext, E> {
                Ok(Ext::Absent)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ext, A::Error> {
                // every entry in arrival order, then one stable sort: the last entry of a key
                // wins and a null removes it, in O(n log n) for n entries
                let mut all: Vec<(String, Option<String>)> = Vec::with_capacity(16);
                while let Some(key) = map.next_key::<String>()? {
                    if all.len() >= MAX_EXT_FIELDS {
                        return Err(de::Error::custom(RemotingError::TooManyExtFields {
                            max: MAX_EXT_FIELDS,
                        }));
                    }
                    all.push((key, map.next_value::<Scalar>()?.into_text()));
                }
                all.sort_by(|a, b| a.0.cmp(&b.0));
                let mut pairs: Vec<(String, String)> = Vec::with_capacity(all.len());
                let mut entries = all.into_iter().peekable();
                while let Some((key, value)) = entries.next() {
                    if entries.peek().is_some_and(|(next, _)| *next == key) {
                        continue;
                    }
                    if let Some(v) = value {
                        pairs.push((key, v));
                    }
                }
                Ok(Ext::Object(pairs))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ext, A::Error> {
                while seq.next_element::<Skip>()?.is_some() {}
                Ok(Ext::NotObject)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Ext, E> {
                Ok(Ext::NotObject)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Ext, E> {
                Ok(Ext::NotObject)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Ext, E> {
                Ok(Ext::NotObject)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Ext, E> {
                Ok(Ext::NotObject)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Ext, E> {
                Ok(Ext::NotObject)
            }
        }
        d.deserialize_any(V)
    }
}

fn push_int(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa(v).as_bytes());
}

fn itoa(v: i64) -> String {
    v.to_string()
}

/// Writes `s` as a JSON string the way fastjson does: `"` and `\` escaped, `\b \f \n \r \t` by
/// their short forms, other control characters as `\u00XX`.
pub fn write_json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            0..=0x1f => None,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        match esc {
            Some(e) => out.extend_from_slice(e),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 0xf) as usize]);
            }
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Builds extFields from string pairs (test and builder helper).
pub fn ext_from_pairs(pairs: &[(&str, &str)]) -> ExtFields {
    pairs.iter().map(|(k, v)| (*k, *v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_route_request_header_decodes() {
        let h = br#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}"#;
        let cmd = decode_header(h).unwrap();
        assert_eq!(
            (cmd.code, cmd.opaque, cmd.version, cmd.flag),
            (105, 1, 479, 0)
        );
        assert_eq!(cmd.ext("topic"), Some("TopicTest"));
        assert_eq!(cmd.language, LanguageCode::Java);
    }

    #[test]
    fn encode_matches_fastjson_field_order() {
        let mut cmd = RemotingCommand::request(105);
        cmd.opaque = 1;
        cmd.ext_mut().insert("topic", "TopicTest");
        let mut out = Vec::new();
        encode_header(&cmd, &mut out);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":479}"#
        );
    }

    #[test]
    fn lenient_decode_accepts_go_and_odd_shapes() {
        let h = br#"{"code":"34","language":"GO","version":317,"opaque":3,"flag":0,"remark":"","extFields":{"n":12,"b":true,"z":null},"extra":[1]}"#;
        let cmd = decode_header(h).unwrap();
        assert_eq!(cmd.code, 34);
        assert_eq!(cmd.language, LanguageCode::Go);
        assert_eq!(cmd.ext("n"), Some("12"));
        assert_eq!(cmd.ext("b"), Some("true"));
        assert_eq!(cmd.ext("z"), None);
    }

    /// The reader this module had before the direct one (through `Map<String, Value>`), kept
    /// as the oracle of `direct_reader_matches_the_value_tree_reader`.
    fn decode_via_value(bytes: &[u8]) -> Result<RemotingCommand, RemotingError> {
        use serde_json::Map;
        let map: Map<String, Value> =
            serde_json::from_slice(bytes).map_err(|e| RemotingError::Json(e.to_string()))?;
        let int = |key: &'static str| -> Result<i32, RemotingError> {
            let bad = |what: &str| RemotingError::Header {
                field: key,
                what: what.to_string(),
            };
            match map.get(key) {
                None | Some(Value::Null) => Ok(0),
                Some(Value::Number(n)) => n
                    .as_i64()
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| bad("not a 32-bit integer")),
                Some(Value::String(s)) => s.trim().parse().map_err(|_| bad("not a number")),
                Some(_) => Err(bad("not a number")),
            }
        };
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let mut cmd = RemotingCommand {
            code: int("code")?,
            version: int("version")?,
            opaque: int("opaque")?,
            flag: int("flag")?,
            serialize_type: SerializeType::Json,
            ..RemotingCommand::default()
        };
        cmd.language = match map.get("language") {
            Some(Value::String(s)) => LanguageCode::from_name(s),
            Some(Value::Number(n)) => {
                LanguageCode::from_byte(n.as_u64().unwrap_or(7).min(255) as u8)
            }
            _ => LanguageCode::Java,
        };
        cmd.remark = match map.get("remark") {
            Some(Value::Null) | None => None,
            Some(v) => Some(text(v)),
        };
        cmd.ext_fields = match map.get("extFields") {
            Some(Value::Object(obj)) => Some(
                obj.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), text(v)))
                    .collect(),
            ),
            Some(Value::Null) | None => None,
            Some(_) => return Err(RemotingError::Json("extFields is not an object".into())),
        };
        Ok(cmd)
    }

    fn same_outcome(input: &[u8]) {
        let (new, old) = (decode_header(input), decode_via_value(input));
        match (&new, &old) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", String::from_utf8_lossy(input)),
            (Err(RemotingError::Json(_)), Err(RemotingError::Json(_))) => {}
            (Err(a), Err(b)) => assert_eq!(a, b, "{}", String::from_utf8_lossy(input)),
            _ => panic!(
                "{}: direct {new:?} vs value tree {old:?}",
                String::from_utf8_lossy(input)
            ),
        }
    }

    #[test]
    fn direct_reader_matches_the_value_tree_reader() {
        let cases: &[&str] = &[
            r#"{"code":310,"extFields":{"a":"g","b":"T","e":"3","i":"TAGS\u0001A\u0002"},"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":477}"#,
            r#"{"code":"34","language":"GO","version":317,"opaque":3,"flag":0,"remark":"","extFields":{"n":12,"b":true,"z":null},"extra":[1]}"#,
            r#"{"code":1,"code":2,"extFields":{"k":"1","k":"2","a":null,"a":"x","q":"y","q":null}}"#,
            r#"{"code":1,"extFields":{"o":{"x":[1,2.5,"s"]},"f":1.5,"e":1e3,"big":18446744073709551615,"neg":-3}}"#,
            r#"{"code":1,"remark":12,"language":3}"#,
            r#"{"code":1,"remark":[1,{"a":null}],"language":-1}"#,
            r#"{"code":1,"remark":true,"language":2.5}"#,
            r#"{"code":1,"remark":null,"extFields":null}"#,
            r#"{"code":1,"extFields":[1,2]}"#,
            r#"{"code":1,"extFields":"x"}"#,
            r#"{"code":1,"extFields":7}"#,
            r#"{"code":3000000000}"#,
            r#"{"code":-3000000000}"#,
            r#"{"code":1.0}"#,
            r#"{"code":" 12 "}"#,
            r#"{"code":"x"}"#,
            r#"{"code":true}"#,
            r#"{"code":[1]}"#,
            r#"{"code":{"a":1}}"#,
            r#"{"version":"v","code":"c"}"#,
            r#"{"code":1,"extFields":{"\u0061":"\n\"é"}}"#,
            r#"{}"#,
            r#"[]"#,
            r#"null"#,
            r#"{"code":1} x"#,
            r#"{"code":1,}"#,
            r#"{"code":1"#,
            "",
        ];
        for c in cases {
            same_outcome(c.as_bytes());
        }
        // Every prefix and single-byte corruption of a real header.
        let real = cases[0].as_bytes();
        for cut in 0..real.len() {
            same_outcome(&real[..cut]);
        }
        for at in 0..real.len() {
            for b in [b'"', b'{', b'}', b':', b',', b'1', b'-', b'\\', b'n', 0xff] {
                let mut m = real.to_vec();
                m[at] = b;
                same_outcome(&m);
            }
        }
    }

    #[test]
    fn control_chars_are_unicode_escaped() {
        let mut out = Vec::new();
        write_json_string(&mut out, "a\u{1}b\u{2}\n\"");
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#""a\u0001b\u0002\n\"""#
        );
    }
}
