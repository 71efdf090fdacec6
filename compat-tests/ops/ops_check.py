#!/usr/bin/env python3
"""ops suite checks: rocketmq-exporter's /metrics and rocketmq-dashboard's REST API (+ Chromium screenshots).

Prints one JSON line per scenario, {"id","client","status","ms","detail"}, as run.sh's ingest_json_lines reads them.
Subcommands (see compat-tests/suites/ops.sh for how they are driven):
  exporter-quiet  after the workload, poll /metrics until the workload's values are there; assert them
  exporter-load   during the steady load, poll until the TPS families carry non-zero values for the workload
  exporter-families  compare the families with samples (quiet + load scrapes) with the Java broker's set
  dashboard-*     the dashboard's REST endpoints (the ones its pages call) + one screenshot per page
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from http.cookiejar import CookieJar
import urllib.parse
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def emit(sid, status, ms, detail, client):
    print(json.dumps({"id": sid, "client": client, "status": status, "ms": int(ms), "detail": detail[:900]}))
    sys.stdout.flush()


COOKIES = CookieJar()
OPENER = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(COOKIES))


def http(url, data=None, timeout=30, headers=None):
    req = urllib.request.Request(url)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if data is not None:
        req.data = json.dumps(data).encode()
        req.add_header("Content-Type", "application/json")
    with OPENER.open(req, timeout=timeout) as r:
        return r.read().decode("utf-8", "replace")


def parse_metrics(text):
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            continue
        labels = dict(LABEL.findall(m.group(2) or ""))
        try:
            v = float(m.group(3))
        except ValueError:
            continue
        out.append((m.group(1), labels, v))
    return out


def scrape(url):
    try:
        return http(url, timeout=20)
    except Exception as e:  # exporter not up yet / mid-collection
        return "# scrape failed: %s\n" % e


def pick(samples, name, **labels):
    return [v for n, l, v in samples if n == name and all(l.get(k) == w for k, w in labels.items())]


# ------------------------------------------------------------------------------------------------ exporter
def exporter_checks(samples, a, phase):
    """[(what, ok, value)] for the workload of this broker: topic a.topic, group a.group, producer group a.pgroup."""
    t, g, n = a.topic, a.group, a.n
    checks = []

    def one(what, vals, cond):
        checks.append((what, bool(vals) and all(cond(v) for v in vals), vals))

    if phase == "quiet":
        one("rocketmq_producer_offset{topic=%s} == %d (acked sends)" % (t, n), pick(samples, "rocketmq_producer_offset", topic=t), lambda v: v == n)
        one("rocketmq_consumer_offset{group=%s,topic=%s} == %d (consumed)" % (g, t, n),
            pick(samples, "rocketmq_consumer_offset", group=g, topic=t), lambda v: v == n)
        one("rocketmq_group_diff{group=%s,topic=%s} == 0 (lag after consumption)" % (g, t),
            pick(samples, "rocketmq_group_diff", group=g, topic=t), lambda v: v == 0)
        one("rocketmq_group_count{group=%s} == 1 (one push consumer online)" % g, pick(samples, "rocketmq_group_count", group=g), lambda v: v == 1)
        one("rocketmq_producer_count{group=%s} == 1 (one producer online)" % a.pgroup,
            pick(samples, "rocketmq_producer_count", group=a.pgroup), lambda v: v == 1)
        one("rocketmq_brokeruntime_msg_put_total_today_now >= %d" % n, pick(samples, "rocketmq_brokeruntime_msg_put_total_today_now"), lambda v: v >= n)
        one("rocketmq_brokeruntime_msg_gettotal_today_now >= %d" % n, pick(samples, "rocketmq_brokeruntime_msg_gettotal_today_now"), lambda v: v >= n)
    else:
        one("rocketmq_producer_tps{topic=%s} > 0 under load" % t, pick(samples, "rocketmq_producer_tps", topic=t), lambda v: v > 0)
        one("rocketmq_consumer_tps{group=%s,topic=%s} > 0 under load" % (g, t), pick(samples, "rocketmq_consumer_tps", group=g, topic=t), lambda v: v > 0)
        one("rocketmq_broker_tps > 0 under load", pick(samples, "rocketmq_broker_tps"), lambda v: v > 0)
        one("rocketmq_broker_qps > 0 under load", pick(samples, "rocketmq_broker_qps"), lambda v: v > 0)
        one("rocketmq_brokeruntime_put_tps10 > 0 under load", pick(samples, "rocketmq_brokeruntime_put_tps10"), lambda v: v > 0)
        # putMessageDistributeTime is "null" in GET_BROKER_RUNTIME_INFO until the broker's first stats roll, 60 s after
        # its start (Java StoreStatsService.printTps; rmqd rolls the same way), and the exporter then has no pmdt_*
        # families. The load scrape is the one that must show them, so it waits for that roll on either broker (a
        # fast rmqd phase reached this step 40 s after its broker started and missed them).
        one("rocketmq_brokeruntime_pmdt_0to10ms present (after the broker's first 60 s roll)",
            pick(samples, "rocketmq_brokeruntime_pmdt_0to10ms"), lambda v: v >= 0)
    return checks


def cmd_exporter_poll(a, phase):
    sid = "OPS-EXP-QUIET" if phase == "quiet" else "OPS-EXP-LOAD"
    t0 = time.time()
    deadline = t0 + a.timeout
    text, checks = "", []
    while True:
        text = scrape(a.url)
        checks = exporter_checks(parse_metrics(text), a, phase)
        if all(ok for _, ok, _ in checks) or time.time() >= deadline:
            break
        time.sleep(3)
    with open(a.out, "w") as f:
        f.write(text)
    ms = (time.time() - t0) * 1000
    bad = ["%s: got %s" % (w, v if v else "no sample") for w, ok, v in checks if not ok]
    if bad:
        emit(sid, "FAIL", ms, "after %d s: " % a.timeout + "; ".join(bad) + " (scrape: %s)" % a.out, a.client)
    else:
        emit(sid, "PASS", ms, "%d values as expected: " % len(checks) + "; ".join("%s = %s" % (w.split(" ")[0], v) for w, _, v in checks), a.client)


def families(paths):
    fams = set()
    for p in paths:
        if os.path.exists(p):
            fams |= {n for n, _, _ in parse_metrics(open(p, errors="replace").read())}
    return fams


def cmd_exporter_families(a):
    t0 = time.time()
    fams = families(a.scrapes)
    with open(a.out, "w") as f:
        f.write("\n".join(sorted(fams)) + "\n")
    if not a.reference:
        status = "PASS" if fams else "FAIL"
        emit("OPS-EXP-FAMILIES", status, 0, "%d families with samples on this broker (the reference set, %s)" % (len(fams), a.out), a.client)
        return
    if not os.path.exists(a.reference):
        emit("OPS-EXP-FAMILIES", "FAIL", 0, "no Java reference set %s (run the java broker first in the same RUN_DIR)" % a.reference, a.client)
        return
    ref = {l.strip() for l in open(a.reference) if l.strip()}
    missing, extra = sorted(ref - fams), sorted(fams - ref)
    ms = (time.time() - t0) * 1000
    if missing:
        emit("OPS-EXP-FAMILIES", "FAIL", ms, "%d of the Java broker's %d families missing: %s%s" % (
            len(missing), len(ref), ", ".join(missing), ("; extra: " + ", ".join(extra)) if extra else ""), a.client)
    else:
        emit("OPS-EXP-FAMILIES", "PASS", ms, "all %d families with samples for the Java broker have samples here%s" % (
            len(ref), ("; extra: " + ", ".join(extra)) if extra else ""), a.client)


# ------------------------------------------------------------------------------------------------ dashboard
class Dash:
    def __init__(self, a):
        self.a = a
        self.base = a.url.rstrip("/")

    def get(self, path, **params):
        q = ("?" + urllib.parse.urlencode(params)) if params else ""
        r = json.loads(http(self.base + path + q))
        return r

    def post(self, path, body, **params):
        """as the pages post: the XSRF-TOKEN cookie from /rocketmq-dashboard/csrf-token echoed in X-XSRF-TOKEN"""
        token = [c.value for c in COOKIES if c.name == "XSRF-TOKEN"]
        if not token:
            http(self.base + "/rocketmq-dashboard/csrf-token")
            token = [c.value for c in COOKIES if c.name == "XSRF-TOKEN"]
        q = ("?" + urllib.parse.urlencode(params)) if params else ""
        return json.loads(http(self.base + path + q, data=body, headers={"X-XSRF-TOKEN": token[0] if token else ""}))

    def data(self, r, what):
        if not isinstance(r, dict) or r.get("status") != 0:
            raise AssertionError("%s: %s" % (what, json.dumps(r)[:300]))
        return r.get("data")

    def shot(self, page, name):
        """headless Chromium screenshot of /#/<page> into <shots>/<name>.png; returns its path or an error text"""
        png = os.path.join(self.a.shots, name + ".png")
        prof = os.path.join(self.a.shots, ".chromium-" + name)
        cmd = [self.a.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
               "--user-data-dir=" + prof, "--window-size=1440,900", "--virtual-time-budget=15000",
               "--screenshot=" + png, self.base + "/#/" + page]
        # a page shot mid-transition is an empty frame (~20 KB at this size): shoot again, up to 3 times
        for _ in range(3):
            try:
                subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=90)
            except subprocess.TimeoutExpired:
                return "chromium timed out on /#/%s" % page
            finally:
                subprocess.run(["rm", "-rf", prof])
            if os.path.exists(png) and os.path.getsize(png) > 24000:
                break
            time.sleep(2)
        return png if os.path.exists(png) and os.path.getsize(png) > 0 else "no screenshot of /#/%s" % page


def dash_scenario(d, sid, fn, page=None):
    t0 = time.time()
    deadline = t0 + d.a.timeout
    err = None
    while True:
        try:
            detail = fn()
            err = None
            break
        except Exception as e:  # noqa: BLE001 — the dashboard's answer, retried until the deadline
            err = "%s: %s" % (type(e).__name__, e)
        if time.time() >= deadline:
            break
        time.sleep(3)
    if page:
        p = d.shot(page, sid.lower())
        detail = (detail if err is None else err) + "; page /#/%s: %s" % (page, p)
    else:
        detail = detail if err is None else err
    emit(sid, "PASS" if err is None else "FAIL", (time.time() - t0) * 1000, detail, d.a.client)


def cmd_dashboard(a):
    d = Dash(a)
    t, g, n, bname = a.topic, a.group, a.n, a.broker_name
    os.makedirs(a.shots, exist_ok=True)
    info = {}

    def cluster():
        data = d.data(d.get("/cluster/list.query"), "cluster/list.query")
        bs = data["brokerServer"].get(bname)
        assert bs, "broker %s not listed: %s" % (bname, list(data["brokerServer"]))
        kv = bs.get("0") or bs.get(0)
        assert kv, "no master (id 0) entry for %s: %s" % (bname, bs)
        tps = float(kv.get("putTps", "0").split()[0])
        assert tps > 0, "putTps %r (not > 0 under load)" % kv.get("putTps")
        addr = data["clusterInfo"]["brokerAddrTable"][bname]["brokerAddrs"]["0"]
        assert addr == a.broker_addr, "broker address %s != %s" % (addr, a.broker_addr)
        return "broker %s at %s listed, putTps %s, getTransferredTps %s, version %s" % (
            bname, addr, kv.get("putTps"), kv.get("getTransferredTps"), kv.get("brokerVersionDesc"))

    def topics():
        lst = d.data(d.get("/topic/list.query", skipSysProcess="true"), "topic/list.query")
        names = lst.get("topicList", lst) if isinstance(lst, dict) else lst
        assert t in names, "%s not in the topic list (%d topics)" % (t, len(names))
        st = d.data(d.get("/topic/stats.query", topic=t), "topic/stats.query")
        off = st["offsetTable"]
        total = sum(v["maxOffset"] for v in off.values())
        assert len(off) == 4 and total >= n, "status: %d queues, max offsets sum %d (want 4, >= %d)" % (len(off), total, n)
        rt = d.data(d.get("/topic/route.query", topic=t), "topic/route.query")
        addrs = [bd["brokerAddrs"].get("0") for bd in rt["brokerDatas"]]
        qd = rt["queueDatas"]
        assert addrs == [a.broker_addr] and qd and qd[0]["readQueueNums"] == 4, "route %s" % json.dumps(rt)[:300]
        cons = d.data(d.get("/topic/queryConsumerByTopic.query", topic=t), "topic/queryConsumerByTopic.query")
        assert g in cons, "group %s not among the topic's consumers %s" % (g, list(cons))
        ci = d.data(d.get("/topic/queryTopicConsumerInfo.query", topic=t), "topic/queryTopicConsumerInfo.query")
        return "listed; status 4 queues, max offsets sum %d; route -> %s; consumers %s; consumer info groups %s" % (
            total, addrs, list(cons), [x.get("consumerGroup") for x in ci] if isinstance(ci, list) else ci)

    def groups():
        lst = d.data(d.get("/consumer/groupList.query", skipSysGroup="false"), "consumer/groupList.query")
        mine = [x for x in lst if x.get("group") == g]
        assert mine, "group %s not listed (%d groups)" % (g, len(lst))
        x = mine[0]
        info["address"] = ",".join(x.get("address") or [])
        assert x.get("count") == 1, "group %s: count %s (want 1 consumer)" % (g, x.get("count"))
        # GET_CONSUME_STATS consumeTps: pulls of the last minute, and the load stopped seconds ago
        assert x.get("consumeTps", 0) > 0, "group %s: consumeTps %s (want > 0 within a minute of the load)" % (g, x.get("consumeTps"))
        prog = d.data(d.get("/consumer/queryTopicByConsumer.query", consumerGroup=g, address=info["address"]),
                      "consumer/queryTopicByConsumer.query")
        mt = [p for p in prog if p.get("topic") == t]
        assert mt, "progress: topic %s not consumed by %s: %s" % (t, g, json.dumps(prog)[:300])
        diff = mt[0]["diffTotal"]
        qs = mt[0]["queueStatInfoList"]
        assert diff == 0 and len(qs) == 4, "progress: diffTotal %s, %d queues (want 0, 4)" % (diff, len(qs))
        conn = d.data(d.get("/consumer/consumerConnection.query", consumerGroup=g, address=info["address"]), "consumer/consumerConnection.query")
        cl = conn["connectionSet"]
        assert len(cl) == 1 and cl[0]["clientId"].endswith("@ops_" + a.run_id), "connections %s" % json.dumps(cl)[:300]
        sub = conn["subscriptionTable"].get(t)
        assert sub and sub["subString"] == "*", "subscription table %s" % json.dumps(conn["subscriptionTable"])[:300]
        info["clientId"] = cl[0]["clientId"]
        return "listed (count 1, consumeTps %s, diff %s); progress diffTotal 0 over 4 queues; connection %s (%s, %s)" % (
            x.get("consumeTps"), x.get("diffTotal"), cl[0]["clientId"], cl[0].get("language"), cl[0].get("versionDesc"))

    def msgs_time():
        r = d.data(d.get("/message/queryMessageByTopic.query", topic=t, begin=a.begin, end=int(time.time() * 1000) + 60000),
                   "message/queryMessageByTopic.query")
        mine = [m for m in r if (m.get("properties") or {}).get("TAGS") == "opstag"]
        assert len(mine) == n, "by topic and time: %d opstag messages (want %d of %d listed)" % (len(mine), n, len(r))
        return "%d messages listed, %d of the workload's" % (len(r), len(mine))

    def msgs_key():
        key = "opskey_%s_3" % a.run_id
        r = d.data(d.get("/message/queryMessageByTopicAndKey.query", topic=t, key=key), "message/queryMessageByTopicAndKey.query")
        want = len([i for i in range(n) if i % 10 == 3])
        keys = {(m.get("properties") or {}).get("KEYS") for m in r}
        assert len(r) == want and keys == {key}, "by key %s: %d messages, keys %s (want %d)" % (key, len(r), keys, want)
        return "key %s: %d messages" % (key, len(r))

    def msgs_id():
        r = d.data(d.get("/message/viewMessage.query", topic=t, msgId=a.msg_id), "message/viewMessage.query")
        mv = r["messageView"]
        tag = (mv.get("properties") or {}).get("TAGS")
        assert mv["msgId"] == a.msg_id and mv["topic"] == t and tag == "opstag", "view %s" % json.dumps(mv)[:300]
        body = mv.get("messageBody")
        assert body == "ops 0", "body %r (want 'ops 0')" % body
        tl = r.get("messageTrackList")
        states = [x.get("trackType") for x in tl] if isinstance(tl, list) else tl
        return "msgId %s: topic, tag, body match; tracks %s" % (a.msg_id, states)

    def reset():
        now = int(time.time() * 1000)
        r = d.data(d.post("/consumer/resetOffset.do", {"consumerGroupList": [g], "topic": t, "resetTime": a.begin, "force": True}),
                   "consumer/resetOffset.do")
        st = r.get(g)
        assert st and st.get("status") is True, "reset %s" % json.dumps(r)[:300]
        rb = st["rollbackStatsList"]
        assert len(rb) == 4 and all(x["rollbackOffset"] == 0 for x in rb), "rollback stats %s (want offset 0 on 4 queues)" % json.dumps(rb)[:300]
        # the online consumer re-consumes from 0; its committed offsets come back to the max
        end = time.time() + 60
        diff = None
        while time.time() < end:
            prog = d.data(d.get("/consumer/queryTopicByConsumer.query", consumerGroup=g, address=info.get("address", a.broker_addr)),
                          "consumer/queryTopicByConsumer.query")
            mt = [p for p in prog if p.get("topic") == t]
            diff = mt[0]["diffTotal"] if mt else None
            if diff == 0 and int(time.time() * 1000) - now > 6000:
                break
            time.sleep(2)
        assert diff == 0, "after reset to %d the group did not catch up: diffTotal %s" % (a.begin, diff)
        return "reset to %d: 4 queues rolled back to 0, group caught up again (diffTotal 0)" % a.begin

    def send():
        key = "opsdash_%s" % a.run_id
        r = d.data(d.post("/topic/sendTopicMessage.do", {"topic": t, "key": key, "tag": "dashtag", "messageBody": "from the dashboard",
                                                          "traceEnabled": False}), "topic/sendTopicMessage.do")
        assert r.get("sendStatus") == "SEND_OK", "send %s" % json.dumps(r)[:300]
        mid = r["msgId"]
        v = d.data(d.get("/message/viewMessage.query", topic=t, msgId=mid), "message/viewMessage.query")["messageView"]
        assert v.get("messageBody") == "from the dashboard" and (v.get("properties") or {}).get("KEYS") == key, "sent message read back: %s" % json.dumps(v)[:300]
        return "SEND_OK %s, queue %s; read back by id with body and key" % (mid, r.get("messageQueue", {}).get("queueId"))

    steps = {
        "cluster": [("OPS-DB-CLUSTER", cluster, "cluster")],
        "quiet": [("OPS-DB-TOPIC", topics, "topic"), ("OPS-DB-GROUP", groups, "consumer"),
                  ("OPS-DB-MSG-TIME", msgs_time, "message"), ("OPS-DB-MSG-KEY", msgs_key, None),
                  ("OPS-DB-MSG-ID", msgs_id, None), ("OPS-DB-RESET", reset, None), ("OPS-DB-SEND", send, None)],
    }
    if a.step == "quiet":
        # pages without a scenario of their own: shots only (dashboard home, producer)
        pass
    for sid, fn, page in steps[a.step]:
        dash_scenario(d, sid, fn, page)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd")
    ap.add_argument("--url")
    ap.add_argument("--topic")
    ap.add_argument("--group")
    ap.add_argument("--pgroup")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--timeout", type=int, default=90)
    ap.add_argument("--out")
    ap.add_argument("--client", default="exporter")
    ap.add_argument("--scrapes", nargs="*", default=[])
    ap.add_argument("--reference")
    ap.add_argument("--shots")
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--step")
    ap.add_argument("--broker-name")
    ap.add_argument("--broker-addr")
    ap.add_argument("--run-id")
    ap.add_argument("--msg-id")
    ap.add_argument("--begin", type=int)
    a = ap.parse_args()
    if a.cmd == "exporter-quiet":
        cmd_exporter_poll(a, "quiet")
    elif a.cmd == "exporter-load":
        cmd_exporter_poll(a, "load")
    elif a.cmd == "exporter-families":
        cmd_exporter_families(a)
    elif a.cmd == "dashboard":
        cmd_dashboard(a)
    else:
        ap.error("unknown command " + a.cmd)


if __name__ == "__main__":
    main()
