//! INVOKE_BROKER_TO_RESET_OFFSET (222) / RESET_CONSUMER_CLIENT_OFFSET (220) body `ResetOffsetBody`.
//!
//! ```text
//! {"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:118}}
//! ```
//! Written in fastjson form (bare object keys, compact): Go's hand parser requires `{{` and
//! splits on `",{"` / `"}:"`. Reading also accepts string keys and Go's `[[{mq},118]]` form.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::fastjson::{self, mq_key_map};
use crate::common::topic::MessageQueue;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResetOffsetBody {
    #[serde(with = "mq_key_map")]
    pub offset_table: BTreeMap<MessageQueue, i64>,
}

fastjson::fastjson_body!(ResetOffsetBody);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_form_and_gson_form() {
        let java = br#"{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"T"}:118}}"#;
        let b = ResetOffsetBody::decode(java).unwrap();
        assert_eq!(b.offset_table[&MessageQueue::new("T", "broker-a", 0)], 118);
        assert_eq!(b.encode(), java.to_vec());
        let gson = br#"{"offsetTable":[[{"topic":"T","brokerName":"broker-a","queueId":0},118]]}"#;
        assert_eq!(ResetOffsetBody::decode(gson).unwrap(), b);
    }
}
