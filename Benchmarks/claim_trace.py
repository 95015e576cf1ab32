#!/usr/bin/env python3
"""Where one claim's time goes, as agent_bench measures it (`so up`, then `so deployment --name NAME exec agent --
git -C /workspace rev-parse HEAD` until it answers): one claim in a checkout and one `so up --name` from a remote,
from a warm pool of the light stack, each of the two `so` runs traced (`SO_TRACE_API=1`: each API request, exec,
program and DNS lookup, and `phase:` lines of so's own steps, all with `at=+Nms` from the process's start). Prints
each run's lines with their start and end in ms from the start of the benchmark's clock, then the figures. Asserts
nothing.

Usage: python3 Benchmarks/claim_trace.py --kubeconfig PATH --so PATH [--claims 1] [--prefix trace] [--perf DIR]
"""
import json, os, re, shutil, subprocess, tempfile, time

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


def main():
    args, kubeconfig, so = clusterargs.parse([("--claims", int, 1), ("--prefix", str, "trace"), ("--node", str, "10.250.0.1"),
                                              ("--perf", str, "")])
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

        made = so_run(["pool", "create", stack, "--name", P, "--size", "2", "--config", f"GIT_ORIGIN={repo}"])
        if made.returncode != 0:
            raise SystemExit(made.stderr)
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
