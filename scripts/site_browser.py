"""Headless Chromium for the site's browser test and studies/site-bench: opens pages of a site from
the file system and reports what they drew, the console errors they raised and how long they took.

Chromium (Debian's `chromium` package, installed by scripts/bootstrap) is driven over the DevTools
protocol on a pipe (--remote-debugging-pipe: JSON messages ending in NUL on its fds 3 and 4), so
nothing listens on a port and only the Python standard library is needed.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def chromium_binary():
    for name in (os.environ.get("OPBENCH_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise RuntimeError("no chromium: install Debian's chromium package (scripts/bootstrap does)")


class Browser:
    def __init__(self, width=1400, height=1000, timeout=30):
        self.width, self.height, self.timeout = width, height, timeout
        self.profile = tempfile.mkdtemp(prefix="opbench-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium's ends moved past fd 9, so that putting them on 3 and 4 overwrites neither
        to_chrome_r, from_chrome_w = [self._above(fd, 10) for fd in (to_chrome_r, from_chrome_w)]
        args = [chromium_binary(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--remote-debugging-pipe", "--user-data-dir=" + self.profile, "--hide-scrollbars",
                "--window-size=%d,%d" % (width, height), "about:blank"]
        # the pipe's ends become Chromium's fds 3 (commands in) and 4 (replies out)
        shell = 'exec "$0" "$@" 3<&%d 4>&%d %d<&- %d>&-' % (to_chrome_r, from_chrome_w, to_chrome_r, from_chrome_w)
        self.proc = subprocess.Popen(["bash", "-c", shell] + args, pass_fds=(to_chrome_r, from_chrome_w),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf, self._next_id, self.events, self.attached = b"", 0, [], None
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            self.call(domain)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    @staticmethod
    def _above(fd, lowest):
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD, lowest)
        os.close(fd)
        return moved

    # --- the protocol
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_chrome], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self._from_chrome, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its pipe (exit %s)" % self.proc.poll())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if self.attached and not method.startswith("Target."):
            msg["sessionId"] = self.attached
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expression, r["exceptionDetails"]))
        return r["result"].get("value")

    # --- pages
    def open(self, path):
        """Opens a page of a site (a file) and waits until its script has drawn it. Returns the
        milliseconds from the start of navigation until the page was drawn, as the page timed it."""
        self.events = []
        self.call("Page.navigate", {"url": "file://" + os.path.abspath(path)})
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.evaluate("document.readyState === 'complete' && !!(window.opbench && window.opbench.ready)"):
                return self.evaluate("window.opbench.renderMs")
            time.sleep(0.02)
        raise TimeoutError("%s was not drawn in %d s (errors: %s)" % (path, self.timeout, self.errors()))

    def errors(self):
        """The console errors, uncaught exceptions and failed loads since the page was opened."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        return out

    def screenshot(self, path):
        png = base64.b64decode(self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"])
        with open(path, "wb") as f:
            f.write(png)
        return path

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
