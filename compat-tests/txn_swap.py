#!/usr/bin/env python3
"""Raw Remoting (JSON) client behind compat-tests/txn-swap.sh. `phase1 ADDR` leaves three half messages
(one pending, one committed, one rolled back); `phase2 ADDR [strict]` registers the producer group, answers
check-backs (COMMIT for the pending one, ROLLBACK otherwise) and verifies that the real topic holds exactly the
committed two; `strict`: nothing but the pending one may be checked back."""
import json, socket, struct, sys, time

TOPIC, GROUP = "SWAP_TXN_T", "SWAP_TXN_PG"
opaque = [0]

def frame(code, ext, body=b"", flag=0):
    opaque[0] += 1
    h = json.dumps({"code": code, "language": "JAVA", "version": 479, "opaque": opaque[0],
                    "flag": flag, "extFields": {k: str(v) for k, v in ext.items()}}).encode()
    return struct.pack(">ii", 4 + len(h) + len(body), len(h)) + h + body, opaque[0]

class Conn:
    def __init__(self, addr):
        host, port = addr.split(":")
        self.s = socket.create_connection((host, int(port)), timeout=30)
        self.buf = b""
    def recv(self):
        while True:
            if len(self.buf) >= 4:
                n = struct.unpack(">i", self.buf[:4])[0]
                if len(self.buf) >= 4 + n:
                    f, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    hl = struct.unpack(">i", f[:4])[0] & 0xFFFFFF
                    return json.loads(f[4:4 + hl]), f[4 + hl:]
            d = self.s.recv(65536)
            if not d: raise EOFError
            self.buf += d
    def call(self, code, ext, body=b""):
        data, op = frame(code, ext, body)
        self.s.sendall(data)
        while True:
            h, b = self.recv()
            if h.get("flag", 0) & 1 and h["opaque"] == op:
                return h, b
            if h["code"] == 39:
                self.pending_checks.append((h, b))
    pending_checks = []

def props(d): return "".join(f"{k}\x01{v}\x02" for k, v in d.items())

def send_half(c, uniq):
    ext = {"producerGroup": GROUP, "topic": TOPIC, "defaultTopic": "TBW102", "defaultTopicQueueNums": 4,
           "queueId": 0, "sysFlag": 4, "bornTimestamp": int(time.time() * 1000), "flag": 0,
           "properties": props({"TRAN_MSG": "true", "PGROUP": GROUP, "UNIQ_KEY": uniq})}
    h, _ = c.call(10, ext, uniq.encode())
    assert h["code"] == 0, h
    e = h["extFields"]
    return int(e["msgId"][-16:], 16), int(e["queueOffset"])

def end(c, phys, qo, action, from_check):
    ext = {"producerGroup": GROUP, "tranStateTableOffset": qo, "commitLogOffset": phys,
           "commitOrRollback": action, "fromTransactionCheck": str(from_check).lower(), "msgId": "x"}
    return c.call(37, ext)[0]

def records(body):
    out, pos = [], 0
    while pos < len(body):
        total = struct.unpack(">i", body[pos:pos + 4])[0]
        sf = struct.unpack(">i", body[pos + 36:pos + 40])[0]
        p = pos + 48 + (20 if sf & 0x10 else 8) + 8 + (20 if sf & 0x20 else 8) + 12
        bl = struct.unpack(">i", body[p:p + 4])[0]
        out.append(body[p + 4:p + 4 + bl].decode())
        pos += total
    return out

def main():
    phase, addr = sys.argv[1], sys.argv[2]
    c = Conn(addr)
    if phase == "phase1":
        c.call(17, {"topic": TOPIC, "defaultTopic": "TBW102", "readQueueNums": 1, "writeQueueNums": 1,
                    "perm": 6, "topicFilterType": "SINGLE_TAG", "order": "false"})
        send_half(c, "SWAP-PENDING")
        phys, qo = send_half(c, "SWAP-COMMIT"); assert end(c, phys, qo, 8, False)["code"] == 0
        phys, qo = send_half(c, "SWAP-ROLLBACK"); assert end(c, phys, qo, 12, False)["code"] == 0
        print("phase1 ok: 1 pending, 1 committed, 1 rolled back")
        return
    hb = json.dumps({"clientID": "127.0.0.1@swap", "consumerDataSet": [], "heartbeatFingerprint": 0,
                     "producerDataSet": [{"groupName": GROUP}], "withoutSub": False}).encode()
    assert c.call(34, {}, hb)[0]["code"] == 0
    # Answer every check-back for ~15 s as a producer whose local state knows the outcomes: the pending
    # one commits (once), anything else (copies the old broker left before its op records were written)
    # rolls back, so nothing finished before the swap is delivered twice.
    checked, committed, deadline = [], False, time.time() + 15
    c.s.settimeout(1)
    while time.time() < deadline:
        try:
            h, b = c.pending_checks.pop(0) if c.pending_checks else c.recv()
        except socket.timeout:
            continue
        if h["code"] != 39:
            continue
        e = h["extFields"]
        checked.append(e["msgId"])
        commit = e["msgId"] == "SWAP-PENDING" and not committed
        committed |= commit
        r = end(c, int(e["commitLogOffset"]), int(e["tranStateTableOffset"]), 8 if commit else 12, True)
        assert r["code"] == 0, r
    c.s.settimeout(30)
    assert "SWAP-PENDING" in checked, checked
    extra = [m for m in checked if m != "SWAP-PENDING"]
    h, b = c.call(11, {"consumerGroup": "SWAP_CG", "topic": TOPIC, "queueId": 0, "queueOffset": 0, "maxMsgNums": 32,
                        "sysFlag": 4, "commitOffset": 0, "suspendTimeoutMillis": 0, "subscription": "*",
                        "subVersion": 0, "expressionType": "TAG"})
    got = sorted(records(b)) if h["code"] == 0 else []
    assert got == ["SWAP-COMMIT", "SWAP-PENDING"], (h["code"], got)
    print(f"phase2 ok: check-backs {checked}, real topic holds {got}")
    if len(sys.argv) > 3 and sys.argv[3] == "strict":
        assert not extra, f"finished-before-the-swap messages checked back: {extra}"

main()
