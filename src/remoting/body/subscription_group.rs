//! UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) body `SubscriptionGroupConfig` and
//! GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) body `SubscriptionGroupWrapper`: the model (and its
//! JSON layout) lives in `common`, shared with the store's `subscriptionGroup.json`; this file
//! holds the wire codec. The wrapper is standard JSON (Go's admin decodes it with
//! `encoding/json`).

use super::fastjson;
pub use crate::common::subscription_group::{
    GroupRetryPolicy, SimpleSubscriptionData, SubscriptionGroupConfig, SubscriptionGroupWrapper,
};
use crate::remoting::error::RemotingError;

fastjson::fastjson_body!(SubscriptionGroupConfig);

impl SubscriptionGroupWrapper {
    pub fn decode(body: &[u8]) -> Result<Self, RemotingError> {
        fastjson::from_slice(body)
    }

    /// Standard JSON: no bare keys occur here, so this equals Java's bytes.
    pub fn encode(&self) -> Vec<u8> {
        fastjson::to_vec_standard(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::data_version::DataVersion;
    use crate::common::subscription_group::tests::DEFAULTS;

    #[test]
    fn defaults_match_java() {
        let g = SubscriptionGroupConfig::new("G1");
        assert_eq!(String::from_utf8(g.encode()).unwrap(), DEFAULTS);
        assert_eq!(
            SubscriptionGroupConfig::decode(DEFAULTS.as_bytes()).unwrap(),
            g
        );
        let partial =
            SubscriptionGroupConfig::decode(br#"{"groupName":"G2","retryMaxTimes":3}"#).unwrap();
        assert_eq!((partial.retry_max_times, partial.retry_queue_nums), (3, 1));
    }

    #[test]
    fn wrapper_is_standard_json() {
        let mut w = SubscriptionGroupWrapper {
            data_version: DataVersion {
                counter: 1,
                state_version: 0,
                timestamp: 5,
            },
            ..Default::default()
        };
        w.subscription_group_table
            .insert("G1".into(), SubscriptionGroupConfig::new("G1"));
        let json = w.encode();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["subscriptionGroupTable"]["G1"]["retryMaxTimes"], 16);
        assert!(json.starts_with(
            br#"{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":5},"forbiddenTable":{},"#
        ));
        assert_eq!(SubscriptionGroupWrapper::decode(&json).unwrap(), w);
    }
}
