#!/usr/bin/env python3
"""`deploy create` and `deployment render` of each stack of laconic's corpus (../shared/fixtures/laconic-stacks).

Usage: python3 Benchmarks/corpus_bench.py [--so PATH] [--runs 9]
Prints figures (median wall time per stack and verb, peak memory); asserts nothing. Builds a release `so` unless
--so is given. Each run creates a fresh deployment directory from one spec (`deploy init`, not timed), then renders it.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile

from render_bench import ROOT, release_so, timed

CORPUS = os.path.normpath(os.path.join(ROOT, "..", "shared", "fixtures", "laconic-stacks", "stacks"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--so")
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    if not os.path.isdir(CORPUS):
        sys.exit(f"{CORPUS} is absent: this benchmark needs laconic's corpus beside the checkout")
    so = args.so or release_so()
    print(f"{'stack':>20} {'create median s':>16} {'render median s':>16} {'peak MiB':>9}")
    for stack in sorted(os.listdir(CORPUS)):
        work = tempfile.mkdtemp(prefix=f"so-corpus-{stack}-")
        try:
            subprocess.run([so, "--stack", os.path.join(CORPUS, stack), "deploy", "init", "--output", "spec.yml"],
                           cwd=work, check=True, stdout=subprocess.DEVNULL)
            creates, renders, mems = [], [], []
            for i in range(args.runs):
                t, m = timed([so, "deploy", "create", "--spec-file", "spec.yml", "--deployment-dir", f"dep{i}"], work)
                creates.append(t)
                mems.append(m)
                t, m = timed([so, "deployment", "--dir", f"dep{i}", "render"], work)
                renders.append(t)
                mems.append(m)
            print(f"{stack:>20} {statistics.median(creates):>16.3f} {statistics.median(renders):>16.3f} {max(mems):>9.1f}")
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
