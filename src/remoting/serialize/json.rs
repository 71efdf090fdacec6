//! JSON header (type 0). Written the way fastjson writes Java's `RemotingCommand`: compact, fields
//! in alphabetical order, nulls omitted, enums by name, extFields values as strings. Read leniently:
//! any order, missing fields, numbers or booleans where strings are usual, unknown fields.

use serde_json::{Map, Value};

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
pub fn decode_header(bytes: &[u8]) -> Result<RemotingCommand, RemotingError> {
    let map: Map<String, Value> =
        serde_json::from_slice(bytes).map_err(|e| RemotingError::Json(e.to_string()))?;
    let mut cmd = RemotingCommand {
        code: int_field(&map, "code")?,
        version: int_field(&map, "version")?,
        opaque: int_field(&map, "opaque")?,
        flag: int_field(&map, "flag")?,
        serialize_type: SerializeType::Json,
        ..RemotingCommand::default()
    };
    cmd.language = match map.get("language") {
        Some(Value::String(s)) => LanguageCode::from_name(s),
        Some(Value::Number(n)) => LanguageCode::from_byte(n.as_u64().unwrap_or(7).min(255) as u8),
        _ => LanguageCode::Java,
    };
    cmd.remark = match map.get("remark") {
        Some(Value::Null) | None => None,
        Some(v) => Some(value_to_string(v)),
    };
    cmd.ext_fields = match map.get("extFields") {
        Some(Value::Object(obj)) => Some(
            obj.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), value_to_string(v)))
                .collect(),
        ),
        Some(Value::Null) | None => None,
        Some(_) => return Err(RemotingError::Json("extFields is not an object".into())),
    };
    Ok(cmd)
}

fn int_field(map: &Map<String, Value>, key: &'static str) -> Result<i32, RemotingError> {
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
}

/// A JSON value as the string Java's `toString()` would give for the header field.
fn value_to_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
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
