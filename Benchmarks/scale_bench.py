#!/usr/bin/env python3
"""A thousand workspaces on one cluster (issue 32): `so up --no-wait`, 20 at a time, and at 100, 300 and 1,000
workspaces the API requests per `up`, `so deployment list` (text and -o json) and the peak memory of `so`;
at the end `so cleanup --expired` of all of them. Prints figures; asserts nothing.

Usage: python3 Benchmarks/scale_bench.py --kubeconfig PATH [--so PATH] [--count 1000] [--parallel 20]
       [--compare OTHER_SO] [--drain 0]
       --compare: `list` by another build too, on the same cluster (before and after a change);
       --drain 0: do not wait for the namespace controller to remove the namespaces after cleanup;
       --cleanup 0: leave the workspaces in place (to measure more by hand).
       (or SO_BENCH_KUBECONFIG=PATH). Builds `so` in release mode (.build-release) unless --so is given.

Meant for the kit's control plane without a node (../shared/tools/real-node, `K8S_LOCAL_NODE=0`): pods stay
Pending, so what is measured is `so` and the API server, not the images. Each workspace is made with a ttl of
1 s, so `cleanup --expired` removes every one of them; they live in a temporary SO_HOME.
"""
import concurrent.futures, os, resource, statistics, subprocess, tempfile, time

import clusterargs

ROOT = clusterargs.ROOT
CHECKPOINTS = (100, 300, 1000)


def main():
    args, kubeconfig, so = clusterargs.parse(
        [("--count", int, 1000), ("--parallel", int, 20), ("--compare", str, ""), ("--drain", int, 1),
         ("--cleanup", int, 1)])
    work = tempfile.mkdtemp(prefix="so-scale-bench-")
    env = dict(os.environ, SO_ROOT=ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig, SO_TRACE_API="1")

    def run(argv, capture=False, binary=None):
        """(seconds, API requests, stdout) of one `so` run; exits the bench when it fails."""
        start = time.perf_counter()
        p = subprocess.run([binary or so] + argv, cwd=work, env=env, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if p.returncode != 0:
            raise SystemExit(f"so {' '.join(argv)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        return elapsed, sum(1 for line in p.stderr.splitlines() if line.startswith("api: ")), p.stdout or ""

    def up(i):
        return run(["up", "agent-workspace", "--name", f"scale-{i:04d}", "--config", "GIT_REPO=https://github.com/acme/web",
                    "--no-wait", "--ttl", "1s", "--progress", "plain"])

    def peak_mb():
        # The largest resident set of any `so` this bench has waited for (ru_maxrss is in KiB on Linux).
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    print(f"so: {so}")
    print(f"{'workspaces':>10} {'up: ms (median)':>16} {'requests/up':>12} {'list ms':>8} {'list -o json ms':>16} {'rows':>6} "
          f"{'peak MB':>8}")
    made, failed, batch = 0, [], []
    began = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as pool:
        for checkpoint in [c for c in CHECKPOINTS if c <= args.count] + ([args.count] if args.count not in CHECKPOINTS else []):
            futures = {pool.submit(up, i): i for i in range(made, checkpoint)}
            for f in concurrent.futures.as_completed(futures):
                try:
                    batch.append(f.result())
                except SystemExit as e:
                    failed.append(f"scale-{futures[f]:04d}: {str(e).splitlines()[0]}")
            made = checkpoint
            lists = [run(["deployment", "list"], capture=True)[0] for _ in range(3)]
            json_lists = [run(["deployment", "list", "-o", "json"], capture=True) for _ in range(3)]
            rows = json_lists[-1][2].count('"namespace"')
            compare = ""
            if args.compare:
                # The same list by another build (before a change), on the same cluster at the same moment.
                other = [run(["deployment", "list"], capture=True, binary=args.compare)[0] for _ in range(3)]
                compare = f" (--compare: {statistics.median(other) * 1000:.0f} ms)"
            print(f"{made:>10} {statistics.median(b[0] for b in batch) * 1000:>16.0f} "
                  f"{statistics.mean(b[1] for b in batch):>12.1f} {statistics.median(lists) * 1000:>8.0f} "
                  f"{statistics.median(j[0] for j in json_lists) * 1000:>16.0f} {rows:>6} {peak_mb():>8.0f}{compare}", flush=True)
            batch = []
    print(f"made {made} workspaces in {time.perf_counter() - began:.0f} s, {len(failed)} refused")
    for line in failed[:10]:
        print("  " + line)
    if not args.cleanup:
        print(f"left in place (--cleanup 0): so cleanup --expired with SO_HOME={env['SO_HOME']} removes them")
        return
    time.sleep(2)  # every ttl of 1 s has passed
    seconds, requests, _ = run(["cleanup", "--expired", "--no-wait"])
    print(f"so cleanup --expired --no-wait of {made}: {seconds:.1f} s, {requests} requests (every namespace deleted)")
    start = time.perf_counter()
    while args.drain:
        p = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "namespaces", "-o", "name"], capture_output=True, text=True)
        left = sum(1 for line in p.stdout.splitlines() if line.startswith("namespace/scale-"))
        if left == 0 or time.perf_counter() - start > 1800:
            break
        time.sleep(2)
    if args.drain:
        print(f"until the cluster's namespace controller had removed them all: {seconds + time.perf_counter() - start:.0f} s "
              f"({left} left); peak MB of any so run: {peak_mb():.0f}")


if __name__ == "__main__":
    main()
