#!/usr/bin/env python3
"""`so` on a real kind cluster that it creates: wall time of each step. Prints figures; asserts nothing.

Usage: python3 Benchmarks/kind_bench.py --so PATH [--provider docker|podman] [--runs 2] [--node-image IMAGE]
Needs kind, the provider's engine with the node image and `docker.io/cerc/test-container:local` in its store,
and no kind cluster of that provider running (the benchmark creates and deletes its own). The example stack's
images are replaced by that local image (a host that cannot pull), so every start loads it into the node.

Steps, each run:
  first start    kind cluster created, the local image loaded, Deployment and Job waited for
  re-start       nothing changed: `unchanged`, no lock, no load
  rebuilt start  the web image rebuilt (a new ID): loaded and its Deployment rolled
  stop           objects, namespace and volumes deleted, then the kind cluster
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOCAL = "docker.io/cerc/test-container:local"
REBUILT = "so-bench/rebuilt:local"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--so", required=True)
    ap.add_argument("--provider", default="docker", choices=["docker", "podman"])
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--node-image", default="kindest/node:v1.36.2")
    args = ap.parse_args()
    so = os.path.abspath(args.so)
    env = dict(os.environ, SO_ROOT=ROOT)
    env.pop("SO_KUBECONFIG", None)
    if args.provider != "docker":
        env["KIND_EXPERIMENTAL_PROVIDER"] = args.provider
    engine = args.provider

    def run(argv, cwd):
        start = time.perf_counter()
        p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"benchmark command failed ({p.returncode}): {' '.join(argv)}\n{p.stdout}\n{p.stderr}")
        return time.perf_counter() - start, p.stdout

    clusters = subprocess.run(["kind", "get", "clusters"], env=env, capture_output=True, text=True).stdout.split()
    if clusters:
        sys.exit(f"a kind cluster of {engine} is running ({', '.join(clusters)}): the benchmark needs the host to itself")

    figures = {"first start": [], "re-start": [], "rebuilt start": [], "stop": []}
    for i in range(args.runs):
        work = tempfile.mkdtemp(prefix="so-kind-bench-")
        try:
            run([so, "--stack", "example", "deploy", "init", "--output", "spec.yml", "--kind-node-image", args.node_image], work)
            run([so, "deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], work)
            for rel in ["dep/compose/docker-compose-example.yml", "dep/compose-jobs/docker-compose-example-migrate.yml"]:
                path = os.path.join(work, rel)
                text = open(path).read().replace("image: nginx:1.27-alpine", f"image: {REBUILT}").replace("image: busybox:1.36", f"image: {LOCAL}")
                open(path, "w").write(text)
            os.makedirs(os.path.join(work, "image"))

            def build(tag):
                with open(os.path.join(work, "image", "Dockerfile"), "w") as f:
                    f.write(f"FROM {LOCAL}\nRUN echo {tag} > /build-id\n")
                run([engine, "build", "--tag", REBUILT, os.path.join(work, "image")], work)

            build(f"run{i}-first")
            start = [so, "deployment", "--dir", "dep", "start", "--perform-cluster-management", "--timeout", "600", "--progress", "plain"]
            figures["first start"].append(run(start, work)[0])
            seconds, out = run(start, work)
            if "unchanged" not in out:
                sys.exit(f"the re-start changed something:\n{out}")
            figures["re-start"].append(seconds)
            build(f"run{i}-second")
            seconds, out = run(start, work)
            if "loading image" not in out:
                sys.exit(f"the rebuilt image was not loaded:\n{out}")
            figures["rebuilt start"].append(seconds)
            stop = [so, "deployment", "--dir", "dep", "stop", "--delete-volumes", "--delete-namespace", "--perform-cluster-management"]
            figures["stop"].append(run(stop, work)[0])
        finally:
            subprocess.run([engine, "image", "rm", REBUILT], env=env, capture_output=True)
            shutil.rmtree(work, ignore_errors=True)

    print(f"so on kind ({engine}, node image {args.node_image}), {args.runs} runs; seconds per step")
    for name, values in figures.items():
        print(f"  {name:14s} median {statistics.median(values):6.1f}   runs " + ", ".join(f"{v:.1f}" for v in values))


if __name__ == "__main__":
    main()
