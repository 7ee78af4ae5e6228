"""A headless Chromium for tests, driven over the DevTools protocol on a pipe.

`find_or_install_chromium()` is the test setup's browser: an installed
Chromium, else Debian's `chromium` package installed with apt-get (as root, or
with passwordless sudo), else None with the reason. `Browser` starts it with
`--remote-debugging-pipe` (requests on fd 3, replies on fd 4, NUL-terminated
JSON), so no extra Python package and no open port are needed.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "chromium-headless-shell", "google-chrome", "google-chrome-stable")


def _find() -> str | None:
    env = os.environ.get("KERNELMILL_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    return next((p for p in map(shutil.which, NAMES) if p), None)


def find_or_install_chromium(log: Path | None = None) -> tuple[str | None, str]:
    """(path, "") or (None, why it cannot be had)."""
    found = _find()
    if found:
        return found, ""
    # one installer at a time (pytest-xdist's workers each ask for the browser): the others
    # wait for it, then find what it installed
    import fcntl

    with open(Path(tempfile.gettempdir()) / "kernelmill-chromium-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install(log)


def _install(log: Path | None) -> tuple[str | None, str]:
    found = _find()
    if found:
        return found, ""
    if not shutil.which("apt-get"):
        return None, "no Chromium installed and no apt-get to install Debian's chromium package"
    prefix = []
    if os.geteuid() != 0:
        if not shutil.which("sudo") or subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode:
            return None, "no Chromium installed, and installing Debian's chromium needs root (no passwordless sudo)"
        prefix = ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    out = []
    for cmd in (["apt-get", "install", "-y", "-q", "chromium"], ["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "chromium"]):
        r = subprocess.run(prefix + cmd, capture_output=True, text=True, env=env, timeout=900)
        out.append(f"$ {' '.join(cmd)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        if cmd[1] == "install" and r.returncode == 0 and _find():
            break
    if log is not None:
        log.write_text("\n".join(out))
    found = _find()
    if found:
        return found, ""
    return None, "apt-get could not install Debian's chromium package: " + out[-1].strip().splitlines()[-1][:300]


_TRAMPOLINE = """
import os, sys
r, w = (os.dup(int(fd)) for fd in sys.argv[1:3])
os.dup2(r, 3)
os.dup2(w, 4)
os.set_inheritable(3, True)  # os.dup's copies are not, and dup2 onto itself changes nothing
os.set_inheritable(4, True)
for fd in {r, w, int(sys.argv[1]), int(sys.argv[2])} - {3, 4}:
    os.close(fd)
os.execv(sys.argv[3], sys.argv[3:])
"""


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; `call(method, **params)` speaks CDP to the page."""

    def __init__(self, executable: str, width: int = 1400, height: int = 1000):
        self.ids = itertools.count(1)
        self.events: list[dict] = []
        self.buf = b""
        self.profile = tempfile.mkdtemp(prefix="km-chromium-")
        self._log = open(Path(self.profile) / "stderr.log", "wb")  # a file: a full pipe would block Chromium
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        # a small Python trampoline moves the pipe ends to fds 3 and 4 (by way of
        # fresh duplicates, in case one already is 3 or 4) and execs Chromium:
        # subprocess keeps only pass_fds open, under their own numbers
        r, w = to_browser_r, from_browser_w
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(r), str(w),
             executable, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
             "--font-render-hinting=none", f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "about:blank"],
            pass_fds=(r, w), stdout=subprocess.DEVNULL, stderr=self._log)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.session = None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Network.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _read(self, deadline: float) -> dict:
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise BrowserError("no reply from Chromium in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                try:
                    self.proc.wait(timeout=5)
                    err = (Path(self.profile) / "stderr.log").read_text(errors="replace")[-2000:]
                except subprocess.TimeoutExpired:
                    err = "(still running)"
                raise BrowserError(f"Chromium closed its pipe (exit {self.proc.returncode}): {err}")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, timeout: float = 60.0, **params) -> dict:
        mid = next(self.ids)
        msg = {"id": mid, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == mid:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            ev = self._read(deadline)
            if ev.get("method") == method:
                return ev
            self.events.append(ev)

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def eval(self, expression: str):
        """The value of a JavaScript expression (JSON-serialisable); page errors raise."""
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:80]}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def console_errors(self) -> list[str]:
        out = []
        for ev in self.events:
            if ev.get("method") == "Runtime.exceptionThrown":
                out.append(ev["params"]["exceptionDetails"].get("exception", {}).get("description", "exception"))
            elif ev.get("method") == "Runtime.consoleAPICalled" and ev["params"].get("type") == "error":
                out.append(" ".join(str(a.get("value")) for a in ev["params"].get("args", [])))
        return out

    def requested_urls(self) -> list[str]:
        return [ev["params"]["request"]["url"] for ev in self.events if ev.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, full_page: bool = False, clip: dict | None = None) -> Path:
        params = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": min(size[1], 16000), "scale": 1}
        elif clip:
            params["clip"] = {**clip, "scale": 1}
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
