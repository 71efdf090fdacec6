//! VIEW_BROKER_STATS_DATA (315) request header.

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `ViewBrokerStatsDataRequestHeader`.
///
/// ```text
/// key        type     req
/// statsName  String   Y
/// statsKey   String   Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ViewBrokerStatsDataRequestHeader {
    pub stats_name: String,
    pub stats_key: String,
}

impl CommandHeader for ViewBrokerStatsDataRequestHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("statsName", &self.stats_name);
        ext.put("statsKey", &self.stats_key);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            stats_name: ext.string("statsName")?,
            stats_key: ext.string("statsKey")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn java_keys_round_trip_and_both_are_required() {
        let ext = ext_from_pairs(&[("statsName", "TOPIC_PUT_NUMS"), ("statsKey", "T")]);
        let h = ViewBrokerStatsDataRequestHeader::read_from(&ext).unwrap();
        assert_eq!(h.stats_key, "T");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
        let only_name = ext_from_pairs(&[("statsName", "TOPIC_PUT_NUMS")]);
        assert!(ViewBrokerStatsDataRequestHeader::read_from(&only_name).is_err());
    }
}
