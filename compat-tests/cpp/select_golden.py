#!/usr/bin/env python3
"""select_golden.py <captured frames dir> <golden dir>

Picks, from every client->server frame scripts/capture-golden recorded (--all) while the CPP scenarios ran, the
first frame of each case below that the C++ SDK (language CPP) sent, copies it byte for byte to
<golden dir>/cpp-<case>.bin and writes <golden dir>/README.md (header, extFields with their JSON types, the body
pretty-printed, what differs from the Java client). Any other request code the C++ SDK sent is kept as
cpp-code-<n>.bin. Exit 1 when an expected case is missing.
"""
import glob
import json
import os
import re
import struct
import sys

CODES = {10: "SEND_MESSAGE", 11: "PULL_MESSAGE", 14: "QUERY_CONSUMER_OFFSET", 15: "UPDATE_CONSUMER_OFFSET",
         29: "SEARCH_OFFSET_BY_TIMESTAMP", 30: "GET_MAX_OFFSET", 31: "GET_MIN_OFFSET", 34: "HEART_BEAT",
         35: "UNREGISTER_CLIENT", 36: "CONSUMER_SEND_MSG_BACK", 38: "GET_CONSUMER_LIST_BY_GROUP",
         41: "LOCK_BATCH_MQ", 42: "UNLOCK_BATCH_MQ", 105: "GET_ROUTEINFO_BY_TOPIC", 310: "SEND_MESSAGE_V2",
         320: "SEND_BATCH_MESSAGE"}


def parse(path):
    d = open(path, "rb").read()
    (mark,) = struct.unpack(">i", d[4:8])
    hl = mark & 0xFFFFFF
    h = json.loads(d[8:8 + hl].decode("utf-8"))
    return {"raw": d, "h": h, "body": d[8 + hl:], "codec": mark >> 24}


def body_json(f):
    try:
        return json.loads(f["body"].decode("utf-8"))
    except Exception:
        return None


def consumers(f):
    j = body_json(f) or {}
    return j.get("consumerDataSet") or []


def ext(f):
    return f["h"].get("extFields") or {}


def group_is(f, sid):
    return ("GCPP_%s_" % sid) in ext(f).get("consumerGroup", "")


def hb_group(f, sid):
    return any(("GCPP_%s_" % sid) in c.get("groupName", "") for c in consumers(f))


def props(f):
    return ext(f).get("properties", "")


# (case, request code, predicate, note: what is unusual compared with what the Java 5.3.3 client sends)
COMMON = ("header: language CPP, version 63, \"remark\":\"\"; extFields always carry AccessKey \"\", "
          "OnsChannel \"ALIYUN\" and a Signature (HMAC of the fields with an empty secret) although no ACL is "
          "configured")
CASES = [
    ("heart-beat-producer?", 34, lambda f: not consumers(f),
     "producer-only body: producerDataSet [{groupName}] and NO consumerDataSet key at all (Java sends []); no "
     "heartbeatFingerprint, no withoutSub; the JSON body ends with a newline"),
    ("heart-beat-push", 34, lambda f: hb_group(f, "07"),
     "push consumer (clustering, 'TagA || TagB'): consumeType 1, messageModel 1, consumeFromWhere 0 as NUMBERS (Java "
     "sends the enum names); subVersion a STRING; no unitMode, no classFilterMode, no expressionType; the %RETRY% "
     "subscription has no tagsSet/codeSet at all; tagsSet present but codeSet all 0 (one 0 per tag, no hashCode); body ends "
     "with a newline; a consumer-only instance sends NO producerDataSet key at all"),
    ("heart-beat-orderly", 34, lambda f: hb_group(f, "08"),
     "orderly push consumer: the same shape as heart-beat-push (nothing marks it orderly); subscription '*' has no "
     "tagsSet/codeSet"),
    ("heart-beat-broadcast", 34, lambda f: any(c.get("messageModel") == 0 for c in consumers(f)),
     "broadcasting push consumer: messageModel 0 (number)"),
    ("heart-beat-producer-consumer", 34, lambda f: hb_group(f, "13") and (body_json(f) or {}).get("producerDataSet"),
     "producer and push consumer in one client instance (CPP-13): producerDataSet [{groupName}] next to the "
     "consumerDataSet; the same number enums / string subVersion"),
    ("unregister-client-consumer", 35, lambda f: ext(f).get("consumerGroup"),
     "extFields carry producerGroup \"\" (empty) next to consumerGroup; Java omits the absent one"),
    ("unregister-client-producer", 35, lambda f: ext(f).get("producerGroup"),
     "consumerGroup \"\" (empty) next to producerGroup"),
    ("send-message", 10, lambda f: "uni\x01" in props(f),
     "SEND_MESSAGE (10), never SEND_MESSAGE_V2: long header names; defaultTopicQueueNums, flag, queueId, sysFlag as "
     "JSON NUMBERS, the others strings; batch \"0\" and unitMode \"0\" (not false); properties KEYS (two keys, space "
     "separated), TAGS, UNIQ_KEY, WAIT, user p1 and UTF-8 uni; no bname, no maxReconsumeTimes"),
    ("send-message-compressed", 10, lambda f: int(ext(f).get("sysFlag", 0)) & 1,
     "sysFlag 1 (COMPRESSED, body zlib-deflated by the client because it is >= 4096 bytes)"),
    ("send-message-batch", 10, lambda f: str(ext(f).get("batch")) == "1",
     "a BATCH sent as SEND_MESSAGE (10) with batch \"1\": Java's Boolean parse reads \"1\" as false, so the Java "
     "broker stores ONE message whose body is the encoded batch; properties only WAIT (no UNIQ_KEY: the broker makes "
     "one)"),
    ("send-message-delay", 10, lambda f: "DELAY\x01" in props(f), "DELAY\\u00012 in properties"),
    ("send-message-oneway", 10, lambda f: "KEYS\x01ow-" in props(f),
     "sent by send_oneway, yet header flag 0: the C++ SDK never sets the oneway bit (flag 2), so the broker "
     "answers and the client drops the answer (UPDATE_CONSUMER_OFFSET, also 'oneway' in its log, is flag 0 too)"),
    ("pull-message-push", 11, lambda f: group_is(f, "07"),
     "queueId, maxMsgNums, sysFlag as NUMBERS; commitOffset/queueOffset/subVersion/suspendTimeoutMillis strings; no "
     "expressionType, no bname, no maxMsgBytes; sysFlag 6 = suspend + subscription (the subscription is sent on "
     "every pull, commit flag 1 when an offset is to be committed)"),
    ("pull-message-retry", 11, lambda f: ext(f).get("topic", "").startswith("%RETRY%"),
     "pull of the %RETRY% topic"),
    ("pull-message-pullconsumer", 11, lambda f: group_is(f, "11"),
     "from the PullConsumer: sysFlag 4 (subscription only, no suspend) yet suspendTimeoutMillis \"20000\"; "
     "subVersion \"0\"; a PullConsumer never sends a HEART_BEAT with its group (the broker never lists it)"),
    ("query-consumer-offset", 14, lambda f: True, "queueId a NUMBER"),
    ("update-consumer-offset", 15, lambda f: True, "queueId a NUMBER, commitOffset a string"),
    ("consumer-send-msg-back", 36, lambda f: True,
     "after RECONSUME_LATER; sent to the message's storeHost (not the routed address); delayLevel 0 as a NUMBER "
     "(the broker picks 3 + reconsumeTimes), offset = the commitlog offset as a string; NO originMsgId, "
     "originTopic, maxReconsumeTimes, unitMode or bname (Java sends all of them)"),
    ("get-consumer-list-by-group", 38, lambda f: True, "only the common extras"),
    ("get-max-offset", 30, lambda f: True,
     "queueId a NUMBER, no bname; a new CONSUME_FROM_LAST_OFFSET consumer asks it when QUERY_CONSUMER_OFFSET has "
     "no offset"),
    ("lock-batch-mq", 41, lambda f: True,
     "orderly consumer; JSON body {clientId, consumerGroup, mqSet} WITHOUT onlyThisBroker (Java sends it), ends "
     "with a newline; one mq per request here"),
    ("unlock-batch-mq", 42, lambda f: True,
     "at shutdown; body like LOCK_BATCH_MQ (no onlyThisBroker), ends with a newline"),
    ("get-routeinfo-by-topic", 105, lambda f: True, "to the NameServer; only the common extras"),
]


def types_of(e):
    return ", ".join("%s=%s" % (k, json.dumps(v, ensure_ascii=False)) for k, v in sorted(e.items())
                     if k not in ("AccessKey", "OnsChannel", "Signature"))


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "cpp-*.bin")):
        os.remove(old)
    rows = []
    idx = os.path.join(src, "f.index.tsv")
    files = [l.split("\t")[0] for l in open(idx).read().splitlines()[1:] if l.strip()]
    frames = []
    for fn in files:
        try:
            f = parse(os.path.join(src, fn))
        except Exception as e:
            print("skip %s: %s" % (fn, e), file=sys.stderr)
            continue
        if f["h"].get("language") == "CPP":
            f["file"] = fn
            frames.append(f)
    used, missing = set(), []
    for case, code, pred, note in CASES:
        hit = next((f for f in frames if f["h"].get("code") == code and f["file"] not in used and pred(f)), None)
        if hit is None:
            if not case.endswith("?"):  # '?' = optional (a producer-only instance heartbeats only every 30 s)
                missing.append(case)
            continue
        case = case.rstrip("?")
        used.add(hit["file"])
        rows.append((case, hit, note))
    known = {c for _, c, _, _ in CASES}
    for f in frames:
        c = f["h"].get("code")
        if c not in known:
            known.add(c)
            rows.append(("code-%d" % c, f, "not covered by a named case"))
    md = ["# compat-tests/cpp/golden — request frames of the C++ SDK", "",
          "Each `cpp-<case>.bin` is one whole Remoting frame exactly as rocketmq-client-cpp (librocketmq bundled in the "
          "PyPI wheel `rocketmq` 0.4.4, JSON header codec) wrote it (4-byte big-endian total length, 4-byte header "
          "length whose high byte is the serialization type, JSON header, body). Captured by "
          "`compat-tests/cpp/capture-golden.sh` (proxy `scripts/capture-golden` between the client and the Java "
          "5.3.3 NameServer + broker while CPP-01..13 ran; the broker advertises 127.0.0.2, where the proxy listens, so even frames sent to a message's storeHost pass through it); every file decodes with the real "
          "`RemotingCommand.decode` (`compat-tests/decode-check.sh compat-tests/cpp/golden/*.bin`). "
          "Timestamps, opaques, signatures, `<pid>-127.0.0.1@<instance>` client ids and `*_gold` names are whatever "
          "the capture run produced.", "",
          "Common to every frame: " + COMMON + ". The Java client sends every extFields value as a string; the C++ "
          "SDK sends some as JSON numbers (listed per frame below; `RemotingCommand.decode` accepts both). "
          "Never seen from the C++ SDK: SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320) (a batch goes as 10, see "
          "`cpp-send-message-batch.bin`), the oneway flag (2) on any request, the ROCKETMQ binary header codec.", ""]
    for case, f, note in rows:
        name = "cpp-%s.bin" % case
        with open(os.path.join(out, name), "wb") as w:
            w.write(f["raw"])
        h = f["h"]
        code = h.get("code")
        md.append("## `%s` — %d %s (%d bytes)" % (name, code, CODES.get(code, "?"), len(f["raw"])))
        if note:
            md.append("Unusual: " + note + ".")
        md.append("")
        md.append("- header: code %s, flag %s, language %s, version %s, opaque %s" % (
            code, h.get("flag"), h.get("language"), h.get("version"), h.get("opaque")))
        md.append("- extFields (JSON types as sent; AccessKey/OnsChannel/Signature omitted): `%s`" % types_of(ext(f)))
        j = body_json(f) if f["body"] else None
        if j is not None:
            md.append("- body (JSON, %d bytes%s):" % (len(f["body"]), ", ends with a newline"
                                                         if f["body"].endswith(b"\n") else ""))
            md.append("")
            md.append("```json")
            md.append(json.dumps(j, indent=2, ensure_ascii=False))
            md.append("```")
        elif f["body"]:
            b = f["body"]
            shown = b[:120].decode("utf-8", "replace") if re.match(rb"^[\x20-\x7e]*$", b[:120]) else b[:48].hex()
            md.append("- body: %d bytes, starts `%s`" % (len(b), shown))
        else:
            md.append("- body: none")
        md.append("")
    with open(os.path.join(out, "README.md"), "w") as w:
        w.write("\n".join(md))
    print("kept %d frames; missing cases: %s" % (len(rows), ", ".join(missing) or "none"))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
