//! `TopicRouteData` (GET_ROUTEINFO_BY_TOPIC body, REGISTER_TOPIC_IN_NAMESRV body) with its
//! `QueueData` and `BrokerData`, written in the two shapes the Java NameServer emits:
//!
//! ```text
//! Fastjson (request version < 401):  {"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911"},...}],...}
//! Standard (version >= 401):         {"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.1:10911"},...}],...}
//! ```
//! Both are compact (the Go client string-splits `brokerAddrs`), properties alphabetical, nulls
//! omitted, maps sorted by key. Reading accepts either (bare numeric keys are quoted first).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::remoting::error::RemotingError;
use crate::remoting::serialize::json::write_json_string;

/// Which JSON dialect to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonStyle {
    /// fastjson defaults: bare numeric map keys, non-ASCII raw.
    Fastjson,
    /// `BrowserCompatible|MapSortField`: quoted keys, non-ASCII as `\uXXXX`.
    Standard,
}

/// One broker name's queues of a topic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct QueueData {
    pub broker_name: String,
    pub perm: i32,
    pub read_queue_nums: i32,
    pub topic_sys_flag: i32,
    pub write_queue_nums: i32,
}

impl Default for QueueData {
    fn default() -> Self {
        Self {
            broker_name: String::new(),
            perm: 6,
            read_queue_nums: 0,
            topic_sys_flag: 0,
            write_queue_nums: 0,
        }
    }
}

/// One broker group (broker name): its cluster and addresses by broker id (0 = master).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrokerData {
    pub broker_addrs: BTreeMap<i64, String>,
    pub broker_name: String,
    pub cluster: String,
    pub enable_acting_master: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone_name: Option<String>,
}

impl BrokerData {
    pub fn new(cluster: &str, broker_name: &str) -> Self {
        Self {
            cluster: cluster.to_string(),
            broker_name: broker_name.to_string(),
            ..Self::default()
        }
    }

    /// Appends this BrokerData as a JSON object in `style`.
    pub fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle) {
        out.extend_from_slice(b"{\"brokerAddrs\":");
        write_addr_map(out, &self.broker_addrs, style);
        out.extend_from_slice(b",\"brokerName\":");
        write_str(out, &self.broker_name, style);
        out.extend_from_slice(b",\"cluster\":");
        write_str(out, &self.cluster, style);
        out.extend_from_slice(b",\"enableActingMaster\":");
        out.extend_from_slice(if self.enable_acting_master {
            b"true"
        } else {
            b"false"
        });
        if let Some(zone) = &self.zone_name {
            out.extend_from_slice(b",\"zoneName\":");
            write_str(out, zone, style);
        }
        out.push(b'}');
    }
}

/// A topic's route: its queues per broker name and those brokers' addresses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopicRouteData {
    pub broker_datas: Vec<BrokerData>,
    pub filter_server_table: BTreeMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_topic_conf: Option<String>,
    pub queue_datas: Vec<QueueData>,
    /// Static-topic mapping (broker name -> TopicQueueMappingInfo), kept as raw JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_queue_mapping_by_broker: Option<BTreeMap<String, Value>>,
}

impl TopicRouteData {
    /// The body for a request of `version`: standard JSON from V4_9_4 (401) on or when the client
    /// asked with `acceptStandardJsonOnly=true`, fastjson's bare-key form below that.
    pub fn encode_for_version(&self, version: i32, accept_standard_json_only: bool) -> Vec<u8> {
        let style = if version >= 401 || accept_standard_json_only {
            JsonStyle::Standard
        } else {
            JsonStyle::Fastjson
        };
        self.encode(style)
    }

    pub fn encode(&self, style: JsonStyle) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"brokerDatas\":[");
        for (i, bd) in self.broker_datas.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            bd.write_json(&mut out, style);
        }
        out.extend_from_slice(b"],\"filterServerTable\":{");
        for (i, (addr, servers)) in self.filter_server_table.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(&mut out, addr, style);
            out.extend_from_slice(b":[");
            for (j, s) in servers.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                write_str(&mut out, s, style);
            }
            out.push(b']');
        }
        out.push(b'}');
        if let Some(conf) = &self.order_topic_conf {
            out.extend_from_slice(b",\"orderTopicConf\":");
            write_str(&mut out, conf, style);
        }
        out.extend_from_slice(b",\"queueDatas\":");
        out.extend_from_slice(&serde_json::to_vec(&self.queue_datas).unwrap_or_default());
        if let Some(mapping) = &self.topic_queue_mapping_by_broker {
            out.extend_from_slice(b",\"topicQueueMappingByBroker\":");
            out.extend_from_slice(&serde_json::to_vec(mapping).unwrap_or_default());
        }
        out.push(b'}');
        out
    }

    /// Reads either shape (and anything fastjson would accept with bare keys).
    pub fn decode(bytes: &[u8]) -> Result<Self, RemotingError> {
        decode_lenient(bytes, "TopicRouteData")
    }
}

/// Parses JSON that may carry fastjson's bare map keys (`{0:"a"}`).
pub fn decode_lenient<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    what: &str,
) -> Result<T, RemotingError> {
    super::fastjson::from_slice(bytes).map_err(|e| RemotingError::Body(format!("{what}: {e}")))
}

/// `{0:"a",1:"b"}` (fastjson) or `{"0":"a","1":"b"}` (standard), ascending ids.
pub fn write_addr_map(out: &mut Vec<u8>, addrs: &BTreeMap<i64, String>, style: JsonStyle) {
    out.push(b'{');
    for (i, (id, addr)) in addrs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match style {
            JsonStyle::Fastjson => out.extend_from_slice(id.to_string().as_bytes()),
            JsonStyle::Standard => {
                out.push(b'"');
                out.extend_from_slice(id.to_string().as_bytes());
                out.push(b'"');
            }
        }
        out.push(b':');
        write_str(out, addr, style);
    }
    out.push(b'}');
}

/// A JSON string; the standard style also escapes non-ASCII as `\uXXXX` (BrowserCompatible).
pub fn write_str(out: &mut Vec<u8>, s: &str, style: JsonStyle) {
    if style == JsonStyle::Fastjson || s.is_ascii() {
        write_json_string(out, s);
        return;
    }
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if c.is_ascii() && (c as u32) >= 0x20 => out.push(c as u8),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.extend_from_slice(format!("\\u{unit:04X}").as_bytes());
                }
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TopicRouteData {
        let mut bd = BrokerData::new("DefaultCluster", "broker-a");
        bd.broker_addrs.insert(0, "192.168.1.10:10911".into());
        bd.broker_addrs.insert(1, "192.168.1.11:10911".into());
        TopicRouteData {
            broker_datas: vec![bd],
            queue_datas: vec![QueueData {
                broker_name: "broker-a".into(),
                perm: 6,
                read_queue_nums: 4,
                topic_sys_flag: 0,
                write_queue_nums: 4,
            }],
            ..TopicRouteData::default()
        }
    }

    #[test]
    fn both_styles_match_the_reference_and_read_back() {
        let legacy = sample().encode(JsonStyle::Fastjson);
        assert_eq!(
            std::str::from_utf8(&legacy).unwrap(),
            r#"{"brokerDatas":[{"brokerAddrs":{0:"192.168.1.10:10911",1:"192.168.1.11:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#
        );
        let standard = sample().encode(JsonStyle::Standard);
        assert_eq!(
            std::str::from_utf8(&standard).unwrap(),
            r#"{"brokerDatas":[{"brokerAddrs":{"0":"192.168.1.10:10911","1":"192.168.1.11:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}"#
        );
        assert_eq!(TopicRouteData::decode(&legacy).unwrap(), sample());
        assert_eq!(TopicRouteData::decode(&standard).unwrap(), sample());
    }

    #[test]
    fn standard_style_escapes_non_ascii() {
        let mut out = Vec::new();
        write_str(&mut out, "b\u{e9}\"", JsonStyle::Standard);
        assert_eq!(std::str::from_utf8(&out).unwrap(), r#""b\u00E9\"""#);
    }
}
