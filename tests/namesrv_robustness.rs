//! Hostile input never panics the NameServer: every NameServer code with random, truncated and
//! mutated headers and bodies (a deterministic xorshift stream, no extra dependency).

mod namesrv_support;

use namesrv_support::*;
use rmqd::remoting::body::fastjson::normalize;
use rmqd::remoting::body::register_broker::RegisterBrokerBody;
use rmqd::remoting::body::topic_route::TopicRouteData;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const CODES: [i32; 24] = [
    100, 101, 102, 103, 104, 105, 106, 205, 206, 216, 217, 219, 224, 304, 311, 312, 313, 318, 319,
    322, 327, 901, 904, 9999,
];
const KEYS: [&str; 14] = [
    "topic",
    "brokerName",
    "brokerAddr",
    "clusterName",
    "brokerId",
    "haServerAddr",
    "bodyCrc32",
    "compressed",
    "namespace",
    "key",
    "value",
    "cluster",
    "heartbeatTimeoutMillis",
    "acceptStandardJsonOnly",
];

fn mutate(rng: &mut Rng, mut bytes: Vec<u8>) -> Vec<u8> {
    match rng.below(4) {
        0 => bytes.truncate(rng.below(bytes.len() + 1)),
        1 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(bytes.len());
                if let Some(b) = bytes.get_mut(i) {
                    *b = rng.next() as u8;
                }
            }
        }
        2 => bytes = (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
        _ => {}
    }
    bytes
}

#[test]
fn random_requests_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let ns = name_server(dir.path(), |_| {});
    let cfg = broker_config("broker-a", 0, "10.0.0.1:10911");
    let seeds = [
        register(&cfg, 1, topics()).body.to_bytes().to_vec(),
        {
            let mut c = cfg.clone();
            c.compressed_register = true;
            register(&c, 1, topics()).body.to_bytes().to_vec()
        },
        br#"{"brokerDatas":[{"brokerAddrs":{0:"a:1"}}],"queueDatas":[{"brokerName":"broker-a"}]}"#
            .to_vec(),
        b"listenPort=1\norderMessageEnable=true\n".to_vec(),
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..8_000 {
        let code = CODES[rng.below(CODES.len())];
        let mut req = rmqd::remoting::RemotingCommand::request(code);
        req.version = [0, 36, 317, 413, 479, 612][rng.below(6)];
        for _ in 0..rng.below(10) {
            let k = KEYS[rng.below(KEYS.len())];
            let v = [
                "",
                "0",
                "-1",
                "true",
                "broker-a",
                "10.0.0.1:10911",
                "DefaultCluster",
                "TopicTest",
                "999999999999",
                "x y",
            ][rng.below(10)];
            req.ext_mut().insert(k, v);
        }
        let seed = seeds[rng.below(seeds.len())].clone();
        let body = mutate(&mut rng, seed);
        req.body = body.into();
        if code == 318 && rng.below(2) == 0 {
            continue; // keep config updates rare so the run stays about routes
        }
        let _ = ns.process(rng.next(), peer(), req);
        if rng.below(100) == 0 {
            ns.on_connection_closed(rng.next() % 4);
            ns.scan_not_active_brokers();
        }
    }
}

#[test]
fn decoders_reject_garbage_without_panicking() {
    let mut rng = Rng(42);
    let good = register(&broker_config("b", 0, "1.1.1.1:10911"), 1, topics())
        .body
        .to_bytes()
        .to_vec();
    let mut c = broker_config("b", 0, "1.1.1.1:10911");
    c.compressed_register = true;
    let zipped = register(&c, 1, topics()).body.to_bytes().to_vec();
    for _ in 0..5_000 {
        let src = if rng.below(2) == 0 {
            good.clone()
        } else {
            zipped.clone()
        };
        let bytes = mutate(&mut rng, src);
        let _ = RegisterBrokerBody::decode(&bytes, rng.below(2) == 0, 479);
        let _ = TopicRouteData::decode(&bytes);
        let _ = normalize(&bytes);
    }
}
