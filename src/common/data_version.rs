//! `DataVersion`: the version stamp of a broker's topic and group configs (topics.json,
//! subscriptionGroup.json, REGISTER_BROKER, QUERY_DATA_VERSION).
//!
//! Java writes `{"counter":3,"stateVersion":0,"timestamp":1700000000000}` (fastjson, alphabetical);
//! equality compares all three fields, as Java's `equals` does.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DataVersion {
    pub counter: i64,
    pub state_version: i64,
    pub timestamp: i64,
}

impl Default for DataVersion {
    /// Java's `new DataVersion()`: counter 0, stateVersion 0, timestamp now.
    fn default() -> Self {
        Self {
            counter: 0,
            state_version: 0,
            timestamp: now_millis(),
        }
    }
}

impl DataVersion {
    /// The all-zero version Java assigns to an absent REGISTER_BROKER body.
    pub fn zero() -> Self {
        Self {
            counter: 0,
            state_version: 0,
            timestamp: 0,
        }
    }

    /// Java's `nextVersion()`: counter + 1, timestamp now, stateVersion 0.
    pub fn next_version(&mut self) {
        self.next_version_with_state(0);
    }

    pub fn next_version_with_state(&mut self, state_version: i64) {
        self.timestamp = now_millis();
        self.state_version = state_version;
        self.counter += 1;
    }

    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads what any client or broker wrote, with fastjson's leniency (`common::lenient`).
    pub fn decode(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        super::lenient::from_value(serde_json::from_slice(bytes)?)
    }
}

/// Milliseconds since the Unix epoch, as `System.currentTimeMillis()`.
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_shape_and_lenient_read() {
        let v = DataVersion {
            counter: 3,
            state_version: 0,
            timestamp: 1_700_000_000_000,
        };
        assert_eq!(
            String::from_utf8(v.encode()).unwrap(),
            r#"{"counter":3,"stateVersion":0,"timestamp":1700000000000}"#
        );
        let r = DataVersion::decode(br#"{"timestamp":5,"counter":2,"x":1}"#).unwrap();
        assert_eq!((r.counter, r.state_version, r.timestamp), (2, 0, 5));
    }
}
