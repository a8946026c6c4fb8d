"""Streamlit's native sign-in (``st.login``/``st.user``/``st.logout``) works here with a local
OpenID Connect provider: the harness of team mode's browser tests (issue 28).

``oidc-provider-mock`` runs on 127.0.0.1; ``streamlit run tests/e2e/signin_probe_app.py`` is
started in the repository (its hardened ``.streamlit/config.toml`` applies) with an ``[auth]``
secrets file; Playwright drives Debian's chromium through the real redirects: the app, the
provider's authorize page, the app's ``/oauth2callback``, and back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_harness import (
    chromium_browser,
    free_port,
    oidc_provider,
    sign_in,
    sign_out,
    streamlit_server,
    write_auth_secrets,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow,  # an OIDC provider, two people (~20 s)
              # oidc-provider-mock 0.3 calls Authlib APIs that Authlib 1.9 deprecates
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

WAIT = 90_000  # ms; busy cores
PROBE = Path(__file__).resolve().parent / "signin_probe_app.py"
USERS = ("alice@example.com", "bob@example.com")


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("signin")
    port = free_port()
    with oidc_provider(USERS) as provider:
        secrets_file = write_auth_secrets(folder / "secrets.toml", port, provider)
        with streamlit_server(PROBE, port, secrets_file, log=folder / "streamlit.log") as url:
            yield url


@pytest.fixture(scope="module")
def browser():
    with chromium_browser() as chromium:
        yield chromium


@pytest.fixture
def new_page(browser):
    """A page in a browser context of its own (its own cookies: another person)."""
    contexts = []

    def make():
        contexts.append(browser.new_context(viewport={"width": 1200, "height": 800}))
        page = contexts[-1].new_page()
        page.set_default_timeout(WAIT)
        return page

    yield make
    for context in contexts:
        context.close()


def _expect():
    return pytest.importorskip("playwright.sync_api").expect


def _signed_out(page) -> None:
    expect = _expect()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=WAIT)
    expect(page.get_by_text("Signed in as")).to_have_count(0)
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "@" not in body and "Sign out" not in body, body


def _signed_in_as(page, email: str) -> None:
    expect = _expect()
    expect(page.get_by_text(f"Signed in as {email}")).to_be_visible(timeout=WAIT)
    expect(page.get_by_role("button", name="Sign in")).to_have_count(0)
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert [u for u in USERS if u in body] == [email], body


def test_signed_out_the_page_shows_only_the_sign_in_button(app_url, new_page):
    page = new_page()
    page.goto(app_url)
    _signed_out(page)


def test_a_user_signs_in_sees_her_email_keeps_it_on_reload_and_signs_out(app_url, new_page):
    page = new_page()
    page.goto(app_url)
    _signed_out(page)
    sign_in(page, app_url, "alice@example.com")
    _signed_in_as(page, "alice@example.com")
    page.reload()  # the identity cookie, not the browser session, carries the sign-in
    _signed_in_as(page, "alice@example.com")
    sign_out(page, app_url)
    _signed_out(page)
    page.goto(app_url)
    _signed_out(page)


def test_two_people_signed_in_at_once_each_see_only_themselves(app_url, new_page):
    alice, bob = new_page(), new_page()
    for page, email in ((alice, "alice@example.com"), (bob, "bob@example.com")):
        page.goto(app_url)
        sign_in(page, app_url, email)
    _signed_in_as(alice, "alice@example.com")
    _signed_in_as(bob, "bob@example.com")
    stranger = new_page()
    stranger.goto(app_url)
    _signed_out(stranger)
