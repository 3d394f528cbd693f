"""A throw-away JupyterLab server for the browser check: sandboxed, token-free, stopped for sure.

Why a sandbox: the browser runs every cell, and JupyterLab would happily autosave the outputs into the
committed notebooks. So the notebooks are *copied* into a temporary root, next to symlinks to everything
else beside them (``data/``, ``memkit/`` ...), so relative paths such as ``../data`` still resolve while
the originals are never written. Settings live in a temporary directory too:

- ``autoStartDefaultKernel`` on, or a "Select Kernel" dialog blocks the page;
- ``fetchNews`` / ``checkForUpdates`` off, or a news prompt covers the notebook (and Lab calls the web);
- ``autosave`` off and ``windowingMode`` "none", so every cell's output is attached to the DOM (a
  windowed notebook leaves off-screen cells out, and their errors would go unseen).

The server listens on 127.0.0.1 on a free port, with no token or password, and runs in its own process
group so ``stop()`` ends it and its kernels (TERM, then KILL after a grace period).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

#: Per-plugin user settings written into the sandbox's settings directory.
SETTINGS: dict[str, dict[str, object]] = {
    "@jupyterlab/notebook-extension/tracker": {"autoStartDefaultKernel": True, "windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False, "confirmClosingDocument": False},
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_sandbox(notebooks: Path) -> tuple[Path, Path]:
    """Copy ``notebooks`` into a fresh temporary root; return ``(root, copied notebooks dir)``.

    Every sibling of ``notebooks`` (its parent's other entries) is symlinked into the root, so a notebook
    that reads ``../data/x.jsonl`` finds the real file.
    """
    root = Path(tempfile.mkdtemp(prefix="memkit-e2e-"))
    work = root / "work"
    work.mkdir()
    for entry in notebooks.parent.iterdir():
        if entry.name != notebooks.name and not entry.name.startswith("."):
            (work / entry.name).symlink_to(entry)
    shutil.copytree(notebooks, work / notebooks.name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = root / "settings"
    for plugin, values in SETTINGS.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    return root, work / notebooks.name


class LabServer:
    """``jupyter lab`` on 127.0.0.1 serving a sandbox copy of a notebooks directory.

    Use as a context manager; ``url`` is the base URL once ``start()`` returned.
    """

    def __init__(self, notebooks: Path, jupyter: Path, startup_timeout: float = 90.0) -> None:
        self.notebooks = notebooks.resolve()
        self.jupyter = jupyter
        self.startup_timeout = startup_timeout
        self.root, self.notebook_dir = make_sandbox(self.notebooks)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.root / "jupyter.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> LabServer:
        """Launch the server and wait until its REST API answers (or raise RuntimeError)."""
        env = dict(os.environ)
        env.update(
            JUPYTERLAB_SETTINGS_DIR=str(self.root / "settings"),
            JUPYTERLAB_WORKSPACES_DIR=str(self.root / "workspaces"),
            JUPYTER_CONFIG_DIR=str(self.root / "config"),  # ignore the user's own jupyter config
            JUPYTER_RUNTIME_DIR=str(self.root / "runtime"),
            PYDEVD_DISABLE_FILE_VALIDATION="1",  # silences a debugger warning printed by every kernel
        )
        cmd = [
            str(self.jupyter), "lab", "--no-browser",
            "--ip", "127.0.0.1", "--port", str(self.port), "--ServerApp.port_retries=0",
            "--ServerApp.token=", "--ServerApp.password=",
            f"--ServerApp.root_dir={self.notebook_dir.parent}",
            "--LabApp.expose_app_in_browser=True",
            "--ServerApp.disable_check_xsrf=True",  # lets shutdown_kernels() DELETE sessions, token-free
        ]  # fmt: skip
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")  # jupyter exits at once when run as root without it
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status", timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(
            f"jupyter lab did not answer within {self.startup_timeout:.0f} s:\n{self.log_tail()}"
        )

    def shutdown_kernels(self) -> None:
        """Delete every session (so its kernel) through the REST API: frees the CPU between notebooks."""
        try:
            with urllib.request.urlopen(f"{self.url}/api/sessions", timeout=5) as resp:
                sessions = json.load(resp)
            for s in sessions:
                req = urllib.request.Request(f"{self.url}/api/sessions/{s['id']}", method="DELETE")
                urllib.request.urlopen(req, timeout=10).close()
        except OSError as exc:
            print(f"  (could not shut kernels down: {exc})", file=sys.stderr)

    def stop(self, grace: float = 10.0) -> None:
        """Stop the server and its kernels: SIGTERM to the process group, SIGKILL after ``grace`` seconds."""
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def cleanup(self) -> None:
        """Remove the sandbox (after ``stop``)."""
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the server log."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
