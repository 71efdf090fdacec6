//! fastjson's leniency for typed reads: a serde `Deserializer` over a parsed JSON value that
//! coerces scalars to what the target field asks for, as Java's fastjson does when it binds a
//! document to a bean. Every JSON body a client sends, and every JSON file a broker wrote, is read
//! through it, so one rule covers them all:
//!
//! - numbers given as strings (`"subVersion":"1700000000000"`) and strings given as numbers;
//! - booleans as `true`/`false`, `"true"`/`"false"`, `1`/`0`;
//! - enums by name or ordinal (the enum types read the raw value themselves);
//! - a property whose value is `null` is skipped, so the field keeps its default (fastjson leaves
//!   a primitive untouched); `null` inside a list reads as the element's empty value;
//! - property names matched as fastjson's smart match does: case and `_`/`-` ignored, a leading
//!   `is` dropped for booleans (`clientId` binds `clientID`, `is_unit_mode` binds `unitMode`);
//! - unknown properties ignored (the target types do not deny them).
//!
//! Work is linear in the document: each value is visited once; a name that does not match a
//! field exactly is compared with the struct's field list once.

use serde::de::{
    self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Error, Map, Number, Value};

/// Binds `value` to `T` with fastjson's leniency.
pub fn from_value<T: de::DeserializeOwned>(value: Value) -> Result<T, Error> {
    T::deserialize(Lenient(value))
}

/// A JSON value read leniently.
pub struct Lenient(pub Value);

fn number_text(n: &Number) -> String {
    n.to_string()
}

/// The number a scalar stands for, if any.
fn as_i128(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| n.as_f64().map(|f| f as i128)),
        Value::String(s) => {
            let t = s.trim();
            // fastjson reads "" as null, which a number field takes as 0
            if t.is_empty() {
                return Some(0);
            }
            t.parse::<i128>()
                .ok()
                .or_else(|| t.parse::<f64>().ok().map(|f| f as i128))
        }
        Value::Bool(b) => Some(*b as i128),
        Value::Null => Some(0),
        _ => None,
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(*b as u8 as f64),
        Value::Null => Some(0.0),
        _ => None,
    }
}

fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        // fastjson's castToBoolean: a number is true when it is 1
        Value::Number(n) => n.as_f64().map(|f| f == 1.0),
        Value::String(s) => match s.trim() {
            t if t.eq_ignore_ascii_case("true") || t == "1" || t.eq_ignore_ascii_case("y") => {
                Some(true)
            }
            t if t.eq_ignore_ascii_case("false") || t == "0" || t.is_empty() => Some(false),
            t if t.eq_ignore_ascii_case("n") || t.eq_ignore_ascii_case("null") => Some(false),
            _ => None,
        },
        Value::Null => Some(false),
        _ => None,
    }
}

fn invalid(v: &Value, what: &str) -> Error {
    de::Error::custom(format!("{v} is not {what}"))
}

macro_rules! int_method {
    ($method:ident, $visit:ident, $t:ty) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let n = as_i128(&self.0).ok_or_else(|| invalid(&self.0, "an integer"))?;
            let n =
                <$t>::try_from(n).map_err(|_| de::Error::custom(format!("{n} is out of range")))?;
            visitor.$visit(n)
        }
    };
}

impl<'de> Deserializer<'de> for Lenient {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Seq(items.into_iter())),
            Value::Object(map) => visitor.visit_map(Fields::new(map, &[])),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_bool(as_bool(&self.0).ok_or_else(|| invalid(&self.0, "a boolean"))?)
    }

    int_method!(deserialize_i8, visit_i8, i8);
    int_method!(deserialize_i16, visit_i16, i16);
    int_method!(deserialize_i32, visit_i32, i32);
    int_method!(deserialize_i64, visit_i64, i64);
    int_method!(deserialize_u8, visit_u8, u8);
    int_method!(deserialize_u16, visit_u16, u16);
    int_method!(deserialize_u32, visit_u32, u32);
    int_method!(deserialize_u64, visit_u64, u64);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f32(as_f64(&self.0).ok_or_else(|| invalid(&self.0, "a number"))? as f32)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_f64(as_f64(&self.0).ok_or_else(|| invalid(&self.0, "a number"))?)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            Value::Number(n) => visitor.visit_string(number_text(&n)),
            Value::Bool(b) => visitor.visit_string(b.to_string()),
            Value::Null => visitor.visit_string(String::new()),
            // fastjson binds a nested document to a String field as its JSON text
            other => visitor.visit_string(other.to_string()),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.0.deserialize_bytes(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.0.deserialize_byte_buf(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Lenient(other)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Seq(items.into_iter())),
            Value::Null => visitor.visit_seq(Seq(Vec::new().into_iter())),
            other => Err(invalid(&other, "a list")),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(Fields::new(map, &[])),
            Value::Null => visitor.visit_map(Fields::new(Map::new(), &[])),
            other => Err(invalid(&other, "an object")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(Fields::new(map, fields)),
            Value::Null => visitor.visit_map(Fields::new(Map::new(), fields)),
            other => Err(invalid(&other, "an object")),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            // an ordinal names the variant at that position
            Value::Number(n) => match n.as_u64().and_then(|i| variants.get(i as usize)) {
                Some(v) => visitor.visit_enum((*v).into_deserializer()),
                None => Err(de::Error::custom(format!(
                    "{n} is not an ordinal of {name}"
                ))),
            },
            other => other.deserialize_enum(name, variants, visitor),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_string(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

struct Seq(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Seq {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Lenient(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// An object's entries, names mapped onto the target struct's fields.
struct Fields {
    entries: serde_json::map::IntoIter,
    fields: &'static [&'static str],
    value: Option<Value>,
}

impl Fields {
    fn new(map: Map<String, Value>, fields: &'static [&'static str]) -> Self {
        Self {
            entries: map.into_iter(),
            fields,
            value: None,
        }
    }

    /// The field `name` binds: itself when it is one, else the field it smart-matches.
    fn field_name(&self, name: String) -> String {
        if self.fields.is_empty() || self.fields.contains(&name.as_str()) {
            return name;
        }
        let matched = self.fields.iter().find(|f| smart_eq(f, &name)).or_else(|| {
            let unprefixed = name
                .get(2..)
                .filter(|_| name[..2].eq_ignore_ascii_case("is"))?;
            self.fields.iter().find(|f| smart_eq(f, unprefixed))
        });
        matched.map(|f| f.to_string()).unwrap_or(name)
    }
}

/// fastjson's smart match: equal ignoring ASCII case, `_` and `-`; allocates nothing.
fn smart_eq(a: &str, b: &str) -> bool {
    let significant = |c: &u8| *c != b'_' && *c != b'-';
    let mut x = a.bytes().filter(significant);
    let mut y = b.bytes().filter(significant);
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(p), Some(q)) if p.eq_ignore_ascii_case(&q) => {}
            _ => return false,
        }
    }
}

impl<'de> MapAccess<'de> for Fields {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        // a null property of a bean is skipped: the field keeps its default
        let next = if self.fields.is_empty() {
            self.entries.next()
        } else {
            self.entries.find(|(_, v)| !v.is_null())
        };
        match next {
            Some((k, v)) => {
                self.value = Some(v);
                // a key read as a number (`Map<Long, _>`) parses leniently too
                seed.deserialize(Lenient(Value::String(self.field_name(k))))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let v = self
            .value
            .take()
            .ok_or_else(|| <Error as de::Error>::custom("value read before its key"))?;
        seed.deserialize(Lenient(v))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    struct Bean {
        #[serde(rename = "clientID")]
        client_id: String,
        sub_version: i64,
        unit_mode: bool,
        weight: f64,
        tags_set: Vec<String>,
        inner: Option<Box<Bean>>,
        table: BTreeMap<String, i32>,
        port: u16,
    }

    fn read(json: &str) -> Result<Bean, Error> {
        from_value(serde_json::from_str(json).unwrap())
    }

    #[test]
    fn scalars_coerce_as_fastjson_binds_them() {
        let b = read(
            r#"{"clientID":42,"subVersion":"1700000000000","unitMode":"true","weight":"0.5",
                "tagsSet":["A"],"table":{"x":"7"},"port":"10911","unknown":[1,{"a":2}]}"#,
        )
        .unwrap();
        assert_eq!(b.client_id, "42");
        assert_eq!(b.sub_version, 1_700_000_000_000);
        assert!(b.unit_mode);
        assert_eq!((b.weight, b.port), (0.5, 10911));
        assert_eq!(b.tags_set, vec!["A"]);
        assert_eq!(b.table["x"], 7);
        let b = read(r#"{"unitMode":1,"subVersion":1.7e12,"weight":2}"#).unwrap();
        assert!(b.unit_mode && b.sub_version == 1_700_000_000_000 && b.weight == 2.0);
    }

    #[test]
    fn nulls_read_as_empty_values() {
        let b = read(
            r#"{"clientID":null,"subVersion":null,"unitMode":null,"tagsSet":null,"table":null,"inner":null}"#,
        )
        .unwrap();
        assert_eq!(b, Bean::default());
    }

    #[test]
    fn names_smart_match_like_fastjson() {
        let b =
            read(r#"{"clientId":"c","sub_version":3,"isUnitMode":true,"TAGS-SET":["t"]}"#).unwrap();
        assert_eq!(
            (b.client_id.as_str(), b.sub_version, b.unit_mode),
            ("c", 3, true)
        );
        assert_eq!(b.tags_set, vec!["t"]);
        let nested = read(r#"{"inner":{"ClientID":"n"}}"#).unwrap();
        assert_eq!(nested.inner.unwrap().client_id, "n");
    }

    #[test]
    fn wrong_shapes_are_errors_not_panics() {
        assert!(read(r#"{"subVersion":"abc"}"#).is_err());
        assert!(read(r#"{"port":70000}"#).is_err());
        assert!(read(r#"{"unitMode":"maybe"}"#).is_err());
        assert!(read(r#"{"inner":5}"#).is_err());
        assert!(read(r#"[1,2]"#).is_err());
        assert!(read(r#"{"tagsSet":"A"}"#).is_err());
    }

    #[test]
    fn enums_by_name_or_ordinal() {
        #[derive(Debug, PartialEq, Deserialize)]
        enum Model {
            Broadcasting,
            Clustering,
        }
        let m: Vec<Model> = from_value(serde_json::json!(["Clustering", 0])).unwrap();
        assert_eq!(m, vec![Model::Clustering, Model::Broadcasting]);
        assert!(from_value::<Model>(serde_json::json!(7)).is_err());
    }
}
