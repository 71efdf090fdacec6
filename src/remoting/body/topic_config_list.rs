//! UPDATE_AND_CREATE_TOPIC_LIST (18) body `CreateTopicListRequestBody` and
//! UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225) body `SubscriptionGroupList`: the batch forms
//! of 17 and 200 that `mqadmin updateTopicList` / `updateSubGroupList` send.
//!
//! ```text
//! {"topicConfigList":[{"topicName":"T","readQueueNums":8,"writeQueueNums":8,"perm":6,
//!   "attributes":{"+message.type":"FIFO"},...}]}
//! {"groupConfigList":[{"groupName":"G","retryMaxTimes":5,...}]}
//! ```
//! Attribute keys carry the `+`/`-` sign of an edit, as in the single forms.

use serde::{Deserialize, Serialize};

use super::fastjson;
use crate::common::subscription_group::SubscriptionGroupConfig;
use crate::common::topic::TopicConfig;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CreateTopicListRequestBody {
    pub topic_config_list: Vec<TopicConfig>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SubscriptionGroupList {
    pub group_config_list: Vec<SubscriptionGroupConfig>,
}

fastjson::fastjson_body!(CreateTopicListRequestBody, SubscriptionGroupList);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_mqadmin_sends() {
        // fastjson's form of a List<TopicConfig> as DefaultMQAdminExt sends it (5.3.3), with a
        // number as a string and a field rmqd does not know
        let java = r#"{"topicConfigList":[{"attributes":{"+message.type":"FIFO"},"order":false,"perm":"4","readQueueNums":3,"topicFilterType":"SINGLE_TAG","topicMessageType":"FIFO","topicName":"T1","topicSysFlag":0,"writeQueueNums":3},{"topicName":"T2"}]}"#;
        let b = CreateTopicListRequestBody::decode(java.as_bytes()).unwrap();
        assert_eq!(b.topic_config_list.len(), 2);
        let t1 = &b.topic_config_list[0];
        assert_eq!(
            (t1.topic_name.as_str(), t1.perm, t1.read_queue_nums),
            ("T1", 4, 3)
        );
        assert_eq!(t1.attributes["+message.type"], "FIFO");
        // a missing field has Java's default
        assert_eq!(b.topic_config_list[1], TopicConfig::new("T2", 16, 16, 6));

        let groups =
            r#"{"groupConfigList":[{"groupName":"G1","retryMaxTimes":5},{"groupName":"G2"}]}"#;
        let g = SubscriptionGroupList::decode(groups.as_bytes()).unwrap();
        assert_eq!(g.group_config_list[0].retry_max_times, 5);
        assert_eq!(g.group_config_list[1], SubscriptionGroupConfig::new("G2"));
        assert!(CreateTopicListRequestBody::decode(b"{\"topicConfigList\":7}").is_err());
        assert!(SubscriptionGroupList::decode(b"[").is_err());
    }
}
