#!/usr/bin/env python3
"""A stand-in model API for so's e2e tests of real agent CLIs (Claude Code, aider), stdlib only.

It speaks enough of Anthropic's Messages API (POST /v1/messages, with and without stream: true: message_start,
content_block_start/delta/stop with text_delta and input_json_delta for tool_use, message_delta with usage and
stop_reason, message_stop) and of OpenAI's chat completions (POST /v1/chat/completions, streamed or not) for the CLIs
to run their real loops against it, scripted per test:

    {"turns": [
        {"tool_use": {"name": "Write", "input": {"file_path": "/workspace/x.txt", "content": "hi\\n"}}},
        {"text": "Wrote x.txt."}
    ]}

Each request that offers tools (Claude Code's main loop), and every chat completion, takes the next turn; a
request without tools (a CLI's side question: a title, a summary) is answered with `side_text` without taking one.
A turn is one of:
  {"text": T}                        the reply T, stop_reason end_turn
  {"tool_use": {"name", "input"}}    optional "text" first; stop_reason tool_use
  {"hold": NAME}                     the stream starts, then waits (a ping a second) until the file NAME appears in
                                     the directory of --log, or the client goes away (what a cancel does)
  {"usage": {"input_tokens", "output_tokens"}} may go with any of them (default 1000 and 200)
When the turns run out, the reply is "done." (counted as an extra turn in the log).

Every request is logged to --log (JSON lines): path, model, stream, tool count, which turn it took, whether the
API key it carried was the one --key names (never the key itself), and the last user message's tool results (their
is_error and text), so a test reads what the CLI sent back. It listens on --host (loopback, or the real node's
address) at --port (0: any), and writes the port to --port-file once it listens.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"turn": 0, "n": 0}


def load_script(path):
    with open(path, encoding="utf-8") as f:
        script = json.load(f)
    if not isinstance(script.get("turns"), list):
        raise SystemExit(f"model_standin: {path}: 'turns' must be a list")
    return script


def next_turn(script):
    with LOCK:
        i = STATE["turn"]
        STATE["turn"] += 1
    turns = script["turns"]
    if i < len(turns):
        return i, turns[i]
    return i, {"text": "done.", "extra": True}


def tool_results(body):
    """The last user message's tool results: [{is_error, text}] (Anthropic's and OpenAI's shapes)."""
    out = []
    messages = body.get("messages") or []
    for m in reversed(messages):
        if m.get("role") == "tool":
            out.append({"is_error": False, "text": str(m.get("content"))[:2000]})
            continue
        if m.get("role") != "user":
            if out:
                break
            continue
        content = m.get("content")
        if isinstance(content, list):
            for c in content:
                if isinstance(c, dict) and c.get("type") == "tool_result":
                    inner = c.get("content")
                    if isinstance(inner, list):
                        text = " ".join(str(x.get("text", "")) for x in inner if isinstance(x, dict))
                    else:
                        text = str(inner)
                    out.append({"is_error": bool(c.get("is_error")), "text": text[:2000]})
        break
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "model-standin/1"

    def log_message(self, *args):
        pass

    def record(self, entry):
        with LOCK:
            STATE["n"] += 1
            entry["n"] = STATE["n"]
            entry["at"] = round(time.time(), 3)
            with open(self.server.args.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def key_ok(self):
        want = self.server.args.key
        got = self.headers.get("x-api-key") or ""
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Bearer "):
            got = got or auth[len("Bearer "):]
        return bool(want) and got == want

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_stream(self):
        """Headers of a server-sent event stream, which ends when the connection closes."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.record({"method": "GET", "path": self.path})
        if self.path.startswith("/v1/models"):
            return self.send_json(200, {"data": [{"id": "stand-in", "object": "model", "type": "model"}]})
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

    def do_POST(self):
        body = self.read_body()
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self.record({"method": "POST", "path": path, "key_ok": self.key_ok()})
            return self.send_json(200, {"input_tokens": 1000})
        if path.endswith("/messages"):
            return self.messages(path, body)
        if path.endswith("/chat/completions"):
            return self.chat(path, body)
        self.record({"method": "POST", "path": path})
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not here"}})

    # ---- Anthropic Messages ----

    def messages(self, path, body):
        script = self.server.script
        tools = body.get("tools") or []
        entry = {
            "method": "POST", "path": path, "model": body.get("model"), "stream": bool(body.get("stream")),
            "tools": len(tools), "key_ok": self.key_ok(), "tool_results": tool_results(body),
        }
        if tools:
            i, turn = next_turn(script)
            entry["turn"] = i
            entry["extra"] = bool(turn.get("extra"))
        else:
            turn = {"text": script.get("side_text", "ok")}
            entry["turn"] = "side"
        if "hold" in turn:
            entry["hold"] = turn["hold"]
        self.record(entry)
        model = body.get("model") or "stand-in"
        usage = turn.get("usage") or {"input_tokens": 1000, "output_tokens": 200}
        blocks = []
        if turn.get("text") is not None:
            blocks.append({"type": "text", "text": turn["text"]})
        if turn.get("tool_use"):
            tu = turn["tool_use"]
            with LOCK:
                tid = f"toolu_standin_{STATE['n']:04d}"
            blocks.append({"type": "tool_use", "id": tid, "name": tu["name"], "input": tu.get("input", {})})
        stop = "tool_use" if turn.get("tool_use") else "end_turn"
        msg_id = f"msg_standin_{entry['n']:04d}"
        if not body.get("stream"):
            if "hold" in turn:
                self.hold(turn["hold"], None)
            return self.send_json(200, {
                "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": blocks,
                "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0)},
            })
        self.start_stream()

        def event(name, data):
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        try:
            event("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": 1,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
            if "hold" in turn:
                self.hold(turn["hold"], lambda: event("ping", {"type": "ping"}))
            for idx, b in enumerate(blocks):
                if b["type"] == "text":
                    event("content_block_start", {"type": "content_block_start", "index": idx,
                                                  "content_block": {"type": "text", "text": ""}})
                    text = b["text"]
                    for k in range(0, len(text), 16):
                        event("content_block_delta", {"type": "content_block_delta", "index": idx,
                                                      "delta": {"type": "text_delta", "text": text[k:k + 16]}})
                else:
                    event("content_block_start", {"type": "content_block_start", "index": idx, "content_block": {
                        "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                    js = json.dumps(b["input"])
                    for k in range(0, len(js), 24):
                        event("content_block_delta", {"type": "content_block_delta", "index": idx, "delta": {
                            "type": "input_json_delta", "partial_json": js[k:k + 24]}})
                event("content_block_stop", {"type": "content_block_stop", "index": idx})
            event("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": {"output_tokens": usage.get("output_tokens", 0)}})
            event("message_stop", {"type": "message_stop"})
        except (BrokenPipeError, ConnectionResetError):
            self.record({"event": "client went away", "turn": entry["turn"]})

    def hold(self, name, ping):
        """Waits until the file `name` appears beside the log, or the client goes away (a write fails)."""
        release = os.path.join(os.path.dirname(os.path.abspath(self.server.args.log)), name)
        deadline = time.time() + 600
        while time.time() < deadline and not os.path.exists(release):
            time.sleep(1)
            if ping:
                ping()
        self.record({"event": "released", "hold": name})

    # ---- OpenAI chat completions ----

    def chat(self, path, body):
        script = self.server.script
        i, turn = next_turn(script)
        self.record({
            "method": "POST", "path": path, "model": body.get("model"), "stream": bool(body.get("stream")),
            "tools": len(body.get("tools") or []), "key_ok": self.key_ok(), "turn": i,
            "extra": bool(turn.get("extra")), "tool_results": tool_results(body),
        })
        model = body.get("model") or "stand-in"
        usage = turn.get("usage") or {"input_tokens": 1000, "output_tokens": 200}
        u = {"prompt_tokens": usage.get("input_tokens", 0), "completion_tokens": usage.get("output_tokens", 0),
             "total_tokens": usage.get("input_tokens", 0) + usage.get("output_tokens", 0)}
        text = turn.get("text") or ""
        cid = f"chatcmpl-standin-{i}"
        now = int(time.time())
        if not body.get("stream"):
            return self.send_json(200, {
                "id": cid, "object": "chat.completion", "created": now, "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": u})
        self.start_stream()

        def chunk(delta, finish=None, usage=None):
            obj = {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                obj["usage"] = usage
            self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
            self.wfile.flush()

        try:
            chunk({"role": "assistant", "content": ""})
            if "hold" in turn:
                self.hold(turn["hold"], lambda: (self.wfile.write(b": ping\n\n"), self.wfile.flush()))
            for k in range(0, len(text), 16):
                chunk({"content": text[k:k + 16]})
            chunk({}, "stop", u)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.record({"event": "client went away", "turn": i})


def main():
    p = argparse.ArgumentParser(description="a scripted stand-in model API (Anthropic Messages, OpenAI chat)")
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--key", default="", help="the API key the CLI is expected to send (only compared, never logged)")
    args = p.parse_args()
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    srv.daemon_threads = True
    srv.args = args
    srv.script = load_script(args.script)
    port = srv.server_address[1]
    if args.port_file:
        with open(args.port_file + ".part", "w") as f:
            f.write(str(port))
        os.rename(args.port_file + ".part", args.port_file)
    print(f"model stand-in on {args.host}:{port}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
