#!/usr/bin/env python3
"""Render time for synthetic stacks of 100, 1,000 and 5,000 services (10 services per compose file).

Usage: python3 Benchmarks/render_bench.py [--so PATH] [--sizes 100,1000,5000] [--runs 3]
Prints figures (median wall time, peak memory); asserts nothing. Builds a release `so` unless --so is given.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_stack(base, services):
    pods = services // 10
    os.makedirs(os.path.join(base, "stacks", "synthetic"))
    os.makedirs(os.path.join(base, "compose"))
    os.makedirs(os.path.join(base, "config", "shared"))
    with open(os.path.join(base, "config", "shared", "app.conf"), "w") as f:
        f.write("listen 8080\n")
    with open(os.path.join(base, "stacks", "synthetic", "stack.yml"), "w") as f:
        f.write("name: synthetic\npods:\n" + "".join(f"  - p{p}\n" for p in range(pods)))
    for p in range(pods):
        lines = ["services:"]
        for s in range(10):
            n = f"s{p}x{s}"
            lines += [f"  {n}:", "    image: example.org/app:1.0",
                      "    environment:", f"      NAME: {n}", "      PEER: http://${PEER_HOST:-peer}:8080/",
                      "      DB_URL: postgres://u:p@" + f"s{p}x{(s + 1) % 10}" + ":5432/app",
                      "    ports:", f'      - "{8000 + s}"',
                      "    volumes:", f"      - data-{n}:/data", "      - ../config/shared/app.conf:/etc/app.conf:ro"]
        lines.append("volumes:")
        lines += [f"  data-s{p}x{s}:" for s in range(10)]
        with open(os.path.join(base, "compose", f"docker-compose-p{p}.yml"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return os.path.join(base, "stacks", "synthetic")


def release_so():
    """Builds the release binary (scratch path .build-release) and returns its path."""
    subprocess.run(["swift", "build", "-c", "release", "--scratch-path", ".build-release"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, ".build-release", "release", "so")


def timed(argv, cwd):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(argv)}\n{proc.stderr.read().decode()[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--so")
    ap.add_argument("--sizes", default="100,1000,5000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    so = args.so or release_so()
    print(f"{'services':>9} {'objects':>8} {'render median s':>16} {'per 1k services s':>18} {'peak MiB':>9}")
    for size in [int(s) for s in args.sizes.split(",")]:
        work = tempfile.mkdtemp(prefix=f"so-render-{size}-")
        try:
            stack = make_stack(os.path.join(work, "src"), size)
            subprocess.run([so, "--stack", stack, "deploy", "init", "--output", "spec.yml"], cwd=work, check=True, stdout=subprocess.DEVNULL)
            subprocess.run([so, "deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd=work, check=True, stdout=subprocess.DEVNULL)
            out = subprocess.run([so, "deployment", "--dir", "dep", "render"], cwd=work, check=True, capture_output=True, text=True).stdout
            objects = out.count("\napiVersion: ") + 1
            times, mems = [], []
            for _ in range(args.runs):
                t, m = timed([so, "deployment", "--dir", "dep", "render"], work)
                times.append(t)
                mems.append(m)
            med = statistics.median(times)
            print(f"{size:>9} {objects:>8} {med:>16.3f} {med / size * 1000:>18.3f} {max(mems):>9.1f}")
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
