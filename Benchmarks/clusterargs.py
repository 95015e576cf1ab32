"""Shared by the benchmarks that need a real API server: the command line and the `so` binary."""
import argparse, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse(extra):
    """--kubeconfig (or SO_BENCH_KUBECONFIG), --so, plus `extra` (name, type, default) options.
    Returns (args, absolute kubeconfig, path of so), building `so` as `make install` does (release, the Swift
    runtime linked in: what users run) unless --so is given."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubeconfig", default=os.environ.get("SO_BENCH_KUBECONFIG"))
    ap.add_argument("--so", default=None)
    for name, kind, default in extra:
        if kind is bool:
            ap.add_argument(name, action="store_true")  # a flag
        else:
            ap.add_argument(name, type=kind, default=default)
    args = ap.parse_args()
    if not args.kubeconfig:
        sys.exit("give --kubeconfig or SO_BENCH_KUBECONFIG (a real API server; see the developers' guide)")
    if args.so:
        so = os.path.abspath(args.so)
    else:
        subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib", "--scratch-path", ".build-release"], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        so = os.path.join(ROOT, ".build-release", "release", "so")
    return args, os.path.abspath(args.kubeconfig), so
