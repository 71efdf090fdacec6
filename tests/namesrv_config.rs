//! `config/namesrv.conf` documents every key the NameServer reads, with its default.

use rmqd::namesrv::config::parse_properties;
use rmqd::namesrv::NamesrvConfig;

fn documented() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/config/namesrv.conf"))
        .unwrap();
    let uncommented: String = text
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .filter(|l| l.contains('=') && !l.starts_with('#') && !l.starts_with(' '))
        .map(|l| format!("{l}\n"))
        .collect();
    parse_properties(&uncommented)
}

#[test]
fn every_documented_key_is_read_and_every_read_key_is_documented() {
    let docs = documented();
    let mut c = NamesrvConfig::default();
    for (k, v) in &docs {
        assert_eq!(c.set(k, v), Ok(true), "documented key {k} is not read");
    }
    for (k, _) in NamesrvConfig::default().to_properties() {
        assert!(
            docs.iter().any(|(d, _)| d == k),
            "key {k} is not documented"
        );
    }
}

#[test]
fn documented_defaults_are_the_defaults() {
    let d = NamesrvConfig::default();
    let props = d.to_properties();
    for (k, v) in documented() {
        if v.contains("${") || k == "rocketmqHome" {
            continue;
        }
        let actual = &props.iter().find(|(p, _)| *p == k).unwrap().1;
        assert_eq!(actual, &v, "default of {k}");
    }
}
