#!/usr/bin/env bash
# compat-tests/go/x02.sh — X02: Go producer -> Java push consumer and Java producer -> Go push consumer.
# Pairs the JSON lines of `compat-go produce|consume` and x02/JavaSide.java by msgId (UNIQ_KEY) and compares
# body, tags, keys, user properties and bornTimestamp (within the sender's [before, after] window).
# Prints ONE scenario JSON line {"id":"X02","client":"go+java",...}; exit 0 on PASS.
# Usage: x02.sh [-ns 127.0.0.1:9876] [-broker 127.0.0.1:20911] [-run-id X] [-n 20]
set -uo pipefail
GO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NS=127.0.0.1:9876; BROKER=127.0.0.1:20911; RID=$(date +%s); N=20
while [ $# -gt 0 ]; do
  case $1 in -ns) NS=$2;; -broker) BROKER=$2;; -run-id) RID=$2;; -n) N=$2;; *) echo "unknown $1" >&2; exit 2;; esac; shift 2
done
export NS_ADDR=$NS
: "${RUN_DIR:=$GO_DIR/../.run/x02-$RID}"
export RUN_DIR
. "$GO_DIR/../lib.sh" >/dev/null
W="$RUN_DIR/x02"; mkdir -p "$W/home"
CG="$GO_DIR/bin/compat-go"
t0=$(date +%s%3N)
CP=$(compat_cp) || exit 1
mkdir -p "$W/classes"
javac -nowarn -d "$W/classes" -cp "$CP" "$GO_DIR/x02/JavaSide.java" 2>>"$W/java.err" || { echo '{"id":"X02","client":"go+java","status":"FAIL","ms":0,"detail":"javac JavaSide.java failed"}'; exit 1; }
jside() { timeout 120 java -Xmx256m "${JAVA_COMMON[@]}" -Duser.home="$W/home" -Drmq.logback.configurationFile=rmq.client.logback.xml \
  -cp "$W/classes:$CP" JavaSide "$@" 2>>"$W/java.err"; }
T1="X02_${RID}_g2j"; T2="X02_${RID}_j2g"
timeout 90 "$CG" produce -ns "$NS" -broker "$BROKER" -create 4 -topic "$T1" -n "$N" -tag GoTag -keys "gk{i},gx{i}" \
  -prop "p1=v{i},lang=go,sp=a b=c" -body-prefix "go-to-java" -run-id "$RID" -log "$W/go.log" > "$W/go_sent.jsonl"
jside consume --ns "$NS" --topic "$T1" --group "X02_${RID}_jcg" --expect "$N" --timeout 60 --run-id "$RID" > "$W/java_recv.jsonl"
timeout 90 "$CG" produce -ns "$NS" -broker "$BROKER" -create 4 -topic "$T2" -n 0 -run-id "$RID" -log "$W/go.log" > /dev/null
jside produce --ns "$NS" --topic "$T2" --n "$N" --tag JavaTag --keys "jk{i},jx{i}" --prop "p1=v{i},lang=java,sp=a b=c" \
  --body-prefix java-to-go --run-id "$RID" > "$W/java_sent.jsonl"
timeout 90 "$CG" consume -ns "$NS" -topic "$T2" -group "X02_${RID}_gcg" -expect "$N" -timeout 60s -run-id "$RID" \
  -log "$W/go.log" > "$W/go_recv.jsonl"
ms=$(( $(date +%s%3N) - t0 ))
python3 - "$W" "$ms" <<'PY'
import json, sys
w, ms = sys.argv[1], int(sys.argv[2])
def load(f):
    try:
        return [json.loads(l) for l in open(f"{w}/{f}") if l.strip().startswith("{")]
    except Exception as e:
        return []
problems, notes = [], []
for sent_f, recv_f, label in (("go_sent.jsonl", "java_recv.jsonl", "go->java"), ("java_sent.jsonl", "go_recv.jsonl", "java->go")):
    S, R = load(sent_f), load(recv_f)
    sent = [x for x in S if x.get("event") == "sent"]; recv = {x["msgId"]: x for x in R if x.get("event") == "recv"}
    done = [x for x in S + R if x.get("event") == "done"]
    for d in done:
        if d.get("status") != "PASS":
            problems.append(f"{label}: {d.get('role')} {d.get('status')} {d.get('error','')} received={d.get('received')}")
    if not sent:
        problems.append(f"{label}: nothing sent"); continue
    for s in sent:
        r = recv.get(s["msgId"])
        if r is None:
            problems.append(f"{label}: idx {s['idx']} msgId {s['msgId']} not received"); continue
        for k in ("body", "tags", "keys", "props", "topic"):
            if s.get(k) != r.get(k):
                problems.append(f"{label}: idx {s['idx']} {k} sent {s.get(k)!r} recv {r.get(k)!r}")
        if not (s["bornTimestampMin"] - 1 <= r["bornTimestamp"] <= s["bornTimestampMax"] + 1):
            problems.append(f"{label}: idx {s['idx']} bornTimestamp {r['bornTimestamp']} not in [{s['bornTimestampMin']},{s['bornTimestampMax']}]")
        if (s["queueId"], s["queueOffset"]) != (r["queueId"], r["queueOffset"]):
            problems.append(f"{label}: idx {s['idx']} queue/offset sent {s['queueId']}/{s['queueOffset']} recv {r['queueId']}/{r['queueOffset']}")
    notes.append(f"{label} {len(sent)} sent/{len(recv)} recv")
st = "FAIL" if problems else "PASS"
detail = "; ".join(notes) + ("; " + "; ".join(problems[:8]) if problems else "")
print(json.dumps({"id": "X02", "client": "go+java", "status": st, "ms": ms, "detail": detail[:1000]}, separators=(",", ":")))
sys.exit(0 if st == "PASS" else 1)
PY
