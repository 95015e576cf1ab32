#!/usr/bin/env python3
"""A stand-in for GitHub, for so's GitHub-loop e2e test and benchmark: a real HTTP server on loopback.

- It sends webhooks as GitHub does: POST to the hook URL with Content-Type application/json, User-Agent
  GitHub-Hookshot/…, X-GitHub-Event, X-GitHub-Delivery (a GUID), X-GitHub-Hook-ID, X-GitHub-Hook-Installation-Target-
  Type/-ID, X-Hub-Signature (HMAC-SHA1) and X-Hub-Signature-256 (HMAC-SHA256 of the raw body with the secret); the
  payloads are GitHub's own examples (payloads/: trimmed copies of octokit/webhooks' payload-examples) with this
  repository's names, numbers, users and texts filled in. A delivery can be sent again as it was (GitHub's
  "Redeliver": the same X-GitHub-Delivery, the same body).
- It serves the REST calls so makes, with the token as a bearer (401 otherwise): comments and reactions on issues
  and comments, pull requests (create: the head must be a branch of the bare repository, as GitHub checks; a second
  for the same head is GitHub's 422 "already exists"; list with state= and head=; get), a collaborator's permission.
  Every request is recorded (one JSON line in --log, and GET /_standin/requests).
- It holds the repository: --git-dir is the bare repository (served by git daemon) the loop pushes to. It also
  serves it over smart HTTP at /git/OWNER/NAME.git (git http-backend), as GitHub serves a public repository: a clone
  or fetch (git-upload-pack) needs no token, a push (git-receive-pack) the token as the password of a basic
  authorization (user x-access-token); 401 and a challenge otherwise.
- As a private repository (--private): its deliveries say "private": true, and the git endpoint takes a clone or
  fetch only with a token it takes, as GitHub answers an anonymous one (401 and a challenge; git then asks its
  credential helper).
- As a GitHub App (--app-id ID --app-key PEM [--token-life SECONDS]): GET /repos/OWNER/NAME/installation and
  POST /app/installations/ID/access_tokens take only a JWT signed RS256 with that key (checked with the key's public
  half: alg, signature, iss, iat and an exp at most 10 minutes on), and the tokens it gives ("ghs_…", each ending after
  --token-life seconds, 3600 by default) are then the only ones the REST calls and the git endpoint take.

The test drives it through /_standin/ (loopback only, no token):
  POST /_standin/hook      {"url": …}                                    where deliveries go (the receiver moved)
  POST /_standin/label     {"title", "body", "label", "sender", "association"}     issues/labeled on a new issue
  POST /_standin/comment   {"number", "body", "sender", "association"}            issue_comment/created
  POST /_standin/review    {"number", "state", "body", "sender", "association",
                            "comments": [{"path", "line", "body"}]}     pull_request_review/submitted, then one
                                                                        pull_request_review_comment/created each
  POST /_standin/close     {"number", "merged"}                                   pull_request/closed
  POST /_standin/redeliver {"delivery"}                                           the same delivery again
  POST /_standin/replay    {"delivery"}                   the same signed body under a new X-GitHub-Delivery (a replay)
  POST /_standin/permission {"login", "role"}         what GET …/collaborators/LOGIN/permission answers for LOGIN:
                                                      role_name ROLE (admin, maintain, write, triage, read, none), and
                                                      permission its base as GitHub gives it (maintain → write,
                                                      triage → read); by default admin for the owner, read for others
  POST /_standin/fork      {"head", "fork", "title", "sender"}     a pull request from the fork FORK/NAME whose branch
                                                      is HEAD (its head.repo.fork true), and its pull_request/opened
  GET  /_standin/requests, GET /_standin/pulls, GET /_standin/tokens (the App's tokens given, oldest first)
Each sending call answers {"number", "deliveries": [{"delivery", "event", "status", "seconds"}]}; status 0 when the
receiver could not be reached (GitHub shows that delivery as failed, to be redelivered).

Usage: standin.py --repo OWNER/NAME --git-dir PATH --token TOKEN --secret-file F --port-file F --log F
"""
import argparse, base64, hashlib, hmac, http.server, json, os, re, secrets, subprocess, threading, time
import urllib.error, urllib.parse, urllib.request, uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REACTIONS = {"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}


class State:
    def __init__(self, args):
        self.repo = args.repo
        self.owner, self.name = args.repo.split("/")
        self.git_dir = args.git_dir
        self.token = args.token
        self.secret = open(args.secret_file).read().strip().encode()
        self.log = args.log
        self.hook = None
        self.lock = threading.Lock()
        self.number = 0  # issues and pull requests share their numbers, as on GitHub
        self.issues = {}  # number -> {"title", "body", "user"}
        self.pulls = {}  # number -> pull request JSON
        self.next_id = 1000
        self.requests = []
        self.sent = {}  # delivery -> (event, body bytes)
        self.reactions = set()
        self.permissions = {}
        self.app = App(args.app_id, args.app_key, args.token_life) if args.app_id else None
        self.tokens = []  # the App's tokens given: {"token", "expires", "at"}
        self.private = args.private

    def permission(self, login):
        """GitHub's answer for `login`: (role_name, permission), the legacy base GitHub still sends beside the role."""
        role = self.permissions.get(login.lower(), "admin" if login.lower() == self.owner.lower() else "read")
        return role, {"maintain": "write", "triage": "read"}.get(role, role)

    def authorized(self, token):
        """Whether `token` is one this GitHub takes: the App's, unexpired, when it is an App; else --token."""
        if self.app is None:
            return token == self.token
        with self.lock:
            return any(t["token"] == token and t["expires"] > time.time() for t in self.tokens)

    def new_id(self):
        with self.lock:
            self.next_id += 1
            return self.next_id

    def new_number(self):
        with self.lock:
            self.number += 1
            return self.number

    def branch_sha(self, ref):
        r = subprocess.run(["git", "--git-dir", self.git_dir, "rev-parse", "--verify", "-q", f"refs/heads/{ref}"],
                           capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None

    def record(self, entry):
        with self.lock:
            self.requests.append(entry)
            with open(self.log, "a") as f:
                f.write(json.dumps(entry) + "\n")


DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


class App:
    """A GitHub App: its ID and its key's public half (read with openssl), to check the JWTs it is asked with."""

    def __init__(self, app_id, key_file, life):
        self.id = app_id
        self.life = life
        out = subprocess.run(["openssl", "rsa", "-in", key_file, "-noout", "-modulus", "-text"],
                             capture_output=True, text=True, check=True).stdout
        self.n = int(re.search(r"^Modulus=([0-9A-Fa-f]+)$", out, re.M).group(1), 16)
        self.e = int(re.search(r"publicExponent: (\d+)", out).group(1))

    def check(self, jwt):
        """None when `jwt` is this App's and valid now, else what is wrong with it."""
        def part(x):
            return base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
        try:
            head, claims, sig = jwt.split(".")
            if json.loads(part(head)).get("alg") != "RS256":
                return "not RS256"
            c = json.loads(part(claims))
            k = (self.n.bit_length() + 7) // 8
            raw = part(sig)
            if len(raw) != k:
                return "a signature of the wrong length"
            em = pow(int.from_bytes(raw, "big"), self.e, self.n).to_bytes(k, "big")
            digest = hashlib.sha256(f"{head}.{claims}".encode()).digest()
            if em != b"\x00\x01" + b"\xff" * (k - 3 - len(DIGEST_INFO) - 32) + b"\x00" + DIGEST_INFO + digest:
                return "a signature that does not verify"
            now = time.time()
            if str(c.get("iss")) != self.id:
                return "another App's"
            if not (isinstance(c.get("iat"), int) and isinstance(c.get("exp"), int)):
                return "no iat or exp"
            if c["iat"] > now + 60 or c["exp"] <= now or c["exp"] - now > 600 + 5:
                return "'Expiration time' claim ('exp') is too far in the future or past"
        except (ValueError, TypeError, AttributeError):
            return "A JSON web token could not be decoded"
        return None


def user(login, uid=None):
    return {"login": login, "id": uid or (abs(hash(login)) % 10**8), "node_id": "U_" + login, "gravatar_id": "",
            "html_url": f"https://github.com/{login}", "type": "Bot" if login.endswith("[bot]") else "User",
            "site_admin": False}


def payload(name):
    with open(os.path.join(HERE, "payloads", name + ".json")) as f:
        return json.load(f)


def fill_repository(s, p, sender):
    r = p["repository"]
    r.update({"name": s.name, "full_name": s.repo, "private": s.private, "fork": False, "default_branch": "trunk",
              "html_url": f"https://github.com/{s.repo}", "clone_url": f"https://github.com/{s.repo}.git"})
    r["owner"] = dict(r.get("owner") or {}, **user(s.owner))
    p["sender"] = user(sender)
    p.pop("organization", None)
    p.pop("installation", None)


def pull_json(s, pr):
    """The pull request as GitHub shows it, its head's sha read from the bare repository now."""
    out = dict(pr)
    if pr.get("fork"):
        out["head"] = dict(pr["head"])  # its head is in the fork, not in the bare repository
        return out
    out["head"] = dict(pr["head"], sha=s.branch_sha(pr["head"]["ref"]) or pr["head"]["sha"])
    return out


def send(s, event, p):
    # The event's own times are now, as GitHub writes them (the examples' are from 2019).
    for k in ("issue", "pull_request", "comment"):
        if isinstance(p.get(k), dict):
            p[k]["updated_at"] = now()
    if isinstance(p.get("review"), dict):
        p["review"]["submitted_at"] = now()
    return send_body(s, event, json.dumps(p, separators=(",", ":")).encode())


def send_body(s, event, body):
    delivery = str(uuid.uuid4())
    s.sent[delivery] = (event, body)
    return deliver(s, delivery)


def deliver(s, delivery):
    event, body = s.sent[delivery]
    headers = {
        "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/5e8a3c1", "Accept": "*/*",
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery, "X-GitHub-Hook-ID": "424242",
        "X-GitHub-Hook-Installation-Target-Type": "repository", "X-GitHub-Hook-Installation-Target-ID": "186853002",
        "X-Hub-Signature": "sha1=" + hmac.new(s.secret, body, hashlib.sha1).hexdigest(),
        "X-Hub-Signature-256": "sha256=" + hmac.new(s.secret, body, hashlib.sha256).hexdigest(),
    }
    start = time.time()
    status = 0
    try:
        with urllib.request.urlopen(urllib.request.Request(s.hook, data=body, headers=headers, method="POST"),
                                    timeout=10) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    except (urllib.error.URLError, OSError):
        status = 0  # not reached: GitHub marks the delivery failed
    return {"delivery": delivery, "event": event, "status": status, "seconds": time.time() - start, "sentAt": start}


def issue_json(s, number):
    i = s.issues.get(number) or {"title": "", "body": "", "user": s.owner}
    out = {"number": number, "title": i["title"], "body": i["body"], "user": user(i["user"]), "state": "open",
           "html_url": f"https://github.com/{s.repo}/issues/{number}", "labels": [], "comments": 0,
           "author_association": "OWNER", "id": 10_000 + number, "node_id": f"I_{number}"}
    if number in s.pulls:
        out["html_url"] = f"https://github.com/{s.repo}/pull/{number}"
        out["pull_request"] = {"html_url": out["html_url"], "diff_url": out["html_url"] + ".diff",
                               "patch_url": out["html_url"] + ".patch", "merged_at": None}
        out["title"] = s.pulls[number]["title"]
    return out


def pr_payload(s, name, number, sender):
    p = payload(name)
    fill_repository(s, p, sender)
    pr = pull_json(s, s.pulls[number])
    keep = p["pull_request"]
    keep.update({k: v for k, v in pr.items() if k in keep or k in ("head", "base", "number", "merged")})
    keep["head"]["repo"] = p["repository"]
    keep["base"]["repo"] = p["repository"]
    if pr.get("fork"):
        # The head's repository is the fork, as GitHub sends it: another owner's, "fork": true.
        fork = dict(p["repository"], name=s.name, full_name=pr["fork"] + "/" + s.name, fork=True,
                    owner=user(pr["fork"]), html_url=f"https://github.com/{pr['fork']}/{s.name}")
        keep["head"]["repo"] = fork
    if "number" in p:
        p["number"] = number
    return p


def control(s, path, req):
    """A /_standin/ call: what to send, sent; the answer's JSON."""
    sender = req.get("sender", s.owner)
    association = req.get("association", "OWNER")
    if path == "hook":
        s.hook = req["url"]
        return {"hook": s.hook}
    if path == "redeliver":
        return {"deliveries": [deliver(s, req["delivery"])]}
    if path == "replay":
        event, body = s.sent[req["delivery"]]
        return {"deliveries": [send_body(s, event, body)]}
    if path == "permission":
        s.permissions[req["login"].lower()] = req["role"]
        return {"login": req["login"], "role": req["role"]}
    if path == "fork":
        number = s.new_number()
        head, fork = req["head"], req["fork"]
        s.pulls[number] = {
            "id": 20_000 + number, "number": number, "state": "open", "title": req.get("title", "A fork's change"),
            "body": "", "html_url": f"https://github.com/{s.repo}/pull/{number}", "user": user(sender),
            "author_association": "NONE", "merged": False, "draft": False, "created_at": now(), "closed_at": None,
            "fork": fork, "head": {"label": f"{fork}:{head}", "ref": head, "sha": "f" * 40, "user": user(fork)},
            "base": {"label": f"{s.owner}:trunk", "ref": "trunk", "sha": s.branch_sha("trunk"),
                     "user": user(s.owner)}}
        p = pr_payload(s, "pull_request.closed", number, sender)
        p["action"] = "opened"
        return {"number": number, "deliveries": [send(s, "pull_request", p)]}
    if path == "label":
        number = s.new_number()
        s.issues[number] = {"title": req["title"], "body": req.get("body", ""), "user": sender}
        p = payload("issues.labeled")
        fill_repository(s, p, sender)
        p["label"]["name"] = req.get("label", "so")
        p["issue"].update(issue_json(s, number))
        p["issue"]["author_association"] = association
        p["issue"]["labels"] = [p["label"]]
        return {"number": number, "deliveries": [send(s, "issues", p)]}
    if path == "comment":
        number = req["number"]
        p = payload("issue_comment.created")
        fill_repository(s, p, sender)
        p["issue"].update(issue_json(s, number))
        if number not in s.pulls:
            p["issue"].pop("pull_request", None)
        cid = s.new_id()
        p["comment"].update({"id": cid, "body": req["body"], "user": user(sender), "author_association": association,
                             "html_url": f"https://github.com/{s.repo}/issues/{number}#issuecomment-{cid}"})
        return {"number": number, "comment": cid, "deliveries": [send(s, "issue_comment", p)]}
    if path == "review":
        number = req["number"]
        p = pr_payload(s, "pull_request_review.submitted", number, sender)
        rid = s.new_id()
        sha = p["pull_request"]["head"]["sha"]
        p["review"].update({"id": rid, "body": req.get("body"), "state": req.get("state", "changes_requested"),
                            "user": user(sender), "author_association": association, "commit_id": sha,
                            "html_url": f"https://github.com/{s.repo}/pull/{number}#pullrequestreview-{rid}"})
        out = [send(s, "pull_request_review", p)]
        for c in req.get("comments", []):
            q = pr_payload(s, "pull_request_review_comment.created", number, sender)
            cid = s.new_id()
            q["comment"].update({"id": cid, "pull_request_review_id": rid, "path": c["path"], "line": c["line"],
                                 "original_line": c["line"], "position": c["line"], "body": c["body"],
                                 "commit_id": sha, "original_commit_id": sha, "user": user(sender),
                                 "author_association": association,
                                 "html_url": f"https://github.com/{s.repo}/pull/{number}#discussion_r{cid}"})
            out.append(send(s, "pull_request_review_comment", q))
        return {"number": number, "review": rid, "deliveries": out}
    if path == "close":
        number = req["number"]
        merged = bool(req.get("merged", False))
        s.pulls[number].update({"state": "closed", "merged": merged, "closed_at": now()})
        p = pr_payload(s, "pull_request.closed", number, sender)
        p["pull_request"].update({"state": "closed", "merged": merged})
        return {"number": number, "deliveries": [send(s, "pull_request", p)]}
    raise KeyError(path)


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def app_rest(s, method, parts, body, auth):
    """The App's own calls, with its JWT: (status, JSON), or None when `parts` is not one of them."""
    installation = method == "GET" and len(parts) == 4 and parts[0] == "repos" and parts[3] == "installation"
    tokens = method == "POST" and len(parts) == 4 and parts[:2] == ["app", "installations"] and \
        parts[3] == "access_tokens"
    if not (installation or tokens):
        return None
    if s.app is None:
        return 404, {"message": "Not Found"}
    wrong = s.app.check(auth[len("Bearer "):]) if auth.startswith("Bearer ") else "no JWT"
    if wrong:
        return 401, {"message": wrong, "documentation_url": "https://docs.github.com/rest"}
    if installation:
        if f"{parts[1]}/{parts[2]}".lower() != s.repo.lower():
            return 404, {"message": "Not Found"}
        return 200, {"id": 4242, "app_id": int(s.app.id) if s.app.id.isdigit() else 0,
                     "account": user(s.owner), "repository_selection": "selected"}
    if parts[2] != "4242":
        return 404, {"message": "Not Found"}
    names = (body or {}).get("repositories") if isinstance(body, dict) else None
    if names is not None and (not isinstance(names, list) or any(str(n).lower() != s.name.lower() for n in names)):
        return 422, {"message": "There is at least one repository that does not exist or is not accessible to the "
                                "parent installation."}
    given = {"token": "ghs_" + secrets.token_hex(18), "expires": time.time() + s.app.life, "at": time.time()}
    with s.lock:
        s.tokens.append(given)
    ends = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(given["expires"]))
    return 201, {"token": given["token"], "expires_at": ends, "repository_selection": "selected",
                 "permissions": {"contents": "write", "issues": "write", "pull_requests": "write"}}


def rest(s, method, path, query, body, auth):
    """GitHub's REST API, as far as so uses it: (status, JSON)."""
    parts = path.strip("/").split("/")
    app = app_rest(s, method, parts, body, auth)
    if app is not None:
        return app
    given = auth[len("Bearer "):] if auth.startswith("Bearer ") else auth[len("token "):] \
        if auth.startswith("token ") else None
    if given is None or not s.authorized(given):
        return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
    if len(parts) < 3 or parts[0] != "repos" or f"{parts[1]}/{parts[2]}".lower() != s.repo.lower():
        return 404, {"message": "Not Found"}
    rest_ = parts[3:]
    if method == "POST" and len(rest_) == 3 and rest_[0] == "issues" and rest_[2] == "comments":
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return 422, {"message": "Validation Failed"}
        cid = s.new_id()
        return 201, {"id": cid, "body": body["body"], "user": user("so-bot[bot]"),
                     "html_url": f"https://github.com/{s.repo}/issues/{rest_[1]}#issuecomment-{cid}"}
    code_comment = rest_[:2] == ["pulls", "comments"] and len(rest_) == 4 and rest_[2].isdigit()
    if method == "POST" and rest_[-1:] == ["reactions"] and (
            (rest_[0] == "issues" and len(rest_) in (3, 4)) or code_comment):
        if not isinstance(body, dict) or body.get("content") not in REACTIONS:
            return 422, {"message": "Validation Failed"}
        key = "/".join(rest_[:-1]) + ":" + body["content"]
        status = 200 if key in s.reactions else 201
        s.reactions.add(key)
        return status, {"id": s.new_id(), "content": body["content"], "user": user("so-bot[bot]")}
    if (method == "POST" and len(rest_) == 5 and rest_[0] == "pulls" and rest_[2] == "comments"
            and rest_[4] == "replies" and rest_[1].isdigit() and rest_[3].isdigit()):
        # A reply in a review comment's thread: the pull request must exist, the body be a string.
        if int(rest_[1]) not in s.pulls:
            return 404, {"message": "Not Found"}
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return 422, {"message": "Validation Failed"}
        return 201, {"id": s.new_id(), "body": body["body"], "in_reply_to_id": int(rest_[3]),
                     "user": user("so-bot[bot]")}
    if rest_ == ["pulls"] and method == "POST":
        return create_pull(s, body)
    if rest_ == ["pulls"] and method == "GET":
        state = query.get("state", ["open"])[0]
        head = query.get("head", [None])[0]
        found = [pull_json(s, p) for p in s.pulls.values()
                 if (state == "all" or p["state"] == state) and (head is None or p["head"]["label"] == head)]
        return 200, found
    if len(rest_) == 2 and rest_[0] == "pulls" and method == "GET" and rest_[1].isdigit():
        pr = s.pulls.get(int(rest_[1]))
        return (200, pull_json(s, pr)) if pr else (404, {"message": "Not Found"})
    if len(rest_) == 3 and rest_[0] == "collaborators" and rest_[2] == "permission" and method == "GET":
        role, perm = s.permission(rest_[1])
        return 200, {"permission": perm, "role_name": role, "user": user(rest_[1])}
    return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}


def create_pull(s, body):
    if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("title", "head", "base")):
        return 422, {"message": "Validation Failed", "errors": [{"resource": "PullRequest", "code": "missing_field"}]}
    head, base = body["head"].split(":")[-1], body["base"]
    errors = []
    if not s.branch_sha(head):
        errors.append({"resource": "PullRequest", "field": "head", "code": "invalid"})
    if not s.branch_sha(base):
        errors.append({"resource": "PullRequest", "field": "base", "code": "invalid"})
    if any(p["head"]["ref"] == head and p["state"] == "open" for p in s.pulls.values()):
        errors.append({"resource": "PullRequest", "code": "custom",
                       "message": f"A pull request already exists for {s.owner}:{head}."})
    if errors:
        return 422, {"message": "Validation Failed", "errors": errors}
    number = s.new_number()
    url = f"https://github.com/{s.repo}/pull/{number}"
    pr = {"id": 20_000 + number, "number": number, "state": "open", "title": body["title"], "body": body.get("body"),
          "html_url": url, "user": user("so-bot[bot]"), "author_association": "NONE", "merged": False,
          "draft": bool(body.get("draft", False)), "created_at": now(), "closed_at": None,
          "head": {"label": f"{s.owner}:{head}", "ref": head, "sha": s.branch_sha(head), "user": user(s.owner)},
          "base": {"label": f"{s.owner}:{base}", "ref": base, "sha": s.branch_sha(base), "user": user(s.owner)}}
    s.pulls[number] = pr
    return 201, pull_json(s, pr)


class Handler(http.server.BaseHTTPRequestHandler):
    state = None

    def answer(self, status, obj):
        out = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        out = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()

    def git(self, method, url, raw):
        """The bare repository over smart HTTP (git http-backend), for a basic authorization with a token."""
        s = self.state
        auth = self.headers.get("Authorization", "")
        password = None
        if auth.startswith("Basic "):
            try:
                password = base64.b64decode(auth[len("Basic "):]).decode().split(":", 1)[1]
            except (ValueError, IndexError):
                password = None
        service = urllib.parse.parse_qs(url.query).get("service", [url.path.rsplit("/", 1)[-1]])[0]
        # A public repository: anyone reads it, a push needs a token GitHub takes; a private one: both do.
        ok = (service == "git-upload-pack" and not s.private) or (password is not None and s.authorized(password))
        s.record({"method": method, "path": url.path, "query": url.query, "status": 200 if ok else 401,
                  "git": service, "password": password, "at": time.time()})
        if not ok:
            out = b"Invalid username or token."
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="GitHub"')
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        suffix = "/" + s.repo + ".git"
        root = s.git_dir[:-len(suffix)] if s.git_dir.endswith(suffix) else os.path.dirname(s.git_dir)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": root, "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": url.path[len("/git"):], "REQUEST_METHOD": method, "QUERY_STRING": url.query,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(raw)),
               "REMOTE_USER": "x-access-token", "REMOTE_ADDR": self.client_address[0],
               "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", "")}
        r = subprocess.run(["git", "http-backend"], input=raw, env=env, capture_output=True)
        cut = min((i for i in (r.stdout.find(b"\r\n\r\n"), r.stdout.find(b"\n\n")) if i >= 0), default=-1)
        head, body = (r.stdout[:cut], r.stdout[cut:].lstrip(b"\r\n")) if cut >= 0 else (b"", r.stdout)
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self, method):
        s = self.state
        url = urllib.parse.urlsplit(self.path)
        raw = self.body()
        if url.path.startswith("/git/"):
            return self.git(method, url, raw)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
            if method != "GET":
                return self.answer(400, {"message": "Problems parsing JSON"})
        if url.path.startswith("/_standin/"):
            what = url.path[len("/_standin/"):]
            if method == "GET" and what == "requests":
                with s.lock:
                    return self.answer(200, list(s.requests))
            if method == "GET" and what == "pulls":
                return self.answer(200, [pull_json(s, p) for p in s.pulls.values()])
            if method == "GET" and what == "tokens":
                with s.lock:
                    return self.answer(200, list(s.tokens))
            try:
                return self.answer(200, control(s, what, body or {}))
            except (KeyError, TypeError) as e:
                return self.answer(400, {"message": f"bad control call {what}: {e!r}"})
        status, obj = rest(s, method, url.path, urllib.parse.parse_qs(url.query), body,
                           self.headers.get("Authorization", ""))
        s.record({"method": method, "path": url.path, "query": url.query, "status": status, "body": body,
                  "auth": self.headers.get("Authorization", ""), "at": time.time()})
        self.answer(status, obj)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def log_message(self, *a):
        pass


def main():
    ap = argparse.ArgumentParser()
    for k in ("--repo", "--git-dir", "--token", "--secret-file", "--port-file", "--log"):
        ap.add_argument(k, required=True)
    ap.add_argument("--listen", default="127.0.0.1")
    ap.add_argument("--app-id")
    ap.add_argument("--app-key")
    ap.add_argument("--token-life", type=int, default=3600)
    ap.add_argument("--private", action="store_true")
    args = ap.parse_args()
    Handler.state = State(args)
    srv = http.server.ThreadingHTTPServer((args.listen, 0), Handler)
    # Its own port (runs at once each serve one), told through a file once it listens.
    with open(args.port_file + ".part", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.port_file + ".part", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
