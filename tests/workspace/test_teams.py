"""Teams file, membership, roles and permission checks (cx_app/workspace/teams.py)."""

from __future__ import annotations

import pytest

from cx_app.errors import AccessDenied, WorkspaceError
from cx_app.workspace.teams import Action, Role, Teams, load_teams, teams_from_yaml_text

ISSUE_EXAMPLE = """\
teams:
  North:
    admin: [alice@example.com]
    analyst: [dana@example.com]
    viewer: [carol@example.com]
  South:
    analyst: [bob@example.com]
"""


@pytest.fixture
def teams(tmp_path) -> Teams:
    path = tmp_path / "teams.yaml"
    path.write_text(ISSUE_EXAMPLE + """\
  East:
    viewer: ["@Example.org", erin@example.com]
    analyst: [Erin@Example.com]
""", encoding="utf-8")
    return load_teams(path)


def test_roles_from_the_issue_example(teams):
    assert teams.names == ("North", "South", "East")
    assert teams.role("alice@example.com", "North") is Role.ADMIN
    assert teams.role("dana@example.com", "North") is Role.ANALYST
    assert teams.role("carol@example.com", "North") is Role.VIEWER
    assert teams.role("bob@example.com", "North") is None
    assert teams.role("bob@example.com", "South") is Role.ANALYST
    assert teams.role("alice@example.com", "Nowhere") is None
    assert teams.teams_of("bob@example.com") == ("South",)
    assert teams.teams_of("mallory@example.net") == ()


def test_addresses_match_exactly_ignoring_case_and_domains_match_their_addresses(teams):
    assert teams.role("ALICE@Example.COM", "North") is Role.ADMIN
    assert teams.role(" alice@example.com ", "North") is Role.ADMIN
    assert teams.role("alice@example.co", "North") is None  # exact, not a prefix
    assert teams.role("malice@example.com", "North") is None  # exact, not a suffix
    assert teams.role("zoe@example.org", "East") is Role.VIEWER  # the "@example.org" entry
    assert teams.role("zoe@EXAMPLE.ORG", "East") is Role.VIEWER
    assert teams.role("zoe@sub.example.org", "East") is None  # not its subdomains
    assert teams.role("zoe@notexample.org", "East") is None
    assert teams.role("not an address", "East") is None
    assert teams.role("", "East") is None


def test_the_highest_role_wins(teams):
    # erin is a viewer (her address and her domain) and an analyst (another case) of East
    assert teams.role("erin@example.com", "East") is Role.ANALYST
    assert teams.roles("erin@example.com") == {"East": Role.ANALYST}
    assert teams.roles("alice@example.com") == {"North": Role.ADMIN}


@pytest.mark.parametrize(("user", "allowed"), [
    ("carol@example.com", {Action.READ}),
    ("dana@example.com", {Action.READ, Action.ANALYSE}),
    ("alice@example.com", {Action.READ, Action.ANALYSE, Action.ADMINISTER}),
    ("bob@example.com", set()),
])
def test_what_each_role_may_do(teams, user, allowed):
    assert {a for a in Action if teams.can(user, "North", a)} == allowed


def test_refusals_are_one_sentence_naming_user_team_and_role(teams):
    with pytest.raises(AccessDenied) as viewer:
        teams.require("carol@example.com", "North", Action.ANALYSE, doing="training")
    assert str(viewer.value) == ("carol@example.com is a viewer of North: viewers read programs "
                                 "and download reports; training needs the analyst role")
    with pytest.raises(AccessDenied) as analyst:
        teams.require("dana@example.com", "North", Action.ADMINISTER)
    assert str(analyst.value) == (
        "dana@example.com is an analyst of North: analysts also upload, train and estimate, but "
        "do not delete or move programs; deleting and moving programs needs the admin role")
    with pytest.raises(AccessDenied) as stranger:
        teams.require("bob@example.com", "North", Action.READ)
    assert str(stranger.value) == (
        "bob@example.com is not a member of North: reading programs needs a member of North "
        "(viewer or higher); ask an admin to add you to teams.yaml")
    assert teams.require("dana@example.com", "North", Action.ANALYSE) is None


def test_programs_without_a_team_belong_to_the_admins_of_any_team(teams):
    assert teams.can("alice@example.com", None, Action.ADMINISTER)
    assert not teams.can("dana@example.com", None, Action.READ)
    with pytest.raises(AccessDenied, match="^dana@example.com is not a member of the programs "
                                           "without a team: reading programs needs an admin of "
                                           "a team;"):
        teams.require("dana@example.com", None, Action.READ)


def test_single_user_mode_allows_everything():
    local = Teams(None)
    assert local.names == ()
    for action in Action:
        assert local.can("", None, action)
        assert local.can("anyone", "any team", action)
        local.require("", None, action)


def test_a_single_entry_may_be_written_without_a_list():
    teams = teams_from_yaml_text("teams:\n  North:\n    admin: alice@example.com\n", "t.yaml")
    assert teams.role("alice@example.com", "North") is Role.ADMIN


@pytest.mark.parametrize(("text", "message"), [
    ("teams:\n  North:\n    analyst: [dana@]\n",
     "teams.yaml: teams.North.analyst: 'dana@' is neither an e-mail address nor a domain "
     "such as '@example.com'"),
    ("teams:\n  North:\n    analysts: [dana@example.com]\n",
     "teams.yaml: teams.North: unknown role 'analysts' (the roles are admin, analyst and viewer)"),
    ("teams:\n  North:\n",
     "teams.yaml: teams.North: the team lists nobody (give it admin, analyst or viewer entries)"),
    ("teams:\n  North:\n    admin: []\n",
     "teams.yaml: teams.North: the team lists nobody (give it admin, analyst or viewer entries)"),
    ("teams: {}\n",
     "teams.yaml: teams: the file names no team (teams: {name: {admin: [...]}})"),
    ("teams:\n  North:\n    admin: [a@example.com]\n  north:\n    admin: [b@example.com]\n",
     "teams.yaml: teams: teams 'North' and 'north' differ only in case; name each team once"),
    ("team:\n  North:\n    admin: [a@example.com]\n",
     "teams.yaml: teams: Field required\nteams.yaml: team: Extra inputs are not permitted"),
    ("- alice@example.com\n",
     "teams.yaml: expected a mapping with a 'teams' key (teams: {name: {admin: [...], analyst: "
     "[...], viewer: [...]}}), got list"),
])
def test_a_bad_teams_file_is_refused_naming_the_file_and_the_entry(text, message):
    with pytest.raises(WorkspaceError) as info:
        teams_from_yaml_text(text, "teams.yaml")
    assert str(info.value) == message


def test_a_team_or_role_given_twice_is_refused_not_silently_dropped():
    text = ("teams:\n  North:\n    admin: [alice@example.com]\n"
            "  North:\n    viewer: [carol@example.com]\n")
    with pytest.raises(WorkspaceError, match=r"^teams.yaml: not valid YAML: .*'North' is given "
                                             r"twice.* line 4"):
        teams_from_yaml_text(text, "teams.yaml")
    with pytest.raises(WorkspaceError, match="'viewer' is given twice"):
        teams_from_yaml_text("teams:\n  N:\n    viewer: [a@x.io]\n    viewer: [b@x.io]\n",
                             "teams.yaml")


def test_unreadable_and_oversized_files(tmp_path):
    with pytest.raises(WorkspaceError, match=r"^missing.yaml: cannot read the teams file "
                                             r"\(No such file or directory\)$"):
        load_teams(tmp_path / "missing.yaml")
    binary = tmp_path / "teams.yaml"
    binary.write_bytes(b"teams: \xff\xfe")
    with pytest.raises(WorkspaceError, match="^teams.yaml: not a UTF-8 text"):
        load_teams(binary)
    with pytest.raises(WorkspaceError, match="too large"):
        teams_from_yaml_text("#" * 1_000_001, "teams.yaml")
