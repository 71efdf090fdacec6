//! SEARCH_OFFSET_BY_TIMESTAMP (29) request and response headers.

use super::rpc::RpcRequestHeader;
use super::shared::OffsetResponseHeader;
use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `SearchOffsetRequestHeader`: the queue offset of the first (LOWER) or last (UPPER) message stored at `timestamp`.
///
/// ```text
/// key           type     req
/// topic         String   Y
/// queueId       Integer  Y
/// timestamp     Long     Y
/// boundaryType  BoundaryType N
/// + rpc         bname ns nsd oway lo (RpcRequestHeader)
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SearchOffsetRequestHeader {
    pub topic: String,
    pub queue_id: i32,
    pub timestamp: i64,
    pub boundary_type: Option<BoundaryType>,
    pub rpc: RpcRequestHeader,
}

impl CommandHeader for SearchOffsetRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("topic", &self.topic);
        ext.put("queueId", self.queue_id);
        ext.put("timestamp", self.timestamp);
        ext.put_opt("boundaryType", &self.boundary_type.map(BoundaryType::name));
        self.rpc.write_to(ext);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            topic: ext.string("topic")?,
            queue_id: ext.i32("queueId")?,
            timestamp: ext.i64("timestamp")?,
            boundary_type: ext.str_opt("boundaryType").map(BoundaryType::from_name),
            rpc: RpcRequestHeader::read_from(ext)?,
        })
    }
}

/// `SearchOffsetResponseHeader`.
///
/// ```text
/// key     type     req
/// offset  Long     Y
/// ```
pub type SearchOffsetResponseHeader = OffsetResponseHeader;

/// `BoundaryType` of SEARCH_OFFSET_BY_TIMESTAMP: a case-insensitive `"upper"` is UPPER, anything
/// else LOWER (Java `BoundaryType.getType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoundaryType {
    #[default]
    Lower,
    Upper,
}

impl BoundaryType {
    pub fn from_name(s: &str) -> Self {
        if s.trim().eq_ignore_ascii_case("upper") {
            Self::Upper
        } else {
            Self::Lower
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Lower => "LOWER",
            Self::Upper => "UPPER",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn search_offset_request_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[
            ("topic", "v_topic"),
            ("queueId", "3"),
            ("timestamp", "1700000000000"),
            ("boundaryType", "UPPER"),
            ("bname", "broker-a"),
        ]);
        let h = SearchOffsetRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.topic.as_str(), "v_topic");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn search_offset_request_header_missing_topic_is_an_error() {
        let err = SearchOffsetRequestHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(err, RemotingError::Header { field: "topic", .. }));
    }

    #[test]
    fn boundary_type_parses_like_java() {
        assert_eq!(BoundaryType::from_name("Upper"), BoundaryType::Upper);
        assert_eq!(BoundaryType::from_name("x"), BoundaryType::Lower);
    }
}
