//! Which (topic, group) consumes by POP (Java `MessageRequestModeManager`): set by
//! SET_MESSAGE_REQUEST_MODE (`mqadmin setConsumeMode`), kept in `config/messageRequestMode.json`,
//! pretty-printed as Java writes it:
//! `{"messageRequestModeMap":{"<topic>":{"<group>":{"consumerGroup":…,"mode":"POP","popShareQueueNum":0,"topic":…}}}}`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};

use crate::broker::metadata::persist::JsonFile;
use crate::broker::metadata::MetadataError;
use crate::remoting::body::pop::SetMessageRequestModeRequestBody;

pub type ModeMap = BTreeMap<String, BTreeMap<String, SetMessageRequestModeRequestBody>>;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ModeFile {
    message_request_mode_map: ModeMap,
}

/// `messageRequestMode.json`'s text as topic → group → mode.
pub fn parse(text: &str) -> Result<ModeMap, String> {
    crate::remoting::body::fastjson::from_slice::<ModeFile>(text.as_bytes())
        .map(|f| f.message_request_mode_map)
        .map_err(|e| e.to_string())
}

pub struct MessageRequestModeManager {
    modes: RwLock<ModeMap>,
    file: JsonFile,
}

impl MessageRequestModeManager {
    /// Reads the file (or its `.bak`); a file that does not parse is logged and ignored.
    pub fn load(path: PathBuf) -> Self {
        let file = JsonFile::new(path);
        let modes = match file.load() {
            None => ModeMap::new(),
            Some(text) => match parse(&text) {
                Ok(m) => m,
                Err(e) => {
                    tracing::error!(path = %file.path().display(), error = %e,
                            "messageRequestMode.json does not parse; starting without request modes");
                    ModeMap::new()
                }
            },
        };
        Self {
            modes: RwLock::new(modes),
            file,
        }
    }

    pub fn get(&self, topic: &str, group: &str) -> Option<SetMessageRequestModeRequestBody> {
        self.modes.read().get(topic)?.get(group).cloned()
    }

    /// Records the mode and writes the file.
    pub fn set(&self, body: SetMessageRequestModeRequestBody) -> Result<(), MetadataError> {
        self.modes
            .write()
            .entry(body.topic.clone())
            .or_default()
            .insert(body.consumer_group.clone(), body);
        self.persist()
    }

    pub fn is_empty(&self) -> bool {
        self.modes.read().is_empty()
    }

    /// The whole table as GET_ALL_MESSAGE_REQUEST_MODE answers it (compact JSON).
    pub fn encode_compact(&self) -> String {
        let f = ModeFile {
            message_request_mode_map: self.modes.read().clone(),
        };
        serde_json::to_string(&f).unwrap_or_default()
    }

    pub fn persist(&self) -> Result<(), MetadataError> {
        self.file.persist(|| {
            let f = ModeFile {
                message_request_mode_map: self.modes.read().clone(),
            };
            crate::store::config_files::to_fastjson_pretty(&f)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_survive_a_restart_in_java_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("messageRequestMode.json");
        let m = MessageRequestModeManager::load(path.clone());
        assert!(m.get("T", "G").is_none());
        m.set(SetMessageRequestModeRequestBody {
            consumer_group: "G".into(),
            mode: "POP".into(),
            pop_share_queue_num: 0,
            topic: "T".into(),
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"messageRequestModeMap\""), "{text}");
        let again = MessageRequestModeManager::load(path);
        assert_eq!(again.get("T", "G").unwrap().mode, "POP");
        assert_eq!(
            again.encode_compact(),
            r#"{"messageRequestModeMap":{"T":{"G":{"consumerGroup":"G","mode":"POP","popShareQueueNum":0,"topic":"T"}}}}"#
        );
    }
}
