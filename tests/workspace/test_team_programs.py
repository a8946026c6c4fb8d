"""Team mode in the workspace and the CLI: every change is an audit row with its user (SQLite
and PostgreSQL), programs belong to teams, and each user sees and changes only what their
roles allow (issue 28's North/South example). The program is the session's trained
"telecom" program (``program_file``), copied or imported: nothing is trained here."""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time

import pytest
from test_teams import ISSUE_EXAMPLE
from workspace_helpers import BACKENDS, copy_of, new_database, telecom_mapping

from cx_app.app.session import CrossValidatedModel
from cx_app.cli import main
from cx_app.errors import AccessDenied, WorkspaceError
from cx_app.survey.importing import load_survey
from cx_app.workspace.analyses import AnalysisStore
from cx_app.workspace.audit import cli_user, events
from cx_app.workspace.programs import Workspace
from cx_app.workspace.teams import teams_from_yaml_text
from cx_app.workspace.transfer import export_program, import_program

TEAMS_YAML = ISSUE_EXAMPLE + "    admin: [alice@example.com]\n"
"""The issue's North and South, alice also an admin of South (to move programs there)."""
TEAMS = teams_from_yaml_text(TEAMS_YAML, "teams.yaml")


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def project_bytes(program_file, tmp_path_factory) -> bytes:
    """The trained "telecom" program as a .cxproj (imported by each test: no training)."""
    with Workspace.open(copy_of(program_file, tmp_path_factory.mktemp("export"))) as ws:
        return export_program(ws, "telecom")


def _north(url: str, project: bytes) -> None:
    """The workspace at ``url`` gets "North NPS", a program of North (imported by the operator
    "ops")."""
    with Workspace.open(url, user="ops") as ws:
        import_program(ws, project, name="North NPS", team="North")


@pytest.fixture
def north(tmp_path, project_bytes) -> str:
    url = f"sqlite:///{tmp_path / 'teams.db'}"
    _north(url, project_bytes)
    return url


def _rows(database, program):
    return [(r.user, r.action, r.detail) for r in reversed(events(database, program))]


def test_creating_a_program_records_the_os_user(program_file, tmp_path):
    with Workspace.open(copy_of(program_file, tmp_path)) as ws:
        assert ws.user == cli_user()
        assert _rows(ws.database, "telecom") == [
            (cli_user(), "program created", "from telecom_reference.csv, model lr")]
        assert [r.action for r in ws.audit("telecom")] == ["program created"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_change_is_one_audit_row_with_its_user(backend, request, tmp_path,
                                                     project_bytes, survey_files):
    url = new_database(backend, tmp_path, request)
    _north(url, project_bytes)
    with Workspace.open(url, user="dana@example.com", teams=TEAMS) as ws:
        ws.add_waves("North NPS", [survey_files["W01"], survey_files["W02"]])
        assert [w.status for w in ws.add_waves("North NPS", [survey_files["W01"]])] == [
            "already"]  # the same file again: no row
        assert ws.remove_wave("North NPS", "W02") == 1
        ws.record_report("North NPS", "xlsx", tmp_path / "out" / "report.xlsx", b"xlsx", 1)
        export_program(ws, "North NPS", tmp_path / "north.cxproj")
    with Workspace.open(url, user="alice@example.com", teams=TEAMS) as ws:
        ws.move_program("North NPS", "South")
        history = ws.audit("North NPS")
        ws.delete_program("North NPS")
        assert [p.name for p in ws.list_programs()] == []
        assert _rows(ws.database, "North NPS") == [
            ("ops", "program imported", "from a project file, team North"),
            ("dana@example.com", "wave added", "W01 (telecom_W01.csv, 180 respondents)"),
            ("dana@example.com", "wave added", "W02 (telecom_W02.csv, 180 respondents)"),
            ("dana@example.com", "wave removed", "W02 (telecom_W02.csv)"),
            ("dana@example.com", "report exported", "xlsx report.xlsx, 1 wave(s)"),
            ("dana@example.com", "program exported", "to north.cxproj"),
            ("alice@example.com", "program moved", "from North to South"),
            ("alice@example.com", "program deleted", "team South")]
    assert [r.action for r in history][:2] == ["program moved", "program exported"]
    assert len(history) == 7


def test_a_refused_change_writes_no_row_and_changes_nothing(north, survey_files):
    with Workspace.open(north, user="carol@example.com", teams=TEAMS) as ws:
        with pytest.raises(AccessDenied) as refused:
            ws.add_waves("North NPS", [survey_files["W01"]])
        assert str(refused.value) == (
            "carol@example.com is a viewer of North: viewers read programs and download "
            "reports; adding waves needs the analyst role")
        with pytest.raises(AccessDenied, match="; removing waves needs the analyst role$"):
            ws.remove_wave("North NPS", "W01")
        with pytest.raises(AccessDenied, match="; estimating waves needs the analyst role$"):
            ws.estimate_waves("North NPS", "lr")
        with pytest.raises(AccessDenied, match="; uploading, training and estimating needs "):
            AnalysisStore(ws).set_plan("North NPS", {})
        assert ws.show("North NPS").waves == ()
        assert [r.action for r in ws.audit("North NPS")] == ["program imported"]


def test_the_audit_row_commits_with_its_change_or_neither_does(north, survey_files,
                                                                 monkeypatch):
    from cx_app.workspace import audit

    with Workspace.open(north, user="dana@example.com", teams=TEAMS) as ws:
        ws.add_waves("North NPS", [survey_files["W01"]])

        def failing(*args, **kwargs):
            raise WorkspaceError("the audit trail cannot be written")

        monkeypatch.setattr(audit, "record", failing)
        with pytest.raises(WorkspaceError, match="the audit trail cannot be written"):
            ws.remove_wave("North NPS", "W01")
        with pytest.raises(WorkspaceError, match="the audit trail cannot be written"):
            ws.for_user("alice@example.com", TEAMS).delete_program("North NPS")
        monkeypatch.undo()
        assert [w.label for w in ws.show("North NPS").waves] == ["W01"]
        assert [r.action for r in ws.audit("North NPS")] == ["wave added", "program imported"]
    with pytest.raises(WorkspaceError) as nobody:
        Workspace.open(north, user="  ")
    assert str(nobody.value) == ("a workspace acts for a user named in 1 to 320 characters (the "
                                 "audit trail records who made each change)")


def test_the_app_store_records_a_new_program_and_each_model_once(tmp_path, survey_files,
                                                                 program_file):
    with Workspace.open(copy_of(program_file, tmp_path)) as trained:
        model = AnalysisStore(trained).reopen("telecom").models[0]
    fresh = Workspace.open(f"sqlite:///{tmp_path / 'app.db'}")
    ws = fresh.for_user("dana@example.com", TEAMS)
    store = AnalysisStore(ws)
    survey = load_survey(survey_files["reference"], schema=telecom_mapping())
    name = store.program_for(survey, None, keep_files=False, team="North")
    assert store.program_for(survey, None, keep_files=False, team="North") == name
    cv_model = CrossValidatedModel(model.model_id, model.algorithm_id, dict(model.settings),
                                   model.folds, model.seed, model.cv, "key-1")
    store.store_model(name, cv_model, data_key=survey.data_key, respondents=len(survey.y))
    store.store_model(name, cv_model, data_key=survey.data_key, respondents=len(survey.y))
    assert _rows(ws.database, name) == [
        ("dana@example.com", "program created", "from telecom_reference.csv, team North"),
        ("dana@example.com", "model trained",
         f"lr, 3-fold cross-validation on {len(survey.y)} respondents")]
    # a member of South neither finds North's program by its file nor may create one in North
    bob = AnalysisStore(fresh.for_user("bob@example.com", TEAMS))
    source = survey.source
    assert bob.find_program(source.sha256, source.sheet, source.filename) is None
    with pytest.raises(AccessDenied, match="^bob@example.com is not a member of North"):
        bob.program_for(survey, None, team="North")
    fresh.close()


def test_two_analysts_saving_the_same_file_at_once_make_one_program(tmp_path, survey_files,
                                                                    monkeypatch):
    """The second analyst's look-up ran before the first one's program was committed: the
    write transaction looks again and joins that program instead of making a second."""
    with Workspace.open(f"sqlite:///{tmp_path / 'ws.db'}", user="dana@example.com",
                        teams=TEAMS) as ws:
        survey = load_survey(survey_files["reference"], schema=telecom_mapping())
        first = AnalysisStore(ws).program_for(survey, None, keep_files=False, team="North")
        late = AnalysisStore(ws.for_user("alice@example.com", TEAMS))
        monkeypatch.setattr(late, "find_program", lambda *args: None)  # looked before it
        assert late.program_for(survey, None, keep_files=False, team="North") == first
        assert [p.name for p in ws.list_programs()] == [first]


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_analysts_creating_the_same_program_at_the_same_moment_make_one(
        backend, request, tmp_path, survey_files, monkeypatch):
    """Both look-ups find nothing and both write transactions start at once: the first one
    holds its transaction open for a moment after it looked again, and the second waits for
    it (SQLite's write lock, PostgreSQL's advisory lock) instead of making a second program
    (or failing on the name both chose)."""
    url = new_database(backend, tmp_path, request)
    survey = load_survey(survey_files["reference"], schema=telecom_mapping())
    found = AnalysisStore._found
    first_looked = threading.Event()

    def slow_found(self, session, *args):
        made = found(self, session, *args)
        if not first_looked.is_set():
            first_looked.set()
            time.sleep(1.0)  # the second transaction starts meanwhile
        return made

    monkeypatch.setattr(AnalysisStore, "_found", slow_found)
    names: dict[str, str] = {}
    with Workspace.open(url, user="ops", teams=TEAMS) as ws:
        def save(user: str) -> None:
            store = AnalysisStore(ws.for_user(user, TEAMS))
            store.find_program = lambda *args: None  # both looked before either saved
            names[user] = store.program_for(survey, None, keep_files=False, team="North")

        dana = threading.Thread(target=save, args=("dana@example.com",))
        dana.start()
        assert first_looked.wait(30)
        save("alice@example.com")
        dana.join(30)
        assert names["dana@example.com"] == names["alice@example.com"]
        programs = ws.for_user("dana@example.com", TEAMS).list_programs()
        assert [p.name for p in programs] == [names["dana@example.com"]]


def test_each_user_sees_the_programs_of_their_teams(north):
    with Workspace.open(north, user="dana@example.com", teams=TEAMS) as ws:
        assert [(p.name, p.team) for p in ws.list_programs()] == [("North NPS", "North")]
        assert ws.show("North NPS").team == "North"
        assert ws.show("North NPS").to_dict()["team"] == "North"
    with Workspace.open(north, user="bob@example.com", teams=TEAMS) as ws:
        assert ws.list_programs() == []
        for look in (ws.show, ws.results, ws.audit, ws.program_model,
                     lambda n: export_program(ws, n)):
            with pytest.raises(WorkspaceError) as hidden:
                look("North NPS")
            assert str(hidden.value) == ("no program named 'North NPS' among your teams' "
                                         "programs.")  # not theirs, nothing more (issue 33)
        with pytest.raises(WorkspaceError, match="^no program named 'North NPS'"):
            ws.delete_program("North NPS")
        with pytest.raises(WorkspaceError, match="^no program named 'North NPS'"):
            AnalysisStore(ws).reopen("North NPS")  # the app's reopening by address
    with Workspace.open(north, user="ops") as ws:  # unrestricted: the operator
        assert [p.name for p in ws.list_programs()] == ["North NPS"]


def test_roles_decide_who_changes_moves_and_deletes(north):
    with Workspace.open(north, user="dana@example.com", teams=TEAMS) as ws:
        with pytest.raises(AccessDenied) as refused:
            ws.delete_program("North NPS")
        assert str(refused.value) == (
            "dana@example.com is an analyst of North: analysts also upload, train and "
            "estimate, but do not delete or move programs; deleting a program needs the "
            "admin role")
        with pytest.raises(AccessDenied, match="moving a program needs the admin role"):
            ws.move_program("North NPS", "South")
    with Workspace.open(north, user="alice@example.com", teams=TEAMS) as ws:
        with pytest.raises(WorkspaceError) as unknown:
            ws.move_program("North NPS", "East")
        assert str(unknown.value) == ("teams.yaml has no team named 'East'; its teams are "
                                      "North, South.")
        ws.move_program("North NPS", "South")
    with Workspace.open(north, user="dana@example.com", teams=TEAMS) as ws:
        assert ws.list_programs() == []
    with Workspace.open(north, user="bob@example.com", teams=TEAMS) as ws:
        assert [p.team for p in ws.list_programs()] == ["South"]
        with pytest.raises(AccessDenied, match="^bob@example.com is an analyst of South"):
            ws.delete_program("North NPS")
        with pytest.raises(AccessDenied, match="^bob@example.com is not a member of North"):
            import_program(ws, b"not read", name="Bob's", team="North")
    with Workspace.open(north, user="alice@example.com", teams=TEAMS) as ws:
        ws.delete_program("North NPS")
        assert ws.list_programs() == []


def test_audit_rows_of_an_earlier_program_of_that_name_are_not_shown(north, project_bytes):
    with Workspace.open(north, user="alice@example.com", teams=TEAMS) as ws:
        ws.delete_program("North NPS")
    with Workspace.open(north, user="bob@example.com", teams=TEAMS) as ws:
        import time

        time.sleep(1.1)  # the audit trail's clock counts whole seconds
        import_program(ws, project_bytes, name="North NPS", team="South")
        assert [(r.user, r.action) for r in ws.audit("North NPS")] == [
            ("bob@example.com", "program imported")]


# ---------------------------------------------------------------------------------- the CLI


def test_cli_team_audit_move_delete_and_as(north, tmp_path, project_bytes, monkeypatch):
    monkeypatch.delenv("CX_APP_TEAMS", raising=False)
    teams_file = tmp_path / "teams.yaml"
    teams_file.write_text(TEAMS_YAML)
    cxproj = tmp_path / "north.cxproj"
    cxproj.write_bytes(project_bytes)
    db = ["--db", north]
    team = ["--teams", str(teams_file)]
    code, out, err = cli("program", "import", str(cxproj), "--name", "South CSAT", "--team",
                         "South", *db)
    assert (code, err) == (0, "") and out.startswith("imported program South CSAT into ")
    code, out, err = cli("program", "list", *db, *team, "--as", "bob@example.com")
    assert (code, err) == (0, "") and out.startswith("South CSAT:") and "North" not in out
    assert out.endswith(" UTC; team South\n") and out.count("\n") == 1
    code, out, err = cli("program", "show", "South CSAT", *db, *team, "--as", "bob@example.com")
    assert (code, err) == (0, "") and out.startswith("program South CSAT: ")
    assert out.splitlines()[0].endswith(" 0 wave(s); team South")
    code, out, err = cli("program", "show", "North NPS", *db, *team, "--as", "bob@example.com")
    assert (code, out) == (2, "")
    assert err == "error: no program named 'North NPS' among your teams' programs: yours are South CSAT.\n"
    code, out, err = cli("program", "delete", "North NPS", *db, *team, "--as",
                         "dana@example.com")
    assert (code, out) == (2, "")
    assert err == ("error: dana@example.com is an analyst of North: analysts also upload, "
                   "train and estimate, but do not delete or move programs; deleting a "
                   "program needs the admin role\n")
    assert cli("program", "move", "North NPS", "--team", "South", *db, *team, "--as",
               "alice@example.com") == (0, "moved program North NPS to team South\n", "")
    assert cli("program", "move", "North NPS", "--team", "East", *db, *team) == (
        2, "", "error: teams.yaml has no team named 'East'; its teams are North, South.\n")
    assert cli("program", "audit", "North NPS", *db, "--as", "alice@example.com") == (
        2, "", "error: --as alice@example.com needs the teams file that says what this user "
               "may do: give --teams FILE or set CX_APP_TEAMS\n")
    code, out, err = cli("program", "audit", "North NPS", "--json", *db)
    assert (code, err) == (0, "")
    rows = json.loads(out)
    assert [(r["user"], r["action"], r["detail"]) for r in rows] == [
        (f"{cli_user()} (as alice@example.com)", "program moved", "from North to South"),
        ("ops", "program imported", "from a project file, team North")]
    assert all(r["program"] == "North NPS" and r["created"].endswith("+00:00") for r in rows)
    code, out, err = cli("program", "delete", "North NPS", *db)
    assert (code, err) == (0, "") and out.startswith("deleted program North NPS from ")
    with Workspace.open(north) as ws:
        assert [(r.user, r.action) for r in events(ws.database, "North NPS")][0] == (
            cli_user(), "program deleted")
    code, out, err = cli("program", "audit", "North NPS", *db)
    assert code == 2 and err.startswith("error: no program named 'North NPS'")


def test_cli_create_records_the_team(tmp_path, survey_files):
    from test_programs import MAPPING

    url = f"sqlite:///{tmp_path / 'create.db'}"
    code, out, err = cli("program", "create", "North NPS", str(survey_files["reference"]),
                         *MAPPING, "--algorithm", "nb", "--folds", "3", "--calibration",
                         "none", "--team", "North", "--db", url)
    assert (code, err) == (0, ""), err
    with Workspace.open(url, user="carol@example.com", teams=TEAMS) as ws:
        assert [(p.name, p.team) for p in ws.list_programs()] == [("North NPS", "North")]
    code, out, err = cli("program", "audit", "North NPS", "--db", url)
    assert out.splitlines()[0].endswith(
        f"UTC  {cli_user()}  program created: from telecom_reference.csv, model nb, "
        "team North")


def test_mapping_and_grouping_changes_are_audited_with_the_sign_in(tmp_path, survey_files):
    """Issue 33: label and mapping edits were not in the audit trail; a change is one row, no
    change none, and the signed-in person's issuer and subject are recorded with it."""
    from cx_app.workspace.identities import SignIn

    fresh = Workspace.open(f"sqlite:///{tmp_path / 'app.db'}")
    signed = SignIn(issuer="https://idp.example.com", subject="dana-7", email="dana@example.com")
    ws = fresh.for_user("dana@example.com", TEAMS, sign_in=signed)
    store = AnalysisStore(ws)
    survey = load_survey(survey_files["reference"], schema=telecom_mapping())
    name = store.program_for(survey, None, keep_files=False, team="North")
    store.set_mapping(name, survey)  # the same mapping: nothing changed, nothing recorded
    relabelled = load_survey(survey_files["reference"], schema=telecom_mapping().model_copy(
        update={"name": "telecom relabelled"}))
    store.set_mapping(name, relabelled)
    plan = {"steps": [{"name": "nps", "groups": {"low": [0, 1, 2, 3, 4, 5, 6], "mid": [7, 8],
                                                 "high": [9, 10]}}]}
    store.set_plan(name, plan)
    store.set_plan(name, plan)  # again: no change
    rows = events(ws.database, name)
    assert [(r.user, r.action, r.subject, r.issuer) for r in rows] == [
        ("dana@example.com", "grouping changed", "dana-7", "https://idp.example.com"),
        ("dana@example.com", "mapping changed", "dana-7", "https://idp.example.com"),
        ("dana@example.com", "program created", "dana-7", "https://idp.example.com")]
    assert rows[1].detail.startswith("the mapping of telecom_reference.csv: ")
    fresh.close()


def test_an_imported_program_gets_the_same_name_check_as_a_created_one(tmp_path, project_bytes):
    with Workspace.open(f"sqlite:///{tmp_path / 'names.db'}", user="ops") as ws:
        for blank in ("", "  ", "\n", "\u202e"):
            with pytest.raises(WorkspaceError, match="a program needs a name of 1 to 200"):
                import_program(ws, project_bytes, name=blank)
        assert import_program(ws, project_bytes, name=" North\u202e\nNPS ") == "North NPS"
        assert [p.name for p in ws.list_programs()] == ["North NPS"]
