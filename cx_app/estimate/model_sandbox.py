"""The first opening and prediction of a model file, in a child process with limits (issue 24).

What :mod:`cx_app.estimate.model_checks` does not know (a crafted XGBoost tree inside a
booster's bytes) must still not take the server down: :mod:`cx_app.estimate.model_check_child`
opens the file and predicts in a child (limits: docs/deployment.md); a crash, a limit or an
error becomes one :class:`~cx_app.errors.ModelFileError` sentence. Several files share one
child; a file that kills it is the one refused, the files after it get a new child. A child
costs 3–5 s (``bench/bench_model_check.py``), so answers are remembered by the file's SHA-256
(with the extra trusted types and the versions of cx-app, Python and scikit-learn) in the
process and in :func:`checks_dir` (issue 38: each ``cx-app estimate`` is a process of its own).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cx_app.errors import ModelFileError
from cx_app.isolation import ChildLimits, ChildStopped, env_number, run_child, say
from cx_app.provenance import library_versions, sha256_hex

__all__ = ["REMEMBERED", "check_files_in_child", "remember"]

REMEMBERED = 1024
_MB = 1024 * 1024
_DEFAULT_MB = 4096
_DEFAULT_SECONDS = 60
_LABEL = "\x00model file\x00"
"""The file's name in the child's sentences, replaced by the caller's."""
_WORDING = {
    "subject": "the model's first prediction", "outcome": "it was not used.",
    "cpu": "{where}: the model used more than {cpu} s of CPU time in its first prediction; "
           "{outcome}",
    "signal": "{where}: the model crashed while making its first prediction (signal {signal}); "
              "{outcome}"}
"""How :mod:`cx_app.isolation`'s sentences say a stopped check."""
_verdicts: OrderedDict[str, str | None] = OrderedDict()
_lock = threading.Lock()


def remember(data: bytes) -> None:
    """Record ``data`` (a model file's bytes) as checked: no child is started for it again in
    this process nor, through the check memory, in another. For files this process wrote from
    a model it fitted or already checked."""
    _store(_key(data, ()), None)


def _key(data: bytes, trusted: Sequence[str]) -> str:
    return sha256_hex(data) + "".join(f" {t}" for t in sorted(trusted))


def checks_dir() -> Path:
    """Where answers are remembered across processes (``CX_APP_MODEL_CHECKS_DIR``, else
    ``$XDG_CACHE_HOME/cx-app/model-checks``)."""
    chosen = os.environ.get("CX_APP_MODEL_CHECKS_DIR", "").strip()
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cx-app" / "model-checks"


def _memory_file(key: str) -> Path:
    v = library_versions()
    versions = f"{v['cx_app']} {sys.version_info[:3]} {v['sklearn']}"
    return checks_dir() / sha256_hex(f"{key}\n{versions}".encode())


_OK = "checked"


def _recalled(key: str) -> tuple[bool, str | None]:
    """(found, verdict) of ``key`` in the check memory on disk (unreadable: not found)."""
    try:
        text = _memory_file(key).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return False, None
    return True, None if text == _OK else text


def _store(key: str, verdict: str | None) -> None:
    with _lock:
        _verdicts[key] = verdict
        _verdicts.move_to_end(key)
        while len(_verdicts) > REMEMBERED:
            _verdicts.popitem(last=False)
    from cx_app.atomic_files import write_bytes_atomic

    path = _memory_file(key)
    try:  # a memory that cannot be written only costs a child next time
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, (_OK if verdict is None else verdict).encode("utf-8"))
    except OSError:
        pass


def check_files_in_child(files: Sequence[tuple[bytes, str]], trusted: Sequence[str] = ()
                         ) -> None:
    """Open each model file (``(bytes, label)``) and predict with it in one limited child for
    all those not checked yet; :class:`ModelFileError` (one sentence naming its label) for the
    first, in the given order, that crashes, reaches a limit or fails."""
    keys = [_key(data, trusted) for data, _ in files]
    with _lock:
        unknown = {key: data for key, (data, _) in zip(keys, files, strict=True)
                   if key not in _verdicts}
    for key in list(unknown):
        found, verdict = _recalled(key)
        if found:
            with _lock:
                _verdicts[key] = verdict
            del unknown[key]
    pending = list(unknown.items())
    try:
        while pending:
            verdicts = _verdicts_of([data for _, data in pending], trusted)
            for (key, _), verdict in zip(pending, verdicts, strict=False):
                _store(key, verdict)
            pending = pending[len(verdicts):]
    except ModelFileError as exc:  # not kept: the next try may succeed
        raise ModelFileError(str(exc).replace(_LABEL, files[0][1])) from None
    for key, (_, label) in zip(keys, files, strict=True):
        with _lock:
            verdict = _verdicts.get(key)
        if verdict is not None:
            raise ModelFileError(verdict.replace(_LABEL, label))


def _child_command() -> list[str]:
    return [sys.executable, "-m", "cx_app.estimate.model_check_child"]


def _verdicts_of(datas: list[bytes], trusted: Sequence[str]) -> list[str | None]:
    """One child for ``datas``: the verdict of each file it answered for, in order (None: the
    file opened and predicted; else its refusal, the file named :data:`_LABEL`), plus, if the
    child died, the death of the file it was on. A child that could not start or did not end
    raises at once. Limits per file from the environment: ``CX_APP_MODEL_CHECK_MB``,
    ``CX_APP_MODEL_CHECK_SECONDS``."""
    limits = ChildLimits(int(env_number("CX_APP_MODEL_CHECK_MB", _DEFAULT_MB) * _MB),
                         max(1, int(env_number("CX_APP_MODEL_CHECK_SECONDS", _DEFAULT_SECONDS))),
                         "CX_APP_MODEL_CHECK_MB", "CX_APP_MODEL_CHECK_SECONDS")
    request = {"label": _LABEL, "trusted": list(trusted), "sizes": [len(d) for d in datas],
               "seconds": limits.cpu_seconds}
    try:
        done = run_child(_child_command(), request, b"".join(datas), limits, _LABEL, _WORDING,
                         shares=len(datas))
        output, death = done.stdout, say(_WORDING, "exit", _LABEL, limits, code=done.returncode)
    except ChildStopped as exc:
        if exc.reason in ("wall", "start"):
            raise ModelFileError(str(exc)) from None
        output, death = exc.output, str(exc)
    answers = _answers(output)[:len(datas)]
    verdicts = [_refusal(answer, limits) for answer in answers]
    if len(answers) < len(datas):
        verdicts.append(death)
    return verdicts


def _refusal(answer: dict[str, Any], limits: ChildLimits) -> str | None:
    if "refused" in answer:
        return str(answer["refused"])
    if "limit" in answer:
        return say(_WORDING, "memory", _LABEL, limits)
    if "failed" in answer:
        return (f"{_LABEL}: the model failed while making its first prediction "
                f"({answer['failed']}); it was not used.")
    return None


def _answers(stdout: bytes) -> list[dict[str, Any]]:
    """The child's answers, one JSON object a line, up to the first line that is not one."""
    answers = []
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            answer = json.loads(line)
        except ValueError:
            break
        if not isinstance(answer, dict):
            break
        answers.append(answer)
    return answers
