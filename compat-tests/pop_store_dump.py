#!/usr/bin/env python3
"""Decode the POP state of a stopped broker's store (Java or rmqd) as text, for tests/golden/pop.

Usage: pop_store_dump.py <store root> <out dir> [--cluster CompatCluster]

Writes into <out dir>:
  revive-records.txt   every commit-log record of rmq_sys_REVIVE_LOG_<cluster>, rmq_sys_wheel_timer and
                       %RETRY%* topics, in commit-log order: topic, queueId, queueOffset, sysflag, reconsumeTimes,
                       born/store timestamps (relative to the first record too), tags, every property (sorted by key;
                       order in the blob is HashMap order and meaningless), body (UTF-8; CK/ACK JSON verbatim)
  revive-cq.txt        the consume-queue entries of the revive topic and the timer topic (commit-log offset, size,
                       tagsCode) per queue
  messageRequestMode.json, consumerOffset.json (as stored), topics-pop.json (the revive, timer and %RETRY% entries)
Commit-log record layout: ../shared/reference/store-format.md section 2 (v1/v2, IPv4/IPv6 hosts).
"""
import json
import os
import struct
import sys

MAGIC_V1 = -626843481
MAGIC_V2 = -626843477
BLANK = -875286124  # 0xCBD43194, end-of-file filler


def records(commitlog_dir):
    files = sorted(f for f in os.listdir(commitlog_dir) if f.isdigit())
    for name in files:
        base = int(name)
        with open(os.path.join(commitlog_dir, name), "rb") as fh:
            data = fh.read()
        pos = 0
        while pos + 8 <= len(data):
            size, magic = struct.unpack_from(">ii", data, pos)
            if size <= 0 or magic not in (MAGIC_V1, MAGIC_V2):
                break  # BLANK filler or zeroes: end of this file's data
            rec = data[pos:pos + size]
            yield base + pos, parse(rec, magic)
            pos += size


def parse(b, magic):
    r = {}
    (r["size"], _, r["bodyCrc"], r["queueId"], r["flag"], r["queueOffset"], r["physOffset"], r["sysflag"],
     r["bornTs"]) = struct.unpack_from(">iiiiiqqiq", b, 0)
    p = 48
    born_v6 = r["sysflag"] & 0x10
    store_v6 = r["sysflag"] & 0x20
    hl = 16 if born_v6 else 4
    r["bornHost"] = fmt_host(b[p:p + hl], struct.unpack_from(">i", b, p + hl)[0])
    p += hl + 4
    r["storeTs"] = struct.unpack_from(">q", b, p)[0]
    p += 8
    hl = 16 if store_v6 else 4
    r["storeHost"] = fmt_host(b[p:p + hl], struct.unpack_from(">i", b, p + hl)[0])
    p += hl + 4
    r["reconsumeTimes"], r["preparedTxOffset"], blen = struct.unpack_from(">iqi", b, p)
    p += 16
    r["body"] = b[p:p + blen]
    p += blen
    if magic == MAGIC_V2:
        tlen = struct.unpack_from(">h", b, p)[0]
        p += 2
    else:
        tlen = struct.unpack_from(">b", b, p)[0]
        p += 1
    r["topic"] = b[p:p + tlen].decode()
    p += tlen
    plen = struct.unpack_from(">h", b, p)[0]
    p += 2
    props = {}
    for seg in b[p:p + plen].decode("utf-8", "replace").split("\x02"):
        if "\x01" in seg:
            k, v = seg.split("\x01", 1)
            props[k] = v
    r["props"] = props
    r["version"] = "v2" if magic == MAGIC_V2 else "v1"
    return r


def fmt_host(addr, port):
    if len(addr) == 4:
        return "%d.%d.%d.%d:%d" % (tuple(addr) + (port,))
    return addr.hex() + ":%d" % port


def java_hash(s):
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def wanted(topic, cluster):
    return topic in ("rmq_sys_REVIVE_LOG_" + cluster, "rmq_sys_wheel_timer") or topic.startswith("%RETRY%")


def main():
    args = sys.argv[1:]
    cluster = "CompatCluster"
    if "--cluster" in args:
        i = args.index("--cluster")
        cluster = args[i + 1]
        del args[i:i + 2]
    store, out = args
    os.makedirs(out, exist_ok=True)
    revive = "rmq_sys_REVIVE_LOG_" + cluster
    lines = []
    t0 = None
    n = {}
    for off, r in records(os.path.join(store, "commitlog")):
        if t0 is None:
            t0 = r["storeTs"]
        if not wanted(r["topic"], cluster):
            continue
        n[r["topic"]] = n.get(r["topic"], 0) + 1
        lines.append("== commitlog %d: topic=%s queueId=%d queueOffset=%d %s sysflag=%d flag=%d reconsumeTimes=%d size=%d"
                     % (off, r["topic"], r["queueId"], r["queueOffset"], r["version"], r["sysflag"], r["flag"],
                        r["reconsumeTimes"], r["size"]))
        lines.append("   bornTs=%d storeTs=%d (store-born %+d ms) bornHost=%s storeHost=%s"
                     % (r["bornTs"], r["storeTs"], r["storeTs"] - r["bornTs"], r["bornHost"], r["storeHost"]))
        tags = r["props"].get("TAGS")
        lines.append("   tags=%s tagsCode=%s" % (tags, java_hash(tags) if tags is not None else "-"))
        for k in sorted(r["props"]):
            lines.append("   prop %s=%s" % (k, r["props"][k]))
        try:
            body = r["body"].decode("utf-8")
        except UnicodeDecodeError:
            body = "hex:" + r["body"].hex()
        lines.append("   body(%d)=%s" % (len(r["body"]), body))
    with open(os.path.join(out, "revive-records.txt"), "w") as fh:
        fh.write("# records per topic: %s\n" % json.dumps(n, sort_keys=True))
        fh.write("\n".join(lines) + "\n")

    cq = []
    for topic in (revive, "rmq_sys_wheel_timer"):
        d = os.path.join(store, "consumequeue", topic)
        if not os.path.isdir(d):
            continue
        for q in sorted(os.listdir(d), key=int):
            for f in sorted(os.listdir(os.path.join(d, q))):
                data = open(os.path.join(d, q, f), "rb").read()
                base = int(f) // 20
                for i in range(0, len(data) - 19, 20):
                    po, sz, tc = struct.unpack_from(">qiq", data, i)
                    if po == 0 and sz == 0 and tc == 0:
                        continue
                    cq.append("%s/%s offset=%d commitlog=%d size=%d tagsCode=%d" % (topic, q, base + i // 20, po, sz, tc))
    with open(os.path.join(out, "revive-cq.txt"), "w") as fh:
        fh.write("\n".join(cq) + "\n")

    cfg = os.path.join(store, "config")
    for name in ("messageRequestMode.json", "consumerOffset.json"):
        src = os.path.join(cfg, name)
        if os.path.exists(src):
            with open(src) as a, open(os.path.join(out, name), "w") as b:
                b.write(a.read())
    topics = json.load(open(os.path.join(cfg, "topics.json")))
    sel = {k: v for k, v in topics["topicConfigTable"].items() if wanted(k, cluster)}
    with open(os.path.join(out, "topics-pop.json"), "w") as fh:
        json.dump(sel, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print("wrote %s: %s" % (out, json.dumps(n, sort_keys=True)))


if __name__ == "__main__":
    main()
