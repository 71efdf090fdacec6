//! Codec hot paths: SEND_MESSAGE_V2 request decode/encode (JSON and ROCKETMQ headers), the pull
//! response head, and a heartbeat body parse.

use bytes::BytesMut;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use rmqd::remoting::body::HeartbeatData;
use rmqd::remoting::codec::{encode_frame, encode_head};
use rmqd::remoting::header::{
    CommandHeader, PullMessageResponseHeader, SendMessageRequestHeader, SendMessageRequestHeaderV2,
};
use rmqd::remoting::{FrameCodec, RemotingCommand, SerializeType};

fn send_v2_header() -> SendMessageRequestHeaderV2 {
    SendMessageRequestHeaderV2 {
        a: "please_rename_unique_group_name".into(),
        b: "TopicTest".into(),
        c: "TBW102".into(),
        d: 4,
        e: 3,
        f: 0,
        g: 1_700_000_000_000,
        h: 0,
        i: Some("TAGS\u{1}TagA\u{2}UNIQ_KEY\u{1}7F0000010D2A18B4AAC2208C2E4A0000\u{2}WAIT\u{1}true\u{2}".into()),
        j: Some(0),
        k: Some(false),
        m: Some(false),
        n: Some("broker-a".into()),
        ..Default::default()
    }
}

fn send_request(ty: SerializeType) -> RemotingCommand {
    let mut cmd = RemotingCommand::request(310).with_body(vec![b'x'; 128]);
    cmd.opaque = 42;
    cmd.serialize_type = ty;
    send_v2_header().write_to(cmd.ext_mut());
    cmd
}

fn bench_send(c: &mut Criterion) {
    for (name, ty) in [
        ("json", SerializeType::Json),
        ("rocketmq", SerializeType::RocketMq),
    ] {
        let mut frame = BytesMut::new();
        encode_frame(&send_request(ty), &mut frame);
        let frame = frame.freeze();
        let codec = FrameCodec::default();
        c.bench_function(&format!("send_v2_decode_{name}"), |b| {
            b.iter(|| {
                let mut buf = BytesMut::from(&frame[..]);
                let cmd = codec.decode_frame(&mut buf).unwrap().unwrap();
                let ext = cmd.ext_fields.as_ref().unwrap();
                black_box(SendMessageRequestHeader::read_for_code(cmd.code, ext).unwrap())
            })
        });
        c.bench_function(&format!("send_v2_encode_{name}"), |b| {
            let mut out = BytesMut::with_capacity(1024);
            b.iter(|| {
                out.clear();
                let mut cmd = RemotingCommand::request(310).with_body(vec![b'x'; 128]);
                cmd.serialize_type = ty;
                send_v2_header().write_to(cmd.ext_mut());
                encode_frame(black_box(&cmd), &mut out);
                black_box(out.len())
            })
        });
    }
}

fn bench_pull_head(c: &mut Criterion) {
    let request = RemotingCommand::request(11);
    let header = PullMessageResponseHeader {
        suggest_which_broker_id: 0,
        next_begin_offset: 1_234_567,
        min_offset: 0,
        max_offset: 9_876_543,
        topic_sys_flag: Some(0),
        group_sys_flag: Some(0),
        ..Default::default()
    };
    c.bench_function("pull_response_head_encode", |b| {
        b.iter(|| {
            let mut resp = RemotingCommand::response_to(&request, 0, Some("FOUND".into()));
            black_box(&header).write_to(resp.ext_mut());
            black_box(encode_head(&resp))
        })
    });
    let mut resp = RemotingCommand::response_to(&request, 0, Some("FOUND".into()));
    header.write_to(resp.ext_mut());
    let head = encode_head(&resp);
    let codec = FrameCodec::default();
    c.bench_function("pull_response_head_decode", |b| {
        b.iter(|| {
            let mut buf = BytesMut::from(&head[..]);
            let cmd = codec.decode_frame(&mut buf).unwrap().unwrap();
            black_box(
                PullMessageResponseHeader::read_from(cmd.ext_fields.as_ref().unwrap()).unwrap(),
            )
        })
    });
}

const JAVA_HEARTBEAT: &str = r#"{"clientID":"192.168.1.20@4242#2298434581234","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"G1","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1700000000000,"tagsSet":[],"topic":"TopicTest"},{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1700000000001,"tagsSet":[],"topic":"%RETRY%G1"}],"unitMode":false}],"heartbeatFingerprint":0,"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}],"withoutSub":false}"#;

const GO_HEARTBEAT: &str = r#"{"clientID":"192.168.1.21@9876","producerDataSet":[],"consumerDataSet":[{"groupName":"G1","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"TopicTest","subString":"TagA || TagB","tagsSet":["TagA","TagB"],"codeSet":["2598919","2598920"],"subVersion":1700000000123456789,"expressionType":"TAG"}],"unitMode":false}]}"#;

fn bench_heartbeat(c: &mut Criterion) {
    c.bench_function("heartbeat_parse_java", |b| {
        b.iter(|| black_box(HeartbeatData::decode(black_box(JAVA_HEARTBEAT.as_bytes())).unwrap()))
    });
    c.bench_function("heartbeat_parse_go", |b| {
        b.iter(|| black_box(HeartbeatData::decode(black_box(GO_HEARTBEAT.as_bytes())).unwrap()))
    });
}

criterion_group!(benches, bench_send, bench_pull_head, bench_heartbeat);
criterion_main!(benches);
