//! Responses encoded by rmqd decode identically with the real Java `RemotingCommand.decode`
//! (`compat-tests/decode-check.sh`): code, flag, opaque, version, language, remark, extFields
//! and body, in both header serializations, including properties strings with 0x01/0x02 and
//! non-ASCII text. Needs Java and `compat-tests/setup.sh`, so it is `#[ignore]`d in plain
//! `cargo test` and run by `scripts/test` in its compat stage (`--ignored`).

use std::process::Command;

use bytes::BytesMut;
use rmqd::remoting::codec::encode_frame;
use rmqd::remoting::{RemotingCommand, SerializeType};
use serde_json::Value;

fn responses() -> Vec<RemotingCommand> {
    let mut out = Vec::new();
    for st in [SerializeType::Json, SerializeType::RocketMq] {
        let req = RemotingCommand {
            opaque: 7,
            ..RemotingCommand::request(310)
        };
        let mut ok = RemotingCommand::response_to(&req, 0, None);
        ok.serialize_type = st;
        ok.ext_mut()
            .insert("msgId", "7F00000100004E1F0000000000000000");
        ok.ext_mut().insert("queueOffset", "42");
        ok.ext_mut().insert("MSG_REGION", "DefaultRegion");
        out.push(ok);
        let mut err = RemotingCommand::response_to(
            &req,
            17,
            Some("topic[T] not exist, apply first please! é \"q\"\n".into()),
        );
        err.serialize_type = st;
        out.push(err);
        let mut body = RemotingCommand::response_to(&req, 0, None)
            .with_body(b"{\"table\":{\"k\":\"v\"}}".to_vec());
        body.serialize_type = st;
        body.ext_mut()
            .insert("properties", "TAGS\u{1}A\u{2}KEYS\u{1}k 1\u{2}");
        out.push(body);
        let mut oneway = RemotingCommand::request(40);
        oneway.serialize_type = st;
        oneway.opaque = -5;
        oneway.mark_oneway();
        oneway.ext_mut().insert("consumerGroup", "G");
        out.push(oneway);
    }
    out
}

#[test]
#[ignore = "needs Java and compat-tests/setup.sh; run by scripts/test"]
fn java_decodes_our_frames_to_the_same_values() {
    let dir = tempfile::tempdir().unwrap();
    let cmds = responses();
    let mut files = Vec::new();
    for (i, cmd) in cmds.iter().enumerate() {
        let mut buf = BytesMut::new();
        encode_frame(cmd, &mut buf);
        let path = dir.path().join(format!("frame-{i}.bin"));
        std::fs::write(&path, &buf).unwrap();
        files.push(path);
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/compat-tests/decode-check.sh");
    let out = Command::new(script)
        .args(&files)
        .output()
        .expect("run compat-tests/decode-check.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "Java could not decode our frames:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), cmds.len());
    for (cmd, j) in cmds.iter().zip(&lines) {
        assert_eq!(j["code"], cmd.code, "{j}");
        assert_eq!(j["flag"], cmd.flag, "{j}");
        assert_eq!(j["opaque"], cmd.opaque, "{j}");
        assert_eq!(j["version"], cmd.version, "{j}");
        assert_eq!(j["language"], "JAVA", "{j}");
        assert_eq!(j["remark"].as_str(), cmd.remark.as_deref(), "{j}");
        for (k, v) in cmd.ext_fields.iter().flat_map(|e| e.iter()) {
            assert_eq!(j["extFields"][k].as_str(), Some(v), "{k} in {j}");
        }
        // DecodeCheck prints -1 for Java's null body (an empty one).
        let expected = if cmd.body.is_empty() {
            -1
        } else {
            cmd.body.len() as i64
        };
        assert_eq!(j["bodyLength"], expected, "{j}");
    }
}
