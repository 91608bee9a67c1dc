"""Headless Chromium (Debian's ``chromium``) driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: commands on fd 3, answers on fd 4, each a JSON text ended by NUL): open a page,
wait on a condition in it, evaluate JavaScript, take a screenshot, and collect what its console said in error
and every network request it made."""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, *, width: int = 1200, height: int = 900, timeout: float = 60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="objperf-chromium-", dir=os.environ.get("TMPDIR"))
        to_child, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # the protocol's fixed numbers, whatever the pipes got
            a, b = os.dup(to_child), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [CHROMIUM, "--headless=new", "--remote-debugging-pipe", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        # close_fds would close 3 and 4 after ``fds`` ran; Python's own descriptors are not inherited anyway
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child_w)
        self._next = 0
        self._answers: dict[int, dict] = {}
        self._events: queue.Queue = queue.Queue()
        self._cond = threading.Condition()
        self.errors: list[str] = []
        self.requests: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session=True)
        except BaseException:  # no browser or profile left behind by one that never answered
            self.close()
            raise

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._from_child, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                if "id" in message:
                    with self._cond:
                        self._answers[message["id"]] = message
                        self._cond.notify_all()
                else:
                    self._event(message)

    def _event(self, message: dict) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description") or details.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(params["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        self._events.put(message)

    def call(self, method: str, *, session: bool = False, **params) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while self._next not in self._answers:
                if not self._cond.wait(timeout=max(0.0, deadline - time.monotonic())) and \
                        time.monotonic() > deadline:
                    raise TimeoutError(f"chromium did not answer {method} within {self.timeout:g} s")
            answer = self._answers.pop(self._next)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def open(self, url: str) -> None:
        """Go to ``url`` and wait for its load event."""
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + self.timeout
        while True:
            event = self._events.get(timeout=max(0.01, deadline - time.monotonic()))
            if event.get("method") == "Page.loadEventFired":
                return

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}…: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 30, what: str = "the page"):
        """Poll a JavaScript condition in the page until it is true (a real signal: what the page drew)."""
        deadline = time.monotonic() + timeout
        while not (value := self.evaluate(expression)):
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} did not come within {timeout:g} s")
            time.sleep(0.05)
        return value

    def screenshot(self, clip: dict | None = None, *, full: bool = False) -> bytes:
        params = {"format": "png", "captureBeyondViewport": full or clip is not None}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", session=True, **params)["data"])

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
