#!/usr/bin/env python3
"""The real Claude Code in a workspace on a node that runs containers (../shared/tools/real-node): so's share of a
task's wall time beside the same CLI run alone in the same pod against the same stand-in model API, and the agent
image's build time and size. Prints figures; asserts nothing.

Each run is a task (`so deployment task TEXT`, attached: queued, run by the workspace's worker, what the CLI left
committed, pushed to a git daemon on the node's address, the report read back) whose CLI writes one file through
its Write tool in two model turns, then the same CLI with the same two turns run alone in the same container
(`so deployment exec agent -- sh -c 'claude -p …'`, timed inside the pod with date +%s%N, so neither exec nor so
counts). The stand-in (Tests/SoCLITests/ModelStandIn/model_standin.py) answers at once, so the CLI's own time is its
start-up and its two requests: the floor the task is compared with. Printed: both medians, their ratio, so's share
((task - alone) / task) and where so's time goes by the task's record (1 s resolution: before the worker started
it, from the CLI's exit to the end: commit and push; and what the attached `task` spent around the record: giving
it and reading the report).

Usage: python3 Benchmarks/agent_cli_bench.py --kubeconfig PATH [--so PATH] [--runs 5] [--node 10.250.0.1]
       [--wheels DIR] [--build]
--build times `so build-containers --stack agent-workspace --agent claude --force-rebuild` with the kit's buildah
(DOCKER=…/buildah.sh; --wheels DIR: pip reads only DIR, as CI does) and loads the image into the node; without it
the image must be on the node already. The image's size is buildah's, beside the base image's.
"""
import secrets
import json, os, statistics, subprocess, sys, tempfile, time

import clusterargs
from agent_bench import light_stack, serve_repository

ROOT = clusterargs.ROOT
KIT = os.path.join(ROOT, "..", "shared", "tools", "real-node")
IMAGE = "so-agent-workspace-claude:local"
# Made anew each run (test material, never a real key): the stand-in checks that requests carry it.
KEY = "bench-" + secrets.token_hex(16)


def run(argv, env=None, check=True, **kw):
    p = subprocess.run(argv, env=env, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def size_mb(ref):
    """buildah's size of an image in MB (it says e.g. "698 MB")."""
    p = run([os.path.join(KIT, "buildah.sh"), "images", "--json", ref], check=False)
    try:
        number, unit = str(json.loads(p.stdout)[0]["size"]).split()
        return float(number) * {"kB": 1e-3, "MB": 1, "GB": 1e3}[unit]
    except (ValueError, IndexError, KeyError):
        return None


def build(so, wheels):
    buildah = os.path.join(KIT, "buildah.sh")
    run([buildah, "pull", "-q", "so-agent-workspace:local"])
    env = dict(os.environ, SO_ROOT=ROOT, DOCKER=buildah, BUILDAH_ISOLATION="chroot")
    if wheels:
        env.update(PIP_FIND_LINKS=wheels, PIP_NO_INDEX="1")
    t0 = time.monotonic()
    run([so, "build-containers", "--stack", "agent-workspace", "--agent", "claude", "--force-rebuild"], env=env)
    built = time.monotonic() - t0
    full = "docker.io/library/" + IMAGE
    run([buildah, "tag", "localhost/" + IMAGE, full])
    t0 = time.monotonic()
    run([os.path.join(KIT, "load-image.sh"), full])
    return built, time.monotonic() - t0


def main():
    args, kubeconfig, so = clusterargs.parse([("--runs", int, 5), ("--node", str, "10.250.0.1"), ("--wheels", str, ""),
                                              ("--build", int, 0)])
    if args.build:
        built, loaded = build(so, args.wheels)
        print(f"image build (so build-containers --agent claude, buildah, wheels local): {built:.1f} s; load into the node: {loaded:.1f} s")
    base, agent = size_mb("so-agent-workspace:local"), size_mb("localhost/" + IMAGE)
    if base and agent:
        print(f"image size: {agent:.0f} MB ({IMAGE}) = {base:.0f} MB base + {agent - base:.0f} MB Claude Code")
    work = tempfile.mkdtemp(prefix="so-agent-cli-bench-")
    env = dict(os.environ, SO_ROOT=ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig, ANTHROPIC_API_KEY=KEY)
    # Each run takes four turns: the task's two (a Write into the checkout, then text), then the lone CLI's two.
    turns = []
    for i in range(args.runs):
        for path in ("/workspace/bench.txt", "/tmp/alone/bench.txt"):
            turns.append({"tool_use": {"name": "Write", "input": {"file_path": path, "content": f"run {i}\n"}}})
            turns.append({"text": "done"})
    # And two for a last task run with SO_TRACE_API=1, whose requests say where so's time goes.
    turns.append({"tool_use": {"name": "Write", "input": {"file_path": "/workspace/bench.txt", "content": "traced\n"}}})
    turns.append({"text": "done"})
    json.dump({"turns": turns}, open(os.path.join(work, "script.json"), "w"))
    model = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests/SoCLITests/ModelStandIn/model_standin.py"), "--script",
                              os.path.join(work, "script.json"), "--log", os.path.join(work, "requests.jsonl"), "--host", args.node,
                              "--port-file", os.path.join(work, "port"), "--key", KEY], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    daemon = None
    ws = "bench-claude"
    try:
        for _ in range(200):
            if os.path.exists(os.path.join(work, "port")):
                break
            time.sleep(0.05)
        url = f"http://{args.node}:{open(os.path.join(work, 'port')).read()}"
        stack = light_stack(work)
        daemon, repo = serve_repository(work, args.node, push=True)
        up = run([so, "up", stack, "--name", ws, "--agent", "claude", "--config", f"GIT_REPO={repo}", "--config", f"ANTHROPIC_BASE_URL={url}",
                  "--timeout", "300", "--progress", "plain"], env=env, cwd=work)
        if IMAGE not in up.stdout:
            raise SystemExit(f"the workspace does not run {IMAGE}:\n{up.stdout}")
        dep = [so, "deployment", "--name", ws]
        lone = ("mkdir -p /tmp/alone && cd /tmp/alone && s=$(date +%s%N) && "
                "claude -p bench --permission-mode acceptEdits --output-format stream-json --verbose >/dev/null; "
                "e=$(date +%s%N); echo $(( (e - s) / 1000000 ))")
        tasks, alone, queued, finish, around = [], [], [], [], []
        for i in range(args.runs):
            t0 = time.monotonic()
            run(dep + ["task", f"bench {i}"], env=env, cwd=work)
            wall = time.monotonic() - t0
            tasks.append(wall)
            rec = json.loads(run(dep + ["tasks", "show", str(i + 1), "-o", "json"], env=env, cwd=work).stdout)
            notes = {}
            for p in rec.get("progress", []):
                if p.get("time"):
                    notes.setdefault(p["text"].split(" ")[0], p["time"])
            def at(s):
                return time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
            if rec.get("queued") and rec.get("started") and rec.get("ended"):
                queued.append(at(rec["started"]) - at(rec["queued"]))
                exited = next((p["time"] for p in rec.get("progress", []) if p["text"].startswith("the agent exited")), None)
                if exited:
                    finish.append(at(rec["ended"]) - at(exited))
                around.append(wall - (at(rec["ended"]) - at(rec["queued"])))
            ms = run(dep + ["exec", "agent", "--", "sh", "-c", lone], env=env, cwd=work).stdout.strip().splitlines()[-1]
            alone.append(int(ms) / 1000)
        t, a = statistics.median(tasks), statistics.median(alone)
        print(f"task (so deployment task, attached, pushed): median {t:.2f} s over {args.runs} runs (min {min(tasks):.2f}, max {max(tasks):.2f})")
        print(f"the CLI alone in the same pod: median {a:.2f} s (min {min(alone):.2f}, max {max(alone):.2f})")
        print(f"ratio task / CLI alone: {t / a:.2f}; so's share of the task's wall time: {(t - a) / t:.0%} ({t - a:.2f} s)")
        if queued:
            print(f"by the record (1 s resolution), medians: queued until the worker started it {statistics.median(queued):.1f} s; "
                  f"the CLI's exit to the end (commit, push) {statistics.median(finish):.1f} s; "
                  f"around the record (giving the task, following it, reading the report) {statistics.median(around):.1f} s")
        # The traced task: every API request and exec of the attached `task`, with its time.
        t0 = time.monotonic()
        p = run(dep + ["task", "traced"], env=dict(env, SO_TRACE_API="1"), cwd=work)
        wall = time.monotonic() - t0
        lines = [l for l in p.stderr.splitlines() if l.startswith("api: ")]
        execs = [l for l in lines if l.startswith("api: EXEC ")]
        def ms(l):
            return int(l.split("ms")[0].split()[-1])
        print(f"a traced task: {wall:.2f} s, {len(lines)} API requests, of them {len(execs)} execs "
              f"({sum(ms(l) for l in execs) / 1000:.2f} s in all; the one that runs the CLI and follows it is the longest, "
              f"{max(ms(l) for l in execs) / 1000:.2f} s), {sum(ms(l) for l in lines if l not in execs) / 1000:.2f} s in the others")
        for l in execs:
            print("  " + l)
    finally:
        run([so, "down", ws, "--discard"], env=env, check=False, cwd=work)
        model.terminate()
        if daemon:
            daemon.terminate()


if __name__ == "__main__":
    main()
