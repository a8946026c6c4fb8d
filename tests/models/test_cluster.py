"""Dask scale-out (``cx_app.models.cluster``) on a real two-worker LocalCluster (processes):
the same numbers as a local run, a killed worker retried, and one clear sentence for a wrong
scheduler address or a version mismatch."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import cloudpickle  # noqa: E402  (after the skip: only with the cluster extra)

from cx_app.cli import main  # noqa: E402
from cx_app.errors import ClusterError  # noqa: E402
from cx_app.estimate.alp import alp_learning_curve  # noqa: E402
from cx_app.models import cluster, crossval  # noqa: E402
from cx_app.models.analysis import evaluate_survey  # noqa: E402
from cx_app.models.crossval import build_model, cross_validate_model  # noqa: E402
from cx_app.provenance import without_wall_clock  # noqa: E402
from cx_app.safe_text import escape_markdown  # noqa: E402
from cx_app.survey.importing import load_survey  # noqa: E402
from cx_app.survey.schema import schema_from_mapping  # noqa: E402

ALGORITHMS = ["lr", "nb", "dt"]


def _write_survey(path: Path, seed: int = 4, n: int = 300) -> Path:
    rng = np.random.default_rng(seed)
    attrs = rng.integers(1, 11, (n, 4)).astype(float)
    attrs[rng.random((n, 4)) < 0.05] = np.nan  # gaps, filled inside each fold
    filled = np.nan_to_num(attrs, nan=5.0)
    score = np.clip(np.round(filled @ [0.4, 0.3, 0.2, 0.1] + rng.normal(0, 1.5, n)), 0, 10)
    frame = pd.DataFrame(attrs, columns=["Price", "Network", "Shops", "App"])
    frame.insert(0, "NPS", score.astype(int))
    frame.to_csv(path, index=False)
    return path


def _load(path: Path):
    schema = schema_from_mapping(target="NPS", scale=(0, 10),
                                 attributes=["Price", "Network", "Shops", "App"])
    return load_survey(path, schema=schema)




@pytest.fixture(scope="module")
def survey_file(tmp_path_factory):
    return _write_survey(tmp_path_factory.mktemp("cluster") / "survey.csv")


@pytest.fixture(scope="module")
def local_cluster():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", worker_dashboard_address=None,
                                  local_directory="/tmp/dask-scratch") as lc:
        yield lc


@pytest.fixture
def client(local_cluster):
    with distributed.Client(local_cluster, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


def test_a_cluster_run_gives_the_same_results_document(survey_file, client, monkeypatch):
    survey = _load(survey_file)
    options = dict(folds=4, seed=5, permutation_repeats=2, five_by_two=[("lr", "nb")])
    local, local_evals = evaluate_survey(survey, ALGORITHMS, **options)
    submitted = []
    real_parallel = crossval.Parallel

    class CountingParallel(real_parallel):
        def __call__(self, iterable):
            jobs = list(iterable)
            submitted.append(len(jobs))
            return super().__call__(jobs)

    monkeypatch.setattr(crossval, "Parallel", CountingParallel)
    with distributed.get_task_stream(client=client) as stream, cluster.on_cluster(client) as info:
        remote, remote_evals = evaluate_survey(survey, ALGORITHMS, **options)
    assert info.workers == 2
    # it really ran there: folds of 3 models, 20 fits of 5×2cv, permutation folds
    assert len(stream.data) >= 3 * 4
    # the three algorithms' 12 folds went to the cluster as one joblib run (side by side)
    assert submitted[0] == 3 * 4
    assert without_wall_clock(json.loads(remote.to_json())) == without_wall_clock(
        json.loads(local.to_json()))
    for a in ALGORITHMS:  # the matrices and per-fold metrics themselves
        for mine, theirs in zip(remote_evals[a].levels, local_evals[a].levels, strict=True):
            assert np.array_equal(mine.matrix, theirs.matrix)
        assert remote_evals[a].per_fold == local_evals[a].per_fold
    assert len(remote.comparisons_5x2cv) == 1
    assert remote.comparisons_5x2cv == local.comparisons_5x2cv
    assert remote.drivers is not None and remote.drivers == local.drivers


def test_cross_validation_on_the_cluster_gives_the_same_probabilities(survey_file, client):
    survey = _load(survey_file)
    args = (survey.X, survey.y, survey.classes, "lr")
    local = cross_validate_model(*args, folds=5, seed=1, sample_weight=np.linspace(1, 2, 300))
    with cluster.on_cluster(client):
        remote = cross_validate_model(*args, folds=5, seed=1,
                                      sample_weight=np.linspace(1, 2, 300))
    assert np.array_equal(remote.proba, local.proba)  # out-of-fold probabilities, bit for bit
    assert np.array_equal(remote.fold, local.fold)
    assert remote.warnings == local.warnings


def test_learning_curve_fits_on_the_cluster_give_the_same_curve(survey_file, client):
    survey = _load(survey_file)
    X, y = survey.X.to_numpy(), survey.y
    estimator = build_model("nb", seed=0)
    local = alp_learning_curve(X, y, survey.classes, estimator, seed=3)
    with cluster.on_cluster(client):
        remote = alp_learning_curve(X, y, survey.classes, estimator, seed=3)
    assert len(local) >= 5
    pd.testing.assert_frame_equal(remote, local)


def test_a_large_fold_model_goes_to_the_cluster_once_not_inside_each_task(client):
    """A forest of about 30 MB per fold: joblib's Dask backend would put it inside each
    permutation task's graph (Dask's ``sizeof`` of a pipeline is tens of bytes, so joblib does
    not scatter it), and distributed warns of a graph over 10 MB; :func:`cluster.place`
    scatters each fold model once. The importances are the local ones."""
    import warnings

    from cx_app.models.drivers import permutation_importance_cv

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(1, 11, (4000, 6)).astype(float), columns=list("ABCDEF"))
    y = np.clip(np.round(X.to_numpy() @ [0.3, 0.2, 0.2, 0.1, 0.1, 0.1] + rng.normal(0, 2, 4000)),
                0, 10)
    classes = list(range(11))
    with cluster.on_cluster(client):
        cv = cross_validate_model(X, y, classes, "rf", folds=2, seed=0, keep_models=True,
                                  settings={"n_estimators": 60})
        assert len(cloudpickle.dumps(cv.models[0])) > 15e6  # above distributed's 10 MB warning
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            remote = permutation_importance_cv(cv, X, n_repeats=2, seed=1)
    assert not [w for w in caught if "large graph" in str(w.message)]
    local = permutation_importance_cv(cv, X, n_repeats=2, seed=1)
    assert np.array_equal(remote.per_fold, local.per_fold)
    assert remote.per_fold.shape == (2, 6) and remote.per_fold.max() > 0


def _starts_a_batch(key, finish: str) -> bool:
    """Whether a worker's task transition is the start of a joblib batch."""
    name = key[0] if isinstance(key, tuple) else str(key)
    return finish == "executing" and name.startswith("batch_of")


def _claim(marker: str, text: str) -> bool:
    """Create ``marker`` holding ``text`` if no worker did (``O_EXCL``: one winner)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(fd, text.encode())
    os.close(fd)
    return True


class KillOnce(distributed.WorkerPlugin):
    """Kill the worker process that starts a joblib batch first; a marker file makes it once.

    The marker is created exclusively (``O_EXCL``): with a check-then-write, both workers could
    start their first batch at the same moment, both see no marker and both die, losing every
    copy of the scattered data (the run then fails, as it should when all workers are lost)."""

    def __init__(self, marker: str):
        self.marker = marker

    def transition(self, key, start, finish, **kwargs):
        if _starts_a_batch(key, finish) and _claim(self.marker, "killed"):
            os._exit(1)  # the first batch of the run; every other worker lives


@pytest.mark.slow  # starts and kills dask workers (~10 s)
def test_a_worker_killed_mid_run_is_retried_and_the_result_is_identical(survey_file, tmp_path):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    survey = _load(survey_file)
    local = cross_validate_model(survey.X, survey.y, survey.classes, "dt", folds=6, seed=2,
                                 keep_models=True)
    marker = tmp_path / "killed"
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", worker_dashboard_address=None,
                                  local_directory="/tmp/dask-scratch") as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=60)
        c.register_plugin(KillOnce(str(marker)))
        with cluster.on_cluster(c):
            remote = cross_validate_model(survey.X, survey.y, survey.classes, "dt", folds=6,
                                          seed=2, keep_models=True)
    assert marker.read_text() == "killed"  # a worker did die during the run
    assert np.array_equal(remote.proba, local.proba)
    assert np.array_equal(remote.y_pred, local.y_pred)


class KillOnOneTask(distributed.WorkerPlugin):
    """Kill every worker that starts one chosen joblib batch: the first batch any worker starts
    (its key is written to a marker file, created exclusively). Only that task kills, so the
    other worker and its copy of the scattered data live, and the failure is that task's."""

    def __init__(self, marker: str):
        self.marker = marker

    def transition(self, key, start, finish, **kwargs):
        if not _starts_a_batch(key, finish):
            return
        if _claim(self.marker, str(key)) or Path(self.marker).read_text() == str(key):
            os._exit(1)  # the chosen batch, wherever it runs


@pytest.mark.slow  # starts and kills dask workers (~10 s)
def test_a_task_that_keeps_killing_its_workers_is_one_sentence(survey_file, tmp_path):
    import dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    survey = _load(survey_file)
    # Dask gives up on a task after `allowed-failures` workers died running it: here at once
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                     dashboard_address=":0", worker_dashboard_address=None,
                                     local_directory="/tmp/dask-scratch") as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=60)
        c.register_plugin(KillOnOneTask(str(tmp_path / "poisoned")))
        with pytest.raises(ClusterError) as caught, cluster.on_cluster(c):
            cross_validate_model(survey.X, survey.y, survey.classes, "dt", folds=4, seed=2)
    # Dask reports the one death twice, in an order that varies under load (it failed once in
    # CI, 2026-11-29; 16 of 16 alone gave KilledWorker): the task that killed its worker
    # (KilledWorker) and a task Dask cancelled after that worker's loss
    # (FutureCancelledError); the sentence names whichever came first, never anything else
    causes = ("a task killed every worker that ran it",
              "the workers holding the run's data were lost")
    assert str(caught.value) in [
        f"the run on the Dask cluster at {lc.scheduler_address} failed ({cause}): the "
        "scheduler or its workers were lost; nothing was written, run it again"
        for cause in causes]


class KillBothOnce(distributed.WorkerPlugin):
    """Both workers die together at their first joblib batch (each waits for the other), so
    every copy of the data scattered for the run is gone; their restarted successors live."""

    def __init__(self, folder: str):
        self.folder = Path(folder)

    def transition(self, key, start, finish, **kwargs):
        import time

        if not _starts_a_batch(key, finish):
            return
        if len(list(self.folder.glob("arrived-*"))) >= 2:  # a restarted worker
            return
        (self.folder / f"arrived-{os.getpid()}").write_text("")
        deadline = time.monotonic() + 20
        while len(list(self.folder.glob("arrived-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        os._exit(1)


@pytest.mark.slow  # starts and kills dask workers (~10 s)
def test_every_worker_lost_at_once_is_one_sentence(survey_file, tmp_path):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    survey = _load(survey_file)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0", worker_dashboard_address=None,
                                  local_directory="/tmp/dask-scratch") as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        c.wait_for_workers(2, timeout=60)
        c.register_plugin(KillBothOnce(str(tmp_path)))
        with pytest.raises(ClusterError) as caught, cluster.on_cluster(c):
            cross_validate_model(survey.X, survey.y, survey.classes, "dt", folds=6, seed=2)
    assert len(list(tmp_path.glob("arrived-*"))) == 2  # both workers did die
    assert str(caught.value) == (
        f"the run on the Dask cluster at {lc.scheduler_address} failed (the workers holding the "
        "run's data were lost): the scheduler or its workers were lost; nothing was written, "
        "run it again")


def test_a_scheduler_lost_mid_run_is_one_sentence(survey_file):
    survey = _load(survey_file)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask_cli = str(Path(sys.executable).with_name("dask"))
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    scheduler = subprocess.Popen([dask_cli, "scheduler", "--port", str(port),
                                  "--dashboard-address", ":0"], **quiet)
    worker = subprocess.Popen([dask_cli, "worker", address, "--nworkers", "2", "--nthreads",
                               "1", "--dashboard-address", ":0", "--local-directory",
                               "/tmp/dask-scratch"], **quiet,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the scheduler process is listening
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        # 5 s is also how long the client tries to reconnect once the scheduler is gone
        client = distributed.Client(address, timeout=5, set_as_default=False)
        client.wait_for_workers(2, timeout=60)
        threading.Timer(1.0, scheduler.kill).start()
        start = time.perf_counter()
        with pytest.raises(ClusterError) as caught, cluster.on_cluster(client):
            for seed in range(50):  # long enough to be cut: rf, 10 folds, again and again
                cross_validate_model(survey.X, survey.y, survey.classes, "rf", folds=10,
                                     seed=seed)
        assert time.perf_counter() - start < 30
        assert str(caught.value) == (
            f"the run on the Dask cluster at {address} failed (the scheduler is gone): the "
            "scheduler or its workers were lost; nothing was written, run it again")
    finally:
        worker.kill()
        scheduler.kill()
        with contextlib.suppress(Exception):
            client.close(timeout=2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_wrong_scheduler_address_is_one_clear_sentence_quickly():
    address = f"tcp://127.0.0.1:{_free_port()}"
    start = time.perf_counter()
    with pytest.raises(ClusterError) as caught:
        cluster.connect(address, timeout=1)
    assert time.perf_counter() - start < 15
    message = str(caught.value)
    assert message.startswith(f"cannot reach the Dask scheduler at {address} within 1 s")
    assert "start it with `dask scheduler`" in message and "\n" not in message


def test_a_version_mismatch_is_refused_naming_the_package_and_both_versions(client):
    mine = cluster.environment()
    cluster.check_versions(client)  # the same interpreter: accepted
    fake = {**mine, "sklearn": "0.0.1"}
    with pytest.raises(ClusterError) as caught:
        cluster.check_versions(client, local=fake)
    message = str(caught.value)
    worker = sorted(client.scheduler_info()["workers"])[0]
    assert message.startswith(f"worker {worker} has scikit-learn {mine['sklearn']} but this "
                              "machine has scikit-learn 0.0.1")
    assert "\n" not in message
    assert cluster.version_mismatches(fake, {"w": mine}) == [
        ("w", "sklearn", mine["sklearn"], "0.0.1")]


@pytest.mark.slow  # a CLI run on a local Dask cluster (~26 s)
def test_cli_evaluate_on_the_cluster_writes_the_local_results(survey_file, local_cluster,
                                                              tmp_path, capsys, monkeypatch):
    """One job, two local worker processes, the default (every core) and the 2-worker cluster:
    the same results.json (a forest's and k-NN's own threads differ between them)."""
    monkeypatch.delenv(cluster.SCHEDULER_ENV, raising=False)
    common = [str(survey_file), "--target", "NPS", "--scale", "0-10", "--attributes",
              "Price,Network,Shops,App", "--algorithms", "lr,rf,knn", "--folds", "3",
              "--permutation-repeats", "2"]
    for name, jobs in (("one", ["--n-jobs", "1"]), ("two", ["--n-jobs", "2"]), ("default", [])):
        assert main(["evaluate", *common, *jobs, "--out", str(tmp_path / name)]) == 0
    # the environment variable names the cluster; the flag would win over it
    monkeypatch.setenv(cluster.SCHEDULER_ENV, local_cluster.scheduler_address)
    assert main(["evaluate", *common, "--out", str(tmp_path / "remote")]) == 0
    out = capsys.readouterr().out
    assert f"running on cluster {local_cluster.scheduler_address}, 2 workers" in out
    docs = [json.loads((tmp_path / d / "results.json").read_text())
            for d in ("one", "two", "default", "remote")]
    assert set(docs[0]["models"]) == {"lr", "rf", "knn"}
    permutation = docs[0]["drivers"]["permutation"]  # the best model's fold models, from files
    assert len(permutation) == 1 and len(next(iter(permutation.values()))["per_fold"]) == 3
    for doc in docs[1:]:
        assert without_wall_clock(doc) == without_wall_clock(docs[0])


def test_cli_wrong_scheduler_writes_nothing(survey_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(cluster.SCHEDULER_ENV, "tcp://127.0.0.1:1")  # the flag wins over it
    address = f"tcp://127.0.0.1:{_free_port()}"
    code = main(["evaluate", str(survey_file), "--target", "NPS", "--scale", "0-10",
                 "--attributes", "Price,Network,Shops,App", "--algorithms", "lr",
                 "--folds", "3", "--out", str(tmp_path / "out"), "--dask-scheduler", address,
                 "--dask-timeout", "1"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith(f"error: cannot reach the Dask scheduler at {address} within 1 s")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # a whole CLI evaluation in a child (~15 s)
def test_without_a_scheduler_dask_is_never_imported(survey_file, tmp_path):
    code = (
        "import sys, os\n"
        f"os.environ.pop({cluster.SCHEDULER_ENV!r}, None)\n"
        "from cx_app.cli import main\n"
        f"assert main(['evaluate', {str(survey_file)!r}, '--target', 'NPS', '--scale', '0-10',"
        " '--attributes', 'Price,Network,Shops,App', '--algorithms', 'lr', '--folds', '3',"
        f" '--permutation-repeats', '1', '--out', {str(tmp_path / 'o')!r}]) == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_models_page_names_the_cluster_and_trains_there(client, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from cx_app.app.session import train_lean
    from cx_app.models.algorithms import ALGORITHMS as REGISTRY
    from cx_app.survey.samples import sample_path
    from cx_app.survey.schema import load_schema

    root = Path(__file__).resolve().parents[2]
    address = client.scheduler.address
    monkeypatch.setenv(cluster.SCHEDULER_ENV, address)
    at = AppTest.from_file(str(root / "streamlit_app.py"), default_timeout=180).run()
    at.switch_page("app_pages/models.py").run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    # the caption is Markdown with the address escaped (cx_app.safe_text.escape_markdown)
    assert any(c.value.startswith(escape_markdown(f"running on cluster {address}, 2 workers"))
               for c in at.caption)
    at.multiselect(key="algorithms").set_value(["nb"])
    at.number_input(key="folds").set_value(2)
    at.number_input(key="seed").set_value(7)  # a recipe no other test has put in the app's store
    with distributed.get_task_stream(client=client) as stream:
        at.button(key="train").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert len(stream.data) >= 2  # the folds ran on the cluster
    (model,) = at.session_state["analysis"].models.values()
    cv = model.cv
    sample = load_survey(sample_path("telecom_nps"),
                         schema=load_schema(root / "survey_schemas" / "telecom_nps.yaml"))
    local, _ = train_lean(sample, "nb", folds=2, seed=7, settings=REGISTRY["nb"].defaults,
                          calibration="none")
    assert np.array_equal(cv.proba, local.proba)


def test_models_page_with_an_unreachable_scheduler_says_so_and_does_not_train(monkeypatch):
    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parents[2]
    address = f"tcp://127.0.0.1:{_free_port()}"
    monkeypatch.setenv(cluster.SCHEDULER_ENV, address)
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1.0)
    monkeypatch.setattr(cluster.connect, "__kwdefaults__", {"timeout": 1.0, "check": True})
    at = AppTest.from_file(str(root / "streamlit_app.py"), default_timeout=180).run()
    at.switch_page("app_pages/models.py").run()
    assert [e.value for e in at.error] == [escape_markdown(
        f"Dask cluster: cannot reach the Dask scheduler at {address} within 1 s (Timed out "
        f"trying to connect to {address} after 1 s): start it with `dask scheduler`, or fix "
        f"--dask-scheduler / {cluster.SCHEDULER_ENV}")]
    assert at.button(key="train").disabled


def test_the_shared_client_reconnects_on_a_new_address_and_closes_the_old_one(monkeypatch):
    """The server's one client: the same address gives the same client (no reconnect); a new
    address closes the old client before connecting (the Models page's Dask lifecycle)."""

    class FakeClient:
        def __init__(self, address: str) -> None:
            self.address, self.closed = address, False

        def close(self) -> None:
            self.closed = True

    made: list[FakeClient] = []
    monkeypatch.setattr(cluster, "connect",
                        lambda address: made.append(FakeClient(address)) or made[-1])
    shared = cluster.SharedClient()
    first = shared.get("tcp://a:8786")
    assert shared.get("tcp://a:8786") is first and len(made) == 1
    second = shared.get("tcp://b:8786")
    assert second.address == "tcp://b:8786" and first.closed and not second.closed
    assert len(made) == 2


def test_idle_workers_leave_soon_only_inside_a_one_shot_run():
    """A server's pools keep joblib's idle timeout (warm workers for the next training);
    cx-app evaluate's (``short_lived_workers``) let them go after a second, also in a thread
    the context does not reach."""
    import threading

    from cx_app.models import cluster

    assert cluster.idle_worker_seconds() == 300.0
    seen = []
    with cluster.short_lived_workers():
        assert cluster.idle_worker_seconds() == cluster.SHORT_IDLE_SECONDS == 1.0
        thread = threading.Thread(target=lambda: seen.append(cluster.idle_worker_seconds()))
        thread.start()
        thread.join()
    assert seen == [300.0]
    assert cluster.idle_worker_seconds() == 300.0
