"""Shared test setup: the suite mirrors the package layout (``tests/engine`` tests
``cx_app/engine`` ...). This file's folder is on ``sys.path`` (pytest's rootdir-relative
``prepend`` import mode), so helpers shared across folders, e.g. ``report_fixtures``, import
by their plain module name from any test folder."""


import pytest  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _module_workspace(tmp_path_factory):
    """A workspace database for each test module, set before the module's own fixtures (an
    app session started by a module fixture keeps the database it started with)."""
    with pytest.MonkeyPatch.context() as patch:
        path = tmp_path_factory.mktemp("moduleworkspace") / "workspace.db"
        patch.setenv("CX_APP_DATABASE_URL", f"sqlite:///{path}")
        patch.setenv("CX_APP_MODEL_CHECKS_DIR", str(path.parent / "model-checks"))
        yield


@pytest.fixture(autouse=True)
def _own_workspace(tmp_path_factory, monkeypatch):
    """Every test (and every server or CLI process it starts) gets a workspace database of its
    own, never the user's ``~/.local/share/cx-app/workspace.db`` nor one named by the
    developer's ``CX_APP_DATABASE_URL``. A test that needs another (PostgreSQL) sets it itself."""
    path = tmp_path_factory.mktemp("workspace") / "workspace.db"
    monkeypatch.setenv("CX_APP_DATABASE_URL", f"sqlite:///{path}")


from training_gates import slow_fold, slow_permutation  # noqa: E402,F401  (fixtures)
