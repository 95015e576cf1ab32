#!/usr/bin/env python3
"""`so deployment start` against a real API server: wall time and API request count. Prints figures;
asserts nothing.

Usage: python3 Benchmarks/cluster_bench.py --kubeconfig PATH [--so PATH] [--deployments 100] [--image IMAGE]
       [--services 50] [--runs 1]
       (or SO_BENCH_KUBECONFIG=PATH). Builds `so` in release mode (.build-release) unless --so is given.

Cases:
  test fixture   laconic's `test` stack (Deployment, Job, ConfigMaps, PVCs): first start, a re-start right after
                 it (both --runs times, medians), a re-start after a value changed
  up             `so up` of the test fixture (init, create, start), then the same `up` again
  50 services    a generated stack of 50 pods (one service each; --services, 0 to leave out; each asks for
                 50m of CPU: 2 cores hold 39): first start, then a re-start
  N in a row     N deployments of the example stack started one after another (first and last 10)
Each start waits for readiness (`--timeout 300`) except the one marked --no-wait (what laconic-so does); the API server needs a node that runs pods (or the
stand-in node of ../shared/tools). Requests are counted from SO_TRACE_API=1 (one line per HTTP attempt).
Everything the benchmark creates is deleted at the end (stop --delete-volumes --delete-namespace).
"""
import concurrent.futures, os, random, shutil, statistics, subprocess, sys, tempfile, time

import clusterargs

ROOT = clusterargs.ROOT
FIXTURES = os.path.normpath(os.path.join(ROOT, "..", "shared", "fixtures", "laconic-stacks"))


class Runner:
    def __init__(self, so, kubeconfig, work):
        self.so, self.kubeconfig, self.work = so, kubeconfig, work
        self.env = dict(os.environ, SO_ROOT=ROOT, SO_TRACE_API="1", SO_HOME=os.path.join(work, "so-home"))

    def so_cmd(self, args, cluster=False):
        """Runs so; returns (seconds, API requests)."""
        argv = [self.so] + args + (["--kubeconfig", self.kubeconfig] if cluster else [])
        start = time.perf_counter()
        p = subprocess.run(argv, cwd=self.work, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if p.returncode != 0:
            sys.exit(f"benchmark command failed ({p.returncode}): {' '.join(argv)}\n{p.stderr}")
        return elapsed, sum(1 for line in p.stderr.splitlines() if line.startswith("api: "))

    def deployment(self, stack, name, config=()):
        spec = f"{name}.spec.yml"
        args = ["--stack", stack, "deploy", "init", "--output", spec]
        for c in config:
            args += ["--config", c]
        self.so_cmd(args)
        self.so_cmd(["deploy", "create", "--spec-file", spec, "--deployment-dir", name])
        return name

    def start(self, d, wait=True):
        return self.so_cmd(["deployment", "--dir", d, "start", "--timeout", "300", "--progress", "plain"] + ([] if wait else ["--no-wait"]), cluster=True)

    def remove(self, d):
        return self.so_cmd(["deployment", "--dir", d, "stop", "--delete-volumes", "--delete-namespace"], cluster=True)


def fifty_service_stack(root, image, count=50):
    os.makedirs(os.path.join(root, "stacks", "fifty"))
    os.makedirs(os.path.join(root, "compose"))
    pods = [f"svc{i:02d}" for i in range(1, count + 1)]
    with open(os.path.join(root, "stacks", "fifty", "stack.yml"), "w") as f:
        f.write("version: \"1.0\"\nname: fifty\npods:\n" + "".join(f"  - {p}\n" for p in pods))
    for p in pods:
        with open(os.path.join(root, "compose", f"docker-compose-{p}.yml"), "w") as f:
            f.write(f"services:\n  {p}:\n    image: {image}\n    environment:\n      NAME: {p}\n    ports:\n      - \"80\"\n")
    return os.path.join(root, "stacks", "fifty")


def row(label, seconds, requests):
    print(f"{label:<44} {seconds * 1000:9.0f} ms {requests:6d} requests")


def main():
    # --image: the 50 services' image (the real node of ../shared/tools serves only its own images:
    # docker.io/cerc/test-container:local there).
    args, kubeconfig, so = clusterargs.parse(
        [("--deployments", int, 100), ("--image", str, "nginx:1.27-alpine"), ("--services", int, 50), ("--runs", int, 1)])
    work = tempfile.mkdtemp(prefix="so-cluster-bench-")
    r = Runner(so, kubeconfig, work)
    created, ups = [], []
    try:
        server = subprocess.run(["kubectl", "--kubeconfig", r.kubeconfig, "version", "-o", "json"], capture_output=True, text=True)
        print(f"so: {so}\nAPI server: " + (server.stdout.split('"gitVersion": "')[2].split('"')[0] if server.returncode == 0 and server.stdout.count("gitVersion") > 1 else "?"))
        print()
        # --runs N: the first start and the re-start right after it, N times (a deployment each), medians.
        firsts, restarts = [], []
        for i in range(args.runs):
            d = r.deployment(os.path.join(FIXTURES, "stacks", "test"), f"test-fixture-{i}", ["CERC_TEST_PARAM_1=PASSED"])
            created.append(d)
            # A pause of 0-1 s first: runs in a row would otherwise meet a volume provisioner that looks once a
            # second (the real node's) at nearly the same point of its second each time, and not be samples.
            time.sleep(random.uniform(0, 1))
            firsts.append(r.start(d))
            restarts.append(r.start(d))
        def median_row(label, runs):
            suffix = f" (median of {len(runs)})" if len(runs) > 1 else ""
            row(label + suffix, statistics.median(t for t, _ in runs), int(statistics.median(q for _, q in runs)))
            if len(runs) > 1:
                print(f"{'':<44} {', '.join(f'{t * 1000:.0f}' for t, _ in runs)} ms")
        median_row("test fixture: first start", firsts)
        median_row("test fixture: re-start (no changes)", restarts)
        with open(os.path.join(work, d, "config.env"), "a") as f:
            f.write("BENCH_CHANGED=1\n")
        row("test fixture: re-start (a value changed)", *r.start(d))
        # `up` of a deployment of its own (init, create, start in one command), then again (nothing changes).
        up = ["up", os.path.join(FIXTURES, "stacks", "test"), "--name", "bench-up", "--config", "CERC_TEST_PARAM_1=PASSED", "--timeout", "300"]
        ups.append("bench-up")
        row("test fixture: up", *r.so_cmd(up, cluster=True))
        row("test fixture: up again (no changes)", *r.so_cmd(up, cluster=True))
        d = r.deployment(os.path.join(FIXTURES, "stacks", "test"), "test-fixture-nowait", ["CERC_TEST_PARAM_1=PASSED"])
        created.append(d)
        row("test fixture: first start --no-wait", *r.start(d, wait=False))

        if args.services:
            n = args.services
            d = r.deployment(fifty_service_stack(os.path.join(work, "fifty-src"), args.image, n), "fifty")
            created.append(d)
            row(f"{n} services: first start", *r.start(d))
            row(f"{n} services: re-start (no changes)", *r.start(d))

        n = args.deployments
        times, reqs = [], []
        for i in range(n):
            d = r.deployment("example", f"ex{i:03d}")
            created.append(d)
            s, q = r.start(d)
            times.append(s)
            reqs.append(q)
        if n:
            k = min(10, n)
            row(f"{n} in a row: first {k} (median)", statistics.median(times[:k]), int(statistics.median(reqs[:k])))
            row(f"{n} in a row: last {k} (median)", statistics.median(times[-k:]), int(statistics.median(reqs[-k:])))
            print(f"{n} in a row: total {sum(times):.1f} s, slowest {max(times) * 1000:.0f} ms")
    finally:
        def remove(d):
            try:
                r.remove(d)
            except SystemExit as e:
                print(f"cleanup of {d} failed: {e}", file=sys.stderr)
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(remove, created))
        for name in ups:
            try:
                r.so_cmd(["down", name], cluster=True)
            except SystemExit as e:
                print(f"down of {name} failed: {e}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
