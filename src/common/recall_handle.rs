//! The recall handle of a timer message (RocketMQ 5.3.2+ `RecallMessageHandle.HandleV1`): the
//! send of a timer message answers it (`recallHandle`), and RECALL_MESSAGE (370) hands it back
//! to cancel the message before it is due. URL-safe Base64 of
//! `v1 <topic> <brokerName> <timestamp> <UNIQ_KEY>`, the timestamp being the timer's
//! `TIMER_OUT_MS` + 1 (so that rounding down to the precision finds the same slot).

use super::base64;

/// Java's one remark for every handle it cannot read.
pub const INVALID: &str = "recall handle is invalid";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallHandle {
    pub topic: String,
    pub broker_name: String,
    /// As written (Java keeps it a string and parses it where it is used).
    pub timestamp: String,
    /// The message's UNIQ_KEY.
    pub message_id: String,
}

impl RecallHandle {
    pub fn encode(&self) -> String {
        let raw = format!(
            "v1 {} {} {} {}",
            self.topic, self.broker_name, self.timestamp, self.message_id
        );
        base64::encode_url(raw.as_bytes())
    }

    /// Java `decodeHandle`: Base64 (URL-safe), split at single spaces (trailing empty parts
    /// dropped, as `String.split` does), version `v1` and at least five parts.
    pub fn decode(handle: &str) -> Result<Self, &'static str> {
        if handle.is_empty() {
            return Err(INVALID);
        }
        let raw = base64::decode_url(handle).ok_or(INVALID)?;
        let raw = String::from_utf8_lossy(&raw);
        let mut items: Vec<&str> = raw.split(' ').collect();
        while items.last() == Some(&"") {
            items.pop();
        }
        if items.first() != Some(&"v1") || items.len() < 5 {
            return Err(INVALID);
        }
        Ok(Self {
            topic: items[1].to_string(),
            broker_name: items[2].to_string(),
            timestamp: items[3].to_string(),
            message_id: items[4].to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_handle_round_trips() {
        let h = RecallHandle {
            topic: "TopicTest".into(),
            broker_name: "broker-a".into(),
            timestamp: "1700000005001".into(),
            message_id: "7F0000010B5A18B4AAC2000000000000".into(),
        };
        // what Java's HandleV1.buildHandle gives for these values
        let java = "djEgVG9waWNUZXN0IGJyb2tlci1hIDE3MDAwMDAwMDUwMDEgN0YwMDAwMDEwQjVBMThCNEFBQzIwMDAwMDAwMDAwMDA=";
        assert_eq!(h.encode(), java);
        assert_eq!(RecallHandle::decode(java), Ok(h));
        for bad in ["", "not base64!", "djEgVCBi", "djIgVCBiIDEgSUQ="] {
            assert_eq!(RecallHandle::decode(bad), Err(INVALID), "{bad}");
        }
        // trailing spaces are dropped as Java's split drops them; extra parts are ignored
        let six = base64::encode_url(b"v1 T b 1 ID extra  ");
        assert_eq!(RecallHandle::decode(&six).unwrap().message_id, "ID");
    }
}
