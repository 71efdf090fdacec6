#!/usr/bin/env python3
"""scripts/metrics-ab-report.py results.jsonl [meta.txt] — the markdown table of scripts/metrics-ab.
scripts/metrics-ab-report.py --pool a/results.jsonl b/results.jsonl ... — the per-pair ratios of several runs pooled.

Per scenario and variant (A = metrics off, B = PROM + scrapes every 5 s, C = PROM without scrapes when run): the
median over the rounds and the range [min-max]; B/A = ratio of the medians; "per pair" = the ratios of each B (C)
round to the A round nearest in time (neighbours share the box's state), median and range. Stdlib only.
"""
import json
import statistics
import sys

METRICS = [
    ("cpu_ms_per_1k", "broker CPU ms / 1000 msgs", "{:.1f}"),
    ("tps", "send TPS", "{:,.0f}"),
    ("p50_ms", "send RTT p50 (ms)", "{:.2f}"),
    ("p99_ms", "send RTT p99 (ms)", "{:.2f}"),
    ("sent", "messages acked", "{:,.0f}"),
    ("broker_cpu_s", "broker CPU (s)", "{:.2f}"),
]


def fmt(f, x):
    return "–" if x is None else f.format(x)


def pool(paths):
    """Per-pair ratios (each B / C round over the A round nearest in time, within its run) of several runs."""
    ratios = {}
    for path in paths:
        rows = [json.loads(line) for line in open(path) if line.strip()]
        for rb in rows:
            if rb["variant"] == "A":
                continue
            a = [r for r in rows if r["scenario"] == rb["scenario"] and r["variant"] == "A"]
            if not a:
                continue
            ra = min(a, key=lambda r: (abs(r["round"] - rb["round"]), r["round"]))
            ratios.setdefault((rb["scenario"], rb["variant"]), []).append((ra, rb))
    print("| scenario | variant | pairs | " + " | ".join(f"{n}: median [range] (pairs > 1)" for _, n, _ in METRICS[:4]) + " |")
    print("|---|---|---:|" + "---:|" * 4)
    for (sc, v), prs in ratios.items():
        cells = []
        for key, _, _ in METRICS[:4]:
            xs = sorted(rb[key] / ra[key] for ra, rb in prs if ra.get(key) and rb.get(key) is not None)
            cells.append(f"{statistics.median(xs):.3f} [{xs[0]:.3f}–{xs[-1]:.3f}] ({sum(x > 1 for x in xs)}/{len(xs)})")
        print(f"| {sc} | {v}/A | {len(prs)} | " + " | ".join(cells) + " |")


def main():
    if sys.argv[1] == "--pool":
        pool(sys.argv[2:])
        return
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    if len(sys.argv) > 2:
        print("```")
        print(open(sys.argv[2]).read().rstrip())
        print("```\n")
    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    names = {"A": "A: off", "B": "B: PROM + scrapes", "C": "C: PROM, no scrapes"}
    others = [v for v in ("C", "B") if any(r["variant"] == v for r in rows)]
    head = "| scenario | metric | A: off, median [range] |"
    for v in others:
        head += f" {names[v]}, median [range] | {v}/A | {v}/A per pair, median [range] |"
    print(head)
    print("|---|---|---:|" + "---:|---:|---:|" * len(others))
    for sc in scenarios:
        by = {
            v: sorted((r for r in rows if r["scenario"] == sc and r["variant"] == v), key=lambda r: r["round"])
            for v in ["A"] + others
        }
        for key, name, f in METRICS:
            va = [r[key] for r in by["A"] if r.get(key) is not None]
            if not va:
                continue
            ma = statistics.median(va)
            line = f"| {sc} | {name} | {fmt(f, ma)} [{fmt(f, min(va))}–{fmt(f, max(va))}] |"
            for v in others:
                vb = [r[key] for r in by[v] if r.get(key) is not None]
                if not vb:
                    line += " – | – | – |"
                    continue
                mb = statistics.median(vb)
                # each round paired with the A round nearest in time (the earlier one on a tie)
                pairs = []
                for rb in by[v]:
                    near = sorted(
                        (ra for ra in by["A"] if ra.get(key)),
                        key=lambda ra: (abs(ra["round"] - rb["round"]), ra["round"]),
                    )
                    if near and rb.get(key) is not None:
                        pairs.append(rb[key] / near[0][key])
                pr = f"{statistics.median(pairs):.3f} [{min(pairs):.3f}–{max(pairs):.3f}]" if pairs else "–"
                line += f" {fmt(f, mb)} [{fmt(f, min(vb))}–{fmt(f, max(vb))}] | {mb / ma:.3f} | {pr} |"
            print(line)
    bad = [r for r in rows if r.get("failed_procs") or r.get("failed") or r.get("mismatch")]
    print()
    print(f"rounds: {len({r['round'] for r in rows})}; runs with failures or sent != consumed: {len(bad)}")
    for r in bad:
        print(f"- round {r['round']} {r['variant']} {r['scenario']}: failed procs {r['failed_procs']}, "
              f"failed sends {r['failed']}, mismatch {r['mismatch']}")
    print("\nPer round (broker CPU ms / 1000 msgs):\n")
    print("| round | variant | " + " | ".join(scenarios) + " | scrapes |")
    print("|---|---|" + "---:|" * (len(scenarios) + 1))
    for rnd in sorted({r["round"] for r in rows}):
        rr = {r["scenario"]: r for r in rows if r["round"] == rnd}
        v = next(iter(rr.values()))["variant"]
        cells = [fmt("{:.1f}", rr[s]["cpu_ms_per_1k"]) if s in rr else "–" for s in scenarios]
        print(f"| {rnd} | {v} | " + " | ".join(cells) + f" | {sum(r['scrapes'] for r in rr.values())} |")


if __name__ == "__main__":
    main()
