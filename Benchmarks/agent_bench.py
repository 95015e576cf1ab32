#!/usr/bin/env python3
"""Agent workspaces on a node that runs containers (../shared/tools/real-node): the time from `so up` to a
shell-ready workspace (the clone done, `exec` answering) with the image present, 20 workspaces made ready
4 at a time (first, twenty as `deploy init` + `deploy create` + `deployment start --no-wait`, 4 at a time: until
the API server took it all; removed before the others; beside `kubectl apply --server-side` of the same objects, as
many at a time, each rendered first and untimed), then a detached task in each of 10 of them at once
(`task --detach`: the time to queue one, the time until all ended, and how many ran at the same time, from their
reports). Prints figures; asserts nothing.

Every workspace figure is printed beside the limit measured in the same run: a bare pod of the same image
(`kubectl run` of the image the warm-up workspace runs — its agent's own when the node has it, else
so-agent-workspace:local — then `kubectl exec -- true` until it answers), as a multiple of it. A claim's floor is
printed too: the exec that answers (`so deployment exec -- true` into a claimed workspace, a process's start
included), what a claim as timed here cannot go under (its hand-over goes through a port-forward to the member, no
exec; until the member's clone is done).

Usage: python3 Benchmarks/agent_bench.py --kubeconfig PATH [--so PATH] [--runs 5] [--node 10.250.0.1]
       [--traces DIR] [--ci] (or SO_BENCH_KUBECONFIG=PATH). Builds `so` in release mode (.build-release) unless
       --so is given. --traces keeps each up's API trace (SO_TRACE_API=1) and its figures as DIR/NAME.trace
       (Benchmarks/trace_phases.py reads them: each request, what it waited on, the time per phase). --ci: the
       short run CI's e2e tier prints (3 of each, no twenty, no tasks), ending in one line of ratios.

Besides the bare pod, a bare pod with a fresh volume of the default class (a PersistentVolumeClaim and a pod that
mounts it, until `kubectl exec -- true` answers): what a cold `up`, whose workspace needs a new volume, is also
measured against. Claims are measured twice: `so up` in a checkout, and `so up --name` from a remote (no checkout).

The repository is served from the host (`git daemon` on the node's address; default branch `trunk`). The
stack is a copy of agent-workspace with lighter CPU/memory requests (the agent asks 250m CPU; 20 of them do
not fit a 2-core node) — everything else is the built-in stack. Workspaces are removed at the end.
"""
import concurrent.futures, datetime, json, os, random, re, shutil, statistics, subprocess, sys, tempfile, time

import clusterargs

ROOT = clusterargs.ROOT
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@so.invalid", GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@so.invalid")


def ts(text):
    """An RFC 3339 time of a task's report, in seconds."""
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def volume_wait(trace):
    """Seconds from a cold `so up`'s new volume named on the node until the workload that mounts it went out, read
    from its trace (SO_TRACE_API=1): the node's volume provisioner, and the watch that saw the claim bound. A claim
    made with the node named as the Lease was taken (ClaimBinding.ahead) counts from its create, and the workload
    then also waited for the policies' batch. None when the trace names no volume."""
    made = named = applied = None
    for line in trace.splitlines():
        at = re.search(r" at=\+(\d+)ms$", line)
        if not at:
            continue
        if re.match(r"api: POST /api/v1/namespaces/[^/]+/persistentvolumeclaims \d", line):
            made = int(at.group(1))  # a first start's claim, made with the node named as it took its Lease
        elif line.startswith("api: PATCH ") and "/persistentvolumeclaims/" in line:
            named = int(at.group(1))  # the last one: the apply is first, the node named on it after
        elif line.startswith("api: PATCH ") and "/deployments/" in line and (made or named) is not None:
            applied = int(at.group(1))  # the last one: what mounts no new volume goes out while it is made
    start = made if made is not None else named
    return (applied - start) / 1000 if start is not None and applied is not None else None


def nudges(trace):
    """How many pods an up's wait marked for the kubelet (`so.dev/kubelet-nudge`, a pod PATCH in its trace): a readiness
    probe's first run the kubelet missed, or a pod it left without its sandbox. Each costs up to a kubelet round (its
    relist, once a second): the node's."""
    return len(re.findall(r"^api: PATCH /api/v1/namespaces/[^/]+/pods/", trace, re.M))


def exec_time(trace):
    """Seconds of the longest exec or port-forward in an up's trace (SO_TRACE_API=1): a claim's hand-over (an exec, or a
    port-forward to the member's listener), which waits for the member's clone (the API server's and the node's); None
    when it made neither."""
    times = [int(m.group(1)) for m in re.finditer(r"^api: (?:EXEC|PORTFORWARD) \S+ (\d+)ms ", trace, re.M)]
    return max(times) / 1000 if times else None


def light_stack(work):
    """A copy of the built-in layout with the agent's requests cut to fit 20 on a small node."""
    for d in ("stacks", "compose", "config"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(work, "layout", d))
    path = os.path.join(work, "layout", "stacks", "agent-workspace", "stack.yml")
    text = open(path).read()
    text = text.replace('reservations: {cpus: "0.25", memory: 512M}', 'reservations: {cpus: "0.02", memory: 64M}')
    open(path, "w").write(text)
    return os.path.dirname(path)


def serve_repository(work, node, push=False):
    """A bare repository of one commit on trunk served by `git daemon` on the node's address (push allowed: `push`)."""
    seed, srv = os.path.join(work, "seed"), os.path.join(work, "srv")
    subprocess.run(["git", "init", "-q", "-b", "trunk", seed], check=True, env=GIT_ENV)
    open(os.path.join(seed, "README.md"), "w").write("hello\n")
    subprocess.run(["git", "-C", seed, "add", "-A"], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", seed, "commit", "-q", "-m", "first"], check=True, env=GIT_ENV)
    subprocess.run(["git", "clone", "-q", "--bare", seed, os.path.join(srv, "acme", "app.git")], check=True, env=GIT_ENV)
    port = 19000 + random.randrange(900)
    daemon = subprocess.Popen(["git", "daemon", f"--base-path={srv}", "--export-all", "--reuseaddr", f"--listen={node}", f"--port={port}"]
                              + (["--enable=receive-pack"] if push else []) + [srv],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"git://{node}:{port}/acme/app.git"
    for _ in range(50):
        if subprocess.run(["git", "ls-remote", url], capture_output=True).returncode == 0:
            return daemon, url
        time.sleep(0.1)
    daemon.terminate()
    sys.exit(f"git daemon did not answer on {url}")


def main():
    args, kubeconfig, so = clusterargs.parse([("--runs", int, 5), ("--node", str, "10.250.0.1"), ("--count", int, 20), ("--parallel", int, 4), ("--tasks", int, 10), ("--task-seconds", int, 5),
                                                   ("--pool", int, 3), ("--pooled-ups", int, 5), ("--gap", float, 3.0),
                                                   ("--traces", str, ""), ("--ci", bool, False), ("--twenty", bool, False),
                                                   ("--prefix", str, "bench")])
    # Names of this run's workspaces, pool and namespaces (a node shared by several engineers: one prefix each).
    P = args.prefix
    if args.ci:
        # CI's guard of the fast path (.ci/run): three of each, ratios printed, about two minutes.
        args.runs, args.pooled_ups, args.count, args.tasks, args.gap = 3, 3, 0, 0, 2.0
    if args.twenty:
        # Issue 66's item 3 alone: the bare pod, then the twenty at once (both steps), no single ups, no tasks.
        args.runs, args.tasks = 3, 0
    work = tempfile.mkdtemp(prefix="so-agent-bench-")
    env = dict(os.environ, SO_ROOT=ROOT, SO_HOME=os.path.join(work, "home"), SO_KUBECONFIG=kubeconfig)
    names = []
    made = []  # deployment directories of `deploy create` (stopped with their namespaces at the end)
    applied = []  # manifests `--twenty` applied with kubectl (deleted at the end, if a failure left them)
    daemon = None
    try:
        stack = light_stack(work)
        daemon, repo = serve_repository(work, args.node)

        def so_cmd(argv, check=True, trace=False):
            p = subprocess.run([so] + argv, cwd=work, env=dict(env, SO_TRACE_API="1") if trace else env, capture_output=True, text=True)
            if check and p.returncode != 0:
                raise SystemExit(f"so {' '.join(argv)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
            return p

        def keep_trace(name, trace, up, shell):
            """--traces DIR: each up's trace (SO_TRACE_API=1) kept as DIR/NAME.trace with its two figures last, to read
            where its time went."""
            if args.traces:
                os.makedirs(args.traces, exist_ok=True)
                with open(os.path.join(args.traces, name + ".trace"), "w") as f:
                    f.write(f"{trace}# up {up * 1000:.0f} ms, until a shell answers {shell * 1000:.0f} ms\n")

        def shell_answers(name, start, up, ready):
            """Execs until the workspace answers in /workspace; seconds from `start`. Keeps the up's trace (--traces)."""
            while so_cmd(["deployment", "--name", name, "exec", "agent", "--", "git", "-C", "/workspace", "rev-parse", "HEAD"], check=False).returncode != 0:
                if time.perf_counter() - start > 300:
                    raise SystemExit(f"{name} never answered exec")
                time.sleep(0.05)
            shell = time.perf_counter() - start
            keep_trace(name, up.stderr, ready, shell)
            return shell

        def up_to_shell(name):
            """so up, then exec until the workspace answers: seconds to ready and to shell-ready, and its volume's wait."""
            names.append(name)
            # A pause of 0-1 s first (not timed): ups in a row would otherwise meet the real node's volume
            # provisioner, which looks once a second, at nearly the same point of its second each time.
            time.sleep(random.uniform(0, 1))
            start = time.perf_counter()
            up = so_cmd(["up", stack, "--name", name, "--config", f"GIT_REPO={repo}", "--progress", "plain", "--timeout", "300"], trace=True)
            ready = time.perf_counter() - start
            return ready, shell_answers(name, start, up, ready), nudges(up.stderr), volume_wait(up.stderr)

        image = ["so-agent-workspace:local"]  # the workspaces' image, once the warm-up up has shown it
        kubectl = ["kubectl", "--kubeconfig", kubeconfig, "-n", f"so-{P}-bare"]
        subprocess.run(kubectl[:3] + ["create", "namespace", f"so-{P}-bare"], capture_output=True)

        def answered(name, start):
            """Seconds from `start` until `kubectl exec -- true` answers in the bare pod `name`, which then goes."""
            while subprocess.run(kubectl + ["exec", name, "--", "true"], capture_output=True).returncode != 0:
                if time.perf_counter() - start > 120:
                    raise SystemExit(f"bare pod {name} never answered exec")
                time.sleep(0.05)
            took = time.perf_counter() - start
            subprocess.run(kubectl + ["delete", "pod", name, "--wait=false", "--grace-period=0"], capture_output=True)
            return took

        def bare_pod(i):
            """The limit: a bare pod of the workspace's image, from `kubectl run` until `kubectl exec -- true` answers."""
            time.sleep(random.uniform(0, 1))
            name = f"bare-{i}-{random.randrange(10**6)}"
            start = time.perf_counter()
            subprocess.run(kubectl + ["run", name, f"--image={image[0]}", "--image-pull-policy=Never", "--restart=Never",
                                      "--command", "--", "sleep", "infinity"], check=True, capture_output=True)
            took = answered(name, start)
            return took

        def bare_pod_with_volume(i):
            """The limit of an up that needs a new volume: a claim of the default class and a bare pod of the image that
            mounts it, applied at once, until `kubectl exec -- true` answers."""
            time.sleep(random.uniform(0, 1))
            name = f"bare-vol-{i}-{random.randrange(10**6)}"
            manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                 "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                 "spec": {"restartPolicy": "Never", "containers": [
                     {"name": "c", "image": image[0], "imagePullPolicy": "Never", "command": ["sleep", "infinity"],
                      "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                          "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": name}}]}}]})
            start = time.perf_counter()
            subprocess.run(kubectl + ["apply", "-f", "-"], input=manifest, text=True, check=True, capture_output=True)
            took = answered(name, start)
            subprocess.run(kubectl + ["delete", "pvc", name, "--wait=false"], capture_output=True)
            return took

        print(f"so: {so}")
        up_to_shell(f"{P}-agent-warm")  # the image's first use on the node is not what is measured
        # The bare pods run the image the workspace runs (its agent's own when the node has it: AgentImage).
        ran = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "-n", f"{P}-agent-warm", "get", "pods", "-l",
                              "app.kubernetes.io/component=agent-workspace", "-o", "jsonpath={.items[0].spec.containers[0].image}"],
                             capture_output=True, text=True)
        if ran.returncode == 0 and ran.stdout.strip():
            image[0] = ran.stdout.strip()
        print(f"image: {image[0]} (the workspaces' and the bare pods')")
        bare = statistics.median(bare_pod(i) for i in range(args.runs))
        bare_volume = statistics.median(bare_pod_with_volume(i) for i in range(args.runs))
        ratios = {}

        def limit(seconds):
            return f"{seconds * 1000:8.0f} ms = {seconds / bare:.2f}x a bare pod"

        def node_share(what, rs, until_shell):
            """The node's share of cold ups (each a tuple ending in its nudges and its volume's wait): the volume's wait
            and what is left without it, and the ups the wait nudged the kubelet in."""
            waits = [r[-1] for r in rs if r[-1] is not None]
            if len(waits) == len(rs) and rs:
                print(f"{'  of which the volume (the node provisioner), median':<52} {statistics.median(waits) * 1000:8.0f} ms "
                      f"(min {min(waits) * 1000:.0f}, max {max(waits) * 1000:.0f}); {what} without it: "
                      f"{limit(statistics.median(until_shell(r) - r[-1] for r in rs)).strip()}")
            # The kubelet's: a readiness probe's first run that raced its status cache, seen by the wait and nudged.
            late = [until_shell(r) for r in rs if r[-2]]
            if rs:
                print(f"{'  kubelet nudged (a first probe missed, or no sandbox)':<52} {len(late):8d} of {len(rs)} ups"
                      + (f": median {statistics.median(late) * 1000:.0f} ms, the others {statistics.median(until_shell(r) for r in rs if not r[-2]) * 1000:.0f} ms"
                         if late and len(late) < len(rs) else ""))

        print(f"{'a bare pod of the image until exec answers, median of ' + str(args.runs):<52} {bare * 1000:8.0f} ms (the limit)")
        print(f"{'  the same with a fresh volume of the default class':<52} {bare_volume * 1000:8.0f} ms = {bare_volume / bare:.2f}x a bare pod")
        if not args.twenty:
            runs = [up_to_shell(f"{P}-agent-{i}") for i in range(args.runs)]
            print(f"{'so up until ready (clone done), median of ' + str(args.runs):<52} {limit(statistics.median(r[0] for r in runs))} "
                  f"(min {min(r[0] for r in runs) * 1000:.0f}, max {max(r[0] for r in runs) * 1000:.0f})")
            print(f"{'so up until a shell answers in /workspace, median':<52} {limit(statistics.median(r[1] for r in runs))} "
                  f"(min {min(r[1] for r in runs) * 1000:.0f}, max {max(r[1] for r in runs) * 1000:.0f})  goal: 2x")
            ratios["cold from a remote"] = statistics.median(r[1] for r in runs) / bare
            node_share("so up", runs, lambda r: r[1])

            # so up in a checkout (carried in as a bundle): from a warm pool, and cold (--no-pool), side by side.
            checkout = os.path.join(work, "checkout")
            subprocess.run(["git", "clone", "-q", repo, checkout], check=True, env=GIT_ENV)
            def up_in_checkout(name, extra):
                names.append(name)
                if "--no-pool" in extra:
                    # As for the cold ups from a remote: 0-1 s first (not timed), so that ups in a row do not meet the
                    # node's volume provisioner (a look once a second) at the same point of its second.
                    time.sleep(random.uniform(0, 1))
                start = time.perf_counter()
                p = subprocess.run([so, "up", stack, "--name", name, "--progress", "plain", "--timeout", "300"] + extra, cwd=checkout,
                                   env=dict(env, SO_TRACE_API="1"), capture_output=True, text=True)
                if p.returncode != 0:
                    raise SystemExit(f"so up {name} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
                shell = shell_answers(name, start, p, time.perf_counter() - start)
                return shell, "claimed" in p.stdout, exec_time(p.stderr), nudges(p.stderr), volume_wait(p.stderr)
            # Cold first, on a node as quiet as the bare pod's and the cold ups' from a remote: not while a pool's
            # members are made, or its removal ends them.
            cold = [up_in_checkout(f"{P}-cold-{i}", ["--no-pool"]) for i in range(args.pooled_ups)]
            pooled, remote_claims = [], []
            if args.pool > 0:
                so_cmd(["pool", "create", stack, "--name", P, "--size", str(args.pool), "--config", f"GIT_ORIGIN={repo}"])
                def warm():
                    listed = json.loads(so_cmd(["pool", "list", "-o", "json"]).stdout)
                    return sum(p["warm"] for p in listed if p["name"] == P)
                t0 = time.perf_counter()
                while warm() < args.pool and time.perf_counter() - t0 < 120:
                    time.sleep(0.5)
                for i in range(args.pooled_ups):
                    pooled.append(up_in_checkout(f"{P}-pooled-{i}", []))
                    time.sleep(args.gap)
                # Claims from a remote (`so up --name`, no checkout): the member clones the repository it is handed.
                t0 = time.perf_counter()
                while warm() < args.pool and time.perf_counter() - t0 < 120:
                    time.sleep(0.5)
                for i in range(args.pooled_ups):
                    name = f"{P}-claim-{i}"
                    names.append(name)
                    start = time.perf_counter()
                    up = so_cmd(["up", stack, "--name", name, "--config", f"GIT_REPO={repo}", "--progress", "plain", "--timeout", "300"], trace=True)
                    shell = shell_answers(name, start, up, time.perf_counter() - start)
                    remote_claims.append((shell, "claimed" in up.stdout, exec_time(up.stderr)))
                    time.sleep(args.gap)
                so_cmd(["pool", "remove", P])
            # A claim's floor as this benchmark times it: the exec that answers, timed as `so deployment exec -- true`
            # into the last claimed workspace (a process's start included; median of 5). The hand-over before it is a
            # port-forward to the member's listener (an exec where the member has none: then two execs are the floor).
            floor = None
            if remote_claims:
                execs = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    so_cmd(["deployment", "--name", f"{P}-claim-{args.pooled_ups - 1}", "exec", "agent", "--", "true"])
                    execs.append(time.perf_counter() - t0)
                floor = statistics.median(execs)
            for label, rs in ((f"so up in a checkout from a pool of {args.pool}, {args.gap:g} s apart", pooled),
                              (f"so up --name from a remote, from a pool of {args.pool}", remote_claims),
                              ("so up in a checkout, cold (--no-pool)", cold)):
                if rs:
                    print(f"{label + ', until a shell answers':<52} {limit(statistics.median(r[0] for r in rs))} "
                          f"(min {min(r[0] for r in rs) * 1000:.0f}, max {max(r[0] for r in rs) * 1000:.0f} = {max(r[0] for r in rs) / bare:.2f}x; "
                          f"{sum(r[1] for r in rs)} of {len(rs)} claimed)")
                    ratios[{id(pooled): "claim in a checkout", id(remote_claims): "claim from a remote", id(cold): "cold in a checkout"}[id(rs)]] = \
                        statistics.median(r[0] for r in rs) / bare
                    if rs is cold:
                        print(f"{'  against a bare pod with a fresh volume':<52} {statistics.median(r[0] for r in rs) / bare_volume:8.2f}x")
                        node_share("so up in a checkout", rs, lambda r: r[0])
                    elif all(r[2] is not None for r in rs):
                        print(f"{'  of which the hand-over into the member, median':<52} {statistics.median(r[2] for r in rs) * 1000:8.0f} ms "
                              f"(max {max(r[2] for r in rs) * 1000:.0f}; its exec or port-forward, the member's clone included)")

            if floor is not None:
                print(f"{'a claim floor: the exec that answers (so deployment exec -- true)':<52} {limit(floor)} "
                      f"(goal of a claim: 0.3x; the exec alone is {floor / bare:.2f}x)")
                ratios["claim floor (one exec)"] = floor / bare
            # One line for CI's log (and a note's before/after): each median as a multiple of the bare pod of this run.
            print(f"ratios (bare pod {bare * 1000:.0f} ms, with a fresh volume {bare_volume * 1000:.0f} ms): "
                  + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))
        if args.count < 1:
            return  # --count 0: the single ups only
        # The limit of the twenty: as many bare pods (and bare pods with a fresh volume, as each workspace has one),
        # the same number at a time, until each answers `kubectl exec -- true`: the node's pod start rate.
        for what, make in (("bare pods", bare_pod), ("bare pods with a fresh volume", bare_pod_with_volume)):
            start = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
                each = list(pool.map(make, range(100, 100 + args.count)))
            total = time.perf_counter() - start
            print(f"{f'{args.count} {what}, {args.parallel} at a time: all answer':<52} {total * 1000:8.0f} ms "
                  f"(each: median {statistics.median(each) * 1000:.0f} ms, max {max(each) * 1000:.0f} ms; load {os.getloadavg()[0]:.1f})")
        # Twenty without a workspace's wait: `deploy init`, `deploy create`, then `deployment start --no-wait`,
        # each of the three a `so` of its own, 4 at a time (what a script that makes many at once runs).
        def stop_made(d):
            # --discard: a workspace whose container has not started cannot say whether it holds work, and its stop
            # with --delete-volumes is refused without it (these hold none).
            return so_cmd(["deployment", "--dir", d, "--kubeconfig", kubeconfig, "stop", "--delete-volumes", "--delete-namespace", "--discard"], check=False)

        def init_create_start(i):
            name = f"{P}-ics-{i:02d}"
            spec, d = os.path.join(work, f"{name}.spec.yml"), os.path.join(work, name)
            t0 = time.perf_counter()
            so_cmd(["--stack", stack, "deploy", "init", "--output", spec, "--config", f"GIT_REPO={repo}", "--config", f"WORKSPACE_NAME={name}"])
            so_cmd(["deploy", "create", "--spec-file", spec, "--deployment-dir", d])
            made.append(d)
            # --kubeconfig: this node, even while a kind cluster runs on the host (a kind deployment's own would win).
            started = so_cmd(["deployment", "--dir", d, "--kubeconfig", kubeconfig, "start", "--no-wait", "--progress", "plain", "--timeout", "300"],
                             trace=bool(args.traces))
            took = time.perf_counter() - t0
            keep_trace(name, started.stderr, took, took)
            return took
        # The limit of those twenty starts: the same objects applied by kubectl, as many at a time. Each of 20
        # deployments is made and rendered first (untimed: `render --placeholder-secrets`, the Secret's values
        # placeholders), then one `kubectl apply --server-side` of each, the pods starting as so's do.
        def rendered(i):
            name = f"{P}-kubectl-{i:02d}"
            spec, d = os.path.join(work, f"{name}.spec.yml"), os.path.join(work, name)
            so_cmd(["--stack", stack, "deploy", "init", "--output", spec, "--config", f"GIT_REPO={repo}", "--config", f"WORKSPACE_NAME={name}"])
            so_cmd(["deploy", "create", "--spec-file", spec, "--deployment-dir", d])
            path = os.path.join(work, f"{name}.yaml")
            with open(path, "w") as f:
                f.write(so_cmd(["deployment", "--dir", d, "render", "--placeholder-secrets"]).stdout)
            return path

        def kubectl_apply(path):
            t0 = time.perf_counter()
            subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", path], check=True, capture_output=True)
            return time.perf_counter() - t0
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            applied.extend(pool.map(rendered, range(args.count)))
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            each = list(pool.map(kubectl_apply, applied))
        by_kubectl = time.perf_counter() - start
        print(f"{f'{args.count} x kubectl apply of the same objects, {args.parallel} at a time':<52} {by_kubectl * 1000:8.0f} ms "
              f"(each: median {statistics.median(each) * 1000:.0f} ms, max {max(each) * 1000:.0f} ms; load {os.getloadavg()[0]:.1f})")
        # Gone before so's twenty start (their pods' ends are not the next step's load).
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda path: subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "delete", "-f", path, "--timeout=120s"],
                                                      capture_output=True), applied))
        applied.clear()
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            each = list(pool.map(init_create_start, range(args.count)))
        total = time.perf_counter() - start
        print(f"{f'{args.count} x init + create + start --no-wait, {args.parallel} at a time':<52} {total * 1000:8.0f} ms "
              f"(each: median {statistics.median(each) * 1000:.0f} ms, max {max(each) * 1000:.0f} ms; load {os.getloadavg()[0]:.1f}) "
              f"= {total / by_kubectl:.2f}x kubectl's")
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(stop_made, made))
        made.clear()
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            many = list(pool.map(up_to_shell, [f"{P}-many-{i:02d}" for i in range(args.count)]))
        total = time.perf_counter() - start
        print(f"{f'{args.count} workspaces, {args.parallel} at a time: all shell-ready':<52} {total * 1000:8.0f} ms "
              f"(each: median {statistics.median(m[1] for m in many) * 1000:.0f} ms, max {max(m[1] for m in many) * 1000:.0f} ms; "
              f"load {os.getloadavg()[0]:.1f})")
        listed = so_cmd(["deployment", "list"]).stdout
        def ready(line):
            # READY is available/wanted over the workspace's Deployments (the agent, and its egress proxy).
            counts = [w for w in line.split() if "/" in w and w.replace("/", "").isdigit()]
            return bool(counts) and counts[0].split("/")[0] == counts[0].split("/")[1]
        ready_now = sum(1 for l in listed.splitlines() if l.startswith(f"{P}-many-") and ready(l))
        print(f"{'listed as ready':<52} {ready_now:8d} of {args.count}")

        # Detached tasks, one per workspace, given all at once: each runs in its own workspace's container.
        chosen = [f"{P}-many-{i:02d}" for i in range(min(args.tasks, args.count))]
        if not chosen:
            return
        work_cmd = f"sleep {args.task_seconds}; echo done > task.txt; git add task.txt; git commit -qm task"
        def detach(name):
            t0 = time.perf_counter()
            p = so_cmd(["deployment", "--name", name, "task", "--detach", "--no-push", "--command", work_cmd, "bench task"])
            return time.perf_counter() - t0, p.stdout.strip()
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(len(chosen)) as pool:
            given = list(pool.map(detach, chosen))
        queued = time.perf_counter() - start
        with concurrent.futures.ThreadPoolExecutor(len(chosen)) as pool:
            reports = list(pool.map(lambda n_id: json.loads(so_cmd(["deployment", "--name", n_id[0], "tasks", "wait", n_id[1], "-o", "json"]).stdout),
                                    [(n, g[1]) for n, g in zip(chosen, given)]))
        done = time.perf_counter() - start
        spans = [(ts(r["started"]), ts(r["ended"])) for r in reports if r.get("started") and r.get("ended")]
        overlap = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans) if spans else 0
        ok = sum(1 for r in reports if r["state"] == "succeeded" and len(r["commits"]) == 1)
        print(f"{f'{len(chosen)} detached tasks, one per workspace, given at once':<52} {queued * 1000:8.0f} ms to queue all "
              f"(each: median {statistics.median(g[0] for g in given) * 1000:.0f} ms)")
        print(f"{f'  all ended ({args.task_seconds} s of work each)':<52} {done * 1000:8.0f} ms; {ok} of {len(chosen)} succeeded with their commit; "
              f"at most {overlap} running at once")
    finally:
        subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "delete", "namespace", f"so-{P}-bare", "--wait=false"], capture_output=True)
        # A pool a failed run left (its members hold no work): removed like the workspaces.
        subprocess.run([so, "pool", "remove", P], cwd=work, env=env, capture_output=True)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            for d in made:
                pool.submit(subprocess.run, [so, "deployment", "--dir", d, "--kubeconfig", kubeconfig, "stop", "--delete-volumes", "--delete-namespace", "--discard"],
                            cwd=work, env=env, capture_output=True)
            for path in applied:
                pool.submit(subprocess.run, ["kubectl", "--kubeconfig", kubeconfig, "delete", "-f", path, "--wait=false"], capture_output=True)
            for n, f in [(n, pool.submit(subprocess.run, [so, "down", n, "--discard"], cwd=work, env=env, capture_output=True, text=True)) for n in names]:
                if f.result().returncode != 0:
                    print(f"cleanup of {n} failed: {f.result().stderr}", file=sys.stderr)
        if daemon:
            daemon.terminate()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
