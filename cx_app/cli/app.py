"""``cx-app app``: start the Streamlit app (the entry script and ``app_pages/`` live beside the package).

Team mode (docs/deployment.md): both files are checked before the server starts; the secrets
file goes to Streamlit's ``secrets.files`` option, the teams file's path to the server in
``CX_APP_TEAMS``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cx_app.errors import CxAppError

ENTRY_SCRIPT = Path(__file__).resolve().parents[2] / "streamlit_app.py"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("app", help="start the web app (Streamlit)")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="localhost")
    p.add_argument("--secrets", metavar="FILE",
                   help=f"team mode: Streamlit secrets TOML with the [auth] sign-in section "
                        f"(default: ${ENV_SECRETS})")
    p.add_argument("--teams", metavar="FILE",
                   help=f"team mode: the teams YAML file (default: ${ENV_TEAMS})")
    p.set_defaults(func=run)


ENV_SECRETS, ENV_TEAMS = "CX_APP_SECRETS", "CX_APP_TEAMS"
AUTH_KEYS = ("client_id", "client_secret", "server_metadata_url")  # each provider's


@dataclass(frozen=True)
class ServerLaunch:
    command: list[str]
    env: dict[str, str]


def _auth_problem(auth: object) -> str | None:
    if not isinstance(auth, dict):
        return "has no [auth] section (Streamlit's sign-in settings)"
    for key in ("redirect_uri", "cookie_secret"):
        if not str(auth.get(key) or "").strip():
            return f"has no {key} in its [auth] section"
    if not str(auth["redirect_uri"]).rstrip("/").endswith("/oauth2callback"):
        return "has a redirect_uri that does not end with /oauth2callback (Streamlit's path)"
    providers = {"[auth]": auth} if "client_id" in auth else {
        f"[auth.{name}]": section for name, section in auth.items() if isinstance(section, dict)}
    if not providers:
        return "names no provider in its [auth] section (client_id, client_secret, " \
               "server_metadata_url)"
    for where, section in providers.items():
        missing = [k for k in AUTH_KEYS if not str(section.get(k) or "").strip()]
        if missing:
            return f"has no {', '.join(missing)} in its {where} section"
    return None


def check_secrets(path: Path) -> None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CxAppError(f"{path}: cannot read the secrets file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise CxAppError(f"{path}: the secrets file is not UTF-8 text (TOML)") from None
    except tomllib.TOMLDecodeError as exc:
        raise CxAppError(f"{path}: the secrets file is not valid TOML ({exc})") from None
    problem = _auth_problem(data.get("auth"))
    if problem:
        raise CxAppError(f"{path}: the secrets file {problem}; see docs/deployment.md, step 3")


SERVER_THREADS = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""The server's BLAS on one thread (unless its environment says otherwise): the pool runs as
many jobs as CPUs on narrow matrices, so a second thread only spins when another job holds the
core (``bench/RESULTS.md`` training_times). Set for the server this starts, never by the library."""


def server_launch(args: argparse.Namespace, environ: Mapping[str, str]) -> ServerLaunch:
    """In team mode both files are checked first."""
    from cx_app.workspace.teams import load_teams

    command = [
        sys.executable, "-m", "streamlit", "run", str(ENTRY_SCRIPT),
        "--server.port", str(args.port), "--server.address", args.address,
    ]
    env = {**SERVER_THREADS, **environ}
    secrets = args.secrets or environ.get(ENV_SECRETS) or None
    teams = args.teams or environ.get(ENV_TEAMS) or None
    if secrets is None and teams is None:
        return ServerLaunch(command, env)
    if secrets is None or teams is None:
        given, needed = (("--teams", f"--secrets FILE (or {ENV_SECRETS})") if secrets is None
                         else ("--secrets", f"--teams FILE (or {ENV_TEAMS})"))
        raise CxAppError(f"team mode needs both files: {given} is given, so give "
                         f"{needed} too")
    secrets_path, teams_path = Path(secrets).resolve(), Path(teams).resolve()
    check_secrets(secrets_path)
    load_teams(teams_path)
    env[ENV_TEAMS] = str(teams_path)
    return ServerLaunch(command + ["--secrets.files", str(secrets_path)], env)


def run(args: argparse.Namespace) -> int:
    if not ENTRY_SCRIPT.exists():
        raise CxAppError(
            f"the app's entry script {ENTRY_SCRIPT} is missing: run the app from a source checkout"
        )
    launch = server_launch(args, os.environ)
    return _serve(launch.command, launch.env)


STOP_GRACE_SECONDS = 5.0


def _serve(command: list[str], env: dict[str, str] | None = None) -> int:
    """Run the Streamlit server as a child and stop it with us (signals forwarded; terminated
    :data:`STOP_GRACE_SECONDS` after one, or when we leave), so that ``cx-app app`` never leaves
    a server holding the port (a SIGINT before Streamlit's handlers may be swallowed)."""
    child = subprocess.Popen(command, cwd=ENTRY_SCRIPT.parent,
                             env=os.environ.copy() if env is None else env)
    asked: list[float] = []  # when a stop signal was forwarded

    def forward(signum, _frame):
        asked.append(time.monotonic())
        if child.poll() is None:
            child.send_signal(signum)

    handled = [s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)) if s]
    previous = {s: signal.signal(s, forward) for s in handled}
    try:
        while child.poll() is None:
            if asked and time.monotonic() - asked[0] > STOP_GRACE_SECONDS:
                break  # asked to stop, still running: ended below
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.5)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    code = child.returncode
    return code if code >= 0 else 128 - code  # ended by a signal: the shell's 128 + N
