#!/usr/bin/env python3
"""C++ SDK scenarios: rocketmq-client-cpp (the librocketmq bundled in the PyPI `rocketmq` 0.4.4 wheel) driven through
its Python binding, against a real broker (Java oracle or rmqd).

  scenarios.py --ns 127.0.0.1:9876 --broker 127.0.0.1:10911 --run-id r1j [--only CPP-01,CPP-07] [--list]

Prints one JSON line per scenario: {"id","client","status","ms","detail"} (ingested by run.sh). Each scenario
has a hard timeout. What the broker STORED is checked with rawmq (raw PULL_MESSAGE, not the client under test).
"""
import argparse
import json
import os
import random
import struct
import sys
import threading
import time
import traceback
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawmq  # noqa: E402

CLIENT = "cpp-0.4.4"
A = None  # parsed args

try:
    from rocketmq.client import Producer, Message, PushConsumer, PullConsumer, SendStatus
    from rocketmq.ffi import dll, MSG_CALLBACK_FUNC, MessageModel
    IMPORT_ERROR = None
except Exception as e:  # reported by every scenario
    IMPORT_ERROR = "cannot load the rocketmq wheel (librocketmq): %r" % e

CONSUME_SUCCESS, RECONSUME_LATER = 0, 1
_KEEP = []  # clients stay referenced: the binding's __del__ would shut them down (again) and destroy them


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def wait_until(pred, timeout, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def name(kind, sid):
    return "%s_%s_%s" % (kind, sid.replace("-", ""), A.run_id)


# ------------------------------------------------------------------------------------------------ client helpers
_PRODUCER = None
_PLOCK = threading.Lock()


def producer():
    """One shared, started producer (group PG_cpp_<rid>)."""
    global _PRODUCER
    with _PLOCK:
        if _PRODUCER is None:
            p = Producer("PG_cpp_" + A.run_id, timeout=8000)
            p.set_namesrv_addr(A.ns)
            p.start()
            _PRODUCER = p
        return _PRODUCER


def mkmsg(topic, body, tags=None, keys=None, props=None, delay=None):
    m = Message(topic)
    if tags is not None:
        m.set_tags(tags)
    if keys is not None:
        m.set_keys(keys)
    for k, v in (props or {}).items():
        m.set_property(k, v)
    if delay is not None:
        m.set_delay_time_level(delay)
    m.set_body(body)  # c_char_p: the binding cannot carry a NUL byte either way
    return m


def send_ok(topic, body, **kw):
    r = producer().send_sync(mkmsg(topic, body, **kw))
    check(r.status == SendStatus.OK, "send status %s" % r.status)
    check(len(r.msg_id) == 32, "msg id %r is not a 32-hex unique key" % r.msg_id)
    return r


class Recv:
    """A push consumer whose callback returns the status we choose. The binding's own subscribe() cannot
    return RECONSUME_LATER: its callback re-raises the exception in `finally`, ctypes then reports 0 (success)."""

    def __init__(self, group, topic, expr="*", orderly=False, model=None, instance=None, on_msg=None):
        self.got = []  # (t, dict)
        self.lock = threading.Lock()
        self.on_msg = on_msg
        self.t_start = None
        self.c = PushConsumer(group, orderly=orderly)
        _KEEP.append(self.c)
        if model is not None:
            self.c.set_message_model(model)
        # its own client instance (own MQClientFactory), as a separate consumer process would have: a consumer
        # added to an already running factory waits for the factory's periodic rebalance (up to ~10 s)
        self.c.set_instance_name(instance or ("i" + group))
        self.c.set_namesrv_addr(A.ns)
        self.c.set_thread_count(2)
        ffi_ok(dll.Subscribe(self.c._handle, topic.encode(), expr.encode()))
        self.c._register_callback(self._cb)

    def _cb(self, _consumer, handle):
        try:
            d = snapshot(handle)
            with self.lock:
                self.got.append((time.time(), d))
            return self.on_msg(d) if self.on_msg else CONSUME_SUCCESS
        except Exception:  # a bug here must not look like a broker failure silently
            traceback.print_exc()
            return RECONSUME_LATER

    def start(self):
        self.t_start = time.time()
        self.c.start()
        return self

    def first_ms(self):
        with self.lock:
            return int((self.got[0][0] - self.t_start) * 1000) if self.got else None

    def msgs(self):
        with self.lock:
            return [d for _, d in self.got]

    def stop(self):
        try:
            self.c.shutdown()
        except Exception:
            pass


def ffi_ok(status):
    if int(status) != 0:
        raise Fail("librocketmq call failed: status %s %s" % (int(status), dll.GetLatestErrorMessage()))


def snapshot(h):
    """Everything the binding exposes of a received message (copied while the handle is valid)."""
    g = lambda k: (dll.GetMessageProperty(h, k.encode()) or b"").decode("utf-8")  # noqa: E731
    return {"topic": dll.GetMessageTopic(h).decode(), "tags": (dll.GetMessageTags(h) or b"").decode(),
            "keys": (dll.GetMessageKeys(h) or b"").decode(), "body": dll.GetMessageBody(h) or b"",
            "id": (dll.GetMessageId(h) or b"").decode(), "queueId": dll.GetMessageQueueId(h),
            "queueOffset": dll.GetMessageQueueOffset(h), "reconsumeTimes": dll.GetMessageReconsumeTimes(h),
            "storeSize": dll.GetMessageStoreSize(h), "bornTs": dll.GetMessageBornTimestamp(h),
            "storeTs": dll.GetMessageStoreTimestamp(h), "uniq": g("UNIQ_KEY"), "p1": g("p1"), "uni": g("uni"),
            "seq": g("seq"), "delay": g("DELAY")}


def diag(group):
    """Why a consumer got nothing: does the broker list the group's consumers, what did librocketmq log."""
    parts = []
    try:
        with rawmq.Remote(A.broker) as c:
            h, b = c.call(38, {"consumerGroup": group})
        if h.get("code") == 0:
            parts.append("broker lists %d consumer(s) of the group" % len(json.loads(b.decode()).get("consumerIdList", [])))
        else:
            parts.append("GET_CONSUMER_LIST_BY_GROUP: code %s %r" % (h.get("code"), h.get("remark")))
    except Exception as e:
        parts.append("GET_CONSUMER_LIST_BY_GROUP failed: %s" % e)
    log = os.path.expanduser("~/logs/rocketmq-cpp/%d_rocketmq-cpp.log.0" % os.getpid())
    try:
        with open(log, errors="replace") as f:
            hb = [l.strip() for l in f if "of heartbeat" in l or "cidAll is empty" in l]
        if hb:
            parts.append("librocketmq log (%d such lines): %s" % (len(hb), hb[-1][hb[-1].find("("):][:160]))
    except OSError:
        pass
    return "; ".join(parts)


def stored(topic, expect, timeout=10.0):
    """Raw-pull the topic until `expect` messages are stored (or timeout); returns them."""
    q = 0
    msgs = []

    def ok():
        nonlocal q, msgs
        if q == 0:
            q = rawmq.route_queue_nums(A.ns, topic)
            if q == 0:
                return False
        msgs = rawmq.pull_all(A.broker, topic, q)
        return len(msgs) >= expect
    wait_until(ok, timeout, 0.3)
    return msgs


def check_stored_crc(m):
    check(m["bodyCRC"] == zlib.crc32(m["body"]) & 0x7FFFFFFF,
          "stored bodyCRC %d != crc32 of the stored body at %s/%d@%d" % (m["bodyCRC"], m["topic"], m["queueId"],
                                                                         m["queueOffset"]))


def uni(i):
    return u"h\u00e9llo-\u2713-%d" % i


# ------------------------------------------------------------------------------------------------ scenarios
def cpp01():
    """sync send with tags, two keys, user properties (incl. unicode); the stored records are checked raw"""
    topic = name("TCPP", "01")
    sent = {}
    for i in range(12):
        r = send_ok(topic, "cpp sync body %d" % i, tags="TagA" if i % 2 == 0 else "TagB",
                    keys="k-%d kk-%d" % (i, i), props={"p1": "v-%d" % i, "uni": uni(i)})
        sent[r.msg_id] = (i, r)
    msgs = stored(topic, 12)
    check(len(msgs) == 12, "stored %d messages, sent 12" % len(msgs))
    for m in msgs:
        u = m["props"].get("UNIQ_KEY")
        check(u in sent, "stored UNIQ_KEY %r is none of the returned msg ids" % u)
        i, r = sent.pop(u)
        p = m["props"]
        check(m["body"] == ("cpp sync body %d" % i).encode(), "body %r" % m["body"])
        check(p.get("TAGS") == ("TagA" if i % 2 == 0 else "TagB"), "TAGS %r" % p.get("TAGS"))
        check(p.get("KEYS") == "k-%d kk-%d" % (i, i), "KEYS %r" % p.get("KEYS"))
        check(p.get("p1") == "v-%d" % i and p.get("uni") == uni(i), "user props %r" % p)
        check(m["queueOffset"] == r.offset, "queue offset %d != SendResult.offset %d" % (m["queueOffset"], r.offset))
        check(m["sysFlag"] & rawmq.FLAG_COMPRESSED == 0, "small body stored with the COMPRESSED flag")
        check(m["storePort"] == int(A.broker.rsplit(":", 1)[1]), "storeHost port %d" % m["storePort"])
        check_stored_crc(m)
    qs = sorted({m["queueId"] for m in msgs})
    return "12 sync sends OK, stored with tags/keys/props/unicode, UNIQ_KEY = msg id, offsets match; queues %s" % qs


def big_bodies():
    compressible = "".join("cpp-compressible-line-%04d " % i for i in range(700)).encode()  # ~19 KiB
    rnd = random.Random(7)
    noisy = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(6000))
    return [("big16k", compressible), ("noisy6k", noisy.encode()), ("edge4097", b"e" * 4097),
            ("edge4096", b"f" * 4096), ("small1k", b"s" * 1024)]


def cpp02():
    """bodies over 4 KiB: the C++ SDK zlib-compresses them; stored with sysFlag COMPRESSED; consumer gets the original"""
    topic, group = name("TCPP", "02"), name("GCPP", "02")
    bodies = big_bodies()
    for tag, b in bodies:
        send_ok(topic, b, tags=tag, keys="key-" + tag)
    msgs = stored(topic, len(bodies))
    check(len(msgs) == len(bodies), "stored %d of %d" % (len(msgs), len(bodies)))
    comp = {}
    for m in msgs:
        tag = m["props"].get("TAGS")
        orig = dict(bodies)[tag]
        check_stored_crc(m)
        check(rawmq.original_body(m) == orig, "%s: stored body does not inflate to the original" % tag)
        comp[tag] = (bool(m["sysFlag"] & rawmq.FLAG_COMPRESSED), len(m["body"]))
    for tag in ("big16k", "noisy6k", "edge4097"):
        check(comp[tag][0], "%s (%d bytes) stored without the COMPRESSED flag" % (tag, len(dict(bodies)[tag])))
    check(comp["big16k"][1] < len(dict(bodies)["big16k"]) // 4, "big16k stored body %d bytes" % comp["big16k"][1])
    check(not comp["small1k"][0], "1 KiB body stored compressed")
    r = Recv(group, topic).start()
    try:
        wait_until(lambda: len(r.msgs()) >= len(bodies), A.consume_timeout)
        got = r.msgs()
        check(got, "push consumer received nothing in %ds (%s)" % (A.consume_timeout, diag(group)))
        by = {}
        for d in got:
            by.setdefault(d["tags"], []).append(d)
        for tag, b in bodies:
            check(len(by.get(tag, [])) == 1, "%s delivered %d times" % (tag, len(by.get(tag, []))))
            d = by[tag][0]
            check(d["body"] == b, "%s: consumer body (%d bytes) != original (%d bytes)" % (tag, len(d["body"]), len(b)))
            check(d["keys"] == "key-" + tag, "%s keys %r" % (tag, d["keys"]))
        check(by["big16k"][0]["storeSize"] < len(dict(bodies)["big16k"]),
              "big16k storeSize %d not < body length" % by["big16k"][0]["storeSize"])
        first = r.first_ms()
    finally:
        r.stop()
    return ("stored compressed: %s; consumer got the original bytes of all %d, first=%dms"
            % (", ".join("%s=%s(%dB)" % (t, "Z" if c else "raw", n) for t, (c, n) in sorted(comp.items())),
               len(bodies), first))


def cpp03():
    """oneway send: every message stored"""
    topic = name("TCPP", "03")
    n = 30
    for i in range(n):
        producer().send_oneway(mkmsg(topic, "oneway %d" % i, tags="OW", keys="ow-%d" % i, props={"p1": str(i)}))
    msgs = stored(topic, n, 15)
    bodies = sorted(m["body"] for m in msgs)
    check(bodies == sorted(("oneway %d" % i).encode() for i in range(n)),
          "stored %d of %d oneway messages (or different bodies)" % (len(msgs), n))
    for m in msgs:
        check(m["props"].get("KEYS") == "ow-" + m["props"].get("p1", "?"), "keys/props mismatch %r" % m["props"])
    return "%d oneway sends all stored once with keys/props" % n


def cpp04():
    """async send: every callback succeeds, every message stored"""
    topic = name("TCPP", "04")
    n = 30
    ok, err, keep = [], [], []
    for i in range(n):
        m = mkmsg(topic, "async %d" % i, tags="AS", keys="as-%d" % i)
        keep.append(m)
        producer().send_async(m, lambda r: ok.append(r), lambda e: err.append(str(e)))
    wait_until(lambda: len(ok) + len(err) >= n, 20)
    check(not err, "%d async sends failed: %s" % (len(err), err[:2]))
    check(len(ok) == n, "%d of %d async callbacks fired" % (len(ok), n))
    check(all(r.status == SendStatus.OK for r in ok), "async status not OK")
    msgs = stored(topic, n)
    uq = {m["props"].get("UNIQ_KEY") for m in msgs}
    check(len(msgs) == n and uq == {r.msg_id for r in ok}, "stored %d; UNIQ_KEYs vs callback ids differ" % len(msgs))
    return "%d async sends, callbacks OK, stored UNIQ_KEYs = callback msg ids" % n


def cpp05():
    """orderly send (queue selector = key % queues) + oneway orderly: same key -> same queue, in send order"""
    topic = name("TCPP", "05")
    n = 24
    res = []
    for i in range(n):
        r = producer().send_orderly(mkmsg(topic, "ord %d" % i, tags="ORD", keys="key%d" % (i % 3),
                                          props={"seq": str(i)}), i % 3)
        check(r.status == SendStatus.OK, "orderly send status %s" % r.status)
        res.append(r)
    for i in range(6):
        producer().send_oneway_orderly(mkmsg(topic, "ordow %d" % i, tags="ORDOW", keys="key1",
                                             props={"seq": str(100 + i)}), 1)
    msgs = stored(topic, n + 6, 15)
    check(len(msgs) == n + 6, "stored %d of %d" % (len(msgs), n + 6))
    q = rawmq.route_queue_nums(A.ns, topic)
    per = {}
    for m in sorted(msgs, key=lambda m: (m["queueId"], m["queueOffset"])):
        seq = int(m["props"]["seq"])
        key = 1 if seq >= 100 else seq % 3
        check(m["queueId"] == key % q, "seq %d (key %d) in queue %d, selector says %d" % (seq, key, m["queueId"], key % q))
        per.setdefault(key, []).append(seq)
    for key, seqs in per.items():
        sync = [s for s in seqs if s < 100]  # oneway sends may be reordered by the broker's send thread pool
        check(sync == sorted(sync), "key %d stored out of send order: %s" % (key, sync))
    return ("%d orderly + 6 oneway-orderly sends: each key in its selected queue (of %d), sync ones in send order"
            % (n, q))


def decode_batch_body(b):
    """A batch body (client encoding): per message totalSize, magic, bodyCRC, flag, bodyLength, body,
    propertiesLength (2 bytes), properties."""
    out, p = [], 0
    while p + 20 <= len(b):
        total, _magic, _crc, _flag, blen = struct.unpack_from(">iiiii", b, p)
        q = p + 20
        body = b[q:q + blen]; q += blen
        (pl,) = struct.unpack_from(">h", b, q); q += 2
        props = dict(kv.split("\x01", 1) for kv in b[q:q + pl].decode().split("\x02") if "\x01" in kv)
        out.append((body, props))
        p += total
    return out


def cpp06():
    """batch send: the C++ SDK sends SEND_MESSAGE (10) with batch="1"; Java 5.3.3 parses that as false and stores
    ONE message whose body is the encoded batch (broker-made UNIQ_KEY) -- the oracle behaviour rmqd must match"""
    topic = name("TCPP", "06")
    n = 10
    msgs = [mkmsg(topic, "batch %d" % i, tags="BT", keys="bt-%d" % i, props={"p1": "b%d" % i}) for i in range(n)]
    r = producer().send_batch(msgs)
    check(r.status == SendStatus.OK, "batch status %s" % r.status)
    st = stored(topic, 1)
    time.sleep(0.5)
    st = stored(topic, 1)
    check(len(st) == 1, "stored %d messages for a C++ batch of %d (the Java oracle stores 1: batch=\"1\" is not"
                        " \"true\")" % (len(st), n))
    m = st[0]
    check_stored_crc(m)
    check("TAGS" not in m["props"] and "KEYS" not in m["props"], "outer message has TAGS/KEYS: %r" % m["props"])
    check(m["props"].get("UNIQ_KEY"), "no UNIQ_KEY on the stored message (the Java broker creates one when the"
                                      " request carries none)")
    inner = decode_batch_body(m["body"])
    check(len(inner) == n, "stored body holds %d encoded messages, not %d" % (len(inner), n))
    for i, (b, p) in enumerate(inner):
        check(b == ("batch %d" % i).encode() and p.get("KEYS") == "bt-%d" % i and p.get("p1") == "b%d" % i
              and p.get("TAGS") == "BT" and p.get("UNIQ_KEY"), "inner message %d: %r %r" % (i, b, p))
    return ("batch of %d stored by the broker as ONE message (%d-byte body = the %d encoded messages, UNIQ_KEY made"
            " by the broker); SendResult.msg_id=%r offset=%d" % (n, len(m["body"]), n, r.msg_id, r.offset))


def cpp07():
    """push consumer (clustering, 'TagA || TagB'): every matching message exactly once with body/tags/keys/props"""
    topic, group = name("TCPP", "07"), name("GCPP", "07")
    tags = ["TagA", "TagB", "TagC"]
    want = {}
    for i in range(30):
        t = tags[i % 3]
        r = send_ok(topic, "push %d" % i, tags=t, keys="pk-%d" % i, props={"p1": "pv-%d" % i, "uni": uni(i)})
        if t != "TagC":
            want[r.msg_id] = i
    r = Recv(group, topic, "TagA || TagB").start()
    try:
        wait_until(lambda: len(r.msgs()) >= len(want), A.consume_timeout)
        check(r.msgs(), "push consumer received nothing in %ds (%s)" % (A.consume_timeout, diag(group)))
        first = r.first_ms()
        # live messages after the consumer is running
        t_live = time.time()
        for i in range(30, 36):
            rr = send_ok(topic, "push %d" % i, tags="TagA", keys="pk-%d" % i, props={"p1": "pv-%d" % i, "uni": uni(i)})
            want[rr.msg_id] = i
        wait_until(lambda: len(r.msgs()) >= len(want), A.consume_timeout)
        live = int((max(t for t, _ in r.got) - t_live) * 1000)
        time.sleep(1.5)  # duplicates?
        got = r.msgs()
    finally:
        r.stop()
    seen = {}
    for d in got:
        check(d["tags"] in ("TagA", "TagB"), "received tag %r (filter 'TagA || TagB')" % d["tags"])
        check(d["uniq"] in want, "received unknown message %r" % d["uniq"])
        seen[d["uniq"]] = seen.get(d["uniq"], 0) + 1
        i = want[d["uniq"]]
        check(d["body"] == ("push %d" % i).encode(), "body %r" % d["body"])
        check(d["keys"] == "pk-%d" % i and d["p1"] == "pv-%d" % i and d["uni"] == uni(i),
              "keys/props of %d: %r %r %r" % (i, d["keys"], d["p1"], d["uni"]))
        check(d["topic"] == topic and d["reconsumeTimes"] == 0, "topic/reconsumeTimes %r %r" % (d["topic"], d["reconsumeTimes"]))
        check(d["id"] == d["uniq"], "msg id %r != UNIQ_KEY %r" % (d["id"], d["uniq"]))
    dups = sum(c - 1 for c in seen.values())
    check(len(seen) == len(want), "received %d of %d distinct messages" % (len(seen), len(want)))
    check(dups == 0, "%d duplicate deliveries" % dups)
    return "first=%dms; %d of %d (TagC filtered out) exactly once, fields equal; 6 live msgs last after %dms" % (
        first, len(seen), 36 - 10, live)


def cpp08():
    """orderly push consumer (LOCK_BATCH_MQ): each key's messages in send order, exactly once"""
    topic, group = name("TCPP", "08"), name("GCPP", "08")
    n = 30
    for i in range(n):
        r = producer().send_orderly(mkmsg(topic, "o %d" % i, tags="O", keys="key%d" % (i % 3), props={"seq": str(i)}), i % 3)
        check(r.status == SendStatus.OK, "orderly send status %s" % r.status)
    r = Recv(group, topic, "*", orderly=True).start()
    try:
        wait_until(lambda: len(r.msgs()) >= n, A.consume_timeout)
        check(r.msgs(), "orderly push consumer received nothing in %ds (%s)" % (A.consume_timeout, diag(group)))
        time.sleep(1.0)
        got = r.msgs()
        first = r.first_ms()
    finally:
        r.stop()
    seqs = [int(d["seq"]) for d in got]
    check(sorted(seqs) == list(range(n)), "received %d messages (%d distinct) of %d" % (len(seqs), len(set(seqs)), n))
    for k in range(3):
        ks = [s for s in seqs if s % 3 == k]
        check(ks == sorted(ks), "key %d consumed out of order: %s" % (k, ks))
    return "first=%dms; %d orderly messages exactly once, per-key order kept" % (first, n)


def cpp09():
    """RECONSUME_LATER -> CONSUMER_SEND_MSG_BACK -> redelivered (reconsumeTimes 1) with the same fields"""
    topic, group = name("TCPP", "09"), name("GCPP", "09")
    want = {}
    for i in range(3):
        r = send_ok(topic, "retry %d" % i, tags="RT", keys="rk-%d" % i, props={"p1": "rv-%d" % i})
        want[r.msg_id] = i
    r = Recv(group, topic, "RT", on_msg=lambda d: RECONSUME_LATER if d["reconsumeTimes"] == 0 else CONSUME_SUCCESS)
    r.start()
    try:
        wait_until(lambda: len(r.msgs()) >= 3, A.consume_timeout)
        check(r.msgs(), "push consumer received nothing in %ds (%s)" % (A.consume_timeout, diag(group)))
        first = r.first_ms()
        # the redelivery comes through %RETRY%<group> after the delay level (3 s here) and the route refresh
        wait_until(lambda: sum(1 for d in r.msgs() if d["reconsumeTimes"] >= 1) >= 3, 30)
        time.sleep(1.0)
        got = r.msgs()
    finally:
        r.stop()
    again = [d for d in got if d["reconsumeTimes"] >= 1]
    check(len([d for d in got if d["reconsumeTimes"] == 0]) >= 3, "first deliveries: %d" % len(got))
    ids = {}
    for d in again:
        i = int(d["body"].split()[1])
        check(d["keys"] == "rk-%d" % i and d["p1"] == "rv-%d" % i and d["tags"] == "RT",
              "redelivered %d lost fields: %r" % (i, d))
        check(d["topic"] == topic, "redelivered topic %r" % d["topic"])
        ids[i] = ids.get(i, 0) + 1
    check(sorted(ids) == [0, 1, 2], "redelivered %s of 0..2 (reconsumeTimes %s)" % (
        sorted(ids), [d["reconsumeTimes"] for d in got]))
    check(all(c == 1 for c in ids.values()), "redelivered more than once: %s" % ids)
    with r.lock:
        t_first = r.got[0][0]
        t_again = min(t for t, d in r.got if d["reconsumeTimes"] >= 1)
    return ("first=%dms; 3 messages redelivered once with reconsumeTimes=1, fields kept; redelivery %dms after the"
            " first delivery (delay level 3 = 3 s, then the client's %%RETRY%% route/rebalance timers)"
            % (first, int((t_again - t_first) * 1000)))


def cpp10():
    """broadcasting: two consumers (instances) of one group both receive every message"""
    topic, group = name("TCPP", "10"), name("GCPP", "10")
    send_ok(topic, "warm", tags="WARM")  # creates the topic so the consumers find a route
    rs = [Recv(group, topic, "BC", model=MessageModel.BROADCASTING, instance="bc%d" % k) for k in range(2)]
    for r in rs:
        r.start()
    try:
        def registered():
            with rawmq.Remote(A.broker) as c:
                h, b = c.call(38, {"consumerGroup": group})
            return h.get("code") == 0 and len(json.loads(b.decode()).get("consumerIdList", [])) >= 2
        check(wait_until(registered, A.consume_timeout, 0.3),
              "GET_CONSUMER_LIST_BY_GROUP never listed 2 consumers in %ds (%s)" % (A.consume_timeout, diag(group)))
        time.sleep(2.0)  # let both rebalance (a new broadcasting consumer starts at the max offset)
        n = 10
        for i in range(n):
            send_ok(topic, "bc %d" % i, tags="BC", keys="bk-%d" % i)
        wait_until(lambda: all(len(r.msgs()) >= n for r in rs), A.consume_timeout)
        time.sleep(1.0)
        counts = [sorted(d["body"] for d in r.msgs()) for r in rs]
    finally:
        for r in rs:
            r.stop()
    exp = sorted(("bc %d" % i).encode() for i in range(n))
    for k, c in enumerate(counts):
        check(c == exp, "consumer %d received %d (%d distinct) of %d" % (k, len(c), len(set(c)), n))
    return "both broadcasting consumers received all %d exactly once" % n


def cpp11():
    """C++ PullConsumer: fetch the queues, pull with 'TagA', every TagA message once"""
    topic, group = name("TCPP", "11"), name("GCPP", "11")
    want = set()
    for i in range(12):
        t = "TagA" if i % 2 == 0 else "TagB"
        send_ok(topic, "pull %d" % i, tags=t, keys="plk-%d" % i)
        if t == "TagA":
            want.add(("pull %d" % i).encode())
    pc = PullConsumer(group)
    _KEEP.append(pc)
    pc.set_namesrv_addr(A.ns)
    pc.start()
    try:
        got = []
        end = time.time() + A.consume_timeout
        while time.time() < end and len(got) < len(want):
            for m in pc.pull(topic, "TagA"):
                got.append((m.body, m.tags, m.keys))
            if len(got) < len(want):
                time.sleep(0.3)
    finally:
        pc.shutdown()
    bodies = sorted(b for b, _, _ in got)
    check(bodies == sorted(want), "pulled %d (%d distinct) of %d TagA messages; tags %s" % (
        len(bodies), len(set(bodies)), len(want), sorted({t for _, t, _ in got})))
    for b, t, k in got:
        check(t == b"TagA" and k == ("plk-%s" % b.split()[1].decode()).encode(), "pulled %r tags %r keys %r" % (b, t, k))
    return "pulled all %d TagA messages once (TagB filtered), keys intact" % len(want)


def cpp12():
    """delay level 2 (2 s in the test broker.conf): delivered after the delay with DELAY=2 and fields kept"""
    topic, group = name("TCPP", "12"), name("GCPP", "12")
    t_send = time.time()
    r0 = send_ok(topic, "delayed", tags="DL", keys="dk", props={"p1": "dv"}, delay=2)
    r = Recv(group, topic, "DL").start()
    try:
        wait_until(lambda: r.msgs(), A.consume_timeout + 5)
        got = r.msgs()
        check(got, "delayed message not received in %ds (%s)" % (A.consume_timeout + 5, diag(group)))
        t_recv = r.got[0][0]
    finally:
        r.stop()
    d = got[0]
    waited = int((t_recv - t_send) * 1000)
    check(d["body"] == b"delayed" and d["keys"] == "dk" and d["p1"] == "dv" and d["tags"] == "DL", "fields %r" % d)
    check(d["uniq"] == r0.msg_id, "UNIQ_KEY %r != sent %r" % (d["uniq"], r0.msg_id))
    check(d["topic"] == topic, "topic %r" % d["topic"])
    check(waited >= 1500, "delivered %d ms after send (delay level 2 = 2 s)" % waited)
    return "delivered %dms after send, DELAY=%s, fields kept" % (waited, d["delay"])


def cpp13():
    """producer + push consumer in one client instance: the broker's producer/consumer connection lists (what
    mqadmin producerConnection/consumerConnection print) show the C++ client with the right enums and subscription"""
    topic, group, pgroup = name("TCPP", "13"), name("GCPP", "13"), name("PGCPP", "13")
    inst = "i" + pgroup
    send_ok(topic, "warm", tags="WARM")  # the topic exists before the consumer looks up its route
    r = Recv(group, topic, "TagA || TagB", instance=inst).start()
    p = Producer(pgroup, timeout=8000)
    _KEEP.append(p)
    ffi_ok(dll.SetProducerInstanceName(p._handle, inst.encode()))
    p.set_namesrv_addr(A.ns)
    p.start()  # same factory as the consumer: its heartbeats now carry both groups
    try:
        res = p.send_sync(mkmsg(topic, "hb body", tags="TagA", keys="hk"))
        check(res.status == SendStatus.OK, "send status %s" % res.status)
        wait_until(lambda: r.msgs(), A.consume_timeout)
        check(r.msgs(), "push consumer received nothing in %ds (%s)" % (A.consume_timeout, diag(group)))
        first = r.first_ms()

        def conn(code, key, g):
            with rawmq.Remote(A.broker) as c:
                h, b = c.call(code, {key: g})
            return h, b
        # the producer group is registered by a heartbeat sent after the producer started (start / 30 s timer)
        pc = {}

        def producer_listed():
            h, b = conn(204, "producerGroup", pgroup)
            if h.get("code") != 0:
                pc["err"] = "code %s %r" % (h.get("code"), h.get("remark"))
                return False
            pc["j"] = json.loads(b.decode())
            return any(inst in c.get("clientId", "") for c in pc["j"].get("connectionSet", []))
        check(wait_until(producer_listed, 35, 0.5), "GET_PRODUCER_CONNECTION_LIST(%s) never listed the C++ client: %s"
              % (pgroup, pc.get("err") or json.dumps(pc.get("j"))[:300]))
        pconn = [c for c in pc["j"]["connectionSet"] if inst in c.get("clientId", "")][0]
        check(pconn.get("language") == "CPP", "producer connection language %r" % pconn.get("language"))
        h, b = conn(203, "consumerGroup", group)
        check(h.get("code") == 0, "GET_CONSUMER_CONNECTION_LIST: code %s %r" % (h.get("code"), h.get("remark")))
        cj = json.loads(b.decode())
        cc = [c for c in cj.get("connectionSet", []) if inst in c.get("clientId", "")]
        check(cc and cc[0].get("language") == "CPP", "consumer connections %r" % cj.get("connectionSet"))
        want = {"consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
                "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET"}
        for k, v in want.items():
            check(cj.get(k) == v, "consumer connection %s = %r, not %r (the heartbeat sends it as a number)"
                  % (k, cj.get(k), v))
        sub = (cj.get("subscriptionTable") or {}).get(topic) or {}
        check(sub.get("subString") == "TagA || TagB" and sorted(sub.get("tagsSet") or []) == ["TagA", "TagB"],
              "subscription of %s: %r" % (topic, sub))
        check(str(sub.get("subVersion", "")).isdigit(), "subVersion %r (sent as a string)" % sub.get("subVersion"))
        check("%%RETRY%%%s" % group in (cj.get("subscriptionTable") or {}), "no %%RETRY%% subscription: %r"
              % sorted((cj.get("subscriptionTable") or {}).keys()))
    finally:
        r.stop()
        p.shutdown()
    return ("first=%dms; producer group listed with language CPP (version %s); consumer: %s, subscription %r tags %s"
            % (first, pconn.get("version"), "/".join(want.values()), sub.get("subString"), sorted(sub.get("tagsSet"))))


SCENARIOS = [
    ("CPP-01", cpp01, 40), ("CPP-02", cpp02, 45), ("CPP-03", cpp03, 30), ("CPP-04", cpp04, 35),
    ("CPP-05", cpp05, 35), ("CPP-06", cpp06, 30), ("CPP-07", cpp07, 60), ("CPP-08", cpp08, 45),
    ("CPP-09", cpp09, 70), ("CPP-10", cpp10, 50), ("CPP-11", cpp11, 40), ("CPP-12", cpp12, 40),
    ("CPP-13", cpp13, 70),
]


def cap_hb():
    """capture only: a producer-only HEART_BEAT (a second producer started on a running client instance)"""
    send_ok(name("TCPP", "HB"), "hb")  # the shared instance knows the broker now
    p = Producer(name("PGCPP", "HB"))
    _KEEP.append(p)
    p.set_namesrv_addr(A.ns)
    p.start()
    time.sleep(1.0)
    p.shutdown()
    return "producer-only heartbeat sent"


EXTRA = [("CAP-HB", cap_hb, 30)]  # run only when named in --only (compat-tests/cpp/capture-golden.sh)


def emit(sid, status, ms, detail):
    print(json.dumps({"id": sid, "client": CLIENT, "status": status, "ms": ms, "detail": detail}), flush=True)


def run_one(sid, fn, tmo):
    box = {}

    def body():
        try:
            if IMPORT_ERROR:
                raise Fail(IMPORT_ERROR)
            box["ok"] = fn()
        except Fail as e:
            box["fail"] = str(e)
        except Exception as e:
            box["fail"] = "%s: %s" % (type(e).__name__, e)
            traceback.print_exc()
    t0 = time.time()
    th = threading.Thread(target=body, daemon=True)
    th.start()
    th.join(tmo)
    ms = int((time.time() - t0) * 1000)
    if th.is_alive():
        emit(sid, "FAIL", ms, "timeout after %ds (scenario hung)" % tmo)
    elif "ok" in box:
        emit(sid, "PASS", ms, box["ok"])
    else:
        emit(sid, "FAIL", ms, box.get("fail", "?"))


def main():
    global A
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", default="127.0.0.1:9876")
    ap.add_argument("--broker", default="127.0.0.1:10911")
    ap.add_argument("--run-id", default="r%d" % (time.time() % 100000))
    ap.add_argument("--only", default="")
    ap.add_argument("--consume-timeout", type=int, default=int(os.environ.get("CPP_CONSUME_TIMEOUT", "15")))
    ap.add_argument("--list", action="store_true")
    A = ap.parse_args()
    only = [s for s in A.only.split(",") if s]
    if A.list:
        for sid, fn, _ in SCENARIOS:
            print("%s\t%s" % (sid, fn.__doc__.strip()))
        return
    for sid, fn, tmo in SCENARIOS + EXTRA:
        if (only and sid not in only) or (not only and (sid, fn, tmo) in EXTRA):
            continue
        print("----- %s %s" % (sid, time.strftime("%H:%M:%S")), file=sys.stderr, flush=True)
        run_one(sid, fn, tmo)
    try:
        if _PRODUCER is not None:
            _PRODUCER.shutdown()
    except Exception:
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # never wait on librocketmq's threads at interpreter exit


if __name__ == "__main__":
    main()
