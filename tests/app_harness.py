"""AppTest runs like a server's: the entry script on every run.

Streamlit's ``AppTest`` (1.67) forgets between runs that the app uses ``st.navigation``; with a
``app_pages/`` folder beside the entry script it then runs the page file alone on every run after
the first (the old multipage mode), so whatever the entry script does around the page — the
reload offer before it, the reload snapshot after it — is skipped. A server runs the entry
script every time. Tests of that entry-script work use :func:`entry_script_every_run`.
"""

from __future__ import annotations

import pytest
from streamlit.runtime.pages_manager import PagesManager


@pytest.fixture
def entry_script_every_run(monkeypatch):
    """Each AppTest run goes through the entry script and its ``st.navigation``, as on a
    server (the test's AppTest runs only)."""
    original = PagesManager.__init__

    def navigation_pages(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False  # what st.navigation sets on a server

    monkeypatch.setattr(PagesManager, "__init__", navigation_pages)
