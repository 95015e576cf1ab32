#!/usr/bin/env python3
"""What a webhook delivery costs the receiver (issue 64, items 5 and 6). Prints figures; asserts nothing.

1. The signature check alone, release builds (`swiftc -O`; --debug: `-Onone`, as a debug `so` is), the same program over two implementations of
   `HMAC.validGitHubSignature`: SoBasics' hand-written SHA-256/HMAC as they were before issue 64 (read from git:
   the parent of the commit that removed Sources/SoBasics/DERReader.swift, or --before REV), and today's
   Sources/SoBasics/{SHA256,HMAC,Bytes}.swift over the system's libcrypto. A 1 MiB and a 25 MiB body, each checked --runs
   times; the median.

2. Through the receiver (`so dashboard --github-repo`, --so PATH, default .build/debug/so; several --so may be
   given, e.g. a build before and after): deliveries POSTed on loopback, one at a time, each timed to its answer:
   - signed 1 MiB deliveries of a repository the receiver does not take (its signature checked, its JSON read,
     answered 403: the whole of a delivery's cost short of the cluster's write);
   - unsigned traffic: 1 MiB and 24 MB bodies with a wrong signature (401: hashed, then compared), 24 MB with a
     malformed one (refused before any hash), and 8 of 24 MB at once; each time includes sending the body;
   and the receiver's resident memory after them. The receiver needs a kubeconfig to start (--kubeconfig, else
   SO_E2E_KUBECONFIG, else one that names an address nothing answers on: nothing here reaches the cluster).

Usage: python3 Benchmarks/github_webhook_bench.py [--so PATH ...] [--runs 20] [--before REV] [--no-check]
       [--no-receiver] [--debug] [--kubeconfig PATH]
"""
import argparse, concurrent.futures, hashlib, hmac, http.client, json, os, re, shutil, statistics, subprocess, sys
import tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "bench-webhook-secret-0123456789abcdef"
OPT = "-O"

MAIN = r"""
import Foundation
let args = CommandLine.arguments
let size = Int(args[1])!, runs = Int(args[2])!
var body = [UInt8](repeating: 0x61, count: size)
for i in stride(from: 0, to: size, by: 4096) { body[i] = UInt8(truncatingIfNeeded: i / 4096) }
let secret = Array("SECRET".utf8)
let header = "sha256=" + HMAC.sha256Hex(key: secret, message: body)
var times: [Double] = []
for _ in 0..<runs {
    let t = DispatchTime.now().uptimeNanoseconds
    precondition(HMAC.validGitHubSignature(header, body: body, secret: secret))
    times.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e6)
}
times.sort()
print(times[times.count / 2])
""".replace("SECRET", SECRET)


def git(*args):
    return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True, check=True).stdout


def before_revision(given):
    if given:
        return given
    # The commit that removed DERReader.swift replaced the hand-written SHA-256 and HMAC: its parent held them.
    removed = git("rev-list", "-1", "HEAD", "--", "Sources/SoBasics/DERReader.swift").strip()
    return removed + "^"


def build_check(work, name, sources, flags):
    d = os.path.join(work, name)
    os.makedirs(d)
    paths = []
    for fname, text in sources:
        p = os.path.join(d, fname)
        open(p, "w").write(text)
        paths.append(p)
    out = os.path.join(d, "check")
    subprocess.run(["swiftc", OPT, "-o", out] + flags + paths, check=True, capture_output=True)
    return out


def check_figures(runs, before):
    work = tempfile.mkdtemp(prefix="so-webhook-bench-")
    try:
        rev = before_revision(before)
        old = build_check(work, "before", [
            ("SHA256.swift", git("show", f"{rev}:Sources/SoBasics/SHA256.swift")),
            ("HMAC.swift", git("show", f"{rev}:Sources/SoBasics/HMAC.swift")),
            ("main.swift", MAIN)], [])
        now = [(f, open(os.path.join(ROOT, "Sources", "SoBasics", f)).read())
               for f in ("SHA256.swift", "HMAC.swift", "Bytes.swift")]
        new = build_check(work, "libcrypto", now + [("main.swift", MAIN)],
                          ["-I", os.path.join(ROOT, "SystemLibraries", "CLibcrypto"), "-lcrypto"])
        print(f"the signature check alone (swiftc {OPT}, median of {runs}; before = {git('rev-parse', '--short', rev).strip()}):")
        print(f"{'body':>8}  {'hand-written Swift':>20}  {'libcrypto':>10}")
        for size in (1 << 20, 25 << 20):
            a = float(subprocess.run([old, str(size), str(runs)], capture_output=True, text=True, check=True).stdout)
            b = float(subprocess.run([new, str(size), str(runs)], capture_output=True, text=True, check=True).stdout)
            print(f"{size >> 20:>5} MiB  {a:>17.2f} ms  {b:>7.2f} ms  ({a / b:.1f}x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def start_receiver(so, kubeconfig, work):
    secret = os.path.join(work, "secret")
    open(secret, "w").write(SECRET + "\n")
    log = open(os.path.join(work, "receiver.log"), "w+")
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    p = subprocess.Popen([so, "dashboard", "--port", "0", "--read-only", "--github-repo", "acme/app",
                          "--github-secret-file", secret], stdout=log, stderr=subprocess.STDOUT, env=env)
    end = time.time() + 60
    while time.time() < end:
        log.seek(0)
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", log.read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            log.seek(0)
            sys.exit(f"{so} dashboard ended: {log.read()[-400:]}")
        time.sleep(0.1)
    p.kill()
    sys.exit("the receiver did not start in 60 s")


def post(port, body, signature, delivery):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t = time.perf_counter()
    c.request("POST", "/github/webhook", body=body, headers={
        "Content-Type": "application/json", "X-GitHub-Event": "issues", "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status, (time.perf_counter() - t) * 1000


def delivery_body(size):
    head = {"action": "labeled", "repository": {"full_name": "other/app", "private": False},
            "sender": {"login": "octocat"}, "label": {"name": "so"},
            "issue": {"number": 1, "title": "t", "author_association": "OWNER"}, "padding": ""}
    base = len(json.dumps(head).encode())
    head["padding"] = "x" * (size - base)
    return json.dumps(head).encode()


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def receiver_figures(so, kubeconfig, runs):
    work = tempfile.mkdtemp(prefix="so-webhook-recv-")
    p, port = start_receiver(so, kubeconfig, work)
    try:
        mib = delivery_body(1 << 20)
        sig = "sha256=" + hmac.new(SECRET.encode(), mib, hashlib.sha256).hexdigest()
        signed = [post(port, mib, sig, f"s{i}") for i in range(runs)]
        assert all(s == 403 for s, _ in signed), {s for s, _ in signed}
        wrong = "sha256=" + "0" * 64
        unsigned = [post(port, mib, wrong, f"u{i}") for i in range(runs)]
        big = delivery_body(24_000_000)
        unsigned_big = [post(port, big, wrong, f"b{i}") for i in range(max(3, runs // 4))]
        malformed = [post(port, big, "sha256=not-hex", f"m{i}") for i in range(max(3, runs // 4))]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            flood = list(pool.map(lambda i: post(port, big, wrong, f"f{i}"), range(8)))
        assert all(s == 401 for s, _ in unsigned + unsigned_big + malformed + flood)
        med = lambda xs: statistics.median(ms for _, ms in xs)
        print(f"receiver {so}:")
        print(f"  signed 1 MiB, answered 403 (signature + JSON): median {med(signed):.1f} ms, "
              f"max {max(ms for _, ms in signed):.1f} ms over {runs}")
        print(f"  unsigned 1 MiB (401): median {med(unsigned):.1f} ms; unsigned 24 MB: median "
              f"{med(unsigned_big):.1f} ms (a malformed signature, refused unhashed: {med(malformed):.1f} ms); "
              f"8 x 24 MB at once: slowest {max(ms for _, ms in flood):.0f} ms")
        print(f"  resident memory after: {rss_kib(p.pid) / 1024:.0f} MiB")
    finally:
        p.terminate()
        p.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--so", action="append", help="a built so (repeatable); default .build/debug/so")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--before", help="the revision whose SHA256.swift and HMAC.swift are the 'before'")
    ap.add_argument("--kubeconfig", default=os.environ.get("SO_E2E_KUBECONFIG"))
    ap.add_argument("--no-check", action="store_true", help="skip the signature check's own figures")
    ap.add_argument("--no-receiver", action="store_true", help="the signature check's figures only")
    ap.add_argument("--debug", action="store_true", help="the check built as a debug build is (-Onone)")
    a = ap.parse_args()
    global OPT
    OPT = "-Onone" if a.debug else "-O"
    if not a.no_check:
        check_figures(a.runs, a.before)
    if a.no_receiver:
        return
    kubeconfig = a.kubeconfig
    tmp = None
    if not kubeconfig:
        tmp = tempfile.NamedTemporaryFile("w", suffix=".kubeconfig", delete=False)
        tmp.write("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                  "users: [{name: u, user: {token: bench}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
                  "current-context: x\n")
        tmp.close()
        kubeconfig = tmp.name
    try:
        for so in a.so or [os.path.join(ROOT, ".build", "debug", "so")]:
            receiver_figures(so, kubeconfig, a.runs)
    finally:
        if tmp:
            os.unlink(tmp.name)


if __name__ == "__main__":
    main()
