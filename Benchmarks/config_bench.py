#!/usr/bin/env python3
"""Render time against the number of config.env keys (2,500, 5,000, 10,000 and 20,000 keys).

Every config.env entry reaches every container's env, so rendering must stay linear in the number of
keys. The synthetic stack has one pod of 3 services; the spec's config: holds N keys, some of them
also set by the compose files' environment: (config wins) and one a $generate token.

Usage: python3 Benchmarks/config_bench.py [--so PATH] [--sizes 2500,5000,10000,20000] [--runs 3]
Prints figures (median wall time of `deployment render`, time per 1,000 keys, peak memory); asserts
nothing. Builds a release `so` unless --so is given (e.g. --so .build/debug/so for a debug build).
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from render_bench import release_so, timed  # the same timing and release build (Benchmarks/ is on sys.path when run as a script)


def make_stack(base):
    os.makedirs(os.path.join(base, "stacks", "keys"))
    os.makedirs(os.path.join(base, "compose"))
    with open(os.path.join(base, "stacks", "keys", "stack.yml"), "w") as f:
        f.write("name: keys\npods:\n  - app\n")
    lines = ["services:"]
    for s in range(3):
        lines += [f"  s{s}:", "    image: example.org/app:1.0", "    environment:",
                  "      KEY_1: from-compose", "      TOKEN: ${TOKEN}", f"      URL: http://s{(s + 1) % 3}:8080/",
                  "    ports:", f'      - "{8000 + s}"']
    with open(os.path.join(base, "compose", "docker-compose-app.yml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return os.path.join(base, "stacks", "keys")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--so")
    ap.add_argument("--sizes", default="2500,5000,10000,20000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    so = os.path.abspath(args.so or release_so())
    print(f"{'keys':>7} {'render median s':>16} {'per 1k keys s':>14} {'peak MiB':>9}")
    for size in [int(s) for s in args.sizes.split(",")]:
        work = tempfile.mkdtemp(prefix=f"so-keys-{size}-")
        try:
            stack = make_stack(os.path.join(work, "src"))
            subprocess.run([so, "--stack", stack, "deploy", "init", "--output", "spec.yml"], cwd=work, check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(work, "spec.yml")) as f:
                spec = [l for l in f.read().splitlines() if not l.startswith("config:")]
            spec.append("config:")
            spec.append("  TOKEN: $generate:hex:16$")
            spec += [f"  KEY_{i}: value-{i} with spaces and $$dollars" for i in range(1, size)]
            with open(os.path.join(work, "spec.yml"), "w") as f:
                f.write("\n".join(spec) + "\n")
            subprocess.run([so, "deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", "dep"], cwd=work, check=True, stdout=subprocess.DEVNULL)
            times, mems = [], []
            for _ in range(args.runs):
                t, m = timed([so, "deployment", "--dir", "dep", "render"], work)
                times.append(t)
                mems.append(m)
            med = statistics.median(times)
            print(f"{size:>7} {med:>16.3f} {med / size * 1000:>14.3f} {max(mems):>9.1f}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
