#!/usr/bin/env python3
"""`deployment start` of laconic's `test` fixture by laconic-so and by so, side by side, against the same
real API server. Prints figures; asserts nothing.

Usage: python3 Benchmarks/laconic_bench.py --kubeconfig PATH --laconic-so PATH [--so PATH] [--runs 9]

laconic-so is not part of this repository: install it yourself (e.g. a venv with
`pip install git+…/stack-orchestrator`, or from a checkout) and pass its `laconic-so` script.

Both tools run their k8s-kind path with their own defaults, as a user would type it: a stand-in `kind` on
PATH (written by this script into its work directory) lists one cluster named after the deployment's
cluster-id and prints a kubeconfig whose context is `kind-<cluster-id>`, pointing at the real API server;
a stand-in `docker` reports that no engine runs (no image is loaded by either tool). laconic-so does not
wait for readiness, so so runs with `--no-wait`; `so (wait)` adds so's default wait for comparison.

Each run makes a fresh deployment directory per tool (not timed), then times a first start (new
namespace), a re-start right after it (nothing changed; the cluster is still busy with the first start's
pods), and, after --settle seconds, a re-start of the running deployment (what a user re-running start
meets), then removes the namespace. Runs are interleaved so both
tools see the same machine. so's request count comes from SO_TRACE_API=1.
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

import clusterargs

ROOT = clusterargs.ROOT
FIXTURE = os.path.normpath(os.path.join(ROOT, "..", "shared", "fixtures", "laconic-stacks", "stacks", "test"))

FAKE_KIND = """#!/bin/sh
case "$1 $2" in
  "get clusters") echo "$FAKE_KIND_CLUSTER";;
  "get kubeconfig") cat "$FAKE_KIND_KUBECONFIG";;
  "get nodes") echo "$FAKE_KIND_CLUSTER-control-plane";;
  *) echo "stand-in kind: $* is not supported here" >&2; exit 1;;
esac
"""
FAKE_DOCKER = """#!/bin/sh
echo "Cannot connect to the Docker daemon (stand-in docker)" >&2; exit 1
"""


def kubeconfig_for(source, cluster, path):
    """A copy of `source` whose single context, cluster and user are named kind-<cluster>."""
    text = open(source).read()
    names = set()
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("current-context:"):
            names.add(s.split(":", 1)[1].strip())
    if len(names) != 1:
        sys.exit("the kubeconfig must have a current-context")
    old = names.pop()
    with open(path, "w") as f:
        f.write(text.replace(old, f"kind-{cluster}"))


class Tool:
    def __init__(self, name, argv0, work, kubeconfig, extra_start=()):
        self.name, self.argv0, self.work, self.kubeconfig = name, argv0, work, kubeconfig
        self.extra_start = list(extra_start)

    def env(self, cluster=None):
        e = dict(os.environ, PATH=os.path.join(self.work, "bin") + os.pathsep + os.environ["PATH"], SO_ROOT=ROOT, SO_TRACE_API="1")
        if cluster:
            kc = os.path.join(self.work, f"kind-{cluster}.kubeconfig")
            if not os.path.exists(kc):
                kubeconfig_for(self.kubeconfig, cluster, kc)
            e.update(KUBECONFIG=kc, FAKE_KIND_CLUSTER=cluster, FAKE_KIND_KUBECONFIG=kc)
        return e

    def run(self, args, cluster=None, tolerate=False):
        """(seconds, API requests); None when the command failed and `tolerate` (the sample is left out)."""
        start = time.perf_counter()
        p = subprocess.run([self.argv0] + args, cwd=self.work, env=self.env(cluster), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["?"])[-1]
            if tolerate:
                print(f"  {self.name} failed ({p.returncode}), sample left out: {last[:160]}")
                return None
            sys.exit(f"{self.name} failed ({p.returncode}): {' '.join(args)}\n{p.stdout}\n{p.stderr}")
        return elapsed, sum(1 for line in p.stderr.splitlines() if line.startswith("api: "))

    def create(self, name):
        spec = f"{name}.spec.yml"
        self.run(["--stack", FIXTURE, "deploy", "--deploy-to", "k8s-kind", "init", "--output", spec, "--config", "CERC_TEST_PARAM_1=PASSED"])
        self.run(["--stack", FIXTURE, "deploy", "create", "--spec-file", spec, "--deployment-dir", name])
        d = os.path.join(self.work, name)
        ids = dict(l.split(":", 1) for l in open(os.path.join(d, "deployment.yml")) if ":" in l)
        cluster, deployment = ids["cluster-id"].strip(), ids["deployment-id"].strip()
        # laconic-so names the namespace after the stack; so after the deployment id.
        namespace = "laconic-test" if self.name == "laconic-so" else deployment
        return d, cluster, namespace

    def start(self, d, cluster):
        # laconic-so's own failures (e.g. a 409 when it replaces a Deployment the controller just changed)
        # are counted and left out; a failure of so ends the benchmark.
        return self.run(["deployment", "--dir", d, "start"] + self.extra_start, cluster=cluster, tolerate=self.name == "laconic-so")


def delete_namespace(kubeconfig, ns):
    subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "delete", "ns", ns, "--wait=true", "--timeout=180s"], capture_output=True)


def main():
    args, kubeconfig, so = clusterargs.parse([("--laconic-so", str, None), ("--runs", int, 9), ("--settle", float, 5.0)])
    if not args.laconic_so:
        sys.exit("give --laconic-so PATH (laconic-so is installed outside this repository)")
    work = tempfile.mkdtemp(prefix="so-laconic-bench-")
    os.makedirs(os.path.join(work, "bin"))
    for name, text in (("kind", FAKE_KIND), ("docker", FAKE_DOCKER)):
        p = os.path.join(work, "bin", name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o755)
    tools = [Tool("laconic-so", os.path.abspath(args.laconic_so), work, kubeconfig),
             Tool("so --no-wait", so, work, kubeconfig, ["--no-wait", "--progress", "plain"]),
             Tool("so (wait)", so, work, kubeconfig, ["--progress", "plain", "--timeout", "120"])]
    cases = ("first", "again", "settled")
    results = {t.name: dict({c: [] for c in cases}, **{"req_" + c: [] for c in cases}, failed=0) for t in tools}
    server = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "--raw", "/version"], capture_output=True, text=True).stdout
    version = server.split('"gitVersion": "')[1].split('"')[0] if '"gitVersion": "' in server else "?"
    print(f"so: {so}\nlaconic-so: {args.laconic_so}\nAPI server: {version}\nruns: {args.runs}\n")
    created = []
    try:
        for i in range(args.runs):
            for t in tools:
                d, cluster, ns = t.create(f"{t.name.split()[0]}-{i}-{len(t.extra_start)}")
                created.append(ns)
                for case in cases:
                    if case == "settled":
                        time.sleep(args.settle)
                    got = t.start(d, cluster)
                    if got is None:
                        results[t.name]["failed"] += 1
                        continue
                    results[t.name][case].append(got[0])
                    results[t.name]["req_" + case].append(got[1])
                delete_namespace(kubeconfig, ns)
    finally:
        for ns in set(created):
            delete_namespace(kubeconfig, ns)
        shutil.rmtree(work, ignore_errors=True)

    def ms(xs):
        return f"{statistics.median(xs) * 1000:6.0f} ms (min {min(xs) * 1000:4.0f}, max {max(xs) * 1000:5.0f})"

    print(f"{'tool':<14} {'first start (median)':<34} {'re-start at once (median)':<34} {f're-start after {args.settle:g} s (median)':<34} requests")
    for t in tools:
        r = results[t.name]
        reqs = "/".join(str(int(statistics.median(r["req_" + c]))) for c in cases) if t.name.startswith("so") else "—"
        print(f"{t.name:<14} {ms(r['first']):<34} {ms(r['again']):<34} {ms(r['settled']):<34} {reqs}"
              + (f"  ({r['failed']} failed starts left out)" if r["failed"] else ""))
    print("\nall samples (ms), in run order:")
    for t in tools:
        r = results[t.name]
        for c in cases:
            print(f"  {t.name if c == 'first' else '':<14} {c + ':':<8} {' '.join(str(round(x * 1000)) for x in r[c])}")
    base = results["laconic-so"]
    fast = results["so --no-wait"]
    ratio = {c: statistics.median(base[c]) / statistics.median(fast[c]) for c in cases}
    print(f"\nlaconic-so / so --no-wait (medians): first start {ratio['first']:.1f}x, re-start at once {ratio['again']:.1f}x, "
          f"re-start after {args.settle:g} s {ratio['settled']:.1f}x")


if __name__ == "__main__":
    main()
