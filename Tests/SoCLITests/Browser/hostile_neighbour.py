#!/usr/bin/env python3
"""Hostile neighbours of `so dashboard`, in headless Chromium (Debian's) driven by Selenium.

Called by HostileNeighbourBrowserTests (Tests/SoDashboardTests) with a dashboard served over HTTPS on 127.0.0.1
(its sign-in link, its token in the fragment) and the same dashboard's plain-HTTP twin behind a proxy this script
runs as an ingress would, logging every request line. Each case prints "ok: …" or ends the script with "FAIL: …":
  - the sign-in link's token reaches no server: the proxy's access log never holds it;
  - a cleartext request to the HTTPS listener gets no page;
  - another origin on 127.0.0.1 (this script's own server on another port, the same site, so the browser sends the
    dashboard's cookie with its requests) opens an event stream with credentials and posts an action: it prints
    "HOSTILE-OPEN" and holds the page open while the test checks that no stream was served to it;
  - a namespace whose annotations were planted (its directory elsewhere) offers no action, and a POST for it from
    the page's own origin, with the page's CSRF token, is refused naming why.
"""
import argparse, http.client, http.server, socketserver, ssl, sys, threading, time, urllib.error, urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

p = argparse.ArgumentParser()
p.add_argument("--url", required=True, help="the HTTPS sign-in link, token in its fragment")
p.add_argument("--plain", required=True, help="the plain-HTTP twin's base URL (behind this script's proxy)")
p.add_argument("--token", required=True)
p.add_argument("--cert", required=True, help="a certificate for 127.0.0.1 (the hostile origin serves HTTPS too)")
p.add_argument("--key", required=True)
p.add_argument("--hold", type=float, default=3)
p.add_argument("--handshake", action="store_true", help="after HOSTILE-OPEN, wait for a line on stdin, not --hold")
a = p.parse_args()
base = a.url.split("/signin")[0]


def say(line):
    print(line, flush=True)


def fail(line):
    print("FAIL: " + line, flush=True)
    sys.exit(1)


class Quiet(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


# An ingress in front of the plain twin: forwards each request and logs its request line, as access logs do.
access_log = []


class Proxy(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def forward(self):
        access_log.append(f"{self.command} {self.path}")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        headers["X-Forwarded-Proto"] = "https"
        headers["X-Forwarded-For"] = self.client_address[0]
        req = urllib.request.Request(a.plain + self.path, data=body, headers=headers, method=self.command)
        try:
            r = urllib.request.build_opener(NoRedirect).open(req, timeout=10)
            status, rh, data = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, rh, data = e.code, e.headers, e.read()
        self.send_response(status)
        for k, v in rh.items():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = forward
    do_POST = forward


proxy = Quiet(("127.0.0.1", 0), Proxy)
threading.Thread(target=proxy.serve_forever, daemon=True).start()
proxied = f"http://localhost:{proxy.server_address[1]}"

# Another origin on this machine: a page that uses the visitor's cookie against the dashboard.
HOSTILE = """<!doctype html><title>hostile</title><body>
<form id="f" method="post" action="%(base)s/actions">
<input name="action" value="stop"><input name="namespace" value="fix-login"><input name="csrf" value="guess">
</form>
<script>
const es = new EventSource('%(base)s/events?ns=fix-login', { withCredentials: true });
es.onopen = function () { document.title = 'stream-open'; };
fetch('%(base)s/?fragment=1', { credentials: 'include', mode: 'no-cors' });
</script></body>"""


class Hostile(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        data = (HOSTILE % {"base": base}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


# Over HTTPS, as the dashboard: the same site (scheme and host; the port does not count), so SameSite=Strict
# cookies go with its requests.
hostile = Quiet(("127.0.0.1", 0), Hostile)
tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
tls.load_cert_chain(a.cert, a.key)
hostile.socket = tls.wrap_socket(hostile.socket, server_side=True)
threading.Thread(target=hostile.serve_forever, daemon=True).start()
hostile_url = f"https://127.0.0.1:{hostile.server_address[1]}/"

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--ignore-certificate-errors"]:
    options.add_argument(arg)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def is_error_page():
    return driver.current_url.startswith("chrome-error:") or 'id="main-frame-error"' in driver.page_source


def error_text():
    """The browser's own words on an error page (its net::ERR_ code), or nothing."""
    if not is_error_page():
        return ""
    try:
        return driver.execute_script("return document.body.innerText")[:200].replace("\n", " ")
    except Exception:
        return "(an error page)"


def page_state():
    """Where the browser is and what the page says, for a line about a wait: its address without the fragment, the
    sign-in page's problem if it shows one, and whether its script ran (it takes the token out of the address)."""
    try:
        return driver.execute_script(
            "const p = document.querySelector('.problem');"
            "return location.origin + location.pathname + (location.hash ? ' (the token still in the address: its"
            " script did not run)' : '') + (p ? ' saying: ' + p.innerText : '') + ', ' + document.readyState;")
    except Exception as e:
        return f"unreadable: {type(e).__name__}"


def reach(url, seconds=150):
    """Opens `url` until the dashboard's live page is drawn (`seconds` at most). A browser error page (a TLS
    handshake or a connection that timed out on a machine running every suite at once) is not waited on: the
    address is opened again, as a person would reload it. So is a sign-in page still there after 20 s (in a CI
    running every suite at once, its script's sign-in once went unanswered for the whole 90 s the test waited)."""
    deadline = time.time() + seconds
    driver.get(url)
    opened = time.time()
    while time.time() < deadline and "live-state" not in driver.page_source:
        if is_error_page():
            time.sleep(1)
            driver.get(url)
            opened = time.time()
        elif time.time() - opened > 20:
            say(f"reloading {url.split('#')[0]}: still not signed in after 20 s ({page_state()})")
            # A load, not a change of fragment: the same address with its #token= is a same-document navigation,
            # which runs no script again (a sign-in script that failed to load stays unloaded).
            driver.get("about:blank")
            driver.get(url)
            opened = time.time()
        time.sleep(0.1)


try:
    # 1. The sign-in link through the "ingress": the token is never in its access log, nor in the address bar.
    reach(proxied + "/signin#token=" + a.token)
    if "live-state" not in driver.page_source:
        fail("signing in through the proxy did not reach the page: " + page_state())
    if "token" in driver.current_url:
        fail("the token stayed in the address bar: " + driver.current_url)
    logged = [line for line in access_log if a.token in line]
    if logged:
        fail("the token is in the proxy's access log: " + logged[0])
    say(f"ok: signed in through a proxy whose access log ({len(access_log)} lines) never held the token")

    # 2. Cleartext to the HTTPS listener: no page.
    try:
        urllib.request.urlopen(base.replace("https://", "http://") + "/healthz", timeout=5).read()
        fail("a cleartext request to the HTTPS listener was answered")
    except (urllib.error.URLError, ConnectionError, http.client.RemoteDisconnected) as e:
        say(f"ok: a cleartext request to the HTTPS listener gets no page ({type(e).__name__})")

    # 3. Signed in on the HTTPS dashboard, the person visits another origin on 127.0.0.1.
    reach(a.url)
    if "live-state" not in driver.page_source:
        fail("signing in over HTTPS did not reach the page: " + page_state())
    driver.get(hostile_url)
    say("HOSTILE-OPEN")
    if a.handshake:
        sys.stdin.readline()  # the test has looked at its server while this page stayed open
    else:
        time.sleep(a.hold)
    if driver.title == "stream-open":
        fail("another origin opened the dashboard's event stream")
    # The post's answer is waited for (30 s at most). A browser error page (the post's connection reset or timed out
    # on a machine running every suite at once) is no answer: the hostile page is opened again and posts again, up to
    # 3 times. Anything the dashboard answers other than its refusal fails.
    for attempt in range(3):
        driver.execute_script("document.getElementById('f').submit()")
        deadline = time.time() + 30
        while time.time() < deadline:
            time.sleep(0.2)
            source = driver.page_source
            if "forbidden" in source or is_error_page():
                break
        if not is_error_page():
            break
        say(f"the post got no answer ({error_text()}); posting again")
        driver.get(hostile_url)
        time.sleep(1)
    if "forbidden" not in driver.page_source:
        fail("another origin's form post was not refused: " + error_text() + " " + driver.page_source[:300])
    say("ok: another origin on 127.0.0.1 could not open an event stream or post an action")

    # 4. A planted namespace: no action offered, and a POST for it (this origin, the page's CSRF token) refused.
    driver.get(base + "/d/planted")
    if driver.find_elements(By.CSS_SELECTOR, "form[action='/actions']"):
        fail("the planted namespace's page offers an action")
    driver.get(base + "/d/fix-login")
    # The page's forms are drawn once it has read the workspace (a minute at most: under load it was not yet).
    deadline = time.time() + 60
    while time.time() < deadline and not driver.find_elements(By.CSS_SELECTOR, "input[name='csrf']"):
        time.sleep(0.1)
    said = driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const csrf = document.querySelector("input[name='csrf']");
        if (!csrf) { done('no csrf on the page'); return; }
        fetch('/actions', { method: 'POST', credentials: 'same-origin',
          headers: { 'Accept': 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'action=start&namespace=planted&csrf=' + encodeURIComponent(csrf.value) })
          .then(function (r) { return r.text(); }).then(done, function (e) { done(String(e)); });
        """
    )
    if "is not under" not in said:
        fail("a start of the planted namespace was not refused for its directory: " + said)
    say("ok: a planted namespace offers no action and its start is refused: " + said)
finally:
    driver.quit()
say("all hostile-neighbour cases passed")
