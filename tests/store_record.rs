//! Byte-exact commit-log record encoding against store-format.md §2.5 and checked decoding.

use std::net::SocketAddr;

use rmqd::store::commitlog::record::{self, Decoded, RecordError, RecordHeader};
use rmqd::store::consumequeue::CqUnit;
use rmqd::store::message::offset_msg_id;

const PROPS: &[u8] = b"TAGS\x01TagA\x02KEYS\x01KEY1\x02UNIQ_KEY\x017F0000010B1C18B4AAC27C1D5B2A0000\x02WAIT\x01true\x02CLUSTER\x01DefaultCluster\x02";

fn example() -> Vec<u8> {
    let born: SocketAddr = "192.168.1.10:54321".parse().unwrap();
    let store: SocketAddr = "192.168.1.20:10911".parse().unwrap();
    let h = RecordHeader {
        queue_id: 1,
        flag: 0,
        sys_flag: 0,
        born_timestamp: 1_726_000_000_000,
        born_host: &born,
        store_host: &store,
        reconsume_times: 0,
        prepared_transaction_offset: 0,
    };
    let mut buf = Vec::new();
    let pp = record::encode_into(
        &mut buf,
        &h,
        b"Hello RocketMQ",
        b"TopicTest",
        PROPS,
        &[],
        false,
    )
    .unwrap();
    record::patch(&mut buf, &pp, 0, 0, 1_726_000_000_123);
    buf
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x} "))
        .collect::<String>()
        .trim_end()
        .to_string()
}

#[test]
fn worked_example_is_byte_exact() {
    let b = example();
    assert_eq!(PROPS.len(), 95);
    assert_eq!(b.len(), 209);
    let lines = [
        "00 00 00 d1 da a3 20 a7 69 c8 65 ed 00 00 00 01",
        "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
        "00 00 00 00 00 00 00 00 00 00 01 91 dd 9d ec 00",
        "c0 a8 01 0a 00 00 d4 31 00 00 01 91 dd 9d ec 7b",
        "c0 a8 01 14 00 00 2a 9f 00 00 00 00 00 00 00 00",
        "00 00 00 00 00 00 00 0e 48 65 6c 6c 6f 20 52 6f",
        "63 6b 65 74 4d 51 09 54 6f 70 69 63 54 65 73 74",
        "00 5f 54 41 47 53 01 54 61 67 41 02 4b 45 59 53",
    ];
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(hex(&b[i * 16..i * 16 + 16]), *line, "line {:04x}", i * 16);
    }
    assert_eq!(&b[0x72..], PROPS);
    assert_eq!(b[0xd0], 0x02);
    let unit = CqUnit {
        phy_offset: 0,
        size: 209,
        tags_code: rmqd::store::util::java_hash("TagA") as i64,
    };
    assert_eq!(
        hex(&unit.encode()),
        "00 00 00 00 00 00 00 00 00 00 00 d1 00 00 00 00 00 27 a8 07"
    );
    let store: SocketAddr = "192.168.1.20:10911".parse().unwrap();
    assert_eq!(offset_msg_id(&store, 0), "C0A8011400002A9F0000000000000000");
}

#[test]
fn decode_round_trip_and_rejections() {
    let b = example();
    let Ok(Decoded::Record(r)) = record::decode(&b, true) else {
        panic!("decode")
    };
    assert_eq!(r.topic, b"TopicTest");
    assert_eq!(r.body, b"Hello RocketMQ");
    assert_eq!(r.store_timestamp, 1_726_000_000_123);
    assert_eq!(r.body_crc, 1_774_740_973);
    assert_eq!(r.born_host.to_string(), "192.168.1.10:54321");
    // torn tail
    assert!(matches!(
        record::decode(&b[..150], true),
        Err(RecordError::Truncated { .. })
    ));
    // bad crc
    let mut bad = b.clone();
    bad[0x58] ^= 1;
    assert!(matches!(
        record::decode(&bad, true),
        Err(RecordError::BadCrc { .. })
    ));
    assert!(record::decode(&bad, false).is_ok());
    // wrong total size
    let mut bad = b.clone();
    bad[3] = 0xd0;
    assert!(record::decode(&bad, false).is_err());
    // zero / blank
    assert!(matches!(record::decode(&[0u8; 16], true), Ok(Decoded::End)));
    assert!(matches!(
        record::decode(&record::blank_record(100), true),
        Ok(Decoded::Blank)
    ));
}

#[test]
fn ipv6_and_v2_lengths() {
    let born: SocketAddr = "[::1]:1234".parse().unwrap();
    let store: SocketAddr = "[fe80::1]:10911".parse().unwrap();
    let h = RecordHeader {
        queue_id: 0,
        flag: 7,
        sys_flag: 0,
        born_timestamp: 1,
        born_host: &born,
        store_host: &store,
        reconsume_times: 2,
        prepared_transaction_offset: 3,
    };
    let topic = vec![b'a'; 200];
    let mut buf = Vec::new();
    let pp =
        record::encode_into(&mut buf, &h, b"x", &topic, b"", b"CLUSTER\x01c\x02", true).unwrap();
    assert_eq!(pp.len, 91 + 1 + 200 + 10 + 1 + 24);
    let Ok(Decoded::Record(r)) = record::decode(&buf, true) else {
        panic!()
    };
    assert_eq!(r.sys_flag & 0x30, 0x30);
    assert_eq!(r.topic.len(), 200);
    assert_eq!(r.properties, b"CLUSTER\x01c\x02");
    assert_eq!(r.store_host, store);
    assert_eq!(offset_msg_id(&store, 5).len(), 56);
}
