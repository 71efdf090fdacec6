#!/usr/bin/env python3
"""scripts/bench-official.py <producer.out> <consumer.out>: one JSON line from the official tools' own output.

benchmark.Producer and benchmark.BatchProducer (rocketmq-example) print, every `-ri` ms once 10 one-second
snapshots exist, a line over the last 10 s:
  Current Time: <t> | Send TPS: n | Max RT(ms): n | Average RT(ms): x | Send Failed: n | Response Failed: n
  Current Time: <t> | Send TPS: n | Send MPS: n | Max RT(ms): n | Average RT(ms): x | Average Message RT(ms): x
                    | Send Failed: n | Send Message Failed: n                                   (BatchProducer)
and benchmark.Consumer:
  Current Time: <t> | Consume TPS: n | AVG(B2C) RT(ms): x | AVG(S2C) RT(ms): x | MAX(B2C) RT(ms): n
                    | MAX(S2C) RT(ms): n | Consume Fail: n
The producer is stopped with SIGTERM, so its last line is the last 10 s of steady load: send figures come from it.
Consume figures come from the consumer's line printed closest to it (same window); the MAX(S2C/B2C) columns are
per report interval, so their maximum is taken over the consumer lines of that window. Max RT(ms) is the producer's
own figure: the maximum since it started, connection set-up included. A line the SIGTERM cut short (no newline, or a
field missing) is skipped. Never fails: a problem is an "error" in the JSON line. Standard library only."""
import datetime
import json
import re
import sys

NUM = r"([0-9]+(?:\.[0-9]+)?)"
TIME = r"Current Time: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})"


def when(s):
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def fields(line):
    """'Key: value' pairs of a stats line, numbers as floats."""
    out = {}
    for part in line.split("|")[1:]:
        k, _, v = part.partition(":")
        m = re.fullmatch(r"\s*" + NUM + r"\s*", v)
        if m:
            out[k.strip()] = float(m.group(1))
    return out


# The fields a complete stats line has, by tool.
PRODUCER = ("Send TPS", "Max RT(ms)", "Average RT(ms)", "Send Failed", "Response Failed")
BATCH_PRODUCER = ("Send TPS", "Send MPS", "Max RT(ms)", "Average RT(ms)", "Average Message RT(ms)", "Send Failed",
                  "Send Message Failed")
CONSUMER = ("Consume TPS", "AVG(B2C) RT(ms)", "AVG(S2C) RT(ms)", "MAX(B2C) RT(ms)", "MAX(S2C) RT(ms)", "Consume Fail")


def complete(f):
    return any(all(k in f for k in keys) for keys in (PRODUCER, BATCH_PRODUCER, CONSUMER))


def stats(path):
    """(time, fields) of every complete stats line; a line without its newline was cut short."""
    rows = []
    for line in open(path, errors="replace"):
        m = re.search(TIME, line)
        if m and line.endswith("\n") and complete(f := fields(line)):
            rows.append((when(m.group(1)), f))
    return rows


def main():
    try:
        summary()
    except Exception as e:  # noqa: BLE001 - the bench records it as the scenario's error
        print(json.dumps({"error": f"bench-official.py: {type(e).__name__}: {e}"}))


def summary():
    prod, cons = stats(sys.argv[1]), stats(sys.argv[2])
    if not prod:
        print(json.dumps({"error": f"no stats line in {sys.argv[1]}"}))
        return
    t, p = prod[-1]
    batch = "Send MPS" in p
    out = {
        "send_tps": p["Send MPS"] if batch else p["Send TPS"],
        "send_avg_rt_ms": p["Average RT(ms)"],
        "send_max_rt_ms": p["Max RT(ms)"],
        "send_failed": p.get("Send Failed", 0) + p.get("Response Failed", 0) + p.get("Send Message Failed", 0),
        "producer_lines": len(prod),
    }
    if batch:
        out["send_batches_tps"] = p["Send TPS"]
        out["send_avg_msg_rt_ms"] = p["Average Message RT(ms)"]
    window = [(ct, c) for ct, c in cons if t - 10.5 <= ct <= t + 1.5]
    if window:
        _, c = min(window, key=lambda w: abs(w[0] - t))
        out.update({
            "consume_tps": c["Consume TPS"],
            "consume_avg_b2c_ms": c["AVG(B2C) RT(ms)"],
            "consume_avg_s2c_ms": c["AVG(S2C) RT(ms)"],
            "consume_max_b2c_ms": max(w["MAX(B2C) RT(ms)"] for _, w in window),
            "consume_max_s2c_ms": max(w["MAX(S2C) RT(ms)"] for _, w in window),
            "consume_fail_max": max(w["Consume Fail"] for _, w in cons),
        })
    else:
        out["error"] = f"no consumer stats line within 10 s of the producer's last ({sys.argv[2]})"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
