#!/usr/bin/env python3
"""Wall time and peak memory of `so` commands (release build). Prints figures; asserts nothing.

Usage: python3 Benchmarks/bench.py [--runs N] [--so PATH]
Builds `so` in release mode (scratch path .build-release) unless --so is given.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.normpath(os.path.join(ROOT, "..", "shared", "fixtures", "laconic-stacks"))


def run(argv, cwd):
    """Runs argv; returns (seconds, peak RSS in MiB) measured for that child alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"benchmark command failed ({code}): {' '.join(argv)}\n{proc.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--so", default=None)
    args = ap.parse_args()
    so = args.so
    if so is None:
        subprocess.run(["swift", "build", "-c", "release", "--scratch-path", ".build-release"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        so = os.path.join(ROOT, ".build-release", "release", "so")
    work = tempfile.mkdtemp(prefix="so-bench-")
    env_root = ["--root", ROOT]
    stacks = {"example": "example", "test (laconic fixture)": os.path.join(FIXTURES, "stacks", "test")}
    rows = []
    try:
        cases = [("so --help", lambda i: [so, "--help"])]
        for label, stack in stacks.items():
            spec = os.path.join(work, f"{label.split()[0]}-spec.yml")
            cases.append((f"deploy init   {label}", lambda i, stack=stack, spec=spec:
                          [so, *env_root, "--stack", stack, "deploy", "init", "--output", spec, "--force"]))
            cases.append((f"deploy create {label}", lambda i, spec=spec, label=label:
                          [so, *env_root, "deploy", "create", "--spec-file", spec, "--deployment-dir",
                           os.path.join(work, f"{label.split()[0]}-dep-{i}")]))
        for label, make in cases:
            run(make(-1), work)  # warm the page cache
            times, mems = [], []
            for i in range(args.runs):
                t, m = run(make(i), work)
                times.append(t * 1000)
                mems.append(m)
            rows.append((label, statistics.median(times), min(times), max(times), max(mems)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'command':36} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'peak MiB':>9}")
    for label, med, lo, hi, mem in rows:
        print(f"{label:36} {med:10.1f} {lo:8.1f} {hi:8.1f} {mem:9.1f}")
    print(f"runs per command: {args.runs}; binary: {so}")


if __name__ == "__main__":
    main()
