"""``cx-app app --secrets FILE --teams FILE``: both files are checked before any server starts
(one sentence each), the secrets file goes to Streamlit's ``secrets.files`` option and the
teams file's path to the server in ``CX_APP_TEAMS``. No server is started here."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys

import pytest

from cx_app.cli import main
from cx_app.cli.app import ENTRY_SCRIPT, SERVER_THREADS, server_launch
from cx_app.errors import CxAppError

AUTH = """\
[auth]
redirect_uri = "https://cx.example.com/oauth2callback"
cookie_secret = "0123456789abcdef0123456789abcdef"
client_id = "cx-app"
client_secret = "s3cret"
server_metadata_url = "https://id.example.com/.well-known/openid-configuration"
"""
TEAMS = "teams:\n  North:\n    admin: [alice@example.com]\n"
BASE = [sys.executable, "-m", "streamlit", "run", str(ENTRY_SCRIPT),
        "--server.port", "8601", "--server.address", "127.0.0.1"]


def _args(secrets=None, teams=None) -> argparse.Namespace:
    return argparse.Namespace(port=8601, address="127.0.0.1", secrets=secrets, teams=teams)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "secrets.toml").write_text(AUTH)
    (tmp_path / "teams.yaml").write_text(TEAMS)
    return tmp_path


def test_single_user_mode_is_unchanged():
    launch = server_launch(_args(), {"HOME": "/home/x"})
    assert launch.command == BASE
    assert launch.env == {"HOME": "/home/x", **SERVER_THREADS}


def test_team_mode_by_flags_and_by_variables(files, monkeypatch):
    monkeypatch.chdir(files)
    launch = server_launch(_args("secrets.toml", "teams.yaml"), {"HOME": "/home/x"})
    assert launch.command == [*BASE, "--secrets.files", str(files / "secrets.toml")]
    assert launch.env == {"HOME": "/home/x", "CX_APP_TEAMS": str(files / "teams.yaml"),
                          **SERVER_THREADS}
    by_env = server_launch(_args(), {"CX_APP_SECRETS": "secrets.toml",
                                     "CX_APP_TEAMS": "teams.yaml"})
    assert by_env.command == launch.command
    assert by_env.env["CX_APP_TEAMS"] == str(files / "teams.yaml")
    # a flag wins over its variable
    (files / "other.yaml").write_text(TEAMS)
    assert server_launch(_args(teams="other.yaml"), {"CX_APP_SECRETS": "secrets.toml",
                                                     "CX_APP_TEAMS": "teams.yaml"}
                         ).env["CX_APP_TEAMS"] == str(files / "other.yaml")


def test_named_providers_are_accepted(files):
    (files / "named.toml").write_text(
        '[auth]\nredirect_uri = "http://localhost:8501/oauth2callback"\ncookie_secret = "x"\n'
        '[auth.google]\nclient_id = "a"\nclient_secret = "b"\n'
        'server_metadata_url = "https://accounts.google.com/.well-known/openid-configuration"\n')
    launch = server_launch(_args(str(files / "named.toml"), str(files / "teams.yaml")), {})
    assert launch.command[-2:] == ["--secrets.files", str(files / "named.toml")]


@pytest.mark.parametrize("text, problem", [
    ("[server]\nport = 1\n", "has no [auth] section (Streamlit's sign-in settings)"),
    (AUTH.replace('cookie_secret = "0123456789abcdef0123456789abcdef"\n', ""),
     "has no cookie_secret in its [auth] section"),
    (AUTH.replace("/oauth2callback", "/callback"),
     "has a redirect_uri that does not end with /oauth2callback (Streamlit's path)"),
    (AUTH.replace('client_secret = "s3cret"\n', ""),
     "has no client_secret in its [auth] section"),
    ('[auth]\nredirect_uri = "https://a.example/oauth2callback"\ncookie_secret = "x"\n',
     "names no provider in its [auth] section (client_id, client_secret, "
     "server_metadata_url)"),
])
def test_a_secrets_file_without_a_usable_sign_in_is_refused(files, text, problem):
    path = files / "bad.toml"
    path.write_text(text)
    with pytest.raises(CxAppError) as refused:
        server_launch(_args(str(path), str(files / "teams.yaml")), {})
    assert str(refused.value) == (f"{path}: the secrets file {problem}; see "
                                  "docs/deployment.md, step 3")


def test_unreadable_files_and_a_missing_half_are_one_sentence(files):
    teams = str(files / "teams.yaml")
    with pytest.raises(CxAppError) as missing:
        server_launch(_args(str(files / "none.toml"), teams), {})
    assert str(missing.value) == (f"{files / 'none.toml'}: cannot read the secrets file "
                                  "(No such file or directory)")
    (files / "broken.toml").write_text("[auth\n")
    with pytest.raises(CxAppError, match=r"broken.toml: the secrets file is not valid TOML \("):
        server_launch(_args(str(files / "broken.toml"), teams), {})
    (files / "teams-bad.yaml").write_text("teams:\n  North:\n    boss: [a@example.com]\n")
    with pytest.raises(CxAppError, match="^teams-bad.yaml: .*unknown role 'boss'"):
        server_launch(_args(str(files / "secrets.toml"), str(files / "teams-bad.yaml")), {})
    with pytest.raises(CxAppError) as half:
        server_launch(_args(secrets=str(files / "secrets.toml")), {})
    assert str(half.value) == ("team mode needs both files: --secrets is given, so give "
                               "--teams FILE (or CX_APP_TEAMS) too")
    with pytest.raises(CxAppError, match="--teams is given, so give --secrets FILE "):
        server_launch(_args(), {"CX_APP_TEAMS": teams})


def test_cx_app_app_refuses_before_starting_a_server(files):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["app", "--secrets", str(files / "secrets.toml"), "--teams",
                     str(files / "none.yaml")])
    assert code == 2
    assert err.getvalue() == ("error: none.yaml: cannot read the teams file (No such file or "
                              "directory)\n")
