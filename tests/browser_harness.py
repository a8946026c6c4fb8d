"""The browser tests' harness: a Streamlit server, Debian's chromium, and a local OpenID Connect
provider to sign in through (team mode, issue 28; docs/deployment.md).

- :func:`streamlit_server`: ``streamlit run SCRIPT`` on 127.0.0.1 and a free port, started in
  the repository (its ``.streamlit/config.toml`` applies), optionally given a secrets file by
  the ``secrets.files`` option, until its health check answers.
- :func:`chromium_browser`: Playwright's chromium on Debian's ``/usr/bin/chromium`` (the test
  is skipped when either is missing).
- :func:`oidc_provider`: ``oidc-provider-mock`` (its Flask app, served by werkzeug in a thread of
  the test process) on 127.0.0.1 and a free port, with the users given; its authorize page has
  one button per user (``<button name="sub" value="alice@example.com">``).
- :func:`write_auth_secrets`: a Streamlit secrets file whose ``[auth]`` section points
  Streamlit's native sign-in (``st.login``) at that provider.
- :func:`sign_in` / :func:`sign_out`: what a user does in the browser, on the app's "Sign in" /
  "Sign out" buttons and the provider's pages.

Typical use (see ``test_signin_browser.py``)::

    with oidc_provider(["alice@example.com"]) as provider:
        secrets = write_auth_secrets(tmp / "secrets.toml", app_port, provider)
        with streamlit_server(script, app_port, secrets, log=tmp / "log") as app_url:
            with chromium_browser() as browser:
                page = browser.new_context().new_page()
                page.goto(app_url)
                sign_in(page, app_url, "alice@example.com")
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = 60
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ("--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync")


def free_port() -> int:
    """A TCP port of 127.0.0.1 free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Provider:
    """A running local OpenID Connect provider."""

    url: str
    """``http://127.0.0.1:PORT`` (also its issuer)."""
    client_id: str = "cx-app-tests"
    client_secret: str = "cx-app-tests-secret"  # the mock accepts any client and secret

    @property
    def metadata_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"


@contextmanager
def oidc_provider(emails: Sequence[str],
                  accounts: Sequence[tuple[str, dict[str, Any]]] = ()) -> Iterator[Provider]:
    """``oidc-provider-mock`` serving until the block ends; each e-mail is a predefined user
    (subject = e-mail, claims ``email``, ``email_verified`` and ``name``); ``accounts``: more
    users as (subject, claims), e.g. a second account claiming someone else's address."""
    import werkzeug.serving

    # oidc-provider-mock 0.3 imports Authlib modules that Authlib 1.9 deprecates; Authlib's
    # own import adds an "always" filter for them, so it goes first
    with warnings.catch_warnings():
        import authlib.deprecate  # noqa: F401

        warnings.simplefilter("ignore", DeprecationWarning)
        import oidc_provider_mock

    users = [oidc_provider_mock.User(sub=email, claims={
        "email": email, "email_verified": True, "name": email.split("@")[0].title()})
        for email in emails] + [oidc_provider_mock.User(sub=sub, claims=dict(claims))
                                for sub, claims in accounts]
    server = werkzeug.serving.make_server(
        "127.0.0.1", 0, oidc_provider_mock.app(user_claims=users), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name="oidc-provider-mock", daemon=True)
    thread.start()
    try:
        yield Provider(f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def write_auth_secrets(path: Path, app_port: int, provider: Provider) -> Path:
    """A Streamlit secrets file with the ``[auth]`` section of ``provider`` for an app on
    ``http://127.0.0.1:app_port`` (a fresh random cookie secret)."""
    path.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{app_port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        f'client_id = "{provider.client_id}"\n'
        f'client_secret = "{provider.client_secret}"\n'
        f'server_metadata_url = "{provider.metadata_url}"\n', encoding="utf-8")
    return path


@contextmanager
def streamlit_server(script: Path, port: int, secrets_file: Path | None = None, *,
                     log: Path, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """``streamlit run script`` on ``http://127.0.0.1:port`` until the block ends (its output
    in ``log``); ``secrets_file`` through the ``secrets.files`` option."""
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
               "--server.headless", "true", "--server.address", "127.0.0.1"]
    if secrets_file is not None:
        command += ["--secrets.files", str(secrets_file)]
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **(extra_env or {})}
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                   env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process, log)
        yield url
    finally:
        _stop(process)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    if process.poll() is None:
        process.kill()
        process.wait()


def wait_healthy(url: str, process: subprocess.Popen, log: Path) -> None:
    """Wait until the server at ``url`` answers its health check (RuntimeError with the end
    of its ``log`` when it stops or takes over :data:`START_SECONDS`)."""
    _wait_healthy(url, process, log)


def _wait_healthy(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.3)


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """Playwright's chromium launched on Debian's chromium, headless, until the block ends."""
    import pytest

    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=list(CHROMIUM_ARGS))
        try:
            yield browser
        finally:
            browser.close()


def sign_in(page, app_url: str, email: str, timeout_ms: int = 90_000) -> None:
    """From the app's page: click "Sign in", pick ``email`` on the provider's authorize page,
    and wait until the browser is back on the app."""
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/oauth2/authorize**", timeout=timeout_ms)
    page.locator(f'button[name="sub"][value="{email}"]').click()
    page.wait_for_url(f"{app_url}/**", timeout=timeout_ms)


def sign_out(page, app_url: str, timeout_ms: int = 90_000) -> None:
    """Click the app's "Sign out", confirm on the provider's end-session page, and wait until
    the browser is back on the app."""
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/oauth2/end_session**", timeout=timeout_ms)
    page.get_by_role("button", name="End session").click()
    page.wait_for_url(f"{app_url}/**", timeout=timeout_ms)
