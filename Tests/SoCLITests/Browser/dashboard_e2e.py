"""so dashboard in a real browser (Debian's chromium, driven by Selenium): what a person sees, without a reload.

Called by DashboardBrowserE2ETests with the dashboard's URL (token included) and what it needs to change the
cluster meanwhile (the so binary, the workspace's name, the environment). Prints one line per check and exits
non-zero at the first that fails. Screenshots go to --out.
"""
import argparse, json, os, subprocess, sys, time, urllib.error, urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By

p = argparse.ArgumentParser()
p.add_argument("--url", required=True)
p.add_argument("--so", required=True)
p.add_argument("--workspace", required=True)
p.add_argument("--up", required=True, help="JSON list: the arguments of so up")
p.add_argument("--cwd", required=True)
p.add_argument("--out", required=True)
p.add_argument("--log", help="a file each line is also appended to as it is said, with the seconds since the start")
a = p.parse_args()
started = time.time()
os.makedirs(a.out, exist_ok=True)
base = a.url.split("/signin")[0].rstrip("/")
COMMAND = ["--command", 'claude -p "$TASK" --output-format json']


def say(line):
    print(line, flush=True)
    if a.log:
        with open(a.log, "a") as f:
            f.write(f"{time.time() - started:7.1f} s  {line}\n")


def fail(line):
    say("FAIL: " + line)
    sys.exit(1)


def so(args, check=True):
    r = subprocess.run([a.so] + args, cwd=a.cwd, capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        fail(f"so {' '.join(args)}: exit {r.returncode}: {r.stdout}{r.stderr}")
    return r


def task(text, command=None):
    r = so(["deployment", "--name", a.workspace, "task", "--detach", "--no-push"]
           + (["--command", command] if command else COMMAND) + [text])
    return int(r.stdout.strip())


def wait(what, predicate, timeout=90, every=0.1, detail=None):
    end = time.time() + timeout
    while time.time() < end:
        try:
            v = predicate()
        except (StaleElementReferenceException, NoSuchElementException):
            v = None  # the live part was drawn again between finding an element and reading (or clicking) it
        if v:
            return v
        time.sleep(every)
    shot("failed-" + what.replace(" ", "-"))
    fail(f"not seen within {timeout} s: {what}" + (f" ({detail()})" if detail else ""))


def shot(name):
    driver.save_screenshot(os.path.join(a.out, name + ".png"))


# A wrong token, no token, and the token in a query (which would be in access logs) get 403 and nothing else.
for url, what in [(base + "/?token=" + "0" * 64, "a wrong token"), (base + "/", "no token"),
                  (base + "/d/x?token=", "an empty token"), (base + "/?token=" + a.url.split("#token=")[-1], "a query")]:
    try:
        urllib.request.urlopen(url)
        fail(f"{what} was let in")
    except urllib.error.HTTPError as e:
        body = e.read()
        if e.code != 403 or body != b"forbidden\n":
            fail(f"{what}: {e.code} {body[:80]!r}")
say("ok: a wrong, missing or empty token gets 403 'forbidden' and nothing else")

options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
    options.add_argument(arg)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    driver.get(base + "/signin#token=" + "f" * 64)
    time.sleep(1)
    if "forbidden" not in driver.page_source:
        fail("the browser was let in with a wrong token")
    shot("refused")
    driver.get(a.url)
    # The sign-in page's script hands the fragment's token over and leaves for the dashboard.
    wait("the page live", lambda: driver.find_element(By.ID, "live-state").text.startswith("live"), 120)
    if driver.current_url.find("token=") >= 0:
        fail("the token stayed in the address bar: " + driver.current_url)
    driver.execute_script("window.__kept = 1")

    # A workspace appears on the open page.
    began = time.time()
    say("… so up " + a.workspace)
    so(json.loads(a.up))
    up_took = time.time() - began
    say(f"… so up returned after {up_took:.1f} s")
    def ws_row():
        # Looked up each time: the live part is drawn again on every change.
        rows = [r for r in driver.find_elements(By.CSS_SELECTOR, "#deployments-table tbody tr") if a.workspace in r.text]
        return rows[0] if rows else None

    # Its namespace's watch event, through the page's event stream: seconds alone; 4 minutes at most, as a CI
    # running every suite at once took 69 s once and over 90 s another time (the time is said below).
    wait("the workspace on the page", ws_row, 240)
    say(f"ok: the workspace appeared without a reload ({time.time() - began - up_took:.2f} s after so up returned)")
    if driver.execute_script("return window.__kept") != 1:
        fail("the page was reloaded")
    filt = driver.find_element(By.ID, "filter")
    filt.send_keys("no-such-thing")
    if driver.execute_script(
            "return [...document.querySelectorAll('#deployments-table tbody tr')].some(r => !r.hidden)"):
        fail("the filter did not hide the row")
    filt.clear()
    filt.send_keys(a.workspace[:6])
    if driver.execute_script(
            "return ![...document.querySelectorAll('#deployments-table tbody tr')].some(r => !r.hidden)"):
        fail("the filter hid a matching row")
    say("ok: the filter box hides and shows rows")

    # The workspace's page: tasks queued, running, succeeded, with their cost, seen live.
    driver.get(base + "/d/" + a.workspace)
    wait("the workspace page", lambda: driver.find_elements(By.ID, "tasks"), 120)
    wait("the workspace page live", lambda: driver.find_element(By.ID, "live-state").text.startswith("live"), 120)
    driver.execute_script("window.__kept = 2")
    # Each waits for the test to let it go on (the stand-in's "held=NAME"): the page must see the second queued,
    # then running, then succeeded, however loaded the machine (tasks of 25 s ran past a page's look under load).
    say("… two held tasks queued")
    first = task("first held=a")
    second = task("second held=b")
    states = []
    released = set()

    def release(name):
        so(["deployment", "--name", a.workspace, "exec", "agent", "--", "sh", "-c",
            f'touch "$(git -C /workspace rev-parse --absolute-git-dir)/so-release-{name}"'])
        released.add(name)

    def state_of(n):
        rows = driver.find_elements(By.CSS_SELECTOR, f'#tasks-table tr[data-task="{n}"]')
        return rows[0].get_attribute("data-state") if rows else None

    def track():
        s = state_of(second)
        if s and (not states or states[-1] != s):
            states.append(s)
        if s == "queued" and "a" not in released:
            release("a")  # the first ends; the second runs
        elif s == "running" and "b" not in released:
            release("b")
        return s == "succeeded"

    wait("task 2 succeeded", track, 180, 0.05)
    if states[:1] != ["queued"] or "running" not in states or states[-1] != "succeeded":
        fail(f"task {second} went {states}, not queued → running → succeeded")
    say(f"ok: task {second} went {' → '.join(states)} on the open page")
    shot("workspace")
    cost = wait("task 2's cost", lambda: [
        c.text for c in driver.find_elements(By.CSS_SELECTOR, f'#tasks-table tr[data-task="{second}"] td')
        if "$0.0123" in c.text])
    say(f"ok: its cost shows: {cost[0]}")

    # A cancel from the page, of a task that does not end by itself (under load a page's click and the action
    # behind it took longer than a slow stand-in ran).
    third = task("third (never ends)", "sleep 600")
    wait("task 3 on the page", lambda: state_of(third) in ("queued", "running"), 120)
    # Found and clicked in one go, again if the live table drew the row anew in between (a stale element).
    wait("task 3's cancel clicked", lambda: driver.find_element(
        By.CSS_SELECTOR, f'#tasks-table tr[data-task="{third}"] form.action button').click() or True, 120)
    wait("task 3 cancelled", lambda: state_of(third) == "cancelled", 60,
         detail=lambda: f"task 3 {state_of(third)}; the page said: {driver.find_element(By.ID, 'said').text!r}")
    said = driver.find_element(By.ID, "said").text
    say(f"ok: the page's cancel worked ({said})")

    # A hostile task text, queued from the page, is shown as text.
    hostile = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    box = driver.find_element(By.CSS_SELECTOR, "form.queue textarea")
    box.send_keys(hostile)
    driver.find_element(By.CSS_SELECTOR, "form.queue button").click()
    wait("the hostile task queued", lambda: "queued task" in driver.find_element(By.ID, "said").text, 120)
    cell = wait("the hostile task on the page", lambda: [
        c for c in driver.find_elements(By.CSS_SELECTOR, "#tasks-table span.text") if c.text.startswith(hostile[:40])])
    if driver.execute_script("return window.__pwned") is not None:
        fail("the task's text ran as script")
    if driver.find_elements(By.CSS_SELECTOR, "#tasks-table img"):
        fail("the task's text made an element")
    say("ok: a task whose text is <script>… shows as text and runs nothing")
    if driver.execute_script("return window.__kept") != 2:
        fail("the workspace page was reloaded")
    shot("workspace-tasks")
    # `down` from the page is refused while the workspace holds work nobody saved, as `so down` refuses it.
    so(["deployment", "--name", a.workspace, "exec", "--", "sh", "-c", "echo draft > /workspace/UNSAVED.md"])
    driver.execute_script("window.scrollTo(0, 0)")
    down = [b for b in driver.find_elements(By.CSS_SELECTOR, ".controls form.action button") if b.text == "Down"][0]
    down.click()
    refusal = wait("down refused", lambda: "would be lost" in driver.find_element(By.ID, "said").text
                   and driver.find_element(By.ID, "said").text, 60)
    if not driver.find_elements(By.ID, "tasks"):
        fail("the workspace's page lost its tasks after a refused down")
    so(["deployment", "--name", a.workspace, "status"])
    say(f"ok: down from the page is refused while work is unsaved ({refusal[:90]}…)")
    # A service's log, followed live once its box is opened.
    box = wait("a log box", lambda: driver.find_elements(By.CSS_SELECTOR, "details.logbox"), 120)[0]
    driver.execute_script("arguments[0].scrollIntoView(); arguments[0].open = true", box)
    lines = wait("the service's log", lambda: box.find_element(By.CSS_SELECTOR, "pre").text.strip(), 120)
    say(f"ok: a service's log follows live ({len(lines.splitlines())} lines so far)")

    # A plain deployment whose container crashes: why, and its last lines, on its page.
    driver.get(base + "/")
    href = wait("the crashing deployment", lambda: driver.execute_script(
        "const r = [...document.querySelectorAll('#deployments-table tbody tr')]"
        ".find(r => r.cells[1] && r.cells[1].textContent.trim() === 'crash');"
        "return r ? r.querySelector('a').getAttribute('href') : null"), 60)
    driver.get(base + href)
    wait("the crash's reason and last lines", lambda: [
        p for p in driver.find_elements(By.CSS_SELECTOR, "#pods pre.log") if "crash-line-two" in p.text], 120)
    reason = wait("the reason", lambda: driver.find_element(By.CSS_SELECTOR, "#pods h3").text, 10)
    say(f"ok: a crashing container's page says why ({reason}) and shows its last lines")
    shot("deployment")

    driver.get(base + "/")
    wait("everything page", lambda: driver.find_elements(By.ID, "deployments-table"), 120)
    shot("everything")
    driver.get(base + "/cost")
    wait("cost page", lambda: driver.find_elements(By.CSS_SELECTOR, "svg.chart"), 120)
    if "$0.0" not in driver.find_element(By.ID, "live").text and not driver.find_elements(By.CSS_SELECTOR, "svg rect"):
        fail("the cost page draws nothing")
    shot("cost")
    say("ok: screenshots in " + a.out)
finally:
    driver.quit()
