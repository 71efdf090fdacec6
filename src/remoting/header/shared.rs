//! Header layouts that several request codes share, one Rust type each. The file of each code
//! names its Java class as an alias of one of these and keeps the class's key table.

use super::rpc::RpcRequestHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// A request naming one topic.
///
/// ```text
/// key    type     req
/// topic  String   Y
/// + rpc  bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicRequestHeader {
    pub topic: String,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for TopicRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// A request naming one consumer group.
///
/// ```text
/// key            type     req
/// consumerGroup  String   Y
/// + rpc          bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsumerGroupRequestHeader {
    pub consumer_group: String,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for ConsumerGroupRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("consumerGroup", &self.consumer_group);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            consumer_group: ext.string("consumerGroup")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// A request naming one queue of a topic.
///
/// ```text
/// key      type     req
/// topic    String   Y
/// queueId  Integer  Y
/// + rpc    bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueRequestHeader {
    pub topic: String,
    pub queue_id: i32,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for QueueRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// A response carrying one offset.
///
/// ```text
/// key     type     req
/// offset  Long     Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OffsetResponseHeader {
    pub offset: i64,
}

impl CommandHeader for OffsetResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("offset", self.offset);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            offset: ext.i64("offset")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    /// Reads `pairs`, writes them back unchanged, and names `required` when it is missing.
    fn pins_java_keys<H: CommandHeader>(pairs: &[(&str, &str)], required: &str) {
        let ext = ext_from_pairs(pairs);
        let mut out = ExtFields::new();
        H::read_from(&ext).unwrap().write_to(&mut out);
        assert_eq!(out, ext);
        let err = H::read_from(&ExtFields::new()).err().unwrap();
        assert!(
            matches!(err, RemotingError::Header { field, .. } if field == required),
            "{err:?}"
        );
    }

    #[test]
    fn java_keys_round_trip_and_required_fields() {
        pins_java_keys::<TopicRequestHeader>(&[("topic", "T"), ("bname", "broker-a")], "topic");
        pins_java_keys::<ConsumerGroupRequestHeader>(
            &[("consumerGroup", "G"), ("bname", "broker-a")],
            "consumerGroup",
        );
        pins_java_keys::<QueueRequestHeader>(
            &[("topic", "T"), ("queueId", "3"), ("bname", "broker-a")],
            "topic",
        );
        pins_java_keys::<OffsetResponseHeader>(&[("offset", "1700000000000")], "offset");
    }

    #[test]
    fn fields_read_as_typed() {
        let ext = ext_from_pairs(&[("topic", "T"), ("queueId", "3")]);
        let h = QueueRequestHeader::read_from(&ext).unwrap();
        assert_eq!((h.topic.as_str(), h.queue_id), ("T", 3));
        let ext = ext_from_pairs(&[("offset", "1700000000000")]);
        assert_eq!(
            OffsetResponseHeader::read_from(&ext).unwrap().offset,
            1700000000000
        );
        assert!(QueueRequestHeader::read_from(&ext_from_pairs(&[("topic", "T")])).is_err());
    }
}
