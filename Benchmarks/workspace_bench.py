#!/usr/bin/env python3
"""Agent workspaces against a real API server: `so up` until the API has accepted every object,
20 workspaces in a row, and `so deployment list` over 100 workspaces. Prints figures; asserts nothing.

Usage: python3 Benchmarks/workspace_bench.py --kubeconfig PATH [--so PATH] [--count 100]
       (or SO_BENCH_KUBECONFIG=PATH). Builds `so` in release mode (.build-release) unless --so is given.

`so up --no-wait` returns when the API server has accepted all objects (what this measures); with the
stand-in node of ../shared/tools nothing runs in the pods. Workspaces live in a temporary SO_HOME and
are removed with `so down` at the end.
"""
import concurrent.futures, os, shutil, statistics, subprocess, sys, tempfile, time

import clusterargs

ROOT = clusterargs.ROOT


def main():
    args, kubeconfig, so = clusterargs.parse([("--count", int, 100)])
    work = tempfile.mkdtemp(prefix="so-ws-bench-")
    env = dict(os.environ, SO_ROOT=ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig, SO_TRACE_API="1")
    names = []

    def so_cmd(argv):
        start = time.perf_counter()
        p = subprocess.run([so] + argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if p.returncode != 0:
            raise SystemExit(f"so {' '.join(argv)} failed ({p.returncode}):\n{p.stderr}")
        return elapsed, sum(1 for line in p.stderr.splitlines() if line.startswith("api: "))

    def up(name, wait=False):
        names.append(name)
        return so_cmd(["up", "agent-workspace", "--name", name, "--config", "GIT_REPO=https://github.com/acme/web", "--progress", "plain"]
                      + ([] if wait else ["--no-wait"]))

    try:
        print(f"so: {so}")
        s, q = up("bench-ws-first")
        print(f"{'so up (API accepted all objects), first':<48} {s * 1000:8.0f} ms {q:5d} requests")
        s, q = up("bench-ws-ready", wait=True)
        print(f"{'so up, waiting until ready (stand-in node)':<48} {s * 1000:8.0f} ms {q:5d} requests")
        times = []
        for i in range(20):
            times.append(up(f"bench-ws-row-{i:02d}")[0])
        print(f"{'20 in a row: total':<48} {sum(times) * 1000:8.0f} ms  (median {statistics.median(times) * 1000:.0f} ms, "
              f"first {times[0] * 1000:.0f} ms, last {times[-1] * 1000:.0f} ms)")
        for i in range(len(names), args.count):
            up(f"bench-ws-{i:03d}")
        lists = [so_cmd(["deployment", "list", "-o", "json"]) for _ in range(5)]
        print(f"{f'deployment list over {len(names)} workspaces (median of 5)':<48} {statistics.median(l[0] for l in lists) * 1000:8.0f} ms "
              f"{lists[0][1]:5d} requests")
    finally:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            for n, f in [(n, pool.submit(subprocess.run, [so, "down", n], cwd=work, env=env, capture_output=True, text=True)) for n in names]:
                if f.result().returncode != 0:
                    print(f"cleanup of {n} failed: {f.result().stderr}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
