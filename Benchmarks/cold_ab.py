#!/usr/bin/env python3
"""Cold `so up`s of two or more builds in turns, on a node that runs containers (../shared/tools/real-node): each round
runs every build (the order flips each round) once from a remote (`--config GIT_REPO=URL`) and once in a checkout
(carried in as a bundle), all with `--no-pool`, then removes the workspace. Prints each up's time until ready and until
a shell answers in /workspace, how many pods its wait nudged (`so.dev/kubelet-nudge`: a readiness probe's first run
the kubelet lost, or a pod left without its sandbox), and when its agent's Deployment went out (from SO_TRACE_API=1);
then the medians per build and kind. What one pair of agent_bench runs cannot show: a change of 50-100 ms beside the
node's own noise (a lost probe costs 300-600 ms). Asserts nothing.

Usage: python3 Benchmarks/cold_ab.py --kubeconfig PATH --builds SO_A,SO_B [--rounds 8] [--traces DIR]
The stack is agent_bench's light copy of agent-workspace; the repository is served by `git daemon` on the node's
address (--node).
"""
import os, random, re, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_bench
import clusterargs


def main():
    args, kubeconfig, _ = clusterargs.parse([("--builds", str, ""), ("--rounds", int, 8), ("--node", str, "10.250.0.1"),
                                             ("--traces", str, "")])
    builds = [os.path.abspath(b) for b in args.builds.split(",") if b]
    if not builds:
        sys.exit("give --builds SO_A,SO_B (the so binaries to compare)")
    work = tempfile.mkdtemp(prefix="so-cold-ab-")
    stack = agent_bench.light_stack(work)
    daemon, repo = agent_bench.serve_repository(work, args.node)
    checkout = os.path.join(work, "checkout")
    subprocess.run(["git", "clone", "-q", repo, checkout], check=True, env=agent_bench.GIT_ENV)
    env = dict(os.environ, SO_ROOT=clusterargs.ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig)
    results = {}

    def up(so, name, kind):
        time.sleep(random.uniform(0, 1))  # not in step with the node's provisioner's second
        argv = [so, "up", stack, "--name", name, "--progress", "plain", "--no-pool", "--timeout", "300"]
        if kind == "remote":
            argv += ["--config", f"GIT_REPO={repo}"]
        start = time.perf_counter()
        p = subprocess.run(argv, cwd=checkout if kind == "checkout" else work, env=dict(env, SO_TRACE_API="1"),
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"so up {name} failed ({p.returncode}):\n{p.stderr[-3000:]}")
        ready = time.perf_counter() - start
        while subprocess.run([so, "deployment", "--name", name, "exec", "agent", "--", "git", "-C", "/workspace", "rev-parse", "HEAD"],
                             cwd=work, env=env, capture_output=True).returncode != 0:
            if time.perf_counter() - start > 300:
                raise SystemExit(f"{name} never answered exec")
            time.sleep(0.05)
        shell = time.perf_counter() - start
        agent = [int(m.group(1)) for m in re.finditer(
            r"^api: PATCH /apis/apps/v1/namespaces/[^/]+/deployments/\S+agent-workspace-deployment \d+ \d+ms at=\+(\d+)ms", p.stderr, re.M)]
        if args.traces:
            os.makedirs(args.traces, exist_ok=True)
            with open(os.path.join(args.traces, name + ".trace"), "w") as f:
                f.write(p.stderr)
        subprocess.run([so, "down", name, "--discard"], cwd=work, env=env, capture_output=True)
        return ready * 1000, shell * 1000, agent_bench.nudges(p.stderr), agent[0] if agent else None

    try:
        for r in range(args.rounds):
            for b in (builds if r % 2 == 0 else builds[::-1]):
                for kind in ("remote", "checkout"):
                    x = up(b, f"ab-{r}-{builds.index(b)}-{kind}", kind)
                    results.setdefault((b, kind), []).append(x)
                    print(f"round {r} build {builds.index(b)} {kind:8} ready {x[0]:5.0f} ms, shell {x[1]:5.0f} ms, "
                          f"nudged {x[2]}, agent's Deployment at {x[3]} ms; load {os.getloadavg()[0]:.1f}", flush=True)
        for (b, kind), xs in results.items():
            out = [x[3] for x in xs if x[3] is not None]
            print(f"build {builds.index(b)} ({b}) {kind:8}: shell median {statistics.median(x[1] for x in xs):.0f} ms "
                  f"(min {min(x[1] for x in xs):.0f}, max {max(x[1] for x in xs):.0f}), ready median "
                  f"{statistics.median(x[0] for x in xs):.0f} ms, nudged {sum(1 for x in xs if x[2])} of {len(xs)}, "
                  f"agent's Deployment at median {statistics.median(out) if out else float('nan'):.0f} ms")
    finally:
        daemon.terminate()


if __name__ == "__main__":
    main()
