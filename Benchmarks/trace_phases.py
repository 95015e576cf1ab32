#!/usr/bin/env python3
"""Where one `so` run's time went, from its trace (`SO_TRACE_API=1`: a line per API request, exec, watch, program
and DNS lookup, each with how long it took and `at=+Nms`, when it ended, from the start of `so`). Prints each
request with its start and end, the one it waited on (the one that ended last before it began: nothing else can
have held it up but the work `so` did in between, shown as the gap), and which of them lie on the critical path
(walked back from the last one to end), then the time per phase on the path and off it.

Usage: python3 Benchmarks/trace_phases.py TRACE [TRACE ...]   (agent_bench.py --traces DIR keeps one per up)
       [--quiet]: the phase totals only. [--segments]: for cold ups (`so up`, no pool) only the median of each
       step of the way, from the process's start to the shell answering, over all the traces given (e.g. the twenty
       of `agent_bench.py --twenty --traces DIR`: DIR/*-many-*.trace), and the requests per up. Asserts nothing.
"""
import re, statistics, sys

LINE = re.compile(r"^(api|proc|dns): (\S+)(?: (\S+))?.*? (\d+)ms\b.* at=\+(\d+)ms$")

# What each request is, by its verb and path: the phases the issue names (the record, the pool's record, the
# Lease, the trust check's reads, capacity, DNS, the carry-in).
PHASES = [
    (r"^proc ", "a program (git, kubectl)"),
    (r"^dns ", "DNS of egress hosts"),
    (r"^EXEC ", "exec into the container"),
    (r"^PORTFORWARD ", "port-forward into the pod"),
    (r"^WATCH ", "a watch"),
    (r"/namespaces/so-pools/secrets", "pools' record"),
    (r"selfsubjectreviews", "record: who wrote it"),
    (r"^POST .*/secrets$", "record: a revision written"),
    (r"^GET .*/namespaces/[^/]+/secrets$", "record: revisions listed"),
    (r"/leases", "a Lease"),
    (r"/nodes|/resourcequotas", "capacity (nodes, quotas)"),
    (r"kube-system/(endpoints|endpointslices)|/services/kube-dns", "cluster DNS read"),
    (r"^PATCH /api/v1/namespaces/[^/]+$", "Namespace patched"),
    (r"^(GET|POST) /api/v1/namespaces$|^GET /apis/apps/v1/deployments$", "workspaces listed (Namespaces, Deployments)"),
    (r"^GET /api/v1/namespaces/[^/]+$", "Namespace read"),
    (r"persistentvolumeclaims|persistentvolumes", "a volume"),
    (r"/pods", "pods"),
    (r"^(PATCH|PUT|POST) ", "objects applied"),
    (r"^GET ", "objects read"),
]


def phase(what):
    for pattern, name in PHASES:
        if re.search(pattern, what):
            return name
    return "other"


def parse(text):
    """The trace's timed lines: (start ms, end ms, what)."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        kind, verb, path, ms, at = m.group(1), m.group(2), m.group(3) or "", int(m.group(4)), int(m.group(5))
        what = f"{verb} {path}".strip() if kind == "api" else f"{kind} {verb} {path}".strip()
        out.append((at - ms, at, what))
    return sorted(out)


def critical(events):
    """Indices on the critical path: from the last to end, each time the one that ended last before it began."""
    if not events:
        return set()
    i = max(range(len(events)), key=lambda k: events[k][1])
    path = {i}
    while True:
        start = events[i][0]
        before = [k for k in range(len(events)) if events[k][1] <= start + 1 and k not in path]
        if not before:
            return path
        i = max(before, key=lambda k: events[k][1])
        path.add(i)


def report(name, text, quiet):
    events = parse(text)
    if not events:
        print(f"{name}: no timed lines (was SO_TRACE_API=1 set?)")
        return
    on = critical(events)
    end = max(e[1] for e in events)
    print(f"== {name}: {len(events)} requests, the last ended at +{end} ms; {len(on)} on the critical path")
    if not quiet:
        print(f"{'start':>7} {'end':>7} {'ms':>5}  {'path':<4} {'waited on (gap ms)':<24} what")
        for k, (s, e, what) in enumerate(events):
            prior = [j for j in range(len(events)) if events[j][1] <= s + 1 and j != k]
            waited = max(prior, key=lambda j: events[j][1]) if prior else None
            w = f"#{waited} (+{s - events[waited][1]})" if waited is not None else "start of so"
            print(f"{s:7d} {e:7d} {e - s:5d}  {'*' if k in on else '':<4} {w:<24} #{k} {what}")
    # Per phase: the time on the critical path (and the gaps before each: so's own work), and what went beside.
    totals = {}
    path = sorted(on, key=lambda k: events[k][0])
    last_end = 0
    local = 0
    for k in path:
        s, e, what = events[k]
        local += max(0, s - last_end)
        last_end = e
        p = phase(what)
        totals.setdefault(p, [0, 0, 0])
        totals[p][0] += e - s
        totals[p][1] += 1
    for k, (s, e, what) in enumerate(events):
        if k not in on:
            p = phase(what)
            totals.setdefault(p, [0, 0, 0])
            totals[p][2] += 1
    print(f"  {'phase':<30} {'on the path':>14} {'requests beside it':>19}")
    for p, (ms, n, beside) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        print(f"  {p:<30} {ms:8d} ms ({n:2d}) {beside:19d}")
    print(f"  {'so itself (gaps on the path)':<30} {local:8d} ms")


def segments(text):
    """A cold up's steps (ms), from its trace: each ends where the next begins."""
    events = parse(text)
    at = {m.group(1): int(m.group(2)) for m in re.finditer(r"^phase: (.+?) at=\+(\d+)ms$", text, re.M)}
    namespace = min(s for s, e, w in events if w == "POST /api/v1/namespaces")
    applies = [(s, e) for s, e, w in events if w.startswith("PATCH ") and "/leases/" not in w and not re.match(r"PATCH /api/v1/namespaces/[^/]+$", w)]
    deployments = sorted(e for s, e, w in events if w.startswith("PATCH ") and "/deployments/" in w)
    looks = [e for s, e, w in events if re.match(r"GET /apis/apps/v1/namespaces/[^/]+/deployments$", w)]
    done = at.get("command done", max(e for s, e, w in events))
    shell = re.search(r"until a shell answers (\d+) ms", text)
    marks = [("process loaded, arguments parsed, API client made", at.get("API client made", 0)),
             ("pools, nodes, the plan, the deployment made (until the Namespace's create)", namespace),
             ("Namespace, Lease, writer, cluster DNS, the record's revision (until the apply)", min(s for s, e in applies)),
             ("the apply (until the first Deployment answered)", deployments[0]),
             ("the volume bound (until the last Deployment answered)", deployments[-1]),
             ("the wait for the pods (until its last look)", max(looks) if looks else deployments[-1]),
             ("endpoints, the record's result, the Lease released, exit", done)]
    if shell:
        marks.append(("the benchmark's exec until the shell answered", int(shell.group(1))))
    out, last = [], 0
    for name, t in marks:
        out.append((name, t - last))
        last = t
    return out, len(events)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    if "--segments" in sys.argv:
        steps = [segments(open(path).read()) for path in args]
        print(f"{len(steps)} ups; median ms of each step (min-max); requests per up: "
              f"{statistics.median(n for _, n in steps):.0f} ({min(n for _, n in steps)}-{max(n for _, n in steps)})")
        for i, (name, _) in enumerate(steps[0][0]):
            ms = [s[0][i][1] for s in steps if len(s[0]) > i]
            print(f"  {name:<82} {statistics.median(ms):6.0f} ({min(ms)}-{max(ms)})")
        return
    for path in args:
        report(path, open(path).read(), "--quiet" in sys.argv)


if __name__ == "__main__":
    main()
