//! Bounded, deterministic fuzzing of every wire decoder, runnable on stable in CI: seeds (real
//! frames, headers and bodies) are mutated by a fixed-seed PRNG and fed to the same decoders as
//! the cargo-fuzz targets in `fuzz/`. The property is "no panic". `RMQD_FUZZ_ITERS` sets the
//! number of inputs in total (default 200 000: 7-60 s in a debug build on the shared 2-core
//! machine, depending on load).

#[allow(dead_code)]
mod decoders {
    include!("../fuzz/decoders.rs");
}

use bytes::BytesMut;
use decoders::*;
use rmqd::remoting::codec::encode_frame;
use rmqd::remoting::header::{
    CommandHeader, PullMessageResponseHeader, SendMessageRequestHeaderV2,
};
use rmqd::remoting::{ExtFields, RemotingCommand, SerializeType};

/// xorshift64*: tiny, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const INTERESTING: &[u8] = b"\x00\xff\x7f\x80{}[]\":,\\'\x01\x02 0-9e.";

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], input: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 => {
                let i = rng.below(len + 1);
                let b = INTERESTING[rng.below(INTERESTING.len())];
                input.insert(i, b);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                input.drain(i..i + n);
            }
            4 => input.truncate(rng.below(len + 1)),
            5 => {
                let other = &seeds[rng.below(seeds.len())];
                let at = rng.below(other.len() + 1);
                input.truncate(rng.below(len + 1));
                input.extend_from_slice(&other[at..]);
            }
            6 if len >= 4 => {
                let i = rng.below(len - 3);
                let v = [
                    0u32,
                    1,
                    4,
                    0x7fff_ffff,
                    0xffff_ffff,
                    0x0100_0000,
                    len as u32,
                ][rng.below(7)];
                input[i..i + 4].copy_from_slice(&v.to_be_bytes());
            }
            7 if len > 1 => {
                let i = rng.below(len);
                let j = rng.below(len);
                let chunk: Vec<u8> = input[i.min(j)..i.max(j)].to_vec();
                input.splice(i..i, chunk);
                input.truncate(1 << 16);
            }
            _ => input.push(rng.next() as u8),
        }
    }
}

fn frame_seeds() -> Vec<Vec<u8>> {
    let mut send = ExtFields::new();
    SendMessageRequestHeaderV2 {
        a: "PG".into(),
        b: "TopicTest".into(),
        c: "TBW102".into(),
        d: 4,
        e: 1,
        g: 1_700_000_000_000,
        i: Some("TAGS\u{1}TagA\u{2}UNIQ_KEY\u{1}AC11\u{2}".into()),
        ..Default::default()
    }
    .write_to(&mut send);
    let mut pull = ExtFields::new();
    PullMessageResponseHeader {
        next_begin_offset: 32,
        max_offset: 100,
        ..Default::default()
    }
    .write_to(&mut pull);
    let mut stats = ExtFields::new();
    rmqd::remoting::header::view_broker_stats_data::ViewBrokerStatsDataRequestHeader {
        stats_name: "TOPIC_PUT_NUMS".into(),
        stats_key: "TopicTest".into(),
    }
    .write_to(&mut stats);
    let mut out = Vec::new();
    for (code, ext, body) in [
        (310, send, b"hello".to_vec()),
        (11, pull, vec![0u8; 40]),
        (34, ExtFields::new(), body_seeds()[0].clone()),
        (315, stats, Vec::new()),
    ] {
        for ty in [SerializeType::Json, SerializeType::RocketMq] {
            let mut cmd = RemotingCommand::request(code).with_body(body.clone());
            cmd.ext_fields = Some(ext.clone());
            cmd.serialize_type = ty;
            let mut buf = BytesMut::new();
            encode_frame(&cmd, &mut buf);
            out.push(buf.to_vec());
        }
    }
    out
}

fn batch_seed() -> Vec<u8> {
    let mut b = Vec::new();
    for body in [&b"abc"[..], b""] {
        let total = 22 + body.len() + 7;
        b.extend_from_slice(&(total as i32).to_be_bytes());
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(&0i32.to_be_bytes());
        b.extend_from_slice(&(body.len() as i32).to_be_bytes());
        b.extend_from_slice(body);
        b.extend_from_slice(&7i16.to_be_bytes());
        b.extend_from_slice(b"A\x011\x02B\x01");
    }
    b
}

fn body_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        r#"{"clientID":"1.2.3.4@1#2","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"G1","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":["2598919"],"expressionType":"TAG","subString":"TagA","subVersion":1,"tagsSet":["TagA"],"topic":"T"}],"unitMode":false}],"heartbeatFingerprint":0,"producerDataSet":[{"groupName":"PG"}],"withoutSub":false}"#,
        r#"{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":1,"consumerOffset":1,"lastTimestamp":1,"pullOffset":1}}}"#,
        r#"{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:118}}"#,
        r#"{"brokerAddrs":{0:"10.0.0.1:10911",1:"x"},'a':[1,2,,3],b:{"c":null}}"#,
        r#"{"clientId":"c","consumerGroup":"G","mqSet":[{"brokerName":"b","queueId":0,"topic":"T"}],"onlyThisBroker":false}"#,
        r#"{"dataVersion":{"counter":1},"subscriptionGroupTable":{"G":{"groupName":"G","groupRetryPolicy":{"type":"CUSTOMIZED"}}}}"#,
        "# c\nbrokerName=broker-a\nlong\\\n  key : v\\u0041\n",
        "C0A8010A00002A9F0000000000001A2B",
        "TAGS\u{1}A\u{2}KEYS\u{1}k1 k2\u{2}",
        r#"{"statsDay":{"avgpt":0.0,"sum":0,"tps":0.0},"statsHour":{"avgpt":0.0,"sum":0,"tps":0.0},"statsMinute":{"avgpt":1.5,"sum":3,"tps":0.05}}"#,
        r#"{"data":{"PG":[{"clientId":"127.0.0.1@1","language":"JAVA","lastUpdateTimestamp":1,"remoteIP":"127.0.0.1:5","version":479}]}}"#,
        "INNER_MULTI_DISPATCH\u{1}%LMQ%a,x,%LMQ%b/c,\u{2}INNER_MULTI_QUEUE_OFFSET\u{1}1,,9\u{2}",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    seeds.push(batch_seed());
    seeds
}

/// Config files and store bytes: broker.conf, the config JSON files, a commit-log record, a
/// consume-queue unit, an index header, a checkpoint.
fn file_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = [
        "brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\ndeleteWhen=04\nfileReservedTime=48\nbrokerRole=ASYNC_MASTER\nflushDiskType=ASYNC_FLUSH\nmapedFileSizeCommitLog=1073741824\nmessageDelayLevel=1s 5s 10s 30s 1m\nlistenPort=10911\n",
        r#"{"dataVersion":{"counter":3,"timestamp":1726000000000},"topicConfigTable":{"T0":{"perm":6,"readQueueNums":2,"topicName":"T0","writeQueueNums":2,"attributes":{"+message.type":"NORMAL"}}}}"#,
        r#"{"offsetTable":{"T0@G1":{0:120,1:7},"%RETRY%G1@G1":{0:0}}}"#,
        r#"{"forbiddenTable":{"G1":{"T0":1}},"subscriptionGroupTable":{"G1":{"groupName":"G1","groupRetryPolicy":{"type":"CUSTOMIZED"}}}}"#,
        r#"{"dataVersion":{"counter":1},"offsetTable":{1:3,2:0,18:9}}"#,
        "00000000000001048576",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let born: std::net::SocketAddr = "192.168.1.10:54321".parse().unwrap();
    let mut record = Vec::new();
    let header = rmqd::store::commitlog::record::RecordHeader {
        queue_id: 1,
        flag: 0,
        sys_flag: 0,
        born_timestamp: 1_726_000_000_000,
        born_host: &born,
        store_host: &born,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    };
    let props = b"TAGS\x01A\x02KEYS\x01k1\x02UNIQ_KEY\x01AC11\x02";
    rmqd::store::commitlog::record::encode_into(
        &mut record,
        &header,
        b"hello",
        b"T0",
        props,
        b"",
        false,
    )
    .unwrap();
    seeds.push(record);
    let mut unit = Vec::new();
    unit.extend_from_slice(&4096i64.to_be_bytes());
    unit.extend_from_slice(&180i32.to_be_bytes());
    unit.extend_from_slice(&65i64.to_be_bytes());
    seeds.push(unit);
    let mut numbers = Vec::new();
    for v in [1_726_000_000_000i64, 1_726_000_000_100, 0, 4096, 64, 12] {
        numbers.extend_from_slice(&v.to_be_bytes());
    }
    seeds.push(numbers);
    // lmqConsumerOffset.json (enableLmq)
    seeds.push(
        br#"{"dataVersion":{"counter":2},"lmqOffsetTable":{"%LMQ%a@%LMQ%g":3},"offsetTable":{"%LMQ%a@G":{0:2}}}"#
            .to_vec(),
    );
    seeds
}

fn header_seeds() -> Vec<Vec<u8>> {
    let line = |key: &str, v: &str| {
        let sel = HEADER_KEYS.iter().position(|k| *k == key).unwrap_or(255) as u8;
        let mut l = vec![sel];
        l.extend_from_slice(v.as_bytes());
        l.push(b'\n');
        l
    };
    let mut full = Vec::new();
    for (i, key) in HEADER_KEYS.iter().enumerate() {
        let v = ["1", "true", "-1", "TopicTest", " 7", "+3", "UPPER"][i % 7];
        full.extend(line(key, v));
    }
    let mut send = Vec::new();
    let v2 = [
        ("a", "PG"),
        ("b", "T"),
        ("c", "TBW102"),
        ("d", "4"),
        ("e", "0"),
        ("f", "0"),
        ("g", "1"),
        ("h", "0"),
    ];
    for (k, v) in v2 {
        send.extend(line(k, v));
    }
    let mut stats = line("statsName", "TOPIC_PUT_NUMS");
    stats.extend(line("statsKey", "TopicTest"));
    vec![full, send, stats, b"\xffweird=key\n\xfe=\n".to_vec()]
}

fn iterations() -> usize {
    std::env::var("RMQD_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            20_000
        } else {
            200_000
        })
}

fn run(seed: u64, seeds: Vec<Vec<u8>>, iters: usize, target: impl Fn(&[u8])) {
    let mut rng = Rng(seed);
    for s in &seeds {
        target(s);
    }
    for _ in 0..iters {
        let mut input = seeds[rng.below(seeds.len())].clone();
        mutate(&mut rng, &seeds, &mut input);
        if rng.below(16) == 0 {
            input = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        }
        target(&input);
    }
}

#[test]
fn fuzz_frame_decode_never_panics() {
    run(
        0x5EED_F4A3,
        frame_seeds(),
        iterations() * 2 / 5,
        decode_frames,
    );
}

#[test]
fn fuzz_header_decode_never_panics() {
    run(0x5EED_4EAD, header_seeds(), iterations() / 5, |d| {
        decode_all_headers(&ext_from_bytes(d))
    });
}

#[test]
fn fuzz_body_decode_never_panics() {
    run(
        0x5EED_B0D7,
        body_seeds(),
        iterations() * 2 / 5,
        decode_all_bodies,
    );
}

#[test]
fn fuzz_file_decode_never_panics() {
    run(0x5EED_F11E, file_seeds(), iterations() / 5, |d| {
        decode_config_files(d);
        decode_store_bytes(d);
    });
}

/// The committed seeds of the `rocksdb_cq_decode` target: `n | key | value` as Java wrote them.
fn rocksdb_cq_seeds() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/rocksdb_cq_decode");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    seeds.sort();
    seeds
}

#[test]
fn fuzz_rocksdb_cq_decode_never_panics() {
    let seeds = rocksdb_cq_seeds();
    assert_eq!(seeds.len(), 5);
    use rmqd::store::consumequeue::rocksdb_codec::{decode_cq_key, decode_offset_key};
    for s in &seeds {
        let (key, _value) = s[1..].split_at(s[0] as usize);
        assert!(decode_cq_key(key).is_ok() || decode_offset_key(key).is_ok());
    }
    run(0x5EED_0CDB, seeds, iterations() / 5, decode_rocksdb_cq);
}

#[test]
fn seeds_are_valid_inputs() {
    // The seeds must decode, or the mutations explore nothing useful.
    let codec = rmqd::remoting::FrameCodec::default();
    for f in frame_seeds() {
        let mut buf = BytesMut::from(&f[..]);
        assert!(codec.decode_frame(&mut buf).unwrap().is_some());
    }
    let hb = &body_seeds()[0];
    assert!(rmqd::remoting::body::HeartbeatData::decode(hb).is_ok());
    let bodies = body_seeds();
    assert!(rmqd::remoting::body::broker_stats::BrokerStatsData::decode(&bodies[9]).is_ok());
    assert!(rmqd::remoting::body::broker_stats::ProducerTableInfo::decode(&bodies[10]).is_ok());
    let stats = ext_from_bytes(&header_seeds()[2]);
    assert!(
        rmqd::remoting::header::view_broker_stats_data::ViewBrokerStatsDataRequestHeader::read_from(
            &stats
        )
        .is_ok()
    );
    let ext = ext_from_bytes(&header_seeds()[1]);
    assert!(rmqd::remoting::header::SendMessageRequestHeader::read_for_code(310, &ext).is_ok());
    let files = file_seeds();
    let topics = String::from_utf8(files[1].clone()).unwrap();
    assert!(rmqd::store::config_files::from_fastjson::<
        rmqd::store::config_files::TopicConfigSerializeWrapper,
    >(&topics)
    .is_ok());
    assert!(rmqd::broker::metadata::offsets::parse_offset_table(
        std::str::from_utf8(&files[2]).unwrap()
    )
    .is_ok());
    let lmq = std::str::from_utf8(files.last().unwrap()).unwrap();
    assert!(rmqd::broker::metadata::offsets::parse_offset_table(lmq).is_ok());
    assert!(matches!(
        rmqd::store::commitlog::record::decode(&files[6], true),
        Ok(rmqd::store::commitlog::record::Decoded::Record(_))
    ));
}

#[test]
fn chunked_reads_of_seed_frames_take_whole_frames() {
    // All seed frames back to back, arriving 1, 2, 7, 64 and 256 bytes at a time: the reader's
    // loop (announced length, then decode) agrees with the decoder at every step.
    let stream: Vec<u8> = frame_seeds().concat();
    for chunk in [0u8, 1, 6, 63, 255] {
        let mut input = vec![chunk];
        input.extend_from_slice(&stream);
        read_frames_in_chunks(&input);
    }
}
