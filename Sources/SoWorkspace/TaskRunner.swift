import Foundation
import SoDeploy

/// The task runner `so` carries into a workspace's container (`so deployment task --detach`, `tasks …`):
/// a POSIX shell script, written to `$GIT_DIR/so/task.sh` by each call (so the runner is always this `so`'s,
/// in any image with sh and git) and run through the API. What it does and where a task's report lives is
/// in its header. Its exit codes: 3 no checkout, 4 no such task, 5 the task already ended, 6 it did not end.
enum TaskRunner {
    /// The progress line the runner writes when it committed what the agent left.
    static let committedLeftovers = "committed what the agent left uncommitted"

    /// `sh -c boot so CHECKOUT SCRIPT VERB ARGS…`: writes the script when it differs (a new file: a worker
    /// running keeps the one it read), then runs it.
    static let boot = #"""
        cd "$1" 2>/dev/null || { echo "so-task: $1 does not exist in the container" >&2; exit 3; }
        g=$(git rev-parse --absolute-git-dir 2>/dev/null) || { echo "so-task: $1 holds no git checkout" >&2; exit 3; }
        mkdir -p "$g/so" || exit 3
        if [ "$(cat "$g/so/task.sh" 2>/dev/null)" != "$2" ]; then
          printf '%s\n' "$2" > "$g/so/task.sh.$$" && mv -f "$g/so/task.sh.$$" "$g/so/task.sh" || exit 3
        fi
        ws=$1
        shift 2
        verb=$1
        shift
        exec sh "$g/so/task.sh" "$verb" "$ws" "$@"
        """#

    static let script = #"""
        # so's task runner, in the workspace's container: sh task.sh VERB CHECKOUT ARGS…
        # `so` writes it to $GIT_DIR/so/task.sh (a new file each time: a worker running keeps the one it read) and
        # runs it through the API (kubectl exec). A task is a directory $GIT_DIR/so/tasks/N (inside .git: never in
        # the work tree, never committed, on the volume across restarts); its files are its report:
        #   text command push issue   what was asked            queued started ended   seconds since 1970
        #   state               queued|running|succeeded|failed|cancelled (written last: the others are complete)
        #   exit log step progress   the agent's code, its output, the step it says ($SO_TASK_STEP), what happened
        #   base branch commits files pushed pull_request cost   where it began, what it committed and pushed, usage lines
        # A queue per checkout: tasks run one at a time in id order, by a worker in its own session (setsid), so
        # neither the exec that started it nor `so` ending stops it. The worker's lock is the directory .worker.
        set -u
        verb=$1 ws=$2
        shift 2
        cd "$ws" 2>/dev/null || { echo "so-task: $ws does not exist in the container" >&2; exit 3; }
        gd=$(git rev-parse --absolute-git-dir 2>/dev/null) || { echo "so-task: $ws holds no git checkout" >&2; exit 3; }
        root=$gd/so/tasks
        self=$gd/so/task.sh
        mkdir -p "$root"

        now() { date +%s; }
        # A process's start time (field 22 of /proc/PID/stat): with the pid it names one process, not a reused pid.
        started_at() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }
        # "PID START" of a live process (not a zombie).
        alive() {
          set -- $1
          [ $# -eq 2 ] || return 1
          [ "$(started_at "$1")" = "$2" ] || return 1
          [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]
        }
        # The pod this runs in (its hostname).
        pod() { cat /proc/sys/kernel/hostname 2>/dev/null; }
        put() { printf '%s\n' "$3" > "$root/$1/$2.tmp" && mv -f "$root/$1/$2.tmp" "$root/$1/$2"; }
        get() { cat "$root/$1/$2" 2>/dev/null; }
        note() { printf '%s %s\n' "$(now)" "$2" >> "$root/$1/progress"; }
        final() { case "$(get "$1" state)" in succeeded|failed|cancelled) return 0 ;; esac; return 1; }
        ids() { ls "$root" | grep -E '^[0-9]+$' | sort -n; }
        need() {
          [ -n "${1:-}" ] && [ -f "$root/$1/state" ] && return 0
          echo "so-task: no task '${1:-}' in $ws" >&2
          exit 4
        }

        # A worker for the queue, unless one runs. A lock left by a worker that is gone (the container restarted)
        # is taken over; an empty one is a worker starting right now.
        ensure_worker() {
          if ! mkdir "$root/.worker" 2>/dev/null; then
            w=$(cat "$root/.worker/pid" 2>/dev/null || true)
            # Empty: a worker starting right now (its starter writes the pid at once), unless that was a minute ago.
            [ -z "$w" ] && [ -z "$(find "$root/.worker" -maxdepth 0 -mmin +1 2>/dev/null)" ] && return 0
            [ -n "$w" ] && alive "$w" && return 0
            rm -rf "$root/.worker"
            mkdir "$root/.worker" 2>/dev/null || return 0
          fi
          if command -v setsid >/dev/null 2>&1; then
            setsid sh "$self" worker "$ws" </dev/null >>"$root/.worker.log" 2>&1 &
          else
            nohup sh "$self" worker "$ws" </dev/null >>"$root/.worker.log" 2>&1 &
          fi
          echo "$! $(started_at $!)" > "$root/.worker/pid"
        }

        # Tasks left running by a container that restarted did not finish: they are failed, saying so. A task's
        # runner (the worker that claimed it, with the pod it ran in) owns it while alive: it may be committing or
        # pushing after the agent's exit. Older tasks, with no runner recorded, go by the worker's lock.
        reap() {
          for n in $(ids); do
            [ "$(get "$n" state)" = running ] || continue
            set -- $(get "$n" runner)
            if [ $# -eq 3 ]; then
              if [ "$3" = "$(pod)" ]; then
                alive "$1 $2" && continue
                why="the workspace's container stopped while the task ran"
              else
                why="the workspace's pod ($3) was replaced while the task ran"
              fi
            else
              alive "$(cat "$root/.worker/pid" 2>/dev/null)" && continue
              why="the workspace's container stopped while the task ran"
            fi
            # Read again now that the runner is known gone: it may have ended the task just before it exited.
            [ "$(get "$n" state)" = running ] || continue
            note "$n" "$why"
            [ -f "$root/$n/ended" ] || put "$n" ended "$(now)"
            put "$n" state failed
          done
        }

        # The tool calls in the lines of a Claude Code stream-json log (its assistant events), one "NAME WHAT" a line:
        # WHAT is the command, file or pattern the call names (as `so`'s view of the log shows it), without control
        # characters, 200 bytes at most. Any other line gives nothing.
        tool_calls() {
          grep '^{"type":"assistant"' | grep '"type":"tool_use"' | while IFS= read -r l; do
            rest=$(printf '%s\n' "$l" | sed -E 's/.*"type":"tool_use"//')
            name=$(printf '%s\n' "$rest" | sed -nE 's/^(,"[a-z_]+":"[^"]*")*,"name":"([^"]*)".*/\2/p')
            [ -n "$name" ] || continue
            what=
            for k in command file_path path pattern url query description; do
              what=$(printf '%s\n' "$rest" | grep -oE "\"$k\":\"([^\"\\\\]|\\\\.)*\"" | head -n 1)
              [ -n "$what" ] && break
            done
            what=${what#*\":\"}
            what=${what%\"}
            printf '%s\n' "$name${what:+ $what}" | sed 's/\\"/"/g; s/\\\\/\\/g; s/\\[nrt]/ /g' | tr -d '\000-\037\177' | cut -c1-200
          done
        }

        # While the agent (pid $2) of task $1 runs, and once after it ended: the tool calls its log shows, each noted
        # in the progress as "→ NAME WHAT" when seen (the last is the task's step); 200 at most.
        steps() {
          seen=0 size=-1 left=200
          while :; do
            live=0
            kill -0 "$2" 2>/dev/null && live=1
            now_size=$(wc -c < "$root/$1/log" 2>/dev/null | tr -d ' ')
            if [ "${now_size:-0}" != "$size" ]; then
              size=${now_size:-0}
              lines=$(wc -l < "$root/$1/log" 2>/dev/null | tr -d ' ')
              if [ "${lines:-0}" -gt "$seen" ] && [ "$left" -gt 0 ]; then
                tail -n +"$((seen + 1))" "$root/$1/log" | head -n "$((lines - seen))" | tool_calls \
                  | head -n "$left" > "$root/$1/.steps"
                while IFS= read -r call; do
                  note "$1" "→ $call"
                  put "$1" step "$call"
                  left=$((left - 1))
                done < "$root/$1/.steps"
                seen=$lines
              fi
            fi
            [ $live = 1 ] || break
            sleep 0.25
          done
          rm -f "$root/$1/.steps"
        }

        run_task() {
          n=$1 d=$root/$1
          mkdir "$d/claim" 2>/dev/null || return 0
          put "$n" base "$(git rev-parse HEAD 2>/dev/null)"
          put "$n" branch "$(git rev-parse --abbrev-ref HEAD 2>/dev/null)"
          put "$n" started "$(now)"
          put "$n" runner "$$ $(started_at $$) $(pod)"
          put "$n" state running
          note "$n" "started"
          # The agent runs in a session (and process group) of its own: cancel ends all of it, and nothing else.
          runner=sh
          command -v setsid >/dev/null 2>&1 && runner="setsid sh"
          $runner -c 'TASK=$(cat "$1/text"); SO_TASK_ID=$2; SO_TASK_STEP=$1/step; export TASK SO_TASK_ID SO_TASK_STEP
            eval "$(cat "$1/command")"' so "$d" "$n" </dev/null >"$d/log" 2>&1 &
          p=$!
          put "$n" pid "$p $(started_at "$p")"
          steps "$n" "$p" &
          watcher=$!
          code=0
          wait "$p" || code=$?
          wait "$watcher" 2>/dev/null || true
          put "$n" exit "$code"
          state=succeeded
          [ "$code" -eq 0 ] || state=failed
          [ -e "$d/cancel" ] && state=cancelled
          note "$n" "the agent exited with $code"
          # What the agent left uncommitted is committed (a cancelled task's too: its work stays), so the branch holds it.
          if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
            subject=$(head -n 1 "$d/text" | cut -c1-72)
            if git add -A && git commit -q -m "so task: $subject" -m "$(cat "$d/text")"; then
              note "$n" "committed what the agent left uncommitted"
            else
              note "$n" "could not commit what the agent left uncommitted"
            fi
          fi
          base=$(get "$n" base)
          if [ -n "$base" ]; then
            git log --reverse --format='%H %s' "$base..HEAD" > "$d/commits" 2>/dev/null
            git diff --name-status --no-renames "$base" HEAD > "$d/files" 2>/dev/null
          fi
          # Usage lines (Claude Code's stream-json messages each carry theirs: the result line sums them up).
          grep -E '"(total_cost_usd|usage)"' "$d/log" 2>/dev/null \
            | grep -vE '^[[:space:]]*[{]"type": ?"(assistant|user|system|stream_event)"' > "$d/cost" 2>/dev/null || true
          # aider's usage reports (plain text): "Tokens: 2.3k sent, 56 received. Cost: $0.0063 message, $0.0063 session."
          grep -vE '^[[:space:]]*[{]' "$d/log" 2>/dev/null \
            | grep -E 'Tokens: [0-9.]+k? sent|Cost: [$][0-9.]+ message, [$][0-9.]+ session[.]' >> "$d/cost" 2>/dev/null || true
          if [ "$(get "$n" push)" = 1 ] && [ -s "$d/commits" ]; then
            b=$(get "$n" branch)
            if git remote get-url origin >/dev/null 2>&1; then
              # The credentials handed in since the worker started (a GitHub App's token, renewed hourly) win.
              \#(HandedCredentials.readingPrelude)
              if git push -q origin "HEAD:refs/heads/$b" 2>"$d/push.err"; then
                put "$n" pushed "$b"
                note "$n" "pushed $b"
              else
                note "$n" "push failed: $(tail -n 1 "$d/push.err")"
              fi
            else
              note "$n" "not pushed: the checkout has no origin"
            fi
          fi
          put "$n" ended "$(now)"
          put "$n" state "$state"
          note "$n" "$state"
        }

        case "$verb" in
        submit)
          # submit TEXT COMMAND PUSH [ISSUE [PR_TITLE PR_BASE]]: prints the new task's id (PR_TITLE set: a pull request is wanted).
          last=$(ids | tail -n 1)
          n=$((${last:-0} + 1))
          until mkdir "$root/$n" 2>/dev/null; do n=$((n + 1)); done
          printf '%s' "$1" > "$root/$n/text"
          printf '%s' "$2" > "$root/$n/command"
          put "$n" push "$3"
          [ -n "${4:-}" ] && put "$n" issue "$4"
          [ -n "${5:-}" ] && put "$n" pr_title "$5" && put "$n" pr_base "${6:-}"
          put "$n" queued "$(now)"
          : > "$root/$n/progress"
          put "$n" state queued
          note "$n" "queued"
          reap
          ensure_worker
          echo "$n"
          ;;
        worker)
          echo "$$ $(started_at $$)" > "$root/.worker/pid"
          while :; do
            next=
            for n in $(ids); do [ "$(get "$n" state)" = queued ] && { next=$n; break; }; done
            if [ -z "$next" ]; then
              rm -rf "$root/.worker"
              # A task queued after that look, while no worker held the lock: taken up again.
              for n in $(ids); do [ "$(get "$n" state)" = queued ] && { next=$n; break; }; done
              [ -n "$next" ] && mkdir "$root/.worker" 2>/dev/null && { echo "$$ $(started_at $$)" > "$root/.worker/pid"; continue; }
              exit 0
            fi
            run_task "$next"
          done
          ;;
        report)
          # report [ID…]: every file of each task, framed as "@@ ID NAME BYTES" and the bytes.
          reap
          for n in $(ids); do [ "$(get "$n" state)" = queued ] && { ensure_worker; break; }; done
          if [ $# -eq 0 ]; then
            for n in $(ids); do [ -f "$root/$n/state" ] && set -- "$@" "$n"; done
          fi
          for n in "$@"; do
            need "$n"
            for f in text command push issue pr_title pr_base queued started ended state exit step progress \
              base branch commits files pushed pull_request cost; do
              [ -f "$root/$n/$f" ] || continue
              printf '@@ %s %s %s\n' "$n" "$f" "$(wc -c < "$root/$n/$f" | tr -d ' ')"
              cat "$root/$n/$f"
              echo
            done
          done
          ;;
        log)
          # log ID: the log so far.
          need "$1"
          cat "$root/$1/log" 2>/dev/null || true
          ;;
        follow)
          # follow ID [stderr]: the log as it grows (to stderr when asked), until the task ends.
          need "$1"
          [ "${2:-}" = stderr ] && exec 1>&2
          off=0
          while :; do
            done=0
            final "$1" && done=1
            size=$(wc -c < "$root/$1/log" 2>/dev/null | tr -d ' ' || echo 0)
            if [ "${size:-0}" -gt "$off" ]; then
              tail -c +"$((off + 1))" "$root/$1/log" | head -c "$((size - off))"
              off=$size
            fi
            [ $done = 1 ] && exit 0
            sleep 0.5
            reap
          done
          ;;
        set)
          # set ID pushed|pull_request VALUE: what so did for the task after it ended (an attached task's push and pull request).
          need "$1"
          case "$2" in pushed|pull_request) put "$1" "$2" "$3"; note "$1" "$2 $3" ;; *) echo "so-task: cannot set $2" >&2; exit 2 ;; esac
          ;;
        claim)
          # claim ID WHAT: exit 0 the first time only (a comment posted once, whoever sees the end first).
          need "$1"
          mkdir "$root/$1/$2.claimed" 2>/dev/null || exit 7
          ;;
        wait)
          need "$1"
          until final "$1"; do sleep 0.5; reap; done
          ;;
        cancel)
          need "$1"
          final "$1" && { echo "so-task: task $1 already ended ($(get "$1" state))" >&2; exit 5; }
          : > "$root/$1/cancel"
          if mkdir "$root/$1/claim" 2>/dev/null; then
            put "$1" ended "$(now)"
            put "$1" state cancelled
            note "$1" "cancelled before it started"
            exit 0
          fi
          note "$1" "cancel asked"
          i=0
          until [ -f "$root/$1/pid" ] || [ $i -ge 20 ]; do sleep 0.1; i=$((i + 1)); done
          set -- "$1" $(get "$1" pid)
          [ $# -ge 2 ] && kill -TERM -"$2" 2>/dev/null
          i=0
          until final "$1" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
          if ! final "$1" && [ $# -ge 2 ]; then kill -KILL -"$2" 2>/dev/null; note "$1" "killed: it did not end within 10 s of TERM"; fi
          until final "$1" || [ $i -ge 200 ]; do sleep 0.1; i=$((i + 1)); done
          final "$1" || { echo "so-task: task $1 did not end" >&2; exit 6; }
          ;;
        *)
          echo "so-task: unknown verb $verb" >&2
          exit 2
          ;;
        esac
        """#
}
