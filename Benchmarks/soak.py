#!/usr/bin/env python3
"""A soak on a real node (issue 55): churn for a while with faults in between, then check what must hold.

Usage: python3 Benchmarks/soak.py --kubeconfig PATH [--so PATH] [--minutes 60] [--workers 3] [--seed N]
       (or SO_BENCH_KUBECONFIG=PATH). Builds `so` in release mode unless --so is given. Prints figures, the operations
       that failed and the invariants broken; exits 1 when an invariant is. Everything it makes is named soak-* and removed at the end.

Churn, by --workers threads at once: `so up` of a deployment (Tests/SoCLITests/E2EStacks/routes: two busybox
servers, one with a volume), a start with a changed spec (its VALUE in config.env: the new value must answer),
stop, start again, `so down`. Faults, one every 10-30 s, as faults are made by hand: `so` killed (SIGKILL) in the
middle of a start, the API server paused (SIGSTOP) for 2-6 s, a deployment's pods deleted. `so dashboard` runs
throughout; its memory and the largest `so` process of each minute are printed each minute.

At the end, every deployment still up is started once more (a start after a killed one takes over), then:
- every deployment up answers its last VALUE (what a user reaches: the web server's page, through `exec`), and
  `kubectl wait` sees its Deployments Available; every one taken down is gone;
- no deployment's Lease is held and no record revision is left `applying`;
- no namespace, PersistentVolume or claim of the soak is orphaned (a namespace of soak-* not in the live set).
"""
import json, os, random, re, shutil, signal, subprocess, sys, tempfile, threading, time
from collections import Counter

import clusterargs

ROOT = clusterargs.ROOT
STACK = os.path.join(ROOT, "Tests/SoCLITests/E2EStacks/routes")


class Soak:
    def __init__(self, so, kubeconfig, seed):
        self.so_bin, self.kubeconfig = so, kubeconfig
        self.work = tempfile.mkdtemp(prefix="so-soak-")
        self.env = dict(os.environ, SO_ROOT=ROOT, SO_HOME=os.path.join(self.work, "home"), SO_KUBECONFIG=kubeconfig,
                        KUBECONFIG=kubeconfig)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.live = {}  # name -> {"state": "up"|"stopped", "value": str}
        self.gone = set()
        self.busy = set()
        self.ops, self.faults, self.failures = Counter(), Counter(), []
        self.minute_rss = 0
        self.next = 0

    def so(self, args, timeout=300):
        """Runs so; (exit code, output). Its peak memory counts toward the minute's."""
        p = subprocess.Popen([self.so_bin] + args, cwd=self.work, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            return 124, out
        return p.returncode, out

    def so_peak(self, args, timeout=300):
        """As `so`, with the process's peak RSS (KiB) kept for the minute's line."""
        p = subprocess.Popen([self.so_bin] + args, cwd=self.work, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        with self.lock:
            self.minute_rss = max(self.minute_rss, usage.ru_maxrss)
        return p.returncode, out

    def kubectl(self, args):
        return subprocess.run(["kubectl"] + args, env=self.env, capture_output=True, text=True, timeout=120)

    def pick(self, state=None):
        with self.lock:
            names = [n for n, d in self.live.items() if n not in self.busy and (state is None or d["state"] == state)]
            if not names:
                return None
            n = self.rng.choice(names)
            self.busy.add(n)
            return n

    def done(self, name):
        with self.lock:
            self.busy.discard(name)

    def fail(self, what):
        with self.lock:
            self.failures.append(what)
        print("an operation failed: " + what[:400], flush=True)

    def set_value(self, name, value):
        path = os.path.join(self.env["SO_HOME"], "deployments", name, "config.env")
        lines = [l for l in open(path).read().splitlines() if not l.startswith("VALUE=")]
        open(path, "w").write("\n".join(lines + [f"VALUE={value}"]) + "\n")

    def answers(self, name, value):
        code, out = self.so(["deployment", "--name", name, "exec", "web", "--", "cat", "/www/index.html"], 60)
        return code == 0 and out.strip() == f"web {value}", out.strip()[-200:]

    # The churn.
    def op(self):
        kind = self.rng.choice(["up", "change", "change", "stop", "start", "down"])
        if kind == "up" or not self.live:
            with self.lock:
                if len(self.live) >= 8:
                    kind = "change"
                else:
                    self.next += 1
                    name = f"soak-{self.next}"
                    self.busy.add(name)
            if kind == "up":
                value = f"v{self.rng.randrange(1 << 30):x}"
                code, out = self.so_peak(["up", STACK, "--name", name, "--config", f"VALUE={value}", "--timeout", "180"])
                with self.lock:
                    self.ops["up"] += 1
                    self.live[name] = {"state": "up", "value": value}
                if code != 0:
                    self.fail(f"up {name}: {out}")
                self.done(name)
                return
        if kind == "change":
            name = self.pick("up")
            if not name:
                return
            value = f"v{self.rng.randrange(1 << 30):x}"
            self.set_value(name, value)
            code, out = self.so_peak(["deployment", "--name", name, "start", "--timeout", "180"])
            with self.lock:
                self.ops["start with a changed spec"] += 1
                self.live[name]["value"] = value
            if code != 0:
                self.fail(f"changed start {name}: {out}")
            else:
                ok, seen = self.answers(name, value)
                if not ok:
                    self.fail(f"{name} started with VALUE={value} answers {seen!r}")
            self.done(name)
        elif kind == "stop":
            name = self.pick("up")
            if not name:
                return
            code, out = self.so_peak(["deployment", "--name", name, "stop"])
            with self.lock:
                self.ops["stop"] += 1
                self.live[name]["state"] = "stopped"
            if code != 0:
                self.fail(f"stop {name}: {out}")
            self.done(name)
        elif kind == "start":
            name = self.pick("stopped")
            if not name:
                return
            code, out = self.so_peak(["deployment", "--name", name, "start", "--timeout", "180"])
            with self.lock:
                self.ops["start"] += 1
                self.live[name]["state"] = "up"
            if code != 0:
                self.fail(f"start {name}: {out}")
            self.done(name)
        elif kind == "down":
            name = self.pick()
            if not name:
                return
            code, out = self.so_peak(["down", name, "--discard"])
            with self.lock:
                self.ops["down"] += 1
                del self.live[name]
                self.gone.add(name)
            if code != 0:
                self.fail(f"down {name}: {out}")
            self.done(name)

    # The faults.
    def fault(self):
        kind = self.rng.choice(["kill", "pause", "pods"])
        if kind == "kill":
            name = self.pick("up")
            if not name:
                return
            value = f"v{self.rng.randrange(1 << 30):x}"
            self.set_value(name, value)
            p = subprocess.Popen([self.so_bin, "deployment", "--name", name, "start"], cwd=self.work, env=self.env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(self.rng.uniform(0.2, 3))
            p.send_signal(signal.SIGKILL)
            p.wait()
            with self.lock:
                self.faults["so killed in a start"] += 1
                self.live[name]["value"] = value
            # The next start takes over what the killed one left (its Lease, its `applying` revision).
            code, out = self.so_peak(["deployment", "--name", name, "start", "--timeout", "180"])
            if code != 0:
                self.fail(f"start after a killed start {name}: {out}")
            self.done(name)
        elif kind == "pause":
            pid = subprocess.run(["pgrep", "-o", "-f", "kube-apiserver"], capture_output=True, text=True).stdout.strip()
            if not pid:
                return
            seconds = self.rng.uniform(2, 6)
            os.kill(int(pid), signal.SIGSTOP)
            time.sleep(seconds)
            os.kill(int(pid), signal.SIGCONT)
            with self.lock:
                self.faults["API server paused"] += 1
        else:
            name = self.pick("up")
            if not name:
                return
            self.kubectl(["-n", name, "delete", "pods", "--all", "--wait=false"])
            with self.lock:
                self.faults["pods deleted"] += 1
            self.done(name)

    def check(self):
        """The invariants, after every deployment up was started once more; a list of what is broken."""
        broken = []
        for name, d in sorted(self.live.items()):
            if d["state"] != "up":
                continue
            code, out = self.so(["deployment", "--name", name, "start", "--timeout", "180"])
            if code != 0:
                broken.append(f"{name}: the last start failed: {out[-300:]}")
                continue
            ok, seen = self.answers(name, d["value"])
            if not ok:
                broken.append(f"{name} answers {seen!r}, not web {d['value']}")
            r = self.kubectl(["-n", name, "wait", "deployment", "--all", "--for=condition=Available", "--timeout=60s"])
            if r.returncode != 0:
                broken.append(f"{name}: kubectl wait: {r.stderr.strip()[-200:]}")
        now = time.time()
        for name in sorted(self.live):
            leases = json.loads(self.kubectl(["-n", name, "get", "leases", "-o", "json"]).stdout or '{"items":[]}')
            for l in leases["items"]:
                spec = l.get("spec", {})
                renew = spec.get("renewTime")
                if l["metadata"]["name"] == "so-pool-claim" or not spec.get("holderIdentity") or not renew:
                    continue
                t = time.mktime(time.strptime(renew[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
                if t + spec.get("leaseDurationSeconds", 0) > now:
                    broken.append(f"{name}: Lease {l['metadata']['name']} still held by {spec['holderIdentity']}")
            heads = json.loads(self.kubectl(["-n", name, "get", "secrets", "-l", "so.dev/record-part=head", "-o",
                                             "json"]).stdout or '{"items":[]}')
            for h in heads["items"]:
                if h["metadata"].get("annotations", {}).get("so.dev/record-result") == "applying":
                    broken.append(f"{name}: record {h['metadata']['name']} left applying")
        namespaces = json.loads(self.kubectl(["get", "namespaces", "-o", "json"]).stdout)["items"]
        for ns in namespaces:
            n = ns["metadata"]["name"]
            if re.fullmatch(r"soak-\d+", n) and n not in self.live and ns.get("status", {}).get("phase") != "Terminating":
                broken.append(f"namespace {n} is left although its deployment was taken down")
        pvs = json.loads(self.kubectl(["get", "pv", "-o", "json"]).stdout)["items"]
        for pv in pvs:
            ref = pv.get("spec", {}).get("claimRef", {}).get("namespace", "")
            if re.fullmatch(r"soak-\d+", ref) and ref not in self.live and pv.get("status", {}).get("phase") == "Bound":
                broken.append(f"PersistentVolume {pv['metadata']['name']} is bound to {ref}, taken down")
        return broken


def rss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    args, kubeconfig, so = clusterargs.parse([("--minutes", float, 60.0), ("--workers", int, 3), ("--seed", int, 1)])
    s = Soak(so, kubeconfig, args.seed)
    print(f"so: {so}; {args.minutes:g} minutes, {args.workers} workers, seed {args.seed}; work in {s.work}", flush=True)
    dash = subprocess.Popen([so, "dashboard", "--port", "0", "--read-only"], cwd=s.work, env=s.env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time() + args.minutes * 60
    stop = threading.Event()

    def worker():
        while time.time() < end and not stop.is_set():
            try:
                s.op()
            except Exception as e:  # one op's surprise is a failure counted, not the end of the soak
                s.fail(f"op raised {e!r}")

    def faulter():
        while time.time() < end and not stop.is_set():
            time.sleep(s.rng.uniform(10, 30))
            if time.time() < end:
                try:
                    s.fault()
                except Exception as e:
                    s.fail(f"fault raised {e!r}")

    threads = [threading.Thread(target=worker) for _ in range(args.workers)] + [threading.Thread(target=faulter)]
    for t in threads:
        t.start()
    began, dash_peak, minute = time.time(), 0, 0
    try:
        while any(t.is_alive() for t in threads):
            time.sleep(1)
            if time.time() - began >= (minute + 1) * 60:
                minute += 1
                d = rss_kib(dash.pid)
                dash_peak = max(dash_peak, d)
                with s.lock:
                    so_peak, s.minute_rss = s.minute_rss, 0
                    ops, faults = sum(s.ops.values()), sum(s.faults.values())
                print(f"minute {minute}: {ops} operations, {faults} faults; the dashboard {d / 1024:.1f} MiB, "
                      f"the largest so {so_peak / 1024:.1f} MiB; {len(s.live)} deployments", flush=True)
    except KeyboardInterrupt:
        stop.set()
        for t in threads:
            t.join()
    broken = s.check()
    dash_rss = rss_kib(dash.pid)
    dash.terminate()
    print("operations: " + ", ".join(f"{k} {v}" for k, v in sorted(s.ops.items())) + f" ({sum(s.ops.values())})")
    print("faults injected: " + ", ".join(f"{k} {v}" for k, v in sorted(s.faults.items())) + f" ({sum(s.faults.values())})")
    print(f"the dashboard: {dash_rss / 1024:.1f} MiB at the end, {dash_peak / 1024:.1f} MiB at most")
    print(f"operations that failed: {len(s.failures)} (while a fault was under way, some may; the end state is judged below)")
    for f in s.failures[:20]:
        print("  " + f[:300])
    print(f"invariants broken: {len(broken)}")
    for b in broken:
        print("  " + b[:500])
    for name in list(s.live):
        s.so(["down", name, "--discard"])
    shutil.rmtree(s.work, ignore_errors=True)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
