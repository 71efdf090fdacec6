//! The benchmark's parsers and report (`scripts/bench-official.py`, `scripts/bench-report.py`), run
//! by `python3` on real output of the official tools (`tests/fixtures/bench/`, from a quick run of
//! `scripts/bench`) and on small results files written here.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures/bench").join(name)
}

/// Runs `python3 scripts/<script> <args>`, which must succeed; its standard output.
fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new("python3")
        .arg(repo().join("scripts").join(script))
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `scripts/bench-official.py <producer> <consumer>`: its one JSON line.
fn official(producer: &Path, consumer: &Path) -> Value {
    let text = python("bench-official.py", &[producer, consumer]);
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_producers_last_report_and_the_consumer_report_nearest_it_give_the_figures() {
    let v = official(&fixture("producer.out"), &fixture("consumer.out"));
    // The producer's last line (15:21:01,319).
    assert_eq!(v["send_tps"], 16051.0);
    assert_eq!(v["send_avg_rt_ms"], 0.996);
    assert_eq!(v["send_max_rt_ms"], 388.0);
    assert_eq!(v["send_failed"], 0.0);
    assert_eq!(v["producer_lines"], 5);
    // The consumer's line nearest to it (15:21:01,827), not its last (15:21:05,827).
    assert_eq!(v["consume_tps"], 16077.0);
    assert_eq!(v["consume_avg_s2c_ms"], 1.34);
    assert_eq!(v["consume_avg_b2c_ms"], 1.83);
    // Maxima over the consumer lines of the producer's last 10 s (15:20:51,827 .. 15:21:01,827):
    // 45 at 15:20:51; the 86 of 15:20:49 is older than the window.
    assert_eq!(v["consume_max_s2c_ms"], 45.0);
    assert_eq!(v["consume_max_b2c_ms"], 45.0);
    assert_eq!(v["consume_fail_max"], 0.0);
    assert!(v.get("error").is_none());
    assert!(v.get("send_batches_tps").is_none());
}

#[test]
fn a_batch_producer_counts_messages_not_batches() {
    let v = official(
        &fixture("batch-producer.out"),
        &fixture("batch-consumer.out"),
    );
    assert_eq!(v["send_tps"], 65624.0, "Send MPS");
    assert_eq!(v["send_batches_tps"], 4101.0, "Send TPS");
    assert_eq!(v["send_avg_rt_ms"], 3.899, "per batch");
    assert_eq!(v["send_avg_msg_rt_ms"], 0.244);
    assert_eq!(v["consume_tps"], 59093.0);
    assert_eq!(v["consume_max_s2c_ms"], 1367.0);
}

#[test]
fn a_report_the_sigterm_cut_short_is_skipped_for_the_last_complete_one() {
    // Real output (Java broker, full run): the JVM died inside its last line, after
    // "Average Message RT(ms): ", leaving no newline.
    let cut = fixture("batch-producer-cut.out");
    let text = std::fs::read_to_string(&cut).unwrap();
    assert!(!text.ends_with('\n') && text.ends_with("Average Message RT(ms): "));
    let v = official(&cut, &fixture("batch-consumer-java.out"));
    assert!(v.get("error").is_none(), "{v}");
    // The line before it (17:45:55,370), and 15 complete reports of 16.
    assert_eq!(v["send_tps"], 51207.0);
    assert_eq!(v["send_avg_msg_rt_ms"], 0.312);
    assert_eq!(v["producer_lines"], 15);
    // The consumer's report nearest to that one (17:45:55,355).
    assert_eq!(v["consume_tps"], 52523.0);
}

#[test]
fn failures_are_summed_and_missing_reports_are_errors_not_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let prod = dir.path().join("p.out");
    std::fs::write(
        &prod,
        "topic: T, threadCount: 16\n\
         Current Time: 2026-11-30 15:20:53,319 | Send TPS: 10 | Max RT(ms): 3000 | Average RT(ms):   9.5 | Send Failed: 4 | Response Failed: 3\n\
         Current Time: 2026-11-30 15:20:55,319 | Send TPS: 12 | Max RT(ms): 3000 | Average RT(ms):   9.25 | Send Failed: 7 | Response Failed: 2\n",
    )
    .unwrap();
    // The consumer never printed a report near the producer's last one.
    let cons = dir.path().join("c.out");
    std::fs::write(
        &cons,
        "Consumer Started.\n\
         Current Time: 2026-11-30 15:20:30,000 | Consume TPS: 5 | AVG(B2C) RT(ms): 1.0 | AVG(S2C) RT(ms): 1.0 | MAX(B2C) RT(ms): 2 | MAX(S2C) RT(ms): 2 | Consume Fail: 0\n",
    )
    .unwrap();
    let v = official(&prod, &cons);
    assert_eq!(v["send_tps"], 12.0);
    assert_eq!(v["send_failed"], 9.0);
    assert!(v.get("consume_tps").is_none());
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("no consumer stats line"),
        "{v}"
    );

    // A producer that never reported (it failed to start) is an error, whatever the consumer said.
    let empty = dir.path().join("empty.out");
    std::fs::write(
        &empty,
        "Exception in thread \"main\" java.lang.IllegalStateException\n",
    )
    .unwrap();
    let v = official(&empty, &fixture("consumer.out"));
    assert!(
        v["error"].as_str().unwrap().contains("no stats line"),
        "{v}"
    );
    assert!(v.get("send_tps").is_none());

    // A consumer output that is not there (its JVM never started): still one JSON line, an error.
    let v = official(&fixture("producer.out"), &dir.path().join("missing.out"));
    assert!(
        v["error"].as_str().unwrap().contains("FileNotFoundError"),
        "{v}"
    );
}

/// Writes `rows` as results.jsonl, runs `scripts/bench-report.py`, returns report.md.
fn report(dir: &Path, rows: &[Value]) -> String {
    let res = dir.join("results.jsonl");
    let text: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    std::fs::write(&res, text.join("\n") + "\n").unwrap();
    let meta = dir.join("meta.txt");
    std::fs::write(&meta, "cmd=scripts/bench quick\ncpu=2 x test\n").unwrap();
    python("bench-report.py", &[&res, &meta, dir]);
    assert!(dir.join("latency.svg").exists());
    std::fs::read_to_string(dir.join("report.md")).unwrap()
}

fn run_row(broker: &str, run: u32, tps: f64, cpu_s: f64, p99_us: u64) -> Value {
    let hist = json!({"count": 1000, "p50": 100, "p90": 200, "p99": p99_us, "p999": p99_us, "max": p99_us});
    json!({
        "broker": broker, "run": run, "scenario": "sync-1k", "cmd": "run", "rate": 0,
        "send_tps": tps, "sent": 1000, "consumed": 1000, "failed": 0, "count_mismatch": false,
        "send_rtt_us": hist, "e2e_us": hist, "broker_cpu_s": cpu_s,
        "generator_cpu_s": 1.0, "send_secs": 10.0,
        "slow_e2e": {"deliveries": 0, "episodes": 0},
        "box": {"allocstall": 0, "compact_stall": 0, "steal_ticks": 0},
    })
}

fn off_row(broker: &str, run: u32, tps: f64, cpu_s: f64) -> Value {
    json!({
        "broker": broker, "run": run, "scenario": "off-sync-1k", "tool": "benchmark.Producer -w 16 -s 1024",
        "send_tps": tps, "send_avg_rt_ms": 1.0, "send_max_rt_ms": 300.0, "send_failed": 0.0,
        "consume_tps": tps, "consume_avg_s2c_ms": 1.5, "consume_avg_b2c_ms": 2.0, "consume_max_s2c_ms": 20.0,
        "stored": 100000, "window_msgs": 50000, "broker_cpu_s": cpu_s,
    })
}

/// The headline row of `figure`: its cells after the label.
fn headline<'a>(report: &'a str, figure: &str) -> Vec<&'a str> {
    let line = report
        .lines()
        .find(|l| l.starts_with(&format!("| {figure} |")))
        .unwrap_or_else(|| panic!("no row {figure:?} in\n{report}"));
    line.trim_matches('|')
        .split('|')
        .map(str::trim)
        .skip(1)
        .collect()
}

#[test]
fn the_report_gives_medians_per_broker_and_rmqd_over_java_ratios() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        // Java twice, rmqd twice (J,R,R,J): medians of two are their means.
        run_row("java", 1, 4000.0, 2.0, 9000),
        run_row("rmqd", 2, 18000.0, 0.4, 1000),
        run_row("rmqd", 3, 22000.0, 0.6, 2000),
        run_row("java", 4, 6000.0, 4.0, 11000),
        off_row("java", 1, 4000.0, 10.0),
        off_row("rmqd", 2, 16000.0, 1.0),
        off_row("rmqd", 3, 16000.0, 1.0),
        off_row("java", 4, 4000.0, 10.0),
        json!({"broker": "java", "run": 1, "scenario": "startup", "first_ack_ms": 4000.0, "port_open_ms": 3500.0}),
        json!({"broker": "rmqd", "run": 2, "scenario": "startup", "first_ack_ms": 40.0, "port_open_ms": 20.0}),
    ];
    let md = report(dir.path(), &rows);
    assert_eq!(
        headline(&md, "sync-1k: send TPS"),
        ["5,000", "20,000", "4.00", "≥ 2"]
    );
    // CPU ms per 1000 messages: Java 3 s / 1000 = 3000, rmqd 0.5 s / 1000 = 500.
    assert_eq!(
        headline(&md, "sync-1k: broker CPU ms / 1000 msgs"),
        ["3,000", "500", "0.17", "≤ 0.33"]
    );
    assert_eq!(
        headline(&md, "off-sync-1k (official benchmark tool): send TPS"),
        ["4,000", "16,000", "4.00", "≥ 2 (when not client-bound)"]
    );
    // Per message stored in the measured window: 10 s / 50000 vs 1 s / 50000.
    assert_eq!(
        headline(
            &md,
            "off-sync-1k (official benchmark tool): broker CPU ms / 1000 msgs"
        ),
        ["200", "20.0", "0.10", "≤ 0.33"]
    );
    assert_eq!(
        headline(&md, "process start → first ack (ms)"),
        ["4,000", "40.0", "0.01", "≤ 100 ms"]
    );
    assert!(md.contains("runs: java×2, rmqd×2"), "{md}");
    assert!(md.contains("messages consumed == messages acknowledged"));
    assert!(!md.contains("**Errors:**"));
}

#[test]
fn a_count_mismatch_or_a_tool_error_is_reported_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut short = run_row("rmqd", 2, 18000.0, 0.4, 1000);
    short["consumed"] = json!(999);
    short["count_mismatch"] = json!(true);
    let mut failed = off_row("java", 1, 4000.0, 10.0);
    failed["error"] = json!("no consumer stats line within 10 s");
    let md = report(
        dir.path(),
        &[run_row("java", 1, 4000.0, 2.0, 9000), short, failed],
    );
    let errors = md
        .lines()
        .find(|l| l.starts_with("**Errors:**"))
        .expect("an errors line");
    assert!(
        errors.contains("rmqd run 2 sync-1k: sent 1000 != consumed 999"),
        "{errors}"
    );
    assert!(
        errors.contains("java run 1 off-sync-1k: no consumer stats line"),
        "{errors}"
    );
}
