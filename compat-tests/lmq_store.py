#!/usr/bin/env python3
"""compat-tests/lmq_store.py — store checks of the lmq suite (compat-tests/suites/lmq.sh), on a STOPPED broker's store.

  lmq_store.py capture <store> <golden dir>   write the used units of the LMQ/parent consume queues (<name>.cq, binary,
                                              only the used 20-byte units) + units.txt + lmqConsumerOffset.json
  lmq_store.py compare <store> <ref>          ref = a golden dir (as written by capture) or another broker's store:
                                              the used units must be equal (commit-log offset, size, tagsCode)
  lmq_store.py offsets <store>                config/lmqConsumerOffset.json holds the offsets the lmq scenarios committed;
                                              no consumerOffset.json
A consume-queue unit is 20 bytes big-endian: commit-log offset (8), size (4), tagsCode (8). "Used" = the units before
the first all-zero unit of the first file (the workload is far below one file).
"""
import json
import re
import os
import struct
import sys

QUEUES = [("lmq_a", "%LMQ%lmq_a", 0), ("lmq_b", "%LMQ%lmq_b", 0), ("parent", "LmqParent", 0)]
FIRST = "00000000000000000000"


def units_of_file(path):
    out = []
    try:
        with open(path, "rb") as f:
            data = f.read(20 * 4096)
    except FileNotFoundError:
        return None
    for i in range(0, len(data) - 19, 20):
        u = data[i:i + 20]
        if u == b"\0" * 20:
            break
        out.append(struct.unpack(">qiq", u))
    return out


def units(ref, short, topic, qid):
    gold = os.path.join(ref, short + ".cq")
    if os.path.exists(gold):
        return units_of_file(gold)
    return units_of_file(os.path.join(ref, "consumequeue", topic, str(qid), FIRST))


def capture(store, golden):
    os.makedirs(golden, exist_ok=True)
    lines = []
    for short, topic, qid in QUEUES:
        us = units(store, short, topic, qid)
        if us is None:
            print("capture: %s/%d missing in %s" % (topic, qid, store), file=sys.stderr)
            sys.exit(1)
        with open(os.path.join(golden, short + ".cq"), "wb") as f:
            for u in us:
                f.write(struct.pack(">qiq", *u))
        lines.append("%s (consumequeue/%s/%d/%s): %d units" % (short, topic, qid, FIRST, len(us)))
        for i, (off, size, tags) in enumerate(us):
            lines.append("  %3d  commitLogOffset=%-6d size=%-4d tagsCode=%d" % (i, off, size, tags))
    with open(os.path.join(golden, "units.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    src = os.path.join(store, "config", "lmqConsumerOffset.json")
    if os.path.exists(src):
        with open(src) as f, open(os.path.join(golden, "lmqConsumerOffset.json"), "w") as g:
            g.write(f.read())
    print("capture: wrote %s" % golden, file=sys.stderr)


def compare(store, ref):
    bad, summary = [], []
    for short, topic, qid in QUEUES:
        a, b = units(store, short, topic, qid), units(ref, short, topic, qid)
        if a is None or b is None:
            bad.append("%s: consume queue missing in %s" % (topic, "this store" if a is None else "the reference"))
            continue
        summary.append("%s %d units" % (short, len(a)))
        if a == b:
            continue
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else None
            y = b[i] if i < len(b) else None
            if x != y:
                bad.append("%s: %d units vs %d; first difference at unit %d: (offset, size, tagsCode) %s vs %s"
                           % (short, len(a), len(b), i, x, y))
                break
    if bad:
        print("; ".join(bad))
        return 1
    print("equal: " + ", ".join(summary))
    return 0


def offsets(store):
    cfg = os.path.join(store, "config")
    p = os.path.join(cfg, "lmqConsumerOffset.json")
    if not os.path.exists(p):
        print("no config/lmqConsumerOffset.json (files: %s)" % sorted(os.listdir(cfg)) if os.path.isdir(cfg) else "no config dir")
        return 1
    try:
        # fastjson writes integer map keys unquoted ({0:7}): quote them for Python's json
        j = json.loads(re.sub(r'([{,]\s*)(-?\d+)\s*:', r'\1"\2":', open(p).read()))
    except Exception as e:  # noqa: BLE001
        print("lmqConsumerOffset.json does not parse: %s" % e)
        return 1
    ot = j.get("offsetTable") or {}
    lt = j.get("lmqOffsetTable") or {}
    errs = []

    def q(key, qid):
        v = ot.get(key) or {}
        return v.get(str(qid), v.get(qid))

    if q("%LMQ%lmq_a@LMQ_PULL_G", 0) != 7:
        errs.append("offsetTable[%LMQ%lmq_a@LMQ_PULL_G][0] = {} (want 7)".format(q("%LMQ%lmq_a@LMQ_PULL_G", 0)))
    if q("%LMQ%lmq_a@LMQ_PUSH_G", 0) != 12:
        errs.append("offsetTable[%LMQ%lmq_a@LMQ_PUSH_G][0] = {} (want 12)".format(q("%LMQ%lmq_a@LMQ_PUSH_G", 0)))
    if lt.get("%LMQ%lmq_a@%LMQ%lmq_g") != 5:
        errs.append("lmqOffsetTable[%LMQ%lmq_a@%LMQ%lmq_g] = {} (want 5)".format(lt.get("%LMQ%lmq_a@%LMQ%lmq_g")))
    if any("@%LMQ%" in k for k in ot):
        errs.append("an %LMQ% group in offsetTable: %s" % [k for k in ot if "@%LMQ%" in k])
    if os.path.exists(os.path.join(cfg, "consumerOffset.json")):
        errs.append("consumerOffset.json written too")
    keys = sorted(j.keys())
    lmq_keys = sorted(k for k in ot if k.startswith("%LMQ%"))
    if errs:
        print("; ".join(errs) + " | top-level keys %s, offsetTable LMQ keys %s, lmqOffsetTable %s" % (keys, lmq_keys, lt))
        return 1
    print("top-level keys %s; offsetTable LMQ entries %s; lmqOffsetTable %s; no consumerOffset.json"
          % (keys, {k: ot[k] for k in lmq_keys}, lt))
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "capture":
        capture(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 3 and sys.argv[1] == "offsets":
        return offsets(sys.argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
