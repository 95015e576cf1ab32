#!/usr/bin/env python3
"""`so dashboard` at scale (issue 42): the everything page at 1,000 workspaces, and the server's memory and API
requests with 20 pages open while the cluster changes. Prints figures; asserts nothing.

Usage: python3 Benchmarks/dashboard_bench.py --kubeconfig PATH [--so PATH] [--count 1000] [--pages 20]
       [--changes 30] [--keep 0]

The workspaces are what `so deployment list` reads of one (a namespace labelled and annotated as `so` makes it,
and a Deployment of 0 replicas), applied with kubectl: no pod starts, so what is measured is `so dashboard` and
the API server. They are removed at the end (label so-bench=dashboard) unless --keep 1. Tasks are not counted:
a workspace's tasks live in its container, and these have none.
"""
import json, os, re, statistics, subprocess, sys, tempfile, threading, time, urllib.request

import clusterargs


def manifest(i):
    ns = f"so-bench-{i:04d}"
    app = f"laconic-bench{i:04d}"
    labels = {"app": app, "app.kubernetes.io/instance": app, "app.kubernetes.io/stack": "agent-workspace",
              "app.kubernetes.io/managed-by": "so", "so-bench": "dashboard"}
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "labels": labels,
                      "annotations": {"laconic.com/deployment-dir": f"/bench/deployments/ws-{i:04d}",
                                      "so.dev/workspace": "agent /workspace", "so.dev/host": "bench-host"}}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": f"{app}-agent", "namespace": ns, "labels": labels},
         "spec": {"replicas": 0, "selector": {"matchLabels": {"app": app}},
                  "template": {"metadata": {"labels": labels},
                               "spec": {"containers": [{"name": "agent", "image": "so-agent-workspace:local"}]}}}},
    ]


def kubectl(kubeconfig, *args, stdin=None):
    return subprocess.run(["kubectl", "--kubeconfig", kubeconfig, *args], input=stdin, capture_output=True, text=True)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def main():
    args, kubeconfig, so = clusterargs.parse([("--count", int, 1000), ("--pages", int, 20), ("--changes", int, 30),
                                               ("--keep", int, 0)])
    began = time.time()
    for start in range(0, args.count, 200):
        docs = [d for i in range(start, min(args.count, start + 200)) for d in manifest(i)]
        r = kubectl(kubeconfig, "apply", "--server-side", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
        if r.returncode != 0:
            sys.exit("kubectl apply failed: " + r.stderr[-1000:])
    print(f"{args.count} workspaces (namespace + Deployment of 0 replicas) applied in {time.time() - began:.1f} s")
    work = tempfile.mkdtemp(prefix="so-dashboard-bench-")
    env = dict(os.environ, SO_KUBECONFIG=kubeconfig, SO_HOME=os.path.join(work, "home"), SO_TRACE_API="1")
    err = open(os.path.join(work, "stderr"), "w+")
    p = subprocess.Popen([so, "dashboard", "--port", "0", "--read-only"], env=env, cwd=work, stdout=subprocess.PIPE,
                         stderr=err, text=True)
    try:
        url = p.stdout.readline().split()[-1]
        base = url.split("?")[0].rstrip("/")
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        opener.open(url).read()

        def get(path):
            t = time.perf_counter()
            body = opener.open(base + path).read()
            return (time.perf_counter() - t) * 1000, body

        end = time.time() + 120
        while time.time() < end and get("/")[1].count(b"so-bench-") < args.count:
            time.sleep(0.5)
        for path in ["/", "/?fragment=1"]:
            times = [get(path)[0] for _ in range(21)]
            size = len(get(path)[1])
            print(f"GET {path:13} at {args.count} workspaces: median {statistics.median(times):.1f} ms, "
                  f"p95 {sorted(times)[19]:.1f} ms, max {max(times):.1f} ms ({size // 1024} KiB)")
        idle = rss_kib(p.pid)
        streams = []

        def page():
            r = opener.open(base + "/events")
            streams.append(r)
            try:
                while r.readline():
                    get("/?fragment=1")
            except Exception:
                pass

        for _ in range(args.pages):
            threading.Thread(target=page, daemon=True).start()
        time.sleep(2)
        open_rss = rss_kib(p.pid)
        err.flush()
        err.seek(0, 2)
        requests_before = sum(1 for line in open(err.name) if line.startswith("api: "))
        for i in range(args.changes):
            kubectl(kubeconfig, "annotate", "namespace", f"so-bench-{i:04d}", f"so.dev/expires-at=2030-01-01T00:00:{i % 60:02d}Z",
                    "--overwrite")
            time.sleep(0.5)
        time.sleep(2)
        after = rss_kib(p.pid)
        requests = sum(1 for line in open(err.name) if line.startswith("api: ")) - requests_before
        print(f"memory (RSS): {idle / 1024:.1f} MiB idle at {args.count} workspaces, {open_rss / 1024:.1f} MiB with "
              f"{len(streams)} pages open, {after / 1024:.1f} MiB after {args.changes} changes seen by each")
        print(f"API requests of the server over {args.changes} changes with {len(streams)} pages open: {requests} "
              f"({requests / args.changes:.1f} a change; the pages' own reads are served from the one snapshot)")
    finally:
        p.terminate()
        p.wait()
        if not args.keep:
            kubectl(kubeconfig, "delete", "namespace", "-l", "so-bench=dashboard", "--wait=false")
            print("namespaces removed (the namespace controller finishes in the background)")


if __name__ == "__main__":
    main()
