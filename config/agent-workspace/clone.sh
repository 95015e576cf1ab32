#!/bin/sh
# Init container of agent-workspace: checks out GIT_REPO at GIT_REF into /workspace on a new branch
# (WORKSPACE_BRANCH, default agent/<workspace name>). A checkout already there is kept, with the agent's
# work in it, so stop/start and restarts never lose anything.
set -eu
cd /workspace
if [ -d .git ]; then
  echo "clone: /workspace already holds a checkout ($(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo '?')); keeping it"
  exit 0
fi
if [ -z "${GIT_REPO:-}" ]; then
  echo "clone: GIT_REPO is empty; /workspace starts empty"
  exit 0
fi
branch="${WORKSPACE_BRANCH:-agent/${WORKSPACE_NAME:-workspace}}"
ref="${GIT_REF:-main}"
echo "clone: $GIT_REPO at $ref onto branch $branch"
# init + fetch works in a non-empty directory (a fresh volume may hold lost+found).
git init -q
git remote add origin "$GIT_REPO"
git fetch -q origin "$ref"
git checkout -q -b "$branch" FETCH_HEAD
echo "clone: done ($(git rev-parse --short HEAD))"
