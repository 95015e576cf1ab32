#!/usr/bin/env python3
"""What `so deployment exec` costs beside `kubectl exec` into the same container, on a node that runs containers
(../shared/tools/real-node): one workspace made with `so up` (empty, no repository), then `so deployment --dir D exec
-- true`, `kubectl exec POD -c agent -- true` and `so version` (a verb's process start), taken in turns, each --runs
times after one warm-up. Prints the median, min and max of each and the difference; asserts nothing. The workspace
is removed at the end.

Usage: python3 Benchmarks/exec_bench.py --kubeconfig PATH [--so PATH] [--runs 9]
       (or SO_BENCH_KUBECONFIG=PATH). Builds `so` in release mode (.build-release) unless --so is given.
"""
import os, random, shutil, statistics, subprocess, sys, tempfile, time

import clusterargs


def main():
    args, kubeconfig, so = clusterargs.parse([("--runs", int, 9)])
    work = tempfile.mkdtemp(prefix="so-exec-bench-")
    env = dict(os.environ, SO_ROOT=clusterargs.ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig)
    name = f"bench-exec-{random.randrange(10**6)}"
    made = False
    try:
        p = subprocess.run([so, "up", "agent-workspace", "--name", name, "--no-pool", "--progress", "plain", "--timeout", "300"],
                           cwd=work, env=env, capture_output=True, text=True)
        made = True
        if p.returncode != 0:
            raise SystemExit(f"so up failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        d = os.path.join(work, "home", "deployments", name)
        pod = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "-n", name, "get", "pods", "-o",
                              "jsonpath={.items[?(@.status.phase=='Running')].metadata.name}"],
                             capture_output=True, text=True, check=True).stdout.split()
        agent = next(n for n in pod if "egress" not in n)
        ways = {
            "so deployment --dir D exec -- true": ([so, "deployment", "--dir", d, "exec", "--", "true"], env),
            "kubectl exec POD -c agent -- true": (["kubectl", "--kubeconfig", kubeconfig, "-n", name, "exec", agent, "-c", "agent", "--", "true"], None),
            "so version (a verb's process start)": ([so, "version"], env),
        }
        times = {k: [] for k in ways}
        for i in range(args.runs + 1):
            for label, (argv, e) in ways.items():
                t0 = time.perf_counter()
                r = subprocess.run(argv, cwd=work, env=e, capture_output=True, text=True)
                took = time.perf_counter() - t0
                if r.returncode != 0:
                    raise SystemExit(f"{label} failed ({r.returncode}): {r.stderr}")
                if i > 0:  # the first round warms caches (binary pages, the API server's connection)
                    times[label].append(took)
        print(f"so: {so}")
        for label, ts in times.items():
            print(f"{label + ', median of ' + str(len(ts)):<56} {statistics.median(ts) * 1000:6.0f} ms "
                  f"(min {min(ts) * 1000:.0f}, max {max(ts) * 1000:.0f})")
        so_ms = statistics.median(times["so deployment --dir D exec -- true"]) * 1000
        k_ms = statistics.median(times["kubectl exec POD -c agent -- true"]) * 1000
        print(f"{'so exec beyond kubectl exec':<56} {so_ms - k_ms:6.0f} ms ({so_ms / k_ms:.2f}x)")
    finally:
        if made:
            r = subprocess.run([so, "down", name, "--discard"], cwd=work, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"cleanup of {name} failed: {r.stderr}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
