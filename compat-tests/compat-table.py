#!/usr/bin/env python3
"""Client compatibility table from a compat run's results.tsv.

    compat-tests/compat-table.py RUN_DIR/results.tsv [MORE.tsv ...]            # markdown on stdout
    compat-tests/compat-table.py RUN_DIR/results.tsv [MORE.tsv ...] --readme   # also into README.md
(several runs, e.g. the default suites and COMPAT_SUITES=matrix: later files win per scenario)

One row per client and version, one column per feature. A cell is "✓" when the scenario passed on
the Java broker (the oracle) and on rmqd, "✗ rmqd" when only rmqd failed, "✗ oracle" when the
scenario failed on the Java broker too (a test bug), "—" when the client line has no such feature
(or the run did not include it). The core suites (data, go, mqadmin, ...) are summarised per
client as "passed/total".
"""
import collections
import re
import sys
from pathlib import Path

# scenario suffix -> (column, label); the plug-in suites name scenarios <PREFIX>-<SUFFIX>
FEATURES = [
    ("SYNC", "sync send"),
    ("ASYNC", "async send"),
    ("ONEWAY", "oneway"),
    ("BATCH", "batch"),
    ("PUSH", "push (concurrent)"),
    ("ORDERLY", "push (orderly)"),
    ("PULL", "pull"),
    ("LITEPULL", "lite pull / poll"),
    ("TXN", "transactions"),
]
SYNONYMS = {"ORDER": "ORDERLY", "POLL": "LITEPULL", "LITE": "LITEPULL", "TX": "TXN"}
CORE = {"java": ("Java client", "5.3.3"), "go": ("Go client v2", "v2.1.3-pre"),
        "mqadmin": ("mqadmin", "5.3.3"), "go+java": ("Go + Java together", ""),
        "grpcjava": ("Java gRPC client via rocketmq-proxy 5.3.3", "5.2.0"),
        "grpcgo": ("Go gRPC client via rocketmq-proxy 5.3.3", "v5.1.4")}
BEGIN, END = "<!-- compat-table:begin -->", "<!-- compat-table:end -->"


def load(paths):
    res = collections.defaultdict(dict)  # (client, id) -> broker -> status
    lines = [line for path in paths for line in open(path, encoding="utf-8", errors="replace")]
    for line in lines:
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 5:
            continue
        broker, _suite, sid, client, status = parts[:5]
        detail = parts[6] if len(parts) > 6 else ""
        # a feature the client line lacks (or cannot use): nothing to show in its cell
        if status == "NA" or detail.startswith("n/a"):
            status = "NA"
        res[(client, sid)][broker] = status
    return res


def cell(st):
    j, r = st.get("java"), st.get("rmqd")
    if j is None and r is None or "NA" in (j, r):
        return "—"
    if j is not None and j != "PASS":
        return "✗ oracle"
    if r is not None and r != "PASS":
        return "✗ rmqd"
    return "✓"


def split_client(client):
    m = re.match(r"^([a-z+]+)-(v?\d[\w.\-]*)$", client)
    return (m.group(1), m.group(2)) if m else (client, "")


def table(res):
    rows = collections.OrderedDict()
    core = collections.OrderedDict()
    for (client, sid), st in sorted(res.items(), key=lambda kv: kv[0]):
        name, version = split_client(client)
        suffix = sid.split("-", 1)[1] if "-" in sid else ""
        suffix = SYNONYMS.get(suffix, suffix)
        if version and suffix in dict(FEATURES):
            rows.setdefault((name, version), {})[suffix] = cell(st)
        else:
            c = core.setdefault((name, version), [0, 0, []])
            c[1] += 1
            if cell(st) == "✓":
                c[0] += 1
            else:
                c[2].append(sid)
    out = ["| client | version | " + " | ".join(label for _, label in FEATURES) + " |",
           "|---|---|" + "---|" * len(FEATURES)]

    def order(k):
        return (k[0], [int(x) if x.isdigit() else 0 for x in re.findall(r"\d+|[a-z]+", k[1])])

    for (name, version) in sorted(rows, key=order):
        cells = rows[(name, version)]
        out.append("| %s | %s | %s |" % (name, version, " | ".join(cells.get(f, "—") for f, _ in FEATURES)))
    out.append("")
    out.append("| client | version | scenarios passed on both brokers |")
    out.append("|---|---|---|")
    for (name, version), (ok, total, bad) in sorted(core.items(), key=lambda kv: order(kv[0])):
        label, default_version = CORE.get(name, (name, ""))
        extra = (" (not: %s)" % ", ".join(bad[:8])) if bad else ""
        out.append("| %s | %s | %d/%d%s |" % (label, version or default_version, ok, total, extra))
    return "\n".join(out)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    text = table(load([a for a in sys.argv[1:] if not a.startswith("--")]))
    print(text)
    if "--readme" in sys.argv:
        readme = Path(__file__).resolve().parent.parent / "README.md"
        body = readme.read_text(encoding="utf-8")
        if BEGIN not in body or END not in body:
            print("README.md has no %s ... %s markers" % (BEGIN, END), file=sys.stderr)
            return 1
        head, rest = body.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        readme.write_text(head + BEGIN + "\n" + text + "\n" + END + tail, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
