#!/usr/bin/env python3
"""A soak on a real node (issue 55): churn for a while with faults in between, then check what must hold.

Usage: python3 Benchmarks/soak.py --kubeconfig PATH [--so PATH] [--minutes 60] [--workers 3] [--seed N] [--only K,K]
       (or SO_BENCH_KUBECONFIG=PATH). Builds `so` in release mode unless --so is given. Prints figures, the operations
       that failed and the invariants broken; exits 1 when an invariant is. Everything it makes is named soak-* and removed at the end.

Churn, by --workers threads at once: `so up` of a deployment (Tests/SoCLITests/E2EStacks/routes: two busybox
servers, one with a volume), a start with a changed spec (its VALUE in config.env: the new value must answer),
stop, start again, `so down`; and workspaces of the agent-workspace stack (a light copy, as the e2e tests make
it: stacks/, compose/, config/ copied, the reservations cut; a bare repository served by `git daemon` on the
node's address): `so up --no-pool` (cold, with --idle), `so up` claiming from a warm pool of 2 made at the
start (`so pool create`), a task (`task --detach --no-push --command` then `tasks wait`), stop, start, a start
with a changed spec (GIT_USER_NAME in config.env: the agent's commits must be by the new name), an idle stop
(`so cleanup --idle`, run only when no workspace but the soak's would be stopped: it looks at the whole cluster),
a wake (`exec`), `so down`. Faults, one every 10-30 s, as faults are made by hand: `so` killed (SIGKILL) in the
middle of a start, the API server paused (SIGSTOP) for 2-6 s, a deployment's pods deleted. `so dashboard` runs
throughout; its memory and the largest `so` process of each minute are printed each minute.

At the end, every deployment still up is started once more (a start after a killed one takes over), then:
- every deployment up answers its last VALUE (what a user reaches: the web server's page, through `exec`), and
  `kubectl wait` sees its Deployments Available; every one taken down is gone;
- every workspace not taken down is reachable: one up or stopped is started once more, one idle-stopped is woken
  by `exec`; `git var GIT_AUTHOR_IDENT` in its checkout names its last name (who its commits are by) and its Deployments are Available;
- every task given has a final state (succeeded, failed or cancelled) in `tasks -o json`;
- the pool's record is listed with its members warm or starting, and none holds a claim Lease;
- no deployment's Lease is held and no record revision is left `applying`;
- no namespace, PersistentVolume or claim of the soak is orphaned (a namespace of soak-* not in the live set);
- the dashboard's own memory and the largest `so` of each minute are flat (`flat`: past the first quarter, the later
  half's peak at most a quarter and 4 MiB above the earlier half's).
"""
import json, os, random, re, shutil, signal, subprocess, sys, tempfile, threading, time
from collections import Counter

import clusterargs

ROOT = clusterargs.ROOT
STACK = os.path.join(ROOT, "Tests/SoCLITests/E2EStacks/routes")
NODE_ADDRESS = os.environ.get("SO_E2E_NODE_ADDRESS", "10.250.0.1")
POOL = "soakpool"  # its members are soakpool-xxxxxx
IDLE = 40  # seconds: the cold workspaces' --idle
FINAL = ("succeeded", "failed", "cancelled")
GIT_ENV = {"GIT_AUTHOR_NAME": "soak", "GIT_AUTHOR_EMAIL": "soak@so.invalid", "GIT_COMMITTER_NAME": "soak",
           "GIT_COMMITTER_EMAIL": "soak@so.invalid"}


def first_lines(out, n=2, last=3):
    """The first lines of an output and its last (where the error is), on one line."""
    lines = out.strip().splitlines()
    return " | ".join(lines if len(lines) <= n + last else lines[:n] + ["…"] + lines[-last:])


class Soak:
    def __init__(self, so, kubeconfig, seed):
        self.so_bin, self.kubeconfig = so, kubeconfig
        self.work = tempfile.mkdtemp(prefix="so-soak-")
        self.env = dict(os.environ, SO_ROOT=ROOT, SO_HOME=os.path.join(self.work, "home"), SO_KUBECONFIG=kubeconfig,
                        KUBECONFIG=kubeconfig)
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        # name -> {"kind": "routes"|"ws", "state": "up"|"stopped"|"idle", "value": str, "idle": bool,
        #          "used": time of the last verb, "tasks": [ids], "claimed": bool}
        self.live = {}
        self.gone = set()
        self.busy = set()
        self.ops, self.faults, self.failures = Counter(), Counter(), []
        self.times = {}  # workspace operation kind -> [seconds]
        self.last_fault = 0.0
        self.minute_rss = 0
        self.next = 0
        self.ws_stack = self.repo = self.daemon = None
        self.kinds = self.KINDS

    # Processes.
    def so(self, args, timeout=300):
        """Runs so; (exit code, output)."""
        p = subprocess.Popen([self.so_bin] + args, cwd=self.work, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            return 124, out
        return p.returncode, out

    def so_peak(self, args, timeout=420):
        """As `so`, with the process's peak RSS (KiB) kept for the minute's line (killed after `timeout` s)."""
        p = subprocess.Popen([self.so_bin] + args, cwd=self.work, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        with self.lock:
            self.minute_rss = max(self.minute_rss, usage.ru_maxrss)
        return p.returncode, out

    def timed(self, kind, args, timeout=420):
        """so_peak, its seconds kept under `kind` (the workspace figures)."""
        t = time.time()
        code, out = self.so_peak(args, timeout)
        with self.lock:
            self.times.setdefault(kind, []).append(time.time() - t)
        return code, out

    def kubectl(self, args):
        return subprocess.run(["kubectl"] + args, env=self.env, capture_output=True, text=True, timeout=120)

    def pick(self, state=None, kind="routes", where=lambda d: not d.get("idle")):
        with self.lock:
            names = [n for n, d in self.live.items() if n not in self.busy and d["kind"] == kind
                     and (state is None or d["state"] == state) and (where is None or where(d))]
            if not names:
                return None
            n = self.rng.choice(names)
            self.busy.add(n)
            return n

    def done(self, name):
        with self.lock:
            self.busy.discard(name)
            if name in self.live:
                self.live[name]["used"] = time.time()

    def fail(self, what, out=""):
        after = time.time() - self.last_fault < 20
        line = what + (": " + first_lines(out) if out else "") + (" (within 20 s of a fault)" if after else "")
        with self.lock:
            self.failures.append(line)
        print("an operation failed: " + line[:500], flush=True)

    def set_key(self, name, key, value):
        path = os.path.join(self.env["SO_HOME"], "deployments", name, "config.env")
        lines = [l for l in open(path).read().splitlines() if not l.startswith(key + "=")]
        open(path, "w").write("\n".join(lines + [f"{key}={value}"]) + "\n")

    def set_value(self, name, value):
        self.set_key(name, "GIT_USER_NAME" if self.live[name]["kind"] == "ws" else "VALUE", value)

    def answers(self, name, value):
        if self.live.get(name, {}).get("kind") == "ws":
            # Who a commit in the checkout is by, as git decides it (the environment, then the checkout's config).
            code, out = self.so(["deployment", "--name", name, "exec", "agent", "--", "sh", "-c",
                                 "cd /workspace && git var GIT_AUTHOR_IDENT | sed 's/ <.*//'"], 240)
            last = out.strip().splitlines()[-1] if out.strip() else ""
            return code == 0 and last == value, out.strip()[-200:]
        code, out = self.so(["deployment", "--name", name, "exec", "web", "--", "cat", "/www/index.html"], 60)
        return code == 0 and out.strip() == f"web {value}", out.strip()[-200:]

    # The workspaces' stack, repository and pool.
    def setup_workspaces(self):
        layout = os.path.join(self.work, "layout")
        for d in ["stacks", "compose", "config"]:
            shutil.copytree(os.path.join(ROOT, d), os.path.join(layout, d), symlinks=True)
        path = os.path.join(layout, "stacks/agent-workspace/stack.yml")
        text = open(path).read()
        for a, b in [('reservations: {cpus: "0.25", memory: 512M}', 'reservations: {cpus: "0.02", memory: 64M}'),
                     ('reservations: {cpus: "0.1", memory: 128M}', 'reservations: {cpus: "0.02", memory: 64M}')]:
            if a not in text:
                sys.exit(f"stack.yml no longer says {a}")
            text = text.replace(a, b)
        # Its own stack: pools are matched by their stack's files, and nobody else's pool is claimed from.
        open(path, "w").write(text + f"# the soak copy of {os.path.basename(self.work)}\n")
        self.ws_stack = os.path.dirname(path)
        seed, srv = os.path.join(self.work, "seed"), os.path.join(self.work, "srv")
        genv = dict(self.env, **GIT_ENV)
        subprocess.run(["git", "init", "-q", "-b", "trunk", seed], env=genv, check=True)
        open(os.path.join(seed, "README.md"), "w").write("hello\n")
        subprocess.run(["git", "-C", seed, "add", "-A"], env=genv, check=True)
        subprocess.run(["git", "-C", seed, "commit", "-q", "-m", "first"], env=genv, check=True)
        subprocess.run(["git", "clone", "-q", "--bare", seed, os.path.join(srv, "acme/app.git")], env=genv, check=True)
        head = subprocess.run(["git", "-C", seed, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        for _ in range(5):
            port = 19000 + self.rng.randrange(900)
            d = subprocess.Popen(["git", "daemon", f"--base-path={srv}", "--export-all", "--reuseaddr",
                                  f"--listen={NODE_ADDRESS}", f"--port={port}", srv],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            url = f"git://{NODE_ADDRESS}:{port}/acme/app.git"
            for _ in range(50):
                r = subprocess.run(["git", "ls-remote", url], capture_output=True, text=True)
                if r.returncode == 0 and r.stdout.startswith(head) and d.poll() is None:
                    self.daemon, self.repo = d, url
                    break
                if d.poll() is not None:
                    break
                time.sleep(0.1)
            if self.repo:
                break
            try:
                os.killpg(d.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not self.repo:
            sys.exit("git daemon did not serve on any of 5 ports")
        code, out = self.so(["pool", "create", self.ws_stack, "--name", POOL, "--size", "2", "--config",
                             f"GIT_REPO={self.repo}"])
        if code != 0:
            sys.exit(f"so pool create: {out}")
        with self.lock:
            self.ops["pool create"] += 1
        print(f"repository {self.repo}; pool {POOL} of 2 made", flush=True)

    def pool_listing(self):
        code, out = self.so(["pool", "list", "-o", "json"], 120)
        try:
            return next((p for p in json.loads(out) if p.get("name") == POOL), None), out
        except ValueError:
            return None, out

    # The churn.
    KINDS = ["up", "change", "change", "stop", "start", "down", "ws up", "ws claim", "ws task", "ws task", "ws change",
             "ws stop", "ws start", "ws idle stop", "ws wake", "ws down"]

    def op(self):
        kind = self.rng.choice(self.kinds)
        if kind.startswith("ws "):
            return self.ws_op(kind[3:])
        if kind == "up" or not any(d["kind"] == "routes" for d in self.live.values()):
            with self.lock:
                if sum(d["kind"] == "routes" for d in self.live.values()) >= 5:
                    kind = "change"
                else:
                    kind = "up"
                    self.next += 1
                    name = f"soak-{self.next}"
                    self.busy.add(name)
            if kind == "up":
                value = f"v{self.rng.randrange(1 << 30):x}"
                code, out = self.so_peak(["up", STACK, "--name", name, "--config", f"VALUE={value}", "--timeout", "180"])
                with self.lock:
                    self.ops["up"] += 1
                    self.live[name] = {"kind": "routes", "state": "up", "value": value}
                if code != 0:
                    self.fail(f"up {name}", out)
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
                self.fail(f"changed start {name}", out)
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
                self.fail(f"stop {name}", out)
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
                self.fail(f"start {name}", out)
            self.done(name)
        elif kind == "down":
            name = self.pick(where=None)
            if not name:
                return
            code, out = self.so_peak(["down", name, "--discard"])
            with self.lock:
                self.ops["down"] += 1
                del self.live[name]
                self.gone.add(name)
            if code != 0:
                self.fail(f"down {name}", out)
            self.done(name)

    def ws_op(self, kind):
        with self.lock:
            count = sum(d["kind"] == "ws" for d in self.live.values())
        if kind in ("up", "claim") or count == 0:
            if count >= 6:
                kind = "task"
            else:
                kind = kind if kind in ("up", "claim") else self.rng.choice(["up", "claim"])
                with self.lock:
                    self.next += 1
                    name = f"soakw-{self.next}"
                    self.busy.add(name)
                value = f"u{self.rng.randrange(1 << 30):x}"
                args = ["up", self.ws_stack, "--name", name, "--config", f"GIT_REPO={self.repo}", "--config",
                        f"GIT_USER_NAME={value}", "--timeout", "240"]
                # Half the cold ones have --idle: those are left alone by tasks, changes, stops and starts (their
                # use would keep them from going idle) and go through idle stops and wakes.
                idle = kind == "up" and self.rng.random() < 0.5
                if kind == "up":
                    args += ["--no-pool"] + (["--idle", f"{IDLE}s"] if idle else [])
                label = ("ws up cold, --idle" if idle else "ws up cold") if kind == "up" else "ws up claim"
                code, out = self.timed(label, args)
                claimed = f"claimed {POOL}-" in out
                if kind == "claim" and not claimed:
                    label = "ws up claim (started cold)"
                with self.lock:
                    self.ops[label] += 1
                    self.live[name] = {"kind": "ws", "state": "up", "value": value, "idle": idle,
                                       "used": time.time(), "tasks": [], "claimed": claimed}
                if code != 0:
                    self.fail(f"{label} {name}", out)
                else:
                    ok, seen = self.answers(name, value)
                    if not ok:
                        self.fail(f"{label} {name} with --config GIT_USER_NAME={value}: its agent says {seen!r}")
                        # Counted once, here: what it runs with is what the end's check expects until a changed start.
                        with self.lock:
                            self.live[name]["value"] = seen.splitlines()[-1] if seen else value
                self.done(name)
                return
        if kind == "task":
            name = self.pick("up", "ws")
            if not name:
                return
            n = len(self.live[name]["tasks"]) + 1
            code, out = self.timed("ws task (given)", ["deployment", "--name", name, "task", "--detach", "--no-push",
                                                       "--command", f"echo {n} >> soak.txt", f"soak task {n}"])
            tid = next((l.strip() for l in out.splitlines() if l.strip().isdigit()), "")
            if code != 0 or not tid.isdigit():
                with self.lock:
                    self.ops["ws task"] += 1
                self.fail(f"task in {name}", out)
                self.done(name)
                return
            with self.lock:
                self.live[name]["tasks"].append(tid)
            t0 = time.time()
            code, out = self.timed("ws tasks wait", ["deployment", "--name", name, "tasks", "wait", tid], 300)
            with self.lock:
                self.ops["ws task"] += 1
                self.times.setdefault("ws task (given to final)", []).append(time.time() - t0)
            if code != 0:
                self.fail(f"tasks wait {tid} in {name}", out)
            self.done(name)
        elif kind == "change":
            name = self.pick("up", "ws")
            if not name:
                return
            value = f"u{self.rng.randrange(1 << 30):x}"
            self.set_value(name, value)
            code, out = self.timed("ws start with a changed spec",
                                   ["deployment", "--name", name, "start", "--timeout", "240"])
            with self.lock:
                self.ops["ws start with a changed spec"] += 1
                self.live[name]["value"] = value
            if code != 0:
                self.fail(f"ws changed start {name}", out)
            else:
                ok, seen = self.answers(name, value)
                if not ok:
                    self.fail(f"{name} started with GIT_USER_NAME={value} says {seen!r}")
            self.done(name)
        elif kind == "stop":
            name = self.pick("up", "ws")
            if not name:
                return
            code, out = self.timed("ws stop", ["deployment", "--name", name, "stop"])
            with self.lock:
                self.ops["ws stop"] += 1
                self.live[name]["state"] = "stopped"
            if code != 0:
                self.fail(f"ws stop {name}", out)
            self.done(name)
        elif kind == "start":
            name = self.pick("stopped", "ws")
            if not name:
                return
            code, out = self.timed("ws start", ["deployment", "--name", name, "start", "--timeout", "240"])
            with self.lock:
                self.ops["ws start"] += 1
                self.live[name]["state"] = "up"
            if code != 0:
                self.fail(f"ws start {name}", out)
            self.done(name)
        elif kind == "idle stop":
            now = time.time()
            with self.lock:
                ready = [n for n, d in self.live.items() if d["kind"] == "ws" and d["idle"] and d["state"] == "up"
                         and n not in self.busy and now - d["used"] > IDLE + 5]
            if not ready:
                return
            # It looks at the whole cluster: run only when it would stop the soak's workspaces and nobody else's.
            code, out = self.so(["cleanup", "--idle", "--dry-run"], 120)
            would = re.findall(r"would stop (\S+) ", out)
            if code != 0 or any(not re.fullmatch(r"soakw-\d+", n) for n in would) or not would:
                with self.lock:
                    self.ops["ws idle stop skipped (another's workspace idle, or none)"] += 1
                return
            code, out = self.timed("ws idle stop (cleanup --idle)", ["cleanup", "--idle"], 300)
            stopped = re.findall(r"stopping (\S+) \(namespace", out)
            with self.lock:
                self.ops["ws idle stop (cleanup --idle)"] += 1
                self.ops["ws idle-stopped"] += len(stopped)
                for n in stopped:
                    if n in self.live:
                        self.live[n]["state"] = "idle"
            if code != 0:
                self.fail("cleanup --idle", out)
        elif kind == "wake":
            name = self.pick("idle", "ws", where=None)
            if not name:
                return
            code, out = self.timed("ws wake (exec)", ["deployment", "--name", name, "exec", "agent", "--", "true"], 300)
            with self.lock:
                self.ops["ws wake (exec)"] += 1
                self.live[name]["state"] = "up"
            if code != 0:
                self.fail(f"wake {name}", out)
            elif "was stopped for being idle" not in out:
                self.fail(f"wake {name} did not say it was idle", out)
            self.done(name)
        elif kind == "down":
            name = self.pick(None, "ws", where=None)
            if not name:
                return
            code, out = self.timed("ws down", ["down", name, "--discard"])
            with self.lock:
                self.ops["ws down"] += 1
                del self.live[name]
                self.gone.add(name)
            if code != 0:
                self.fail(f"ws down {name}", out)
            self.done(name)

    # The faults.
    def fault(self):
        self.last_fault = time.time()
        try:
            self.fault_once()
        finally:
            self.last_fault = time.time()

    def fault_once(self):
        kind = self.rng.choice(["kill", "pause", "pods"])
        if kind == "kill":
            name = self.pick("up", self.rng.choice(["routes", "ws"]), where=None)
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
            code, out = self.so_peak(["deployment", "--name", name, "start", "--timeout", "240"])
            if code != 0:
                self.fail(f"start after a killed start {name}", out)
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
            name = self.pick("up", self.rng.choice(["routes", "ws"]), where=None)
            if not name:
                return
            self.kubectl(["-n", self.namespace(name), "delete", "pods", "--all", "--wait=false"])
            with self.lock:
                self.faults["pods deleted"] += 1
            self.done(name)

    def namespace(self, name):
        """A deployment's namespace: its name, or a claimed member's (its spec.yml says)."""
        try:
            for line in open(os.path.join(self.env["SO_HOME"], "deployments", name, "spec.yml")):
                m = re.match(r"namespace:\s*(\S+)", line)
                if m:
                    return m.group(1).strip("'\"")
        except OSError:
            pass
        return name

    def check(self):
        """The invariants, after every deployment up was started once more; a list of what is broken."""
        broken = []
        for name, d in sorted(self.live.items()):
            if d["kind"] == "routes":
                if d["state"] != "up":
                    continue
                code, out = self.so(["deployment", "--name", name, "start", "--timeout", "180"])
                if code != 0:
                    broken.append(f"{name}: the last start failed: {out[-300:]}")
                    continue
                ok, seen = self.answers(name, d["value"])
                if not ok:
                    broken.append(f"{name} answers {seen!r}, not web {d['value']}")
            else:
                # Reachable: started once more (up or stopped), or woken by the exec (idle-stopped).
                if d["state"] != "idle":
                    code, out = self.so(["deployment", "--name", name, "start", "--timeout", "240"])
                    if code != 0:
                        broken.append(f"workspace {name}: the last start failed: {out[-300:]}")
                        continue
                code, out = self.so(["deployment", "--name", name, "exec", "agent", "--", "true"], 300)
                if code != 0:
                    broken.append(f"workspace {name} ({d['state']}) is not reachable: exec: {out[-300:]}")
                    continue
                ok, seen = self.answers(name, d["value"])
                if not ok:
                    broken.append(f"workspace {name}'s commits are by {seen!r}, not {d['value']}")
                code, out = self.so(["deployment", "--name", name, "tasks", "-o", "json"], 120)
                try:
                    tasks = {str(t.get("id")): t.get("state") for t in json.loads(out).get("tasks", [])}
                except (ValueError, AttributeError):
                    broken.append(f"workspace {name}: tasks -o json: {out[-200:]}")
                    tasks = {}
                for tid in d["tasks"]:
                    if tasks and tasks.get(tid) not in FINAL:
                        broken.append(f"workspace {name}: task {tid} is {tasks.get(tid)!r}, not a final state")
            r = self.kubectl(["-n", self.namespace(name), "wait", "deployment", "--all", "--for=condition=Available",
                              "--timeout=120s"])
            if r.returncode != 0:
                broken.append(f"{name}: kubectl wait: {r.stderr.strip()[-200:]}")
        now = time.time()
        for name in sorted(self.live):
            ns = self.namespace(name)
            leases = json.loads(self.kubectl(["-n", ns, "get", "leases", "-o", "json"]).stdout or '{"items":[]}')
            for l in leases["items"]:
                spec = l.get("spec", {})
                renew = spec.get("renewTime")
                if l["metadata"]["name"] == "so-pool-claim" or not spec.get("holderIdentity") or not renew:
                    continue
                t = time.mktime(time.strptime(renew[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
                if t + spec.get("leaseDurationSeconds", 0) > now:
                    broken.append(f"{name}: Lease {l['metadata']['name']} still held by {spec['holderIdentity']}")
            heads = json.loads(self.kubectl(["-n", ns, "get", "secrets", "-l", "so.dev/record-part=head", "-o",
                                             "json"]).stdout or '{"items":[]}')
            for h in heads["items"]:
                if h["metadata"].get("annotations", {}).get("so.dev/record-result") == "applying":
                    broken.append(f"{name}: record {h['metadata']['name']} left applying")
        # The pool: listed, filled again to its size (2 minutes at most), its members held by no claim.
        for _ in range(24):
            pool, out = self.pool_listing()
            if pool and pool.get("warm") == pool.get("size") and not pool.get("refilling"):
                break
            time.sleep(5)
        members = set()
        if not pool:
            broken.append(f"pool {POOL} is not listed: {out[-300:]}")
        else:
            print(f"pool {POOL} at the end: " + json.dumps(pool))
            if pool.get("warm") != pool.get("size"):
                broken.append(f"pool {POOL} has {pool.get('warm')} warm of {pool.get('size')} after 2 minutes "
                              f"(refilling: {pool.get('refilling')})")
        code, out = self.so(["deployment", "list", "-o", "json"], 120)
        try:
            members = {d.get("namespace") or d.get("name") for d in json.loads(out) if d.get("pool") == POOL}
        except (ValueError, AttributeError):
            broken.append(f"deployment list -o json: {out[-200:]}")
        if pool and len(members) != pool.get("warm"):
            broken.append(f"pool {POOL}: {len(members)} members listed ({', '.join(sorted(members))}), "
                          f"{pool.get('warm')} warm")
        for ns in sorted(members):
            leases = json.loads(self.kubectl(["-n", ns, "get", "leases", "-o", "json"]).stdout or '{"items":[]}')
            if any(l["metadata"]["name"] == "so-pool-claim" for l in leases["items"]):
                broken.append(f"pool member {ns} holds a claim Lease")
        live_ns = {self.namespace(n) for n in self.live} | members
        mine = r"soak-\d+|soakw-\d+|" + POOL + r"-[a-z0-9]+"
        namespaces = json.loads(self.kubectl(["get", "namespaces", "-o", "json"]).stdout)["items"]
        for ns in namespaces:
            n = ns["metadata"]["name"]
            if re.fullmatch(mine, n) and n not in live_ns and ns.get("status", {}).get("phase") != "Terminating":
                broken.append(f"namespace {n} is left although its deployment was taken down")
        pvs = json.loads(self.kubectl(["get", "pv", "-o", "json"]).stdout)["items"]
        for pv in pvs:
            ref = pv.get("spec", {}).get("claimRef", {}).get("namespace", "")
            if re.fullmatch(mine, ref) and ref not in live_ns and pv.get("status", {}).get("phase") == "Bound":
                broken.append(f"PersistentVolume {pv['metadata']['name']} is bound to {ref}, taken down")
        return broken

    def remove_all(self):
        """Everything the soak made: its deployments, workspaces and pool; then what is left of soak-*."""
        for name in list(self.live):
            self.so(["down", name, "--discard"])
        code, out = self.so(["pool", "remove", POOL])
        if code != 0:
            print(f"pool remove: {first_lines(out)}")
        if self.daemon:
            try:
                os.killpg(self.daemon.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        left = [ns["metadata"]["name"] for ns in
                json.loads(self.kubectl(["get", "namespaces", "-o", "json"]).stdout)["items"]
                if re.fullmatch(r"soak-\d+|soakw-\d+|" + POOL + r"-[a-z0-9]+", ns["metadata"]["name"])
                and ns.get("status", {}).get("phase") != "Terminating"]
        if left:
            print("namespaces left after the removal: " + ", ".join(left))


def rss_kib(pid, key="VmRSS:"):
    """A process's resident memory in KiB; key="RssAnon:" for its own memory alone: VmRSS also counts the pages of
    its binary read so far (a debug so is 140 MB: its RSS grows as code paths run for the first time, and shrinks
    when the kernel drops them), which is not memory the process holds."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(key):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    args, kubeconfig, so = clusterargs.parse([("--minutes", float, 60.0), ("--workers", int, 3), ("--seed", int, 1),
                                              ("--only", str, "")])
    s = Soak(so, kubeconfig, args.seed)
    if args.only:  # a few kinds of operation only (comma-separated, as KINDS names them): to try one part
        s.kinds = [k for k in s.KINDS if k in args.only.split(",")]
    print(f"so: {so}; {args.minutes:g} minutes, {args.workers} workers, seed {args.seed}; work in {s.work}", flush=True)
    s.setup_workspaces()
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
    began, dash_peak, minute, dash_seen, so_seen, dash_anon = time.time(), 0, 0, [], [], []
    try:
        while any(t.is_alive() for t in threads):
            time.sleep(1)
            if time.time() - began >= (minute + 1) * 60:
                minute += 1
                d = rss_kib(dash.pid)
                anon = rss_kib(dash.pid, "RssAnon:")
                dash_anon.append(anon)
                dash_peak = max(dash_peak, d)
                with s.lock:
                    so_peak, s.minute_rss = s.minute_rss, 0
                    ops, faults = sum(s.ops.values()), sum(s.faults.values())
                    routes = sum(x["kind"] == "routes" for x in s.live.values())
                    wss = sum(x["kind"] == "ws" for x in s.live.values())
                dash_seen.append(d)
                if so_peak:
                    so_seen.append(so_peak)
                print(f"minute {minute}: {ops} operations, {faults} faults; the dashboard {d / 1024:.1f} MiB "
                      f"({anon / 1024:.1f} MiB its own), "
                      f"the largest so {so_peak / 1024:.1f} MiB; {routes} deployments, {wss} workspaces", flush=True)
    except KeyboardInterrupt:
        stop.set()
        for t in threads:
            t.join()
    broken = s.check() + flat("the dashboard's own memory (RssAnon)", dash_anon) + flat("the largest so", so_seen)
    dash_rss = rss_kib(dash.pid)
    dash_anon_end = rss_kib(dash.pid, "RssAnon:")
    dash.terminate()
    print(f"minutes: {(time.time() - began) / 60:.1f} (churn {args.minutes:g})")
    print("operations: " + ", ".join(f"{k} {v}" for k, v in sorted(s.ops.items())) + f" ({sum(s.ops.values())})")
    print("faults injected: " + ", ".join(f"{k} {v}" for k, v in sorted(s.faults.items())) + f" ({sum(s.faults.values())})")
    print("workspace operations, seconds (median, max, count):")
    for k, v in sorted(s.times.items()):
        v = sorted(v)
        print(f"  {k}: {v[len(v) // 2]:.1f}, {v[-1]:.1f}, {len(v)}")
    if dash_seen:
        print(f"the dashboard: {min(dash_seen) / 1024:.1f}-{max(dash_seen) / 1024:.1f} MiB over the minutes, "
              f"{dash_rss / 1024:.1f} MiB at the end; its own memory (RssAnon, without its binary's pages) "
              f"{min(dash_anon) / 1024:.1f}-{max(dash_anon) / 1024:.1f} MiB, {dash_anon_end / 1024:.1f} MiB at the end")
    if so_seen:
        print(f"the largest so of each minute: {min(so_seen) / 1024:.1f}-{max(so_seen) / 1024:.1f} MiB")
    print(f"operations that failed: {len(s.failures)} "
          f"({sum('within 20 s of a fault' in f for f in s.failures)} within 20 s of a fault; the end state is judged below)")
    kinds = Counter(re.sub(r" soak\S*|\d+|=\S+|'[^']*'| \(within.*", "", f.split(":")[0]) for f in s.failures)
    if kinds:
        print("  by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    for f in s.failures[:40]:
        print("  " + f[:400])
    print(f"invariants broken: {len(broken)}")
    for b in broken:
        print("  " + b[:500])
    sys.stdout.flush()
    s.remove_all()
    shutil.rmtree(s.work, ignore_errors=True)
    sys.exit(1 if broken else 0)


def flat(what, samples):
    """Memory that is flat: past a warm-up (the first quarter of the minutes), the peak of the later half is at most
    a quarter above the earlier half's, plus 4 MiB (a heap's arenas settle in steps). Before two heap arenas, the
    dashboard's own memory went from 13 to 69 MiB in an hour, in steps (2026-11-28): that breaks it. Judged from 8
    minutes of samples on."""
    settled = samples[len(samples) // 4:]
    if len(settled) < 8:
        return []
    earlier, later = settled[:len(settled) // 2], settled[len(settled) // 2:]
    bound = max(earlier) * 1.25 + 4 * 1024
    if max(later) <= bound:
        return []
    return [f"{what} is not flat: its peak went from {max(earlier) / 1024:.1f} MiB to {max(later) / 1024:.1f} MiB "
            f"(more than a quarter and 4 MiB) between the two halves after the warm-up"]


if __name__ == "__main__":
    main()
