//! `config/broker.conf` documents every key rmqd reads, and the configuration files the Java
//! distribution ships (`../shared/fixtures/java-conf/`, with a copy in `tests/fixtures/java-conf/`)
//! load unchanged into rmqd's broker and store configs.

use std::path::Path;

use rmqd::broker::BrokerConfig;
use rmqd::common::java_properties;
use rmqd::store::config::MessageStoreConfig;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

#[test]
fn broker_conf_documents_every_key_rmqd_reads() {
    let doc = read("config/broker.conf");
    let documented = |k: &str| {
        doc.lines().any(|l| {
            l.trim_start_matches(['#', ' '])
                .starts_with(&format!("{k}="))
        })
    };
    let mut keys: Vec<String> = BrokerConfig::default()
        .key_values()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    keys.extend(
        MessageStoreConfig::default()
            .keys_and_values()
            .into_iter()
            .map(|(k, _)| k.to_string()),
    );
    let missing: Vec<&String> = keys.iter().filter(|k| !documented(k)).collect();
    assert!(
        missing.is_empty(),
        "keys not documented in config/broker.conf: {missing:?}"
    );
}

/// Loads a properties file the way `rmqd -c` does; returns keys neither config knows.
fn load(text: &str) -> Vec<String> {
    let (mut b, mut s) = (BrokerConfig::default(), MessageStoreConfig::default());
    let mut unknown = Vec::new();
    for (k, v) in java_properties::parse(text) {
        let for_broker = b.set(&k, &v).unwrap_or_else(|e| panic!("{e}"));
        let for_store = s.set(&k, &v).unwrap_or_else(|e| panic!("{e}"));
        if !(for_broker || for_store) {
            unknown.push(k);
        }
    }
    s.sanitize().unwrap();
    unknown
}

#[test]
fn java_distribution_configs_load_unchanged() {
    for f in [
        "tests/fixtures/java-conf/broker.conf",
        "tests/fixtures/java-conf/2m-noslave/broker-a.properties",
        "tests/fixtures/java-conf/2m-2s-async/broker-a.properties",
        "tests/fixtures/java-conf/2m-2s-async/broker-a-s.properties",
        "tests/fixtures/java-conf/2m-2s-sync/broker-a.properties",
        "tests/fixtures/java-conf/2m-2s-sync/broker-a-s.properties",
    ] {
        // The shared fixtures (../shared/fixtures/java-conf) when this checkout sits beside them,
        // else the copy kept in tests/fixtures/java-conf for a machine without them.
        let shared = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/fixtures")
            .join(f.trim_start_matches("tests/fixtures/"));
        let text = std::fs::read_to_string(&shared).unwrap_or_else(|_| read(f));
        let unknown = load(&text);
        assert!(
            unknown.is_empty(),
            "{f}: keys rmqd does not know: {unknown:?}"
        );
    }
}

#[test]
fn rmqd_own_example_config_loads() {
    assert!(load(&read("config/broker.conf")).is_empty());
}

#[test]
fn a_bad_value_names_its_key() {
    let err = BrokerConfig::default()
        .set("listenPort", "ten")
        .unwrap_err();
    assert!(err.to_string().contains("listenPort"), "{err}");
    let err = MessageStoreConfig::default()
        .set("flushDiskType", "SOMETIMES")
        .unwrap_err();
    assert!(err.to_string().contains("flushDiskType"), "{err}");
}
