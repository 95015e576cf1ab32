#!/bin/sh
# The agent container's entrypoint in agent-workspace: clone.sh [COMMAND ARGS…]. Checks out GIT_REPO at
# GIT_REF (default: the remote's default branch) into /workspace on a new branch (WORKSPACE_BRANCH, default
# agent/<workspace name>), then marks the clone done (/tmp/so-clone-done, what the readiness probe waits
# for) and runs COMMAND as its child (TERM and INT passed on: as PID 1, `sleep` would ignore them). A complete checkout already there is kept, with the agent's work in
# it, so stop/start and restarts never lose anything.
#
# The clone goes into a temporary directory and is moved into place only when complete (.git last), so a
# failed clone leaves nothing a retry mistakes for a checkout; a failure exits non-zero with git's own
# message (the container restarts), which `so up`/`start` report with these log lines. Git runs as uid 1000
# on a volume any provisioner made (root-owned 0777 included): safe.directory comes from the environment.
#
# With GIT_CARRY=bundle (so up run in a checkout, no GIT_REPO) the repository comes from that checkout: so
# streams a git bundle into /workspace/.so-carry/ through the Kubernetes API (kubectl exec -i), then writes
# .so-carry/ready (base=COMMIT seed=COMMIT ref=BRANCH); this waits for it. The branch starts at base; seed,
# when set, is a snapshot commit of the checkout's uncommitted changes, put into the work tree uncommitted
# (and recorded as so.seed: what 'so deployment apply' and 'so down' compare the work against). GIT_ORIGIN
# becomes origin.
#
# A warm pool's member (so pool) waits the same way, with no repository: its claim writes the ready file with the
# workspace's branch= and origin= beside the bundle, or repo= (and ref=) for a workspace from a remote, cloned then.
# A member whose pool names the repository (GIT_WARM=1, and GIT_ORIGIN or GIT_REPO) fetches its default branch while
# it waits: a claim of the same repository from a remote then asks the remote only where its branch is, and checks out
# a commit the warm-up has without fetching it (the fetch was most of a claim's hand-over). so asks that itself as
# the claim begins and hands the answer in (tip=COMMIT BRANCH): then the claim asks the remote nothing here; a
# carried-in checkout at a commit the warm-up has is checked out without unpacking the bundle.
#
# In the agent container rather than an init container of its own: the kubelet notices an init container's
# exit only at its next relist (up to a second), which was a quarter of a warm node's `so up`.
set -eu
# A value for a git config file, quoted into $q: its backslashes and double quotes escaped (a value is one line). A
# value with neither (nearly every one) takes no process: each is 1-2 ms in a pod, and a claim's clone quotes four.
quote() {
  case $1 in
    *[\\\"]*) q=\"$(printf '%s' "$1" | sed 's/[\\"]/\\&/g')\" ;;
    *) q=\"$1\" ;;
  esac
}
# A git config file's [user] section for NAME and EMAIL, on stdout.
user_section() {
  quote "$1"
  qn=$q
  quote "$2"
  printf '[user]\n\tname = %s\n\temail = %s\n' "$qn" "$q"
}
# As PID 1 this shell gets no signal it has no handler for: a stop during the clone ends it (once the git
# command in progress returns) instead of waiting out the grace period.
trap 'exit 143' TERM
trap 'exit 130' INT

# The egress proxy (spec egress-proxy:) is a Deployment of its own, started beside this one: on a loaded node the
# clone's first fetch can come before it listens (git: "Failed to connect to egress-proxy port 3128 after 4 ms", its
# Service has no ready endpoint yet), and the container restarted after a back-off of 10 s, then 20 s. Such a fetch
# is tried again, every half second for up to 60 s, said once; any other failure is the clone's own, with git's words.
proxied() {
  proxy_host=${HTTPS_PROXY:-${HTTP_PROXY:-}}
  proxy_host=${proxy_host#*://}
  proxy_host=${proxy_host#*@}
  proxy_host=${proxy_host%%[:/]*}
  err=/tmp/so-clone-err.$$
  tries=0
  while ! "$@" 2>"$err"; do
    if [ -z "$proxy_host" ] || [ "$tries" -ge 120 ] || ! grep -q "Failed to connect to $proxy_host port" "$err"; then
      cat "$err" >&2
      rm -f "$err"
      return 1
    fi
    [ "$tries" -gt 0 ] || echo "clone: the egress proxy ($proxy_host) does not answer yet (it starts beside this container); trying again for up to 60 s"
    tries=$((tries + 1))
    sleep 0.5
  done
  rm -f "$err"
  [ "$tries" -eq 0 ] || echo "clone: the egress proxy answered after $tries tries"
}

# The readiness probe waiting on the FIFO it made (/tmp/so-clone-wait), woken (none waiting: 0.2 s, then nothing).
wake_probe() {
  if [ -p /tmp/so-clone-wait ] && command -v timeout >/dev/null 2>&1; then
    timeout 0.2 sh -c ': > "$1"' so /tmp/so-clone-wait 2>/dev/null || true
  fi
}

# A pool's member (GIT_WARM) is ready while it waits for its claim: its readiness probe passes on /tmp/so-warm until
# the claim's ready file is there (then it waits for the clone, as any). Ready at its claim instead, the member turned
# ready as the claimer's first command came: the probe's exec ending, the kubelet's status and the Service's endpoints
# then made that exec (`so deployment exec -- true` right after `so up`) 190-320 ms where it took 85-115 (0.15 s
# later, or with the member ready before). Only before a claim's ready file: a member restarted after its claim is
# not ready until its clone is done.
warm_ready() {
  if [ -n "${GIT_WARM:-}" ] && [ ! -e "$carry/ready" ]; then
    : > /tmp/so-warm
    wake_probe
  fi
}

# A pool's member is handed its claim through a port-forward to this listener on its loopback where the image has
# python3 (so's `handOverForwarded`, `deliverForwarded`): no exec started in the container (runc's: 70-140 ms before
# its first line ran, on the real node; a port-forward is a connection the node makes into the pod, 20-30 ms). It
# reads "so-handover 1 TICKS READY CREDENTIALS [BUNDLE]" (the lengths in bytes), then the ready file's text, the
# credentials and the carried-in bundle (each written where the exec writes it, the bundle streamed to the volume),
# wakes the clone, and answers "done" once the clone is, within TICKS fiftieths of a second ("timeout" after them;
# "handed" at once for 0). Anything else it reads is closed unanswered, and it listens on. It ends once it has
# answered, or once the ready file is there by other means (a claim's exec). Loopback only: reached by a port-forward
# (the right to it is the claimer's, as exec is) or from the pod itself, whose one container is this one (so forwards
# only into such a pod).
handover_listener='
import os, select, socket, sys, time
port, carry = int(sys.argv[1]), sys.argv[2]
ready, done, shm = carry + "/ready", "/tmp/so-clone-done", "/dev/shm/so-secret-env"
def exact(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(min(65536, n - len(b)))
        if not x:
            raise EOFError
        b += x
    return b
def put(path, data, mode):
    fd = os.open(path + ".part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.rename(path + ".part", path)
def take(c):
    c.settimeout(5)
    head = b""
    while not head.endswith(b"\n"):
        x = c.recv(1)
        if not x or len(head) > 100:
            return None
        head += x
    w = head.split()
    if len(w) not in (5, 6) or w[:2] != [b"so-handover", b"1"] or not all(x.isdigit() for x in w[2:]):
        return None
    ticks, n, m = (int(x) for x in w[2:5])
    if n + m > 1 << 20:
        return None
    text, secrets = exact(c, n), exact(c, m)
    if b"\0" in text:
        return None
    if len(w) == 6:
        left = int(w[5])
        fd = os.open(carry + "/repo.bundle.part", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "wb") as f:
            while left > 0:
                x = c.recv(min(65536, left))
                if not x:
                    raise EOFError
                f.write(x)
                left -= len(x)
        os.rename(carry + "/repo.bundle.part", carry + "/repo.bundle")
    if m:
        put(shm, secrets, 0o600)
    put(ready, text, 0o644)
    return ticks
s = socket.socket()
s.bind(("127.0.0.1", port))
s.listen(4)
while True:
    if os.path.exists(ready):
        sys.exit(0)
    if not select.select([s], [], [], 0.25)[0]:
        continue
    c = s.accept()[0]
    try:
        ticks = take(c)
    except Exception:
        ticks = None
    if ticks is not None:
        break
    c.close()
s.close()
end = time.monotonic() + 0.2
while True:
    try:
        fd = os.open(carry + "/wake", os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"x")
        os.close(fd)
        break
    except OSError:
        if time.monotonic() > end:
            break
        time.sleep(0.005)
answer = b"handed\n"
if ticks > 0:
    end = time.monotonic() + ticks / 50
    try:
        fd = os.open("/tmp/so-claim-wait", os.O_RDWR | os.O_NONBLOCK)
    except OSError:
        fd = None
    answer = b"done\n"
    while not os.path.exists(done):
        left = end - time.monotonic()
        if left <= 0:
            answer = b"timeout\n"
            break
        if fd is None:
            time.sleep(min(left, 0.02))
        elif select.select([fd], [], [], min(left, 1.0))[0]:
            os.read(fd, 64)
try:
    c.sendall(answer)
    c.close()
except OSError:
    pass
'

clone() {
  cd /workspace
  if [ -d .git ] && [ ! -e .so-clone-incomplete ]; then
    echo "clone: /workspace already holds a checkout ($(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo '?')); keeping it"
    return 0
  fi
  if [ -z "${GIT_REPO:-}" ] && [ -z "${GIT_CARRY:-}" ]; then
    echo "clone: GIT_REPO is empty; /workspace starts empty"
    return 0
  fi
  if [ -e .so-clone-incomplete ]; then
    # What an interrupted clone left (never a checkout someone worked in: .git is moved in last).
    echo "clone: removing what an interrupted clone left"
    find /workspace -mindepth 1 -maxdepth 1 ! -name lost+found ! -name .so-carry -exec rm -rf {} +
  fi
  touch .so-clone-incomplete
  tmp=/workspace/.so-clone-tmp
  rm -rf "$tmp"
  branch="${WORKSPACE_BRANCH:-agent/${WORKSPACE_NAME:-workspace}}"
  carry=/workspace/.so-carry
  bundle=
  if [ -n "${GIT_CARRY:-}" ]; then
    echo "clone: waiting for the repository so up carries in"
    # Woken at once by so's exec through a FIFO (no processor spent meanwhile), and a look each second all the
    # same; a look every 0.1 s where there is no timeout(1) or FIFO.
    mkdir -p "$carry"
    # The repository the clone goes into is made while nothing else happens (a pool's member, before its claim).
    git init -q "$tmp"
    # The repository a warm member's pool names: its origin, or the remote its members were made with.
    warm_url=${GIT_ORIGIN:-${GIT_REPO:-}}
    if [ -n "${GIT_WARM:-}" ] && [ -n "$warm_url" ]; then
      # Into FETCH_HEAD alone (no ref of the workspace's), then checked out, detached: a claim of that commit then
      # writes no file, of another only what differs (a checkout of 500 files from 30,000 commits was 180 ms of a
      # claim). Best effort: a claim fetches what it lacks.
      { git -C "$tmp" fetch -q "$warm_url" HEAD && git -C "$tmp" checkout -q --detach FETCH_HEAD; } \
        </dev/null >/dev/null 2>&1 &
      warm=$!
    fi
    if command -v timeout >/dev/null 2>&1 && { [ -p "$carry/wake" ] || mkfifo "$carry/wake" 2>/dev/null; }; then
      # The FIFO a claim's exec holds open while it waits for this clone, woken by a byte once the clone is done
      # (below): made now, while nothing else happens; the exec looks for it to know this clone writes that byte.
      [ -p /tmp/so-claim-wait ] || mkfifo /tmp/so-claim-wait 2>/dev/null || :
      if [ -n "${GIT_WARM:-}" ] && command -v python3 >/dev/null 2>&1; then
        python3 -c "$handover_listener" "${SO_HANDOVER_PORT:-47017}" "$carry" </dev/null >/dev/null 2>&1 &
      fi
      warm_ready
      while [ ! -e "$carry/ready" ]; do timeout 1 cat "$carry/wake" >/dev/null 2>&1 || true; done
    else
      warm_ready
      while [ ! -e "$carry/ready" ]; do sleep 0.1; done
    fi
    # A warm pool's member learns its workspace when it is claimed: the branch and origin come with the bundle,
    # or, for a workspace from a remote, the repository to clone (repo=) and its ref. Read by the shell itself.
    base= seed= ref= claimed= origin= repo= handed=
    while IFS= read -r line || [ -n "$line" ]; do
      case $line in
        base=*) base=${line#base=} ;;
        seed=*) seed=${line#seed=} ;;
        ref=*) ref=${line#ref=} ;;
        branch=*) claimed=${line#branch=} ;;
        origin=*) origin=${line#origin=} ;;
        repo=*) repo=${line#repo=} ;;
        tip=*) handed=${line#tip=} ;;
        name=*) user_name=${line#name=} ;;
        email=*) user_email=${line#email=} ;;
      esac
    done < "$carry/ready"
    [ -z "$claimed" ] || branch=$claimed
    [ -z "$origin" ] || GIT_ORIGIN=$origin
    if [ -n "$repo" ]; then GIT_REPO=$repo GIT_REF=$ref; else bundle=1; fi
    # A claim from a remote hands the claimer's credentials in before its ready file, in the same exec: the fetch
    # uses them (a private repository), as a cold workspace's clone uses its Secret's.
    if [ -n "$repo" ] && [ -r /dev/shm/so-secret-env ]; then . /dev/shm/so-secret-env; fi
    # The warm-up's fetch ends first (it writes into the repository this claim moves into place).
    if [ -n "$warm" ]; then wait "$warm" 2>/dev/null || warm=; fi
  fi
  if [ -n "$bundle" ]; then
    echo "clone: the carried-in repository at $base onto branch $branch"
    # A commit the warm-up fetched (a checkout at its origin's default branch, nothing uncommitted carried) needs
    # nothing from the bundle: its fetch (git's unpacking and refs, 10-30 ms in a pod) is left out of the claim, and
    # the checkout is tried at once (a commit the warm-up lacks fails it before it changes anything).
    if [ -n "$seed" ] || [ -z "$warm" ] || ! git -C "$tmp" checkout -q -b "$branch" "$base" 2>/dev/null; then
      # A thin bundle (so leaves out the history of the checkout's origin/HEAD, which a member warm with that origin
      # holds) needs that commit here: a member without it (its warm-up older than the checkout's fetch) fetches the
      # origin's branches first, then reads the bundle.
      if ! git -C "$tmp" fetch -q "$carry/repo.bundle" '+refs/so/carry/*:refs/so/carry/*' 2>"$carry/bundle.err"; then
        if [ -z "${GIT_ORIGIN:-}" ] || ! grep -q 'prerequisite' "$carry/bundle.err"; then
          cat "$carry/bundle.err" >&2
          exit 1
        fi
        echo "clone: the carried-in history starts at a commit this workspace lacks; fetching it from $GIT_ORIGIN"
        proxied git -C "$tmp" fetch -q "$GIT_ORIGIN" '+refs/heads/*:refs/remotes/origin/*'
        git -C "$tmp" fetch -q "$carry/repo.bundle" '+refs/so/carry/*:refs/so/carry/*'
      fi
      git -C "$tmp" checkout -q -b "$branch" "$base"
    fi
    at=$base
    # The config written at once, not a git process a key (each 10-30 ms on a busy node, on a claim's path).
    {
      if [ -n "${GIT_ORIGIN:-}" ]; then
        quote "$GIT_ORIGIN"
        printf '[remote "origin"]\n\turl = %s\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n' "$q"
      fi
      quote "$ref"
      printf '[so]\n\tbase = %s\n\tref = %s\n' "$base" "$q"
    } >> "$tmp/.git/config"
    if [ -n "$seed" ]; then
      # The checkout's uncommitted changes, uncommitted here too (new files untracked).
      git -C "$tmp" read-tree -u -m HEAD "$seed"
      git -C "$tmp" reset -q
      git -C "$tmp" config so.seed "$seed"
    fi
  else
    ref="${GIT_REF:-}"
    [ -d "$tmp/.git" ] || git init -q "$tmp"
    quote "$GIT_REPO"
    printf '[remote "origin"]\n\turl = %s\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n' "$q" \
      >> "$tmp/.git/config"
    # A member that fetched this repository while it waited: the remote asked where the branch is (no pack made),
    # and a commit the warm-up has checked out as it is.
    tip=
    if [ -n "$warm" ] && [ "$GIT_REPO" = "$warm_url" ]; then
      if [ -n "$handed" ] && { [ -z "$ref" ] || [ "$ref" = "${handed#* }" ]; }; then
        # Where the branch is, as so asked the remote while it claimed this member ("COMMIT BRANCH").
        tip=${handed%% *} ref=${handed#* }
      elif [ -n "$ref" ]; then
        tip=$(git ls-remote "$GIT_REPO" "refs/heads/$ref" 2>/dev/null | sed -n '1s/[[:space:]].*//p') || tip=
      else
        asked=$(git ls-remote --symref "$GIT_REPO" HEAD 2>/dev/null) || asked=
        ref=$(printf '%s\n' "$asked" | sed -n 's|^ref: refs/heads/\([^[:space:]]*\)[[:space:]]*HEAD$|\1|p')
        tip=$(printf '%s\n' "$asked" | sed -n 's/^\([0-9a-f]\{40,\}\)[[:space:]]*HEAD$/\1/p')
        [ -n "$ref" ] || tip=
      fi
      # origin/<branch> set at once: git refuses a commit the warm-up lacks (one git process, not two).
      if [ -n "$tip" ] && git -C "$tmp" update-ref "refs/remotes/origin/$ref" "$tip" 2>/dev/null; then
        echo "clone: $GIT_REPO at ${GIT_REF:-$ref} ($tip, fetched while the workspace was warm) onto branch $branch"
      else
        tip= ref="${GIT_REF:-}"
      fi
    fi
    if [ -n "$tip" ]; then
      :
    elif [ -n "$ref" ]; then
      echo "clone: $GIT_REPO at $ref onto branch $branch"
      proxied git -C "$tmp" fetch -q origin "$ref"
    else
      # The remote's default branch (main, master, trunk …): its name is asked for while its commit is fetched, the
      # two requests at once (one round trip to the remote where there were two). A failed ask names no branch;
      # the fetch says why the remote did not answer.
      head=/tmp/so-clone-head.$$
      git ls-remote --symref "$GIT_REPO" HEAD >"$head" 2>/dev/null &
      asked=$!
      proxied git -C "$tmp" fetch -q origin HEAD
      wait "$asked" || true
      # Asked again when the ask found the proxy not listening yet (the fetch waited for it).
      grep -q '^ref: ' "$head" || git ls-remote --symref "$GIT_REPO" HEAD >"$head" 2>/dev/null || :
      ref=$(sed -n 's|^ref: refs/heads/\([^[:space:]]*\)[[:space:]]*HEAD$|\1|p' "$head")
      rm -f "$head"
      [ -n "$ref" ] || ref=HEAD
      # origin/<branch>, as a fetch of the branch by name leaves it (git diff origin/main…).
      [ "$ref" = HEAD ] || git -C "$tmp" update-ref "refs/remotes/origin/$ref" FETCH_HEAD 2>/dev/null || :
      echo "clone: $GIT_REPO at $ref (its default branch) onto branch $branch"
    fi
    git -C "$tmp" checkout -q -b "$branch" "${tip:-FETCH_HEAD}"
    # What the work started from: the commit (diff, and what counts as the agent's work) and the branch (a pull
    # request's base).
    [ -n "$tip" ] || tip=$(git -C "$tmp" rev-parse HEAD)
    at=$tip
    quote "$ref"
    printf '[so]\n\tbase = %s\n\tref = %s\n' "$tip" "$q" >> "$tmp/.git/config"
  fi
  # A volume's lost+found (ext4 provisioners) is not the agent's work.
  echo "/lost+found/" >> "$tmp/.git/info/exclude"
  if [ -f "$tmp/.gitmodules" ]; then
    echo "clone: submodules"
    if [ -n "$bundle" ]; then
      # Not in the bundle: from their own URLs, when the workspace reaches them.
      git -C "$tmp" submodule update -q --init --recursive || echo "clone: warning: submodules were not fetched (a carried-in repository brings none; their URLs must be reachable and on egress:)"
    else
      git -C "$tmp" submodule update -q --init --recursive
    fi
  fi
  if [ -f "$tmp/.gitattributes" ] && grep -qs 'filter=lfs' "$tmp/.gitattributes"; then
    if git lfs version >/dev/null 2>&1; then git -C "$tmp" lfs pull; else echo "clone: warning: the repository uses Git LFS; LFS files were not fetched (git-lfs is not in the image)"; fi
  fi
  # Into place: the work tree first, .git last (one mv, which moves its sources in their order, not one a top-level
  # entry: a claim waits for this), then the marker goes. The function's own arguments hold the list (clone takes
  # none).
  set --
  for f in "$tmp"/* "$tmp"/.[!.]* "$tmp"/..?*; do
    if [ "$f" != "$tmp/.git" ] && { [ -e "$f" ] || [ -L "$f" ]; }; then set -- "$@" "$f"; fi
  done
  mv -- "$@" "$tmp/.git" /workspace/
  rmdir "$tmp"
  rm -rf "$carry" .so-clone-incomplete
  fresh=1
  # The commit's short name from the shell (a git process less on a claim's path).
  echo "clone: done (${at%"${at#???????}"} on $branch)"
}

# Detached tasks (so deployment task --detach) queued before this container started go on now, not at the next
# verb: so's runner, left in the checkout's git directory by the last verb, fails what the restart interrupted
# and starts a worker for what is still queued. In the background, with the credentials a claim handed in; the
# agent's command does not wait for it.
resume_tasks() {
  # The checkout's git directory is /workspace/.git (no git process) unless .git is a link to one elsewhere.
  runner=/workspace/.git/so/task.sh
  if [ ! -d /workspace/.git ]; then
    runner="$(git -C /workspace rev-parse --absolute-git-dir 2>/dev/null)/so/task.sh" || return 0
  fi
  [ -f "$runner" ] || return 0
  echo "clone: resuming the task queue"
  (
    if [ -r /dev/shm/so-secret-env ]; then . /dev/shm/so-secret-env; fi
    cd /workspace && exec sh "$runner" report /workspace
  ) </dev/null >/dev/null 2>&1 &
}

# Who the agent's commits are by: the claimer a claim's ready file names (name=, email=), else GIT_USER_NAME and
# GIT_USER_EMAIL from the environment, written into the checkout's own config (on the volume: kept across restarts
# and over the environment of a pool's member, which names no one) and into the file GIT_CONFIG_SYSTEM names (a
# repository made anywhere else in the container). Nothing set keeps what the checkout holds, else a clear default.
identity() {
  n=${user_name:-${GIT_USER_NAME:-}} e=${user_email:-${GIT_USER_EMAIL:-}}
  if [ -n "$fresh" ] && [ -n "$n" ] && [ -n "$e" ]; then
    # A checkout this start made holds no identity yet: both written at once.
    user_section "$n" "$e" >> /workspace/.git/config
  elif [ -d /workspace/.git ]; then
    if [ -n "$n" ]; then git -C /workspace config user.name "$n"; fi
    if [ -n "$e" ]; then git -C /workspace config user.email "$e"; fi
    [ -n "$n" ] || n=$(git -C /workspace config --local user.name 2>/dev/null) || n=
    [ -n "$e" ] || e=$(git -C /workspace config --local user.email 2>/dev/null) || e=
  fi
  if [ -n "${GIT_CONFIG_SYSTEM:-}" ]; then
    # This script's file alone (in the container's /tmp, made anew at each start): written whole, at once.
    user_section "${n:-so agent}" "${e:-agent@so.invalid}" > "$GIT_CONFIG_SYSTEM" 2>/dev/null || :
  fi
}

user_name= user_email= warm= warm_url= fresh= at= handed=
clone
identity
if [ $# -gt 0 ]; then
  # The command runs as this shell's child, not in its place: as PID 1 a command with no handler of its own
  # (sleep) never gets SIGTERM and every stop waits out the grace period. The shell passes TERM and INT on
  # (its handlers set before the command starts) and exits with the command's status. The command keeps
  # stdin (through fd 3: a background job's own is /dev/null).
  child=
  # Until the forked child has exec'd the command it is this shell, with this shell's handler: a signal sent
  # then is taken by that handler and lost when the child resets its traps (a stop then waited out the grace
  # period). The child's command line tells: it is ours until the exec (read once the clone is called done).
  self=
  forward() {
    n=0
    while [ -n "$self" ] && [ $n -lt 200 ] && [ "$(tr '\0' ' ' < /proc/$child/cmdline 2>/dev/null)" = "$self" ]; do
      n=$((n + 1))
      sleep 0.01
    done
    kill -"$1" "$child" 2>/dev/null
    # A command that does not handle the signal and is still there a second later did not get it (a loaded node
    # can still lose one in that window): sent again, up to 5 times. One that handles it stops in its own time.
    bit=16384
    [ "$1" = TERM ] || bit=2
    (
      for _ in 1 2 3 4 5; do
        sleep 1
        c=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$child/status 2>/dev/null)
        [ -n "$c" ] && [ $((0x${c#"${c%????}"} & bit)) -eq 0 ] || exit 0
        kill -"$1" "$child" 2>/dev/null || exit 0
      done
    ) </dev/null >/dev/null 2>&1 &
  }
  trap 'if [ -n "$child" ]; then forward TERM; else exit 143; fi' TERM
  trap 'if [ -n "$child" ]; then forward INT; else exit 130; fi' INT
  : > /tmp/so-clone-done
  # A claim's exec waiting for the clone holds /tmp/so-claim-wait open: a byte wakes it at once, however soon after
  # its last look at the marker this comes (opened for reading and writing, this never blocks; none holding it: the
  # byte goes nowhere). No process: the shell's own printf.
  if [ -p /tmp/so-claim-wait ]; then printf x 4<>/tmp/so-claim-wait >&4 2>/dev/null || :; fi
  # The readiness probe (and an older so's exec) waiting on the FIFO it made, woken too. Not for a pool's member: it
  # was ready while it waited (`warm_ready`), no probe waits, and the wake would wait its 0.2 s for none (2 processes
  # and the command's start that much later, beside the claimer's first commands).
  [ -e /tmp/so-warm ] || wake_probe
  # After the clone is called done: nothing a claim's shell waits for.
  self=$(tr '\0' ' ' < /proc/$$/cmdline 2>/dev/null) || self=
  resume_tasks
  exec 3<&0
  "$@" <&3 3<&- &
  child=$!
  exec 3<&-
  status=0
  wait "$child" || status=$?
  # A trapped signal ends the first wait early; the second waits for the command itself.
  while kill -0 "$child" 2>/dev/null; do wait "$child" && status=0 || status=$?; done
  exit "$status"
fi
resume_tasks
