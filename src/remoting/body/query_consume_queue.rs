//! QUERY_CONSUME_QUEUE (321) response body `QueryConsumeQueueResponseBody` with `ConsumeQueueData`.
//!
//! ```text
//! {"maxQueueIndex":10,"minQueueIndex":0,"queueData":[{"eval":false,"physicOffset":0,
//!  "physicSize":200,"tagsCode":0}],"subscriptionData":{...}}
//! ```

use serde::{Deserialize, Serialize};

use super::fastjson;
use super::subscription_data::SubscriptionData;

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct QueryConsumeQueueResponseBody {
    pub filter_data: Option<String>,
    pub max_queue_index: i64,
    pub min_queue_index: i64,
    pub queue_data: Vec<ConsumeQueueData>,
    pub subscription_data: Option<SubscriptionData>,
}

/// One consume-queue unit as mqadmin `queryCq` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ConsumeQueueData {
    pub bit_map: Option<String>,
    pub eval: bool,
    pub extend_data_json: Option<String>,
    pub msg: Option<String>,
    pub physic_offset: i64,
    pub physic_size: i32,
    pub tags_code: i64,
}

fastjson::fastjson_body!(QueryConsumeQueueResponseBody);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_are_omitted_and_round_trip() {
        let b = QueryConsumeQueueResponseBody {
            max_queue_index: 10,
            queue_data: vec![ConsumeQueueData {
                physic_size: 200,
                tags_code: -5,
                ..Default::default()
            }],
            ..Default::default()
        };
        let json = b.encode();
        assert_eq!(
            json,
            br#"{"maxQueueIndex":10,"minQueueIndex":0,"queueData":[{"eval":false,"physicOffset":0,"physicSize":200,"tagsCode":-5}]}"#.to_vec()
        );
        assert_eq!(QueryConsumeQueueResponseBody::decode(&json).unwrap(), b);
    }
}
