//! SEND_MESSAGE (10/310/320/324/325) response header, plus the two plain ext keys the send processor adds.

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `SendMessageResponseHeader`: what a send stored; `MSG_REGION`/`TRACE_ON` are plain ext keys the Java broker adds to every send response.
///
/// ```text
/// key            type     req
/// msgId          String   Y
/// queueId        Integer  Y
/// queueOffset    Long     Y
/// transactionId  String   N
/// batchUniqId    String   N
/// recallHandle   String   N
/// MSG_REGION     String   N
/// TRACE_ON       String   N
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SendMessageResponseHeader {
    /// Offset message id(s); comma-joined for batches.
    pub msg_id: String,
    pub queue_id: i32,
    pub queue_offset: i64,
    pub transaction_id: Option<String>,
    pub batch_uniq_id: Option<String>,
    pub recall_handle: Option<String>,
    /// Broker `regionId` (Java default `DefaultRegion`).
    pub msg_region: Option<String>,
    /// `"true"`/`"false"` (`traceOn`).
    pub trace_on: Option<String>,
}

impl CommandHeader for SendMessageResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("msgId", &self.msg_id);
        ext.put("queueId", self.queue_id);
        ext.put("queueOffset", self.queue_offset);
        ext.put_opt("transactionId", &self.transaction_id);
        ext.put_opt("batchUniqId", &self.batch_uniq_id);
        ext.put_opt("recallHandle", &self.recall_handle);
        ext.put_opt("MSG_REGION", &self.msg_region);
        ext.put_opt("TRACE_ON", &self.trace_on);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            msg_id: ext.string("msgId")?,
            queue_id: ext.i32("queueId")?,
            queue_offset: ext.i64("queueOffset")?,
            transaction_id: ext.string_opt("transactionId"),
            batch_uniq_id: ext.string_opt("batchUniqId"),
            recall_handle: ext.string_opt("recallHandle"),
            msg_region: ext.string_opt("MSG_REGION"),
            trace_on: ext.string_opt("TRACE_ON"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn send_message_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("msgId", "v_msgId"),
            ("queueId", "3"),
            ("queueOffset", "1700000000000"),
            ("transactionId", "v_transactionId"),
            ("batchUniqId", "v_batchUniqId"),
            ("recallHandle", "v_recallHandle"),
            ("MSG_REGION", "v_MSG_REGION"),
            ("TRACE_ON", "v_TRACE_ON"),
        ]);
        let h = SendMessageResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.msg_id.as_str(), "v_msgId");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn send_message_response_header_missing_msg_id_is_an_error() {
        let err = SendMessageResponseHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "msgId", .. }));
    }
}
