#!/usr/bin/env python3
"""Where one claim's time goes, as agent_bench measures it (`so up`, then `so deployment --name NAME exec agent --
git -C /workspace rev-parse HEAD` until it answers): one claim in a checkout and one `so up --name` from a remote,
from a warm pool of the light stack, each of the two `so` runs traced (`SO_TRACE_API=1`: each API request, exec,
program and DNS lookup, and `phase:` lines of so's own steps, all with `at=+Nms` from the process's start). Prints
each run's lines with their start and end in ms from the start of the benchmark's clock, then the figures. Asserts
nothing.

Usage: python3 Benchmarks/claim_trace.py --kubeconfig PATH --so PATH [--claims 1] [--prefix trace] [--perf DIR]
       [--before PATH --rounds N]: no traces; N rounds, each a bare pod (`kubectl run` until `kubectl exec -- true`
       answers) then a claim of each kind by each build in turns (the order flips every round), from the same pool on
       the same node: medians per build of the claim until a shell answers, as a multiple of the round's bare pod,
       and of its hand-over exec. What a noisy machine can still compare.
"""
import json, os, random, re, shutil, statistics, subprocess, tempfile, time

import clusterargs
from agent_bench import GIT_ENV, light_stack, serve_repository

LINE = re.compile(r"^(\w+): (.*?) (?:(\d+)ms\b.*)?at=\+(\d+)ms$")


def timeline(label, start, end, trace):
    """The trace's timed lines, each with its start and end in ms from `start` (the benchmark's clock)."""
    print(f"-- {label}: {end * 1000:.0f} ms wall")
    for line in trace.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        kind, what, took, at = m.group(1), m.group(2), m.group(3), int(m.group(4))
        began = at - int(took) if took else at
        print(f"  {start * 1000 + began:7.0f} {start * 1000 + at:7.0f}  {kind}: {what}")


def exec_ms(trace):
    """The hand-over (an exec, or a port-forward to the member's listener) of a claim's trace, in ms (None: none)."""
    times = [int(m.group(1)) for m in re.finditer(r"^api: (?:EXEC|PORTFORWARD) \S+ (\d+)ms ", trace, re.M)]
    return max(times) if times else None


def turns(args, after, kubeconfig, P, work, env, stack, repo, checkout, names, wait_warm):
    """--before: claims by the two builds in turns, each round beside a bare pod of its own."""
    builds = {"before": os.path.abspath(args.before), "after": after}
    kubectl = ["kubectl", "--kubeconfig", kubeconfig, "-n", f"so-{P}-bare"]
    subprocess.run(kubectl[:3] + ["create", "namespace", f"so-{P}-bare"], capture_output=True)
    got = {(b, k): [] for b in builds for k in ("checkout", "remote")}
    try:
        for r in range(args.rounds):
            name = f"bare-{r}-{random.randrange(10**6)}"
            t0 = time.perf_counter()
            subprocess.run(kubectl + ["run", name, "--image=so-agent-workspace:local", "--image-pull-policy=Never", "--restart=Never",
                                      "--command", "--", "sleep", "infinity"], check=True, capture_output=True)
            while subprocess.run(kubectl + ["exec", name, "--", "true"], capture_output=True).returncode != 0:
                time.sleep(0.05)
            bare = time.perf_counter() - t0
            subprocess.run(kubectl + ["delete", "pod", name, "--wait=false", "--grace-period=0"], capture_output=True)
            order = list(builds) if r % 2 == 0 else list(reversed(builds))
            for kind in ("checkout", "remote"):
                for b in order:
                    wait_warm(3)
                    time.sleep(1)
                    name = f"{P}-{b[0]}{kind[0]}-{r}"
                    names.append(name)
                    argv = ["up", stack, "--name", name, "--progress", "plain", "--timeout", "300"]
                    if kind == "remote":
                        argv += ["--config", f"GIT_REPO={repo}"]
                    start = time.perf_counter()
                    # The CPU time `so up` used, all its threads (perf stat's task-clock): what a loaded machine's
                    # wall time hides.
                    cpu = os.path.join(work, "cpu.txt")
                    up = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "-o", cpu, builds[b]] + argv,
                                        cwd=checkout if kind == "checkout" else work, env=dict(env, SO_TRACE_API="1"),
                                        capture_output=True, text=True)
                    upped = time.perf_counter() - start
                    cpu_ms = next((float(l.split(",")[0]) for l in open(cpu) if "task-clock" in l), None)
                    while subprocess.run([builds[b], "deployment", "--name", name, "exec", "agent", "--", "git", "-C", "/workspace", "rev-parse", "HEAD"],
                                         cwd=work, env=env, capture_output=True).returncode != 0:
                        if time.perf_counter() - start > 120:
                            raise SystemExit(f"{name} never answered")
                        time.sleep(0.05)
                    shell = time.perf_counter() - start
                    claimed = "claimed" in up.stdout
                    got[(b, kind)].append((shell / bare, exec_ms(up.stderr), claimed, cpu_ms, upped))
                    print(f"round {r} bare {bare * 1000:.0f} ms, {b} {kind}: {shell * 1000:.0f} ms = {shell / bare:.2f}x "
                          f"(up {upped * 1000:.0f} ms, its CPU {cpu_ms:.0f} ms), exec {exec_ms(up.stderr)} ms"
                          f"{'' if claimed else ' (NOT claimed)'}", flush=True)
        for kind in ("checkout", "remote"):
            for b in builds:
                rs = [x for x in got[(b, kind)] if x[2]]
                if rs:
                    print(f"{b:6} claim {kind:8}: median {statistics.median(x[0] for x in rs):.2f}x a bare pod "
                          f"(min {min(x[0] for x in rs):.2f}, max {max(x[0] for x in rs):.2f}, {len(rs)} claims), "
                          f"up's CPU median {statistics.median(x[3] for x in rs):.0f} ms, "
                          f"hand-over exec median {statistics.median(x[1] for x in rs):.0f} ms")
    finally:
        subprocess.run(kubectl[:3] + ["delete", "namespace", f"so-{P}-bare", "--wait=false"], capture_output=True)


def main():
    args, kubeconfig, so = clusterargs.parse([("--claims", int, 1), ("--prefix", str, "trace"), ("--node", str, "10.250.0.1"),
                                              ("--perf", str, ""), ("--before", str, ""), ("--rounds", int, 0)])
    P = args.prefix
    work = tempfile.mkdtemp(prefix="so-claim-trace-")
    env = dict(os.environ, SO_ROOT=clusterargs.ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig)
    daemon, names = None, []
    try:
        stack = light_stack(work)
        daemon, repo = serve_repository(work, args.node)
        checkout = os.path.join(work, "checkout")
        subprocess.run(["git", "clone", "-q", repo, checkout], check=True, env=GIT_ENV)

        runs = [0]

        def so_run(argv, cwd=work, trace=False):
            # --perf DIR: each traced run under `perf record` (DIR/N.data), to see where so's own CPU time goes.
            wrap = []
            if trace and args.perf:
                os.makedirs(args.perf, exist_ok=True)
                runs[0] += 1
                wrap = ["perf", "record", "-q", "-F", "4000", "-g", "-o", os.path.join(args.perf, f"{runs[0]}.data")]
            return subprocess.run(wrap + [so] + argv, cwd=cwd, env=dict(env, SO_TRACE_API="1") if trace else env, capture_output=True, text=True)

        def warm():
            listed = json.loads(so_run(["pool", "list", "-o", "json"]).stdout or "[]")
            return sum(p["warm"] for p in listed if p["name"] == P)

        def wait_warm(n):
            t0 = time.perf_counter()
            while warm() < n and time.perf_counter() - t0 < 180:
                time.sleep(0.5)

        made = so_run(["pool", "create", stack, "--name", P, "--size", "3" if args.rounds else "2", "--config", f"GIT_ORIGIN={repo}"])
        if made.returncode != 0:
            raise SystemExit(made.stderr)
        if args.rounds:
            return turns(args, so, kubeconfig, P, work, env, stack, repo, checkout, names, wait_warm)
        for i in range(args.claims):
            for kind in ("checkout", "remote"):
                wait_warm(2)
                time.sleep(2)  # the refill's process ended (not timed)
                name = f"{P}-{kind}-{i}"
                names.append(name)
                start = time.perf_counter()
                if kind == "checkout":
                    up = so_run(["up", stack, "--name", name, "--progress", "plain", "--timeout", "300"], cwd=checkout, trace=True)
                else:
                    up = so_run(["up", stack, "--name", name, "--config", f"GIT_REPO={repo}", "--progress", "plain", "--timeout", "300"], trace=True)
                upped = time.perf_counter()
                execs = []
                while True:
                    t = time.perf_counter()
                    e = so_run(["deployment", "--name", name, "exec", "agent", "--", "git", "-C", "/workspace", "rev-parse", "HEAD"], trace=True)
                    execs.append((t, time.perf_counter(), e))
                    if e.returncode == 0 or time.perf_counter() - start > 120:
                        break
                    time.sleep(0.05)
                shell = time.perf_counter() - start
                print(f"== claim {kind} {name}: up {(upped - start) * 1000:.0f} ms ({'claimed' if 'claimed' in up.stdout else 'NOT claimed'}, "
                      f"exit {up.returncode}), until a shell answers {shell * 1000:.0f} ms, {len(execs)} exec run(s)")
                timeline("so up", 0, upped - start, up.stderr)
                for t, u, e in execs:
                    timeline(f"so deployment exec (exit {e.returncode})", t - start, u - t, e.stderr)
    finally:
        subprocess.run([so, "pool", "remove", P], cwd=work, env=env, capture_output=True)
        for n in names:
            subprocess.run([so, "down", n, "--discard"], cwd=work, env=env, capture_output=True)
        if daemon:
            daemon.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
