#!/usr/bin/env python3
"""The GitHub loop's latency on a node that runs containers (issue 52, item 7): from a delivery's arrival (the POST
to the receiver, `so dashboard --github-repo`) to its task running in a warm workspace (one the loop made already,
its first task ended), p50 and p99 over --count deliveries (default 100). Prints figures; asserts nothing.

Each delivery is a trusted `/so` comment on the issue, signed and sent by the stand-in GitHub
(Tests/SoCLITests/GitHubStandIn/standin.py, which also serves the REST calls the loop makes). The loop
(`so github loop --interval SECONDS`) runs the whole time. The task's command writes the time it starts (the node
is this machine: one clock) and commits; the next delivery is sent once the loop saw the task end (its thread idle),
so each one meets a warm, idle workspace. Beside it, the limit measured in the same run: a bare pod of the same
image (`kubectl run`, then `kubectl exec -- true` until it answers), as a multiple of it.

Usage: python3 Benchmarks/github_loop_bench.py --kubeconfig PATH [--so PATH] [--count 100] [--interval 0.2]
       [--runs 3] [--node 10.250.0.1]. Builds `so` in release mode (.build-release) unless --so is given.
The workspace, the inbox's entries and the loop's thread are removed at the end.
"""
import json, math, os, random, re, shutil, signal, statistics, subprocess, sys, tempfile, time, urllib.request, uuid

import clusterargs
from agent_bench import GIT_ENV, light_stack

ROOT = clusterargs.ROOT
STANDIN = os.path.join(ROOT, "Tests", "SoCLITests", "GitHubStandIn", "standin.py")
TOKEN = "bench-github-token-not-real"
# The task: the time it starts (this machine's clock: the node's), then a commit the loop pushes.
TASK = ('date +%s.%N >> "$(git rev-parse --absolute-git-dir)/so-bench-started"; printf "%s\\n" "$TASK" >> BENCH.md; '
        'git add BENCH.md; git commit -qm bench')


def serve_repository(work, node, path):
    """git daemon on the node's address, push allowed, serving srv/PATH.git (default branch trunk)."""
    seed, srv = os.path.join(work, "seed"), os.path.join(work, "srv")
    subprocess.run(["git", "init", "-q", "-b", "trunk", seed], check=True, env=GIT_ENV)
    open(os.path.join(seed, "README.md"), "w").write("hello\n")
    subprocess.run(["git", "-C", seed, "add", "-A"], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", seed, "commit", "-q", "-m", "first"], check=True, env=GIT_ENV)
    bare = os.path.join(srv, path + ".git")
    subprocess.run(["git", "clone", "-q", "--bare", seed, bare], check=True, env=GIT_ENV)
    for _ in range(5):
        port = 19000 + random.randrange(900)
        daemon = subprocess.Popen(["git", "daemon", f"--base-path={srv}", "--export-all", "--enable=receive-pack", "--reuseaddr",
                                   f"--listen={node}", f"--port={port}", srv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"git://{node}:{port}/{path}.git"
        for _ in range(50):
            if subprocess.run(["git", "ls-remote", url], capture_output=True).returncode == 0 and daemon.poll() is None:
                return daemon, url, bare
            time.sleep(0.1)
        stop_daemon(daemon)
    sys.exit("git daemon did not serve the repository on any of 5 ports")


def wait_file(path, pattern, seconds=120):
    """The first match of `pattern` in the file at `path` once it appears (a server's port or URL)."""
    end = time.time() + seconds
    while time.time() < end:
        if os.path.exists(path):
            m = re.search(pattern, open(path).read())
            if m:
                return m.group(1)
        time.sleep(0.1)
    said = open(path).read()[-3000:] if os.path.exists(path) else "(no file)"
    sys.exit(f"nothing like {pattern} in {path}:\n{said}")


def control(standin, what, body):
    req = urllib.request.Request(f"{standin}/_standin/{what}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def percentile(values, p):
    """The p-th percentile, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def stop_daemon(daemon):
    """git daemon serves from a child: both stopped."""
    subprocess.run(["pkill", "-KILL", "-P", str(daemon.pid)], capture_output=True)
    daemon.kill()


def main():
    # A SIGTERM (timeout, a CI's cancel) ends the run through its cleanup, as an exception does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    args, kubeconfig, so = clusterargs.parse([("--count", int, 100), ("--interval", float, 0.2), ("--runs", int, 3),
                                              ("--node", str, "10.250.0.1")])
    work = tempfile.mkdtemp(prefix="so-github-bench-")
    owner = "bench-gh-" + uuid.uuid4().hex[:6]
    repo = f"{owner}/app"
    env = dict(os.environ, SO_ROOT=ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig,
               GITHUB_TOKEN=TOKEN)
    kubectl = ["kubectl", "--kubeconfig", kubeconfig]
    procs, daemon, workspace = [], None, None
    bare_ns = f"so-bench-gh-bare-{uuid.uuid4().hex[:6]}"
    try:
        stack = light_stack(work)
        stack_file = os.path.join(stack, "stack.yml")
        text = open(stack_file).read()
        open(stack_file, "w").write(text.replace("agents:\n", "agents:\n  bench:\n    task: " + json.dumps(TASK) + "\n", 1))
        daemon, git_url, bare = serve_repository(work, args.node, repo)
        secret = os.path.join(work, "secret")
        open(secret, "w").write(uuid.uuid4().hex + "\n")
        open(os.path.join(work, "loop.yml"), "w").write(
            f"repositories: [{repo}]\nlabel: so\nstack: {stack}\nagent: bench\n"
            f"config:\n  - GIT_REPO={git_url}\n  - GIT_USER_NAME=bench\n  - GIT_USER_EMAIL=bench@so.invalid\n"
            f"budget:\n  tasks: {args.count + 10}\n")

        def start(argv, log):
            p = subprocess.Popen(argv, cwd=work, env=env, stdout=open(os.path.join(work, log), "w"), stderr=subprocess.STDOUT)
            procs.append(p)
            return p

        start([sys.executable, STANDIN, "--repo", repo, "--git-dir", bare, "--token", TOKEN, "--secret-file", secret,
               "--port-file", os.path.join(work, "standin-port"), "--log", os.path.join(work, "standin.jsonl")], "standin.log")
        standin = "http://127.0.0.1:" + wait_file(os.path.join(work, "standin-port"), r"^(\d+)$")
        env["GITHUB_API_URL"] = standin
        start([so, "dashboard", "--port", "0", "--read-only", "--github-secret-file", secret, "--github-repo", repo], "receiver.log")
        port = wait_file(os.path.join(work, "receiver.log"), r"http://[^:\s]+:(\d+)")
        control(standin, "hook", {"url": f"http://127.0.0.1:{port}/github/webhook"})
        start([so, "github", "loop", "--config", os.path.join(work, "loop.yml"), "--interval", str(args.interval)], "loop.log")

        label = control(standin, "label", {"title": "bench", "body": "the warm-up task", "label": "so"})
        issue = label["number"]
        if label["deliveries"][0]["status"] != 202:
            sys.exit(f"the label's delivery answered {label['deliveries'][0]['status']}:\n" + open(os.path.join(work, "receiver.log")).read()[-3000:])
        workspace = wait_file(os.path.join(work, "loop.log"), rf"start (gh-app-{issue}-[0-9a-f]{{6}})", 600)
        thread_cm = ["-n", "so-github", "get", "configmap", f"so.github.thread.{workspace}", "-o", "jsonpath={.data.thread}"]

        def thread():
            r = subprocess.run(kubectl + thread_cm, capture_output=True, text=True)
            return json.loads(r.stdout) if r.returncode == 0 and r.stdout else {}

        def idle(tasks, seconds=600):
            end = time.time() + seconds
            while time.time() < end:
                t = thread()
                if t.get("tasks") == tasks and not t.get("running", True):
                    return
                time.sleep(0.1)
            sys.exit(f"the loop did not see task {tasks} of {workspace} end")

        idle(1)
        # The limit: a bare pod of the workspace's image, from `kubectl run` until `kubectl exec -- true` answers.
        subprocess.run(kubectl + ["create", "namespace", bare_ns], capture_output=True)
        bares = []
        for i in range(args.runs):
            name = f"bare-{i}"
            t0 = time.perf_counter()
            subprocess.run(kubectl + ["-n", bare_ns, "run", name, "--image=so-agent-workspace:local", "--image-pull-policy=Never",
                                      "--restart=Never", "--command", "--", "sleep", "infinity"], check=True, capture_output=True)
            while subprocess.run(kubectl + ["-n", bare_ns, "exec", name, "--", "true"], capture_output=True).returncode != 0:
                time.sleep(0.05)
            bares.append(time.perf_counter() - t0)
            subprocess.run(kubectl + ["-n", bare_ns, "delete", "pod", name, "--wait=false", "--grace-period=0"], capture_output=True)
        bare_pod = statistics.median(bares)

        sent, answered = [], []
        for i in range(args.count):
            d = control(standin, "comment", {"number": issue, "body": f"/so bench {i}", "association": "OWNER"})["deliveries"][0]
            if d["status"] != 202:
                sys.exit(f"delivery {i} answered {d['status']}")
            sent.append(d["sentAt"])
            answered.append(d["seconds"])
            idle(i + 2)
        r = subprocess.run([so, "deployment", "--name", workspace, "exec", "agent", "--", "sh", "-c",
                            'cat "$(git -C /workspace rev-parse --absolute-git-dir)/so-bench-started"'], cwd=work, env=env,
                           capture_output=True, text=True)
        started = [float(x) for x in r.stdout.split()][1:]  # the first is the warm-up task's
        if len(started) != len(sent):
            sys.exit(f"{len(started)} task starts for {len(sent)} deliveries:\n{r.stdout}{r.stderr}")
        lat = [s - t for s, t in zip(started, sent)]
        print(f"so: {so}; loop --interval {args.interval:g} s; {args.count} deliveries, one at a time, each to an idle warm workspace")
        print(f"{'a bare pod of the image until exec answers, median of ' + str(args.runs):<58} {bare_pod * 1000:8.0f} ms (the limit)")
        print(f"{'the receiver answered (202, the inbox written), p50 / p99':<58} {percentile(answered, 50) * 1000:8.0f} ms / "
              f"{percentile(answered, 99) * 1000:.0f} ms")
        for p in (50, 99):
            v = percentile(lat, p)
            print(f"{f'delivery arrived until its task runs, p{p}':<58} {v * 1000:8.0f} ms = {v / bare_pod:.2f}x a bare pod")
        print(f"{'  min / max':<58} {min(lat) * 1000:8.0f} ms / {max(lat) * 1000:.0f} ms")
    finally:
        for p in reversed(procs):
            p.kill()
        subprocess.run(kubectl + ["delete", "namespace", bare_ns, "--wait=false"], capture_output=True)
        if workspace:
            subprocess.run([so, "down", workspace, "--discard"], cwd=work, env=env, capture_output=True)
            subprocess.run(kubectl + ["-n", "so-github", "delete", "configmap", f"so.github.thread.{workspace}", "--ignore-not-found"],
                           capture_output=True)
        label = "so.dev/github-repo=" + repo.lower().replace("/", "_")
        subprocess.run(kubectl + ["-n", "so-github", "delete", "secrets", "-l", label], capture_output=True)
        if daemon:
            stop_daemon(daemon)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
