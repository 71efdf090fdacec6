#!/usr/bin/env python3
"""scripts/bench-report.py <results.jsonl> <meta.txt> <outdir>: report.md + latency.svg for scripts/bench.

Each figure is the median over the runs of one broker kind; ratio = rmqd / Java, and rmqd / rocketmq-rust when
rocketmq-rust ("rrust") ran too. Standard library only; the SVG is written by hand."""
import json
import statistics
import sys

res_path, meta_path, out = sys.argv[1:4]
rows = [json.loads(line) for line in open(res_path) if line.strip()]
meta = [line.rstrip("\n") for line in open(meta_path)]
NCPU = next((int(m.split("=")[1].split()[0]) for m in meta if m.startswith("cpu=")), 2)
PEER = any(r.get("broker") == "rrust" for r in rows)
KINDS = ("java", "rmqd", "rrust") if PEER else ("java", "rmqd")


def med(kind, scen, f):
    vals = []
    for r in rows:
        if r.get("broker") == kind and r.get("scenario") == scen:
            try:
                v = f(r)
            except (KeyError, TypeError, ZeroDivisionError):
                continue
            if v is not None:
                vals.append(v)
    return statistics.median(vals) if vals else None


def lat(key, q):
    """A latency percentile in ms; none when the histogram is empty (every send of the scenario failed)."""
    return lambda r: r[key][q] / 1000.0 if r[key].get("count", 1) else None


def fmt(v, digits=1):
    if v is None:
        return "–"
    if isinstance(v, float) and v.is_integer() and abs(v) >= 100 or v == 0:
        v = int(v)
    if isinstance(v, float) and abs(v) < 10 and v != int(v):
        return f"{v:.2f}"
    if isinstance(v, float):
        return f"{v:,.{digits if abs(v) < 100 else 0}f}"
    return f"{v:,}"


def ratio(j, r):
    if j in (None, 0) or r is None:
        return "–"
    return f"{r / j:.2f}"


scenarios, client_scenarios, official_scenarios, grpc_scenarios = [], [], [], []
for r in rows:
    s = r.get("scenario")
    if s in ("startup", "recovery", "memory", "disk") or s in scenarios + client_scenarios + official_scenarios \
            + grpc_scenarios:
        continue
    # jc-*: phase C, the real Java client (compat.Load); off-*: phase D, the official benchmark tools;
    # the rest come from rmqd-bench.
    if s.startswith("jc-"):
        client_scenarios.append(s)
    elif s.startswith("off-"):
        official_scenarios.append(s)
    elif s.startswith("grpc-"):  # phase E: gRPC through rocketmq-proxy
        grpc_scenarios.append(s)
    else:
        scenarios.append(s)


def off_cpu(r):
    """Broker CPU ms per 1000 messages stored in the measured window (phase D)."""
    return r["broker_cpu_s"] * 1e6 / r["window_msgs"] if r["window_msgs"] else None

lines = []
lines.append("# rmqd vs Java broker" + (" and rocketmq-rust" if PEER else "") + " — side-by-side benchmark\n")
lines.append("```")
lines += meta
lines.append("```\n")
lines.append("Medians over the runs of each broker (runs: "
             + ", ".join(f"{k}×{len({r['run'] for r in rows if r.get('broker') == k})}" for k in KINDS)
             + "). Ratio = rmqd / Java" + (" and rmqd / rocketmq-rust" if PEER else "")
             + ": above 1 is better for TPS, below 1 is better for latency, CPU, memory, time.\n")


def cells(vals, digits=1):
    """Java | rmqd | rmqd/Java [| rocketmq-rust | rmqd/rocketmq-rust] for one figure."""
    j, r = vals[0], vals[1]
    out = f"{fmt(j, digits)} | {fmt(r, digits)} | {ratio(j, r)}"
    if PEER:
        out += f" | {fmt(vals[2], digits)} | {ratio(vals[2], r)}"
    return out


PEER_HEAD = " rocketmq-rust | rmqd/rocketmq-rust |" if PEER else ""
PEER_RULE = "---:|---:|" if PEER else ""


def head(label, scen, f, target):
    lines.append(f"| {label} | {cells([med(k, scen, f) for k in KINDS])} | {target} |")


lines.append("Headline (issue 6 targets):\n")
lines.append(f"| figure | Java | rmqd | rmqd/Java |{PEER_HEAD} target |")
lines.append(f"|---|---:|---:|---:|{PEER_RULE}---|")
for s in scenarios:
    if s.startswith("eq-"):
        head(f"{s}: send RTT p99 (ms) at equal load", s, lat("send_rtt_us", "p99"), "≤ 0.33")
        head(f"{s}: end-to-end p50 (ms) at equal load", s, lat("e2e_us", "p50"), "")
        head(f"{s}: end-to-end p99 (ms) at equal load", s, lat("e2e_us", "p99"), "≤ 0.33")
        head(f"{s}: end-to-end p99.9 (ms) at equal load", s, lat("e2e_us", "p999"), "")
    else:
        head(f"{s}: send TPS", s, lambda r: r["send_tps"], "≥ 2")
        head(f"{s}: broker CPU ms / 1000 msgs", s,
             lambda r: r["broker_cpu_s"] * 1e6 / r["sent"] if r["sent"] else None, "≤ 0.33")
for s in client_scenarios:
    head(f"{s} (real Java client): broker CPU ms / 1000 msgs", s,
         lambda r: r["broker_cpu_s"] * 1e6 / r["sent"] if r["sent"] else None, "≤ 0.33")
for s in official_scenarios:
    head(f"{s} (official benchmark tool): send TPS", s, lambda r: r["send_tps"], "≥ 2 (when not client-bound)")
    head(f"{s} (official benchmark tool): broker CPU ms / 1000 msgs", s, off_cpu, "≤ 0.33")
for s in grpc_scenarios:
    head(f"{s} (gRPC via rocketmq-proxy): send TPS", s, lambda r: r.get("send_tps"), "")
    head(f"{s} (gRPC via rocketmq-proxy): end-to-end p99 (ms)", s, lat("e2e_us", "p99"), "")
    head(f"{s} (gRPC via rocketmq-proxy): broker CPU ms / 1000 msgs", s,
         lambda r: r["broker_cpu_s"] * 1e6 / r["sent"] if r.get("sent") else None, "≤ 0.33")
disk = med("disk", "disk", lambda r: r["mb_s"])
for s in scenarios:
    if s == "async-16k" and disk:
        def share(kind):
            v = med(kind, s, lambda r: r["send_tps"] * r["size"] / 1e6)
            return None if v is None else 100.0 * v / disk
        lines.append(f"| {s}: acked MB/s as % of the disk's sequential write ({disk:,.0f} MB/s, same run) "
                     f"| {cells([share(k) for k in KINDS])} | rmqd ≥ 70 % |")
head("peak RSS VmHWM (MiB)", "memory", lambda r: r["vm_hwm_kib"] / 1024.0, "≤ 0.125")
head("… RssAnon at the highest sample (MiB)", "memory", lambda r: r["anon_kib"] / 1024.0, "")
head("… RssFile at the highest sample (MiB)", "memory", lambda r: r["file_kib"] / 1024.0, "")
head("process start → first ack (ms)", "startup", lambda r: r["first_ack_ms"], "≤ 100 ms")
head("kill -9 restart → first ack (ms)", "recovery", lambda r: r["first_ack_ms"], "")
def table(intro=None):
    """Starts a "scenario | metric" table, after an optional paragraph."""
    lines.append("")
    if intro:
        lines.append(intro + "\n")
    lines.append(f"| scenario | metric | Java | rmqd | rmqd/Java |{PEER_HEAD}")
    lines.append(f"|---|---|---:|---:|---:|{PEER_RULE}")


def row(scen, label, f, digits=1):
    lines.append(f"| {scen} | {label} | {cells([med(k, scen, f) for k in KINDS], digits)} |")


if scenarios:
    table()
for s in scenarios:
    row(s, "offered rate (msgs/s, 0 = closed loop)", lambda r: r.get("rate", 0))
    row(s, "send TPS", lambda r: r["send_tps"])
    row(s, "messages acked (sent)", lambda r: r["sent"])
    row(s, "consumed", lambda r: r["consumed"])
    row(s, "send failures", lambda r: r["failed"])
    for q in ("p50", "p99", "p999", "max"):
        row(s, f"send RTT {q} (ms)", lat("send_rtt_us", q))
    for q in ("p50", "p99", "p999", "max"):
        row(s, f"end-to-end {q} (ms)", lat("e2e_us", q))
    row(s, "deliveries with end-to-end ≥ 10 ms", lambda r: r["slow_e2e"]["deliveries"])
    row(s, "… in episodes (sends < 50 ms apart; `slow_e2e.worst` in results.jsonl says when)",
        lambda r: r["slow_e2e"]["episodes"])
    row(s, "broker CPU (s)", lambda r: r["broker_cpu_s"])
    row(s, "broker CPU ms / 1000 msgs", lambda r: r["broker_cpu_s"] * 1e6 / r["sent"] if r["sent"] else None)
    row(s, "load generator CPU (cores busy; near --threads = generator-bound)",
        lambda r: r["generator_cpu_s"] / r["send_secs"] if r.get("send_secs") else None)
    # box-wide, during the scenario: where a tail can come from other than the broker's own code
    row(s, "box: direct-reclaim stalls (allocstall)", lambda r: r["box"]["allocstall"])
    row(s, "box: compaction stalls", lambda r: r["box"]["compact_stall"])
    row(s, "box: CPU steal (% of all CPUs; USER_HZ 100)",
        lambda r: 100.0 * r["box"]["steal_ticks"] / (r["send_secs"] * 100 * NCPU))
if client_scenarios:
    table("Load from the real Java client (compat.Load: DefaultMQProducer over the NameServer route, a "
          "DefaultMQPushConsumer in the same JVM). On 2 cores the client uses more CPU than either broker, "
          "so TPS here is client-bound; broker CPU per message is the comparable figure. A batch's send RTT "
          "is per batch of 16.")
    for s in client_scenarios:
        row(s, "send TPS (msgs/s)", lambda r: r["send_tps"])
        row(s, "consume TPS (msgs/s)", lambda r: r["consume_tps"])
        row(s, "messages acked / consumed", lambda r: r["sent"])
        row(s, "send failures", lambda r: r["failed"])
        for q in ("p50", "p99"):
            row(s, f"send RTT {q} (ms)", lat("send_rtt_us", q))
        for q in ("p50", "p99"):
            row(s, f"end-to-end {q} (ms)", lat("e2e_us", q))
        row(s, "broker CPU ms / 1000 msgs", lambda r: r["broker_cpu_s"] * 1e6 / r["sent"] if r["sent"] else None)
        row(s, "client CPU (cores busy)", lambda r: r["generator_cpu_s"] / r["send_secs"] if r.get("send_secs") else None)
if official_scenarios:
    tool = next((r.get("tool", "") for r in rows if r.get("scenario") == official_scenarios[0]), "")
    table("Load from the official benchmark tools (rocketmq-example: `benchmark.Producer`, `BatchProducer`, "
          "`Consumer`), identical flags for every broker (`.tool` in results.jsonl, e.g. `" + tool + "`). "
          "Send and consume figures are the tools' own, from their last report before the producer was "
          "stopped (the last 10 s); Max RT is the producer's maximum since it started. Messages stored and "
          "committed come from the broker; broker CPU per message is over the measured window. A batch's "
          "TPS counts messages (the tool's Send MPS) and its RT is per batch of 16.")
    for s in official_scenarios:
        row(s, "Send TPS (msgs/s)", lambda r: r["send_tps"])
        row(s, "Average RT (ms)", lambda r: r["send_avg_rt_ms"], 2)
        row(s, "Max RT (ms, since start)", lambda r: r["send_max_rt_ms"])
        row(s, "Send Failed + Response Failed", lambda r: r["send_failed"])
        row(s, "Consume TPS (msgs/s)", lambda r: r.get("consume_tps"))
        row(s, "AVG(S2C) store → consume (ms)", lambda r: r.get("consume_avg_s2c_ms"), 2)
        row(s, "AVG(B2C) born → consume (ms)", lambda r: r.get("consume_avg_b2c_ms"), 2)
        row(s, "MAX(S2C) in the last 10 s (ms)", lambda r: r.get("consume_max_s2c_ms"))
        row(s, "messages stored / committed by the consumer", lambda r: r["stored"])
        row(s, "broker CPU ms / 1000 msgs", off_cpu)
if client_scenarios or official_scenarios:
    table()
row("startup", "process start → first ack (ms)", lambda r: r["first_ack_ms"])
row("startup", "process start → port open (ms)", lambda r: r["port_open_ms"])
row("recovery", "kill -9 restart → first ack (ms)", lambda r: r["first_ack_ms"])
row("recovery", "CommitLog files on disk (MiB, apparent size incl. preallocated)", lambda r: r["commitlog_bytes"] / 1048576)
row("memory", "peak RSS VmHWM (MiB)", lambda r: r["vm_hwm_kib"] / 1024.0)
lines.append(f"| disk | sequential write, 1 GiB + fdatasync, before and after the brokers (MB/s) | "
             f"{fmt(disk)} | | |" + (" | |" if PEER else ""))
row("memory", "highest sampled VmRSS (MiB)", lambda r: r["rss_kib"] / 1024.0)
row("memory", "… of which RssAnon (heap, stacks, buffers) (MiB)", lambda r: r["anon_kib"] / 1024.0)
row("memory", "… of which RssFile (mapped store files, binary) (MiB)", lambda r: r["file_kib"] / 1024.0)
row("memory", "… of which RssShmem (MiB)", lambda r: r["shmem_kib"] / 1024.0)
row("memory", "highest sampled RssAnon (MiB)", lambda r: r["max_anon_kib"] / 1024.0)
row("memory", "highest sampled RssFile (MiB)", lambda r: r["max_file_kib"] / 1024.0)
bad = [r for r in rows if r.get("count_mismatch")]
errors = [r for r in rows if "error" in r]
lines.append("")
if bad or errors:
    lines.append("**Errors:** " + "; ".join(
        [f"{r['broker']} run {r['run']} {r['scenario']}: sent {r['sent']} != consumed {r['consumed']}" for r in bad]
        + [f"{r.get('broker')} run {r.get('run')} {r.get('scenario')}: {r['error']}" for r in errors]))
else:
    lines.append("Every scenario: messages consumed == messages acknowledged (official tools: committed == stored), "
                 "on every broker.")
lines.append("\n![latency percentiles](latency.svg)\n")

# ---- SVG: grouped bars, log-scale y, send RTT and e2e p50/p99/p99.9 per scenario and broker ----------------------
import math

groups = []
for s in scenarios:
    for metric, key in (("send", "send_rtt_us"), ("e2e", "e2e_us")):
        for q in ("p50", "p99", "p999"):
            per_kind = [med(k, s, lat(key, q)) for k in KINDS]
            groups.append((f"{s} {metric} {q.replace('p999', 'p99.9')}", per_kind))
STEP = 18 * len(KINDS) + 10
W, H, L, B, T = max(600, 60 + STEP * len(groups)), 420, 60, 150, 40
vals = [v for _, per_kind in groups for v in per_kind if v]
lo = 10 ** math.floor(math.log10(max(min(vals), 0.01))) if vals else 0.01
hi = 10 ** math.ceil(math.log10(max(vals))) if vals else 1000


def y(v):
    v = max(v, lo)
    return T + (H - T - B) * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))


svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">Latency percentiles (ms, log scale): '
       'Java (orange) vs rmqd (blue)' + (' vs rocketmq-rust (green)' if PEER else '') + '</text>']
d = lo
while d <= hi * 1.0001:
    svg.append(f'<line x1="{L}" x2="{W - 10}" y1="{y(d):.1f}" y2="{y(d):.1f}" stroke="#ddd"/>')
    svg.append(f'<text x="{L - 4}" y="{y(d) + 4:.1f}" text-anchor="end">{d:g}</text>')
    d *= 10
NAMES, COLORS = ("Java", "rmqd", "rocketmq-rust"), ("#f28e2b", "#4e79a7", "#59a14f")
for i, (label, per_kind) in enumerate(groups):
    x = L + 10 + i * STEP
    for k, v in enumerate(per_kind):
        if v:
            svg.append(f'<rect x="{x + k * 18}" y="{y(v):.1f}" width="16" height="{H - B - y(v):.1f}" fill="{COLORS[k]}">'
                       f'<title>{label} {NAMES[k]}: {v:.3f} ms</title></rect>')
    svg.append(f'<text transform="translate({x + 18},{H - B + 8}) rotate(60)">{label}</text>')
svg.append(f'<line x1="{L}" x2="{W - 10}" y1="{H - B}" y2="{H - B}" stroke="black"/>')
svg.append("</svg>")
open(f"{out}/latency.svg", "w").write("\n".join(svg) + "\n")
open(f"{out}/report.md", "w").write("\n".join(lines) + "\n")
