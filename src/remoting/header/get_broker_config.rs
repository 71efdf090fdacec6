//! GET_BROKER_CONFIG (26) response header; the body is Java properties text.

use super::{CommandHeader, ExtRead, ExtWrite};
use crate::remoting::command::ExtFields;
use crate::remoting::error::RemotingError;

/// `GetBrokerConfigResponseHeader`: `version` is the config DataVersion as JSON.
///
/// ```text
/// key      type     req
/// version  String   Y
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GetBrokerConfigResponseHeader {
    pub version: String,
}

impl CommandHeader for GetBrokerConfigResponseHeader {
    fn write_to(&self, ext: &mut ExtFields) {
        ext.put("version", &self.version);
    }

    fn read_from(ext: &ExtFields) -> Result<Self, RemotingError> {
        Ok(Self {
            version: ext.string("version")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remoting::serialize::json::ext_from_pairs;

    #[test]
    fn get_broker_config_response_header_java_keys_round_trip() {
        let ext = ext_from_pairs(&[("version", "v_version")]);
        let h = GetBrokerConfigResponseHeader::read_from(&ext).unwrap();
        assert_eq!(h.version.as_str(), "v_version");
        let mut out = ExtFields::new();
        h.write_to(&mut out);
        assert_eq!(out, ext);
    }

    #[test]
    fn get_broker_config_response_header_missing_version_is_an_error() {
        let err = GetBrokerConfigResponseHeader::read_from(&ExtFields::new()).unwrap_err();
        assert!(matches!(
            err,
            RemotingError::Header {
                field: "version",
                ..
            }
        ));
    }
}
