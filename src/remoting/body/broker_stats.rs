//! VIEW_BROKER_STATS_DATA (315) body `BrokerStatsData` and GET_ALL_PRODUCER_INFO (328) body
//! `ProducerTableInfo` (Java shapes, properties in fastjson's order).
//!
//! ```text
//! {"statsDay":{"avgpt":0.0,"sum":0,"tps":0.0},"statsHour":{...},"statsMinute":{...}}
//! {"data":{"PG":[{"clientId":"127.0.0.1@1","language":"JAVA","lastUpdateTimestamp":1,"remoteIP":"127.0.0.1:5","version":479}]}}
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fastjson;

/// Java `BrokerStatsItem`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BrokerStatsItem {
    pub avgpt: f64,
    pub sum: i64,
    pub tps: f64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BrokerStatsData {
    pub stats_day: BrokerStatsItem,
    pub stats_hour: BrokerStatsItem,
    pub stats_minute: BrokerStatsItem,
}

fastjson::fastjson_body!(BrokerStatsData);

/// Java `ProducerInfo`; `language` is the `LanguageCode` name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProducerInfo {
    #[serde(rename = "clientId")]
    pub client_id: String,
    pub language: String,
    #[serde(rename = "lastUpdateTimestamp")]
    pub last_update_timestamp: i64,
    #[serde(rename = "remoteIP")]
    pub remote_ip: String,
    pub version: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ProducerTableInfo {
    pub data: BTreeMap<String, Vec<ProducerInfo>>,
}

fastjson::fastjson_body!(ProducerTableInfo);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_data_has_javas_shape() {
        let d = BrokerStatsData {
            stats_minute: BrokerStatsItem {
                avgpt: 1.5,
                sum: 3,
                tps: 0.05,
            },
            ..Default::default()
        };
        let json = String::from_utf8(d.encode()).unwrap();
        assert_eq!(
            json,
            r#"{"statsDay":{"avgpt":0.0,"sum":0,"tps":0.0},"statsHour":{"avgpt":0.0,"sum":0,"tps":0.0},"statsMinute":{"avgpt":1.5,"sum":3,"tps":0.05}}"#
        );
        assert_eq!(BrokerStatsData::decode(json.as_bytes()).unwrap(), d);
    }

    #[test]
    fn producer_table_has_javas_shape() {
        let json = r#"{"data":{"PG":[{"clientId":"127.0.0.1@1","language":"JAVA","lastUpdateTimestamp":1,"remoteIP":"127.0.0.1:5","version":479}]}}"#;
        let t = ProducerTableInfo::decode(json.as_bytes()).unwrap();
        assert_eq!(t.data["PG"][0].remote_ip, "127.0.0.1:5");
        assert_eq!(String::from_utf8(t.encode()).unwrap(), json);
    }
}
