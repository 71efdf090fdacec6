//! `ConsumerOffsetManager`: committed offsets per `topic@group` and queue, kept in memory and
//! written to `consumerOffset.json` periodically and at shutdown; plus the server-side reset
//! table that the next pull of a queue turns into PULL_OFFSET_MOVED.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use dashmap::DashMap;
use parking_lot::Mutex;

use super::persist::JsonFile;

const SEP: char = '@';

fn key(topic: &str, group: &str) -> String {
    format!("{topic}{SEP}{group}")
}

pub struct ConsumerOffsetManager {
    table: DashMap<String, HashMap<i32, i64>>,
    /// Offsets a reset asked for, consumed by the next pull of that queue.
    reset: DashMap<String, HashMap<i32, i64>>,
    file: JsonFile,
    dirty: Mutex<bool>,
}

impl ConsumerOffsetManager {
    /// Loads `consumerOffset.json` (or its `.bak`); fastjson's unquoted integer keys are accepted.
    pub fn load(path: PathBuf) -> Result<Self, String> {
        let file = JsonFile::new(path);
        let table = DashMap::new();
        if let Some(text) = file.load()? {
            for (k, queues) in
                parse_offset_table(&text).map_err(|e| format!("{}: {e}", file.path().display()))?
            {
                table.insert(k, queues);
            }
        }
        Ok(Self {
            table,
            reset: DashMap::new(),
            file,
            dirty: Mutex::new(false),
        })
    }

    pub fn commit(&self, group: &str, topic: &str, queue_id: i32, offset: i64) {
        self.table
            .entry(key(topic, group))
            .or_default()
            .insert(queue_id, offset);
        *self.dirty.lock() = true;
    }

    /// The committed offset, `None` when the group never committed for this queue.
    pub fn query(&self, group: &str, topic: &str, queue_id: i32) -> Option<i64> {
        self.table
            .get(&key(topic, group))
            .and_then(|m| m.get(&queue_id).copied())
    }

    /// Every queue's offset of a group on a topic.
    pub fn queues(&self, group: &str, topic: &str) -> HashMap<i32, i64> {
        self.table
            .get(&key(topic, group))
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    /// Topics a group has offsets for.
    pub fn topics_of_group(&self, group: &str) -> Vec<String> {
        self.table
            .iter()
            .filter_map(|e| {
                e.key()
                    .split_once(SEP)
                    .filter(|(_, g)| *g == group)
                    .map(|(t, _)| t.to_string())
            })
            .collect()
    }

    /// Groups with offsets on a topic.
    pub fn groups_of_topic(&self, topic: &str) -> Vec<String> {
        self.table
            .iter()
            .filter_map(|e| {
                e.key()
                    .split_once(SEP)
                    .filter(|(t, _)| *t == topic)
                    .map(|(_, g)| g.to_string())
            })
            .collect()
    }

    pub fn remove_group(&self, group: &str) {
        self.table
            .retain(|k, _| k.split_once(SEP).map(|(_, g)| g) != Some(group));
        *self.dirty.lock() = true;
    }

    pub fn remove_topic(&self, topic: &str) {
        self.table
            .retain(|k, _| k.split_once(SEP).map(|(t, _)| t) != Some(topic));
        *self.dirty.lock() = true;
    }

    /// Records a server-side reset; also commits it so a restarted consumer starts there.
    pub fn request_reset(&self, group: &str, topic: &str, offsets: &HashMap<i32, i64>) {
        let k = key(topic, group);
        self.reset.insert(k.clone(), offsets.clone());
        let mut committed = self.table.entry(k).or_default();
        committed.extend(offsets.iter().map(|(q, o)| (*q, *o)));
        *self.dirty.lock() = true;
    }

    /// Takes the pending reset offset of one queue, if any.
    pub fn take_reset(&self, group: &str, topic: &str, queue_id: i32) -> Option<i64> {
        if self.reset.is_empty() {
            return None;
        }
        let k = key(topic, group);
        let mut entry = self.reset.get_mut(&k)?;
        let v = entry.remove(&queue_id);
        let empty = entry.is_empty();
        drop(entry);
        if empty {
            self.reset.remove(&k);
        }
        v
    }

    /// Writes `consumerOffset.json` when something changed since the last write.
    pub fn persist(&self) -> Result<(), String> {
        {
            let mut dirty = self.dirty.lock();
            if !*dirty {
                return Ok(());
            }
            *dirty = false;
        }
        self.file.persist(&self.encode())
    }

    /// The Java shape: `{"offsetTable":{"topic@group":{0:12,1:7}}}` — fastjson writes the queue
    /// ids as unquoted integer keys, and the Java broker reads them back that way.
    pub fn encode(&self) -> String {
        let sorted: BTreeMap<String, BTreeMap<i32, i64>> = self
            .table
            .iter()
            .map(|e| {
                (
                    e.key().clone(),
                    e.value().iter().map(|(q, o)| (*q, *o)).collect(),
                )
            })
            .collect();
        let mut out = String::from("{\n\t\"offsetTable\":{");
        for (i, (k, queues)) in sorted.iter().enumerate() {
            out.push_str(if i == 0 { "\n\t\t" } else { ",\n\t\t" });
            out.push_str(&serde_json::to_string(k).unwrap_or_default());
            out.push_str(":{");
            let inner: Vec<String> = queues.iter().map(|(q, o)| format!("{q}:{o}")).collect();
            out.push_str(&inner.join(","));
            out.push('}');
        }
        out.push_str("\n\t}\n}");
        out
    }
}

/// Reads `offsetTable` from consumerOffset.json text, with or without quoted integer keys.
pub fn parse_offset_table(text: &str) -> Result<HashMap<String, HashMap<i32, i64>>, String> {
    let normalized = quote_integer_keys(text);
    let v: serde_json::Value =
        serde_json::from_str(&normalized).map_err(|e| format!("bad JSON: {e}"))?;
    let mut out = HashMap::new();
    let Some(table) = v.get("offsetTable").and_then(|t| t.as_object()) else {
        return Ok(out);
    };
    for (k, queues) in table {
        let Some(queues) = queues.as_object() else {
            continue;
        };
        let m = queues
            .iter()
            .filter_map(|(q, o)| Some((q.trim().parse::<i32>().ok()?, o.as_i64()?)))
            .collect();
        out.insert(k.clone(), m);
    }
    Ok(out)
}

/// Turns fastjson's `{0:12}` into `{"0":12}`: an integer right after `{` or `,` (outside
/// strings) and followed by `:` is quoted.
pub fn quote_integer_keys(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    let mut in_str = false;
    let mut last_struct = b' ';
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c as char);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1] as char);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_str = true;
        } else if (c == b'-' || c.is_ascii_digit()) && (last_struct == b'{' || last_struct == b',')
        {
            let start = i;
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let mut k = j;
            while k < b.len() && b[k].is_ascii_whitespace() {
                k += 1;
            }
            if k < b.len() && b[k] == b':' {
                out.push('"');
                out.push_str(&text[start..j]);
                out.push('"');
                i = j;
                last_struct = b' ';
                continue;
            }
        }
        if !c.is_ascii_whitespace() {
            last_struct = c;
        }
        // Non-ASCII bytes are copied through whole characters.
        if c < 0x80 {
            out.push(c as char);
            i += 1;
        } else {
            let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fastjson_unquoted_keys_and_writes_them_back() {
        let text = "{\"offsetTable\":{\"T@G\":{0:12,1:7},\"%RETRY%G@G\":{0:0}}}";
        let t = parse_offset_table(text).unwrap();
        assert_eq!(t["T@G"][&1], 7);
        assert_eq!(t["%RETRY%G@G"][&0], 0);
        let quoted = parse_offset_table("{\"offsetTable\":{\"T@G\":{\"3\":5}}}").unwrap();
        assert_eq!(quoted["T@G"][&3], 5);
    }

    #[test]
    fn quoting_leaves_strings_and_values_alone() {
        assert_eq!(
            quote_integer_keys(r#"{"a":"{1:2}",3:4,"b":[5,6]}"#),
            r#"{"a":"{1:2}","3":4,"b":[5,6]}"#
        );
    }
}
