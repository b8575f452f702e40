"""Screenshot a course notebook running in JupyterLab, in headless Chromium.

Starts JupyterLab (``--expose-app-in-browser``) on a copy of one notebook,
opens it in headless Chromium, runs every cell through JupyterLab's own
command (``notebook:run-all-cells``) over the DevTools protocol, waits for the
kernel to go idle, scrolls to the lab's chart and saves a PNG.

    python scripts/notebook_screenshot.py --out /tmp/shots-notebook \\
        [--notebook 01_tokens_fed.ipynb] [--python PYTHON_WITH_JUPYTERLAB]

Needs JupyterLab (not part of any extra: any environment that can also import
kvstudio) and ``chromium``; the docs' screenshot (docs/notebook-screenshot.png)
was taken this way. Outside CI.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.read().decode()
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"error: {url} did not answer within {seconds:.0f} s")


class DevTools:
    def __init__(self, connection: object) -> None:
        self.connection = connection
        self.next_id = 0

    async def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        ident = self.next_id
        await self.connection.write_message(json.dumps(  # type: ignore[attr-defined]
            {"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(await self.connection.read_message())  # type: ignore[attr-defined]
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    async def evaluate(self, expression: str) -> object:
        result = await self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                                 returnByValue=True)
        return result.get("result", {}).get("value")


async def shoot(page_ws: str, out: Path, run_seconds: float) -> None:
    tools = DevTools(await websocket_connect(page_ws, max_message_size=64 * 1024 * 1024))
    await tools.call("Runtime.enable")
    for _ in range(120):  # JupyterLab and the notebook panel loaded
        ready = await tools.evaluate(
            "!!(window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell'))")
        if ready:
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(3)  # the kernel connects
    await tools.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    started = time.monotonic()
    await asyncio.sleep(3)
    while time.monotonic() - started < run_seconds:
        busy = await tools.evaluate(
            "document.querySelectorAll('.jp-InputPrompt').length > 0 && "
            "[...document.querySelectorAll('.jp-InputPrompt')]"
            ".some(p => p.textContent.includes('*'))")
        if not busy:
            break
        await asyncio.sleep(1)
    await asyncio.sleep(4)  # the last frames and the output update
    # The first cell that runs a lab (`run = kv.<lab>(`): its progress bar to the top.
    await tools.evaluate("""
      (() => {
        const cells = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')];
        const lab = cells.find(c => /\\w+ = kv\\.\\w+\\(/.test(c.textContent));
        if (lab) { lab.scrollIntoView({block: 'start'}); }
        return !!lab;
      })()""")
    await asyncio.sleep(2)
    shot = await tools.call("Page.captureScreenshot", format="png")
    out.write_bytes(base64.b64decode(shot["data"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNG")
    parser.add_argument("--notebook", default="01_tokens_fed.ipynb")
    parser.add_argument("--python", default=sys.executable, help="a Python with JupyterLab")
    parser.add_argument("--size", default="1366,960", help="window width,height")
    parser.add_argument("--cells", type=int, default=0, help="keep only the first N cells")
    parser.add_argument("--seconds", type=float, default=180, help="longest wait for the run")
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("error: chromium is not installed (apt-get install chromium)")
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="kvstudio-nbshot-"))
    document = json.loads((ROOT / "notebooks" / args.notebook).read_text(encoding="utf-8"))
    if args.cells:  # the first cells only: up to the lab's cell and its headline
        document["cells"] = document["cells"][: args.cells]
    (work / args.notebook).write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    lab_port, devtools_port = free_port(), free_port()
    # The widgets' front ends (ipywidgets, anywidget) from this environment, if JupyterLab's
    # own environment is another one.
    data = [str(Path(sys.prefix) / "share" / "jupyter"), os.environ.get("JUPYTER_PATH", "")]
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "JUPYTER_PATH": os.pathsep.join(filter(None, data))}
    env.pop("QT_QPA_PLATFORM", None)
    lab = subprocess.Popen(
        [args.python, "-m", "jupyterlab", "--no-browser", f"--port={lab_port}",
         "--IdentityProvider.token=", "--ServerApp.password=", "--expose-app-in-browser",
         "--allow-root", f"--ServerApp.root_dir={work}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    browser = None
    try:
        wait_for(f"http://127.0.0.1:{lab_port}/api", 60)
        browser = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
             f"--remote-debugging-port={devtools_port}", f"--window-size={args.size}",
             f"--user-data-dir={work / 'chromium'}", "--hide-scrollbars",
             f"http://127.0.0.1:{lab_port}/lab/tree/{args.notebook}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pages = json.loads(wait_for(f"http://127.0.0.1:{devtools_port}/json", 30))
        page = next(p for p in pages if p.get("type") == "page")
        out = args.out / f"notebook-{Path(args.notebook).stem}.png"
        asyncio.run(shoot(page["webSocketDebuggerUrl"], out, args.seconds))
        print(out)
    finally:
        if browser is not None:
            browser.terminate()
            browser.wait(10)
        lab.terminate()
        lab.wait(20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
