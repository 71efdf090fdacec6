//! `ClusterInfo` (GET_BROKER_CLUSTER_INFO body) and `GetBrokerMemberGroupResponseBody`
//! (GET_BROKER_MEMBER_GROUP), both written as the Java NameServer writes them: fastjson defaults,
//! so broker ids are bare keys (`{"brokerAddrs":{0:"…"}}`) whatever the client version.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::topic_route::{decode_lenient, write_addr_map, write_str, BrokerData, JsonStyle};
use crate::remoting::error::RemotingError;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClusterInfo {
    pub broker_addr_table: BTreeMap<String, BrokerData>,
    pub cluster_addr_table: BTreeMap<String, BTreeSet<String>>,
}

impl ClusterInfo {
    pub fn encode(&self) -> Vec<u8> {
        let style = JsonStyle::Fastjson;
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"brokerAddrTable\":{");
        for (i, (name, bd)) in self.broker_addr_table.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(&mut out, name, style);
            out.push(b':');
            bd.write_json(&mut out, style);
        }
        out.extend_from_slice(b"},\"clusterAddrTable\":{");
        for (i, (cluster, names)) in self.cluster_addr_table.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(&mut out, cluster, style);
            out.extend_from_slice(b":[");
            for (j, n) in names.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                write_str(&mut out, n, style);
            }
            out.push(b']');
        }
        out.extend_from_slice(b"}}");
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, RemotingError> {
        decode_lenient(bytes, "ClusterInfo")
    }
}

/// `BrokerMemberGroup`: every address of one broker name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrokerMemberGroup {
    pub broker_addrs: BTreeMap<i64, String>,
    pub broker_name: String,
    pub cluster: String,
}

impl BrokerMemberGroup {
    /// `{"brokerMemberGroup":{"brokerAddrs":{0:"…"},"brokerName":"…","cluster":"…"}}`
    pub fn encode_response_body(&self) -> Vec<u8> {
        let style = JsonStyle::Fastjson;
        let mut out = Vec::with_capacity(128);
        out.extend_from_slice(b"{\"brokerMemberGroup\":{\"brokerAddrs\":");
        write_addr_map(&mut out, &self.broker_addrs, style);
        out.extend_from_slice(b",\"brokerName\":");
        write_str(&mut out, &self.broker_name, style);
        out.extend_from_slice(b",\"cluster\":");
        write_str(&mut out, &self.cluster, style);
        out.extend_from_slice(b"}}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_reference_7_5_and_reads_back() {
        let mut bd = BrokerData::new("DefaultCluster", "broker-a");
        bd.broker_addrs.insert(0, "192.168.1.10:10911".into());
        let mut info = ClusterInfo::default();
        info.broker_addr_table.insert("broker-a".into(), bd);
        info.cluster_addr_table
            .insert("DefaultCluster".into(), ["broker-a".to_string()].into());
        let text = info.encode();
        assert_eq!(
            std::str::from_utf8(&text).unwrap(),
            r#"{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"192.168.1.10:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}"#
        );
        assert_eq!(ClusterInfo::decode(&text).unwrap(), info);
    }

    #[test]
    fn member_group_body_shape() {
        let g = BrokerMemberGroup {
            broker_addrs: [(0, "a:1".to_string())].into(),
            broker_name: "b".into(),
            cluster: "c".into(),
        };
        assert_eq!(
            std::str::from_utf8(&g.encode_response_body()).unwrap(),
            r#"{"brokerMemberGroup":{"brokerAddrs":{0:"a:1"},"brokerName":"b","cluster":"c"}}"#
        );
    }
}
