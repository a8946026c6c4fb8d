"""``cx-app app`` stops its Streamlit server with it: SIGTERM or SIGINT to ``cx-app`` leaves no
server process and no port held."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _servers(port: int) -> list[int]:
    """Pids of the processes whose command line serves ``port`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(cmdline) and str(port).encode() in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_cx_app_app_stops_the_server(signum):
    port = _free_port()
    code = ("import sys; from cx_app.cli import main; "
            f"sys.exit(main(['app', '--port', '{port}', '--address', '127.0.0.1']))")
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    app = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not _listening(port):
            assert app.poll() is None, "cx-app app exited before serving"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.5)
        assert _servers(port)  # the Streamlit child serves the port
        app.send_signal(signum)
        app.wait(timeout=30)
        deadline = time.monotonic() + 15
        while (_servers(port) or _listening(port)) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert not _servers(port), "a Streamlit server outlived cx-app app"
        assert not _listening(port)
    finally:
        if app.poll() is None:
            app.kill()
        for pid in _servers(port):
            os.kill(pid, signal.SIGKILL)


def test_a_server_that_ignores_the_forwarded_signal_is_terminated_after_the_grace_period():
    # a stand-in server that swallows SIGINT, as Streamlit may before its handlers are set
    server = ("import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
              "print('up', flush=True); time.sleep(120)")
    code = ("import sys; from cx_app.cli.app import _serve; "
            f"sys.exit(_serve([sys.executable, '-c', {server!r}]))")
    app = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                           text=True)
    try:
        assert app.stdout.readline().strip() == "up"
        time.sleep(0.5)  # cx-app's handlers are set right after it starts the server
        app.send_signal(signal.SIGINT)
        assert app.wait(timeout=60) == 128 + signal.SIGTERM  # the server was terminated
    finally:
        if app.poll() is None:
            app.kill()
