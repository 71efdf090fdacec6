//! UPDATE_AND_CREATE_TOPIC (17) request header.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `CreateTopicRequestHeader`: `order`/`force` are Booleans with default false, so Java always sends them.
///
/// ```text
/// key              type     req
/// topic            String   Y
/// defaultTopic     String   Y
/// readQueueNums    Integer  Y
/// writeQueueNums   Integer  Y
/// perm             Integer  Y
/// topicFilterType  String   Y
/// topicSysFlag     Integer  N
/// order            Boolean  P default false
/// attributes       String   N
/// force            Boolean  P default false
/// + rpc            bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CreateTopicRequestHeader {
    pub topic: String,
    pub default_topic: String,
    pub read_queue_nums: i32,
    pub write_queue_nums: i32,
    pub perm: i32,
    /// `SINGLE_TAG` or `MULTI_TAG`.
    pub topic_filter_type: String,
    pub topic_sys_flag: Option<i32>,
    pub order: bool,
    /// `+key=value,+key2=value2,-key3`.
    pub attributes: Option<String>,
    pub force: bool,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for CreateTopicRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put("defaultTopic", &self.default_topic);
        ext.put("readQueueNums", self.read_queue_nums);
        ext.put("writeQueueNums", self.write_queue_nums);
        ext.put("perm", self.perm);
        ext.put("topicFilterType", &self.topic_filter_type);
        ext.put_opt("topicSysFlag", &self.topic_sys_flag);
        ext.put("order", self.order);
        ext.put_opt("attributes", &self.attributes);
        ext.put("force", self.force);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            default_topic: ext.string("defaultTopic")?,
            read_queue_nums: ext.i32("readQueueNums")?,
            write_queue_nums: ext.i32("writeQueueNums")?,
            perm: ext.i32("perm")?,
            topic_filter_type: ext.string("topicFilterType")?,
            topic_sys_flag: ext.i32_opt("topicSysFlag")?,
            order: ext.bool_or("order", false),
            attributes: ext.string_opt("attributes"),
            force: ext.bool_or("force", false),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn create_topic_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("defaultTopic", "v_defaultTopic"),
            ("readQueueNums", "3"),
            ("writeQueueNums", "3"),
            ("perm", "3"),
            ("topicFilterType", "v_topicFilterType"),
            ("topicSysFlag", "3"),
            ("order", "true"),
            ("attributes", "v_attributes"),
            ("force", "true"),
            ("bname", "broker-a"),
        ]);
        let h = CreateTopicRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_str(), "v_topic");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn create_topic_request_header_missing_topic_is_an_error() {
        let err = CreateTopicRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "topic", .. }));
    }
}
