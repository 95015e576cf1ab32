#!/usr/bin/env python3
"""What the GitHub loop's replay check costs (issue 64, item 5). Prints figures; asserts nothing.

1. In the loop (`swiftc -O`, and `-Onone` as a debug `so` is): Sources/SoGitHub/GitHubTakenDigests.swift built alone,
   the taken digests full (GitHubTakenDigests.bound lines, ~0.9 MB): holding them once read (once per pass that has a
   pending entry not looked up yet), looking one delivery's digest up (`contains`, once per new entry: a digest
   kept and one not), and reading them all into a dictionary (`taken`, what a prune's `add` does); the median of
   --runs.
2. With --kubeconfig (or SO_E2E_KUBECONFIG): the API server's answer to the loop's read of a full ConfigMap of
   them (a list by label in a namespace of this script's own, made and deleted here), beside the same list of an
   empty one; `kubectl get --raw`, so each time includes kubectl's start; the median of --runs.

Usage: python3 Benchmarks/github_replay_bench.py [--runs 21] [--kubeconfig PATH] [--kubectl PATH]
"""
import argparse, os, secrets, statistics, subprocess, tempfile, time, json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MAIN = r"""
import Foundation
let runs = Int(CommandLine.arguments[1])!
var full = GitHubTakenDigests()
var digests: [String] = []
var g = SystemRandomNumberGenerator()
for _ in 0..<GitHubTakenDigests.bound {
    digests.append((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &g)) }.joined())
}
full.add(digests.enumerated().map { ($0.element, Date(timeIntervalSince1970: 1_700_000_000 + Double($0.offset))) })
let text = full.text
func median(_ f: () -> Void) -> Double {
    var times: [Double] = []
    for _ in 0..<runs {
        let t = DispatchTime.now().uptimeNanoseconds
        f()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e3)
    }
    return times.sorted()[runs / 2]
}
var read = GitHubTakenDigests()
// What a pass holds once the list is read: the lines (the API server's answer decoded).
let parse = median { read = GitHubTakenDigests(text: String(decoding: Array(text.utf8), as: UTF8.self)) }
precondition(read.taken.count == GitHubTakenDigests.bound)
// A delivery's look-up: a digest kept (anywhere in the list) and one that is not.
var found = 0
let lookups = 200
let lookup = median {
    for i in 0..<lookups where read.contains(digests[(i * 7919) % digests.count]) { found += 1 }
} / Double(lookups)
let absent = median {
    for i in 0..<lookups where read.contains(String(digests[i].reversed())) { found += 1 }
} / Double(lookups)
let all = median { _ = read.taken } / 1000
print("\(text.utf8.count) \(parse) \(lookup) \(absent) \(all)")
"""


def bench_swift(runs):
    out = {}
    with tempfile.TemporaryDirectory(prefix="so-replay-bench.") as work:
        main = os.path.join(work, "main.swift")
        with open(main, "w") as f:
            f.write(MAIN)
        for opt in ("-O", "-Onone"):
            exe = os.path.join(work, "bench" + opt)
            subprocess.run(["swiftc", opt, "-o", exe, main,
                            os.path.join(ROOT, "Sources/SoGitHub/GitHubTakenDigests.swift")], check=True)
            size, parse, lookup, absent, parsed = subprocess.run([exe, str(runs)], capture_output=True, text=True,
                                                                 check=True).stdout.split()
            out[opt] = (int(size), float(parse), float(lookup), float(absent), float(parsed))
    return out


def kubectl(k, kubeconfig, *args, data=None):
    return subprocess.run([k, "--kubeconfig", kubeconfig] + list(args), input=data, capture_output=True, text=True)


def bench_cluster(runs, kubeconfig, k):
    ns = "so-bench-replay-" + secrets.token_hex(3)
    lines = "".join(f"{secrets.token_hex(32)} {1_700_000_000 + i}\n" for i in range(12_000))
    kubectl(k, kubeconfig, "create", "namespace", ns)
    try:
        for name, text in (("full", lines), ("empty", "")):
            cm = {"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": name, "namespace": ns, "labels": {"so.dev/github-loop": name}},
                  "data": {"digests": text}}
            r = kubectl(k, kubeconfig, "create", "-f", "-", data=json.dumps(cm))
            if r.returncode != 0:
                raise SystemExit(r.stderr)
        out = {}
        for name in ("full", "empty"):
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                kubectl(k, kubeconfig, "get", "--raw",
                        f"/api/v1/namespaces/{ns}/configmaps?labelSelector=so.dev/github-loop%3D{name}")
                times.append((time.perf_counter() - t) * 1000)
            out[name] = statistics.median(times)
        return out, len(lines)
    finally:
        kubectl(k, kubeconfig, "delete", "namespace", ns, "--wait=false")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--kubeconfig", default=os.environ.get("SO_E2E_KUBECONFIG"))
    ap.add_argument("--kubectl", default="kubectl")
    a = ap.parse_args()
    for opt, (size, parse, lookup, absent, parsed) in bench_swift(a.runs).items():
        print(f"taken digests ({opt}), {size} bytes: held once read {parse:.0f} µs; a delivery's look-up "
              f"{lookup:.1f} µs (kept), {absent:.1f} µs (not kept); all read into a dictionary (a prune) "
              f"{parsed:.1f} ms")
    if a.kubeconfig:
        times, size = bench_cluster(a.runs, a.kubeconfig, a.kubectl)
        print(f"the API server's list of the full ConfigMap ({size} bytes of digests) {times['full']:.1f} ms, "
              f"of an empty one {times['empty']:.1f} ms (kubectl get --raw, its start included)")


if __name__ == "__main__":
    main()
