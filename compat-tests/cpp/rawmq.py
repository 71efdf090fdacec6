"""rawmq: a minimal RocketMQ Remoting client (JSON header codec) used by the C++ SDK suite to look at what the
broker STORED, independently of the client under test: raw PULL_MESSAGE (the broker returns the stored records,
so the COMPRESSED sysFlag and the zlib body are visible), GET_MAX_OFFSET, and the NameServer route.

Frame: int32 total length (everything after it), int32 (serialize type << 24 | header length), JSON header, body.
Stored message record (as returned in a PULL body): totalSize, magic, bodyCRC, queueId, flag, queueOffset,
physicalOffset, sysFlag, bornTimestamp, bornHost, storeTimestamp, storeHost, reconsumeTimes,
preparedTransactionOffset, body, topic, properties (name \\x01 value \\x02 ...).
"""
import itertools
import json
import re
import socket
import struct
import zlib

_OPAQUE = itertools.count(1)
MAGIC_V2 = -626843477 & 0xFFFFFFFF  # 0xDAA320AB: the topic length is 2 bytes
FLAG_COMPRESSED = 0x1
FLAG_BORNHOST_V6 = 0x1 << 4
FLAG_STOREHOST_V6 = 0x1 << 5


class Remote:
    def __init__(self, addr, timeout=10.0):
        h, p = addr.rsplit(":", 1)
        self.sock = socket.create_connection((h, int(p)), timeout=timeout)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def _recv(self, n):
        buf = bytearray()
        while len(buf) < n:
            c = self.sock.recv(n - len(buf))
            if not c:
                raise IOError("connection closed by peer")
            buf += c
        return bytes(buf)

    def call(self, code, ext, body=b""):
        """-> (response header dict, response body bytes)"""
        op = next(_OPAQUE)
        hdr = json.dumps({"code": code, "language": "JAVA", "version": 479, "opaque": op, "flag": 0,
                          "extFields": {k: str(v) for k, v in ext.items()}}).encode()
        self.sock.sendall(struct.pack(">ii", 4 + len(hdr) + len(body), len(hdr)) + hdr + body)
        while True:
            (total,) = struct.unpack(">i", self._recv(4))
            data = self._recv(total)
            (mark,) = struct.unpack(">i", data[:4])
            hlen = mark & 0xFFFFFF
            if (mark >> 24) & 0xFF != 0:
                raise IOError("response not in the JSON codec (serialize type %d)" % ((mark >> 24) & 0xFF))
            h = json.loads(data[4:4 + hlen].decode("utf-8"))
            if h.get("opaque") == op:
                return h, data[4 + hlen:]


def decode_messages(buf):
    """Stored records -> list of dicts (body as stored: still compressed when sysFlag has COMPRESSED)."""
    out, pos = [], 0
    while pos + 4 <= len(buf):
        (total,) = struct.unpack_from(">i", buf, pos)
        rec = buf[pos:pos + total]
        pos += total
        p = 4
        magic, crc, qid, flag, qoff, phy, sysflag, born_ts = struct.unpack_from(">IiiiqqiQ", rec, p)
        p += 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8
        bl = 16 if sysflag & FLAG_BORNHOST_V6 else 4
        born_host = rec[p:p + bl]; p += bl
        (born_port,) = struct.unpack_from(">i", rec, p); p += 4
        (store_ts,) = struct.unpack_from(">q", rec, p); p += 8
        sl = 16 if sysflag & FLAG_STOREHOST_V6 else 4
        store_host = rec[p:p + sl]; p += sl
        (store_port,) = struct.unpack_from(">i", rec, p); p += 4
        reconsume, prep = struct.unpack_from(">iq", rec, p); p += 12
        (blen,) = struct.unpack_from(">i", rec, p); p += 4
        body = rec[p:p + max(blen, 0)]; p += max(blen, 0)
        if magic == MAGIC_V2:
            (tl,) = struct.unpack_from(">H", rec, p); p += 2
        else:
            tl = rec[p]; p += 1
        topic = rec[p:p + tl].decode("utf-8"); p += tl
        (pl,) = struct.unpack_from(">h", rec, p); p += 2
        props = {}
        if pl > 0:
            for kv in rec[p:p + pl].decode("utf-8").split("\x02"):
                if "\x01" in kv:
                    k, v = kv.split("\x01", 1)
                    props[k] = v
        out.append({"storeSize": total, "queueId": qid, "flag": flag, "queueOffset": qoff, "physicalOffset": phy,
                    "sysFlag": sysflag, "bornTimestamp": born_ts, "bornPort": born_port, "storeTimestamp": store_ts,
                    "storePort": store_port, "reconsumeTimes": reconsume, "body": body, "topic": topic,
                    "props": props, "bodyCRC": crc})
    return out


def original_body(m):
    """The body as the producer gave it (inflated when stored compressed)."""
    return zlib.decompress(m["body"]) if m["sysFlag"] & FLAG_COMPRESSED else m["body"]


def route_queue_nums(ns_addr, topic):
    """-> read queue count of the topic's route on the NameServer, or 0 when it has none."""
    with Remote(ns_addr) as r:
        h, body = r.call(105, {"topic": topic})
    if h.get("code") != 0:
        return 0
    # route JSON from the Java NameServer has unquoted integer map keys ({0:"addr"}): not valid JSON, so regex it
    nums = [int(x) for x in re.findall(r'"readQueueNums"\s*:\s*(\d+)', body.decode("utf-8", "replace"))]
    return max(nums) if nums else 0


def max_offset(broker, topic, qid):
    with Remote(broker) as r:
        h, _ = r.call(30, {"topic": topic, "queueId": qid})
    if h.get("code") != 0:
        raise IOError("GET_MAX_OFFSET %s/%d: code %s %s" % (topic, qid, h.get("code"), h.get("remark")))
    return int(h["extFields"]["offset"])


def pull_all(broker, topic, queues, group="CPP_RAW_INSPECT"):
    """Every stored message of the topic's queues 0..queues-1 (raw PULL_MESSAGE, subscription '*')."""
    msgs = []
    with Remote(broker) as r:
        for qid in range(queues):
            off = 0
            while True:
                h, body = r.call(11, {
                    "consumerGroup": group, "topic": topic, "queueId": qid, "queueOffset": off, "maxMsgNums": 32,
                    "sysFlag": 4, "commitOffset": 0, "suspendTimeoutMillis": 0, "subscription": "*",
                    "subVersion": 0, "expressionType": "TAG"})
                code = h.get("code")
                if code == 0:
                    got = decode_messages(body)
                    if not got:
                        break
                    msgs.extend(got)
                    off = int(h["extFields"]["nextBeginOffset"])
                elif code in (19, 20):  # PULL_NOT_FOUND / PULL_RETRY_IMMEDIATELY: nothing more
                    break
                elif code == 21:  # PULL_OFFSET_MOVED
                    nxt = int(h["extFields"]["nextBeginOffset"])
                    if nxt <= off:
                        break
                    off = nxt
                else:
                    raise IOError("PULL %s/%d@%d: code %s %s" % (topic, qid, off, code, h.get("remark")))
    return msgs
