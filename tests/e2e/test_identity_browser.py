"""Issue 33's identity acceptance in a real browser: the app in team mode signed in through
``oidc-provider-mock``, where alice (admin of North) has two impostors at the same provider:

- ``mallory-unverified``: claims ``email: alice@example.com`` with ``email_verified: false``
  (a provider where users type their own address) — refused, sees nothing;
- ``alice-second``: a second subject whose verified address is alice's — refused once alice's
  subject has signed in (the first sign-in binds the address); alice still signs in.
"""

from __future__ import annotations

import shutil

import pytest
from browser_harness import (
    ROOT,
    chromium_browser,
    free_port,
    oidc_provider,
    sign_in,
    streamlit_server,
    write_auth_secrets,
)
from test_app_browser import WAIT, _settle, _visible

from cx_app.survey.samples import sample_path
from cx_app.workspace.database import open_database
from cx_app.workspace.tables import Identity

pytestmark = [pytest.mark.browser, pytest.mark.slow,  # a server and three sign-ins (~40 s)
              # oidc-provider-mock 0.3 calls Authlib APIs that Authlib 1.9 deprecates
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]

ALICE = "alice@example.com"
TEAMS = f"""teams:
  North:
    admin: [{ALICE}]
"""
IMPOSTORS = (("mallory-unverified", {"email": ALICE, "email_verified": False, "name": "M"}),
             ("alice-second", {"email": ALICE, "email_verified": True, "name": "A2"}))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("identity")
    teams_file = folder / "teams.yaml"
    teams_file.write_text(TEAMS, encoding="utf-8")
    database = f"sqlite:///{folder / 'workspace.db'}"
    shutil.copyfile(sample_path("telecom_nps"), folder / "survey.xlsx")
    port = free_port()
    with oidc_provider((ALICE,), IMPOSTORS) as provider:
        secrets_file = write_auth_secrets(folder / "secrets.toml", port, provider)
        env = {"CX_APP_DATABASE_URL": database, "CX_APP_TEAMS": str(teams_file)}
        with streamlit_server(ROOT / "streamlit_app.py", port, secrets_file,
                              log=folder / "streamlit.log", extra_env=env) as url:
            yield url, database, provider.url


@pytest.fixture(scope="module")
def browser():
    with chromium_browser() as chromium:
        yield chromium


def _page(browser, url: str, subject: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(WAIT)
    page.goto(url)
    sign_in(page, url, subject)
    return page


def _refused(page, sentence: str) -> None:
    _visible(page.get_by_text(sentence, exact=False))
    _settle(page)
    body = page.locator('[data-testid="stMain"]').inner_text()
    assert "Signed in as" not in page.content() and "admin of North" not in page.content()
    assert page.locator('[data-testid="stSidebarNav"]').count() == 0, body
    assert page.get_by_role("button", name="Sign out").count() == 1


def test_only_the_verified_first_subject_of_an_address_signs_in(app, browser):
    url, database, issuer = app
    unverified = _page(browser, url, "mallory-unverified")
    _refused(unverified, f"has not verified the address {ALICE}")
    alice = _page(browser, url, ALICE)
    _visible(alice.get_by_text(f"Signed in as {ALICE} · admin of North"))
    second = _page(browser, url, "alice-second")
    _refused(second, f"the address {ALICE} already belongs to another sign-in account")
    again = _page(browser, url, ALICE)  # alice, in another browser: still herself
    _visible(again.get_by_text(f"Signed in as {ALICE} · admin of North"))
    found = open_database(database)
    try:
        rows = found.read(lambda s: [(r.issuer, r.subject, r.email)
                                     for r in s.query(Identity).all()])
    finally:
        found.dispose()
    assert rows == [(issuer, ALICE, ALICE)]
    for page in (unverified, alice, second, again):
        page.context.close()
