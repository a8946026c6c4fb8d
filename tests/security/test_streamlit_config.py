"""The server settings in .streamlit/config.toml: options Streamlit knows, of the right type,
and read by Streamlit itself with the hardening values (issue 28, docs/deployment.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import streamlit
from streamlit import config as streamlit_config

from cx_app.archive_limits import MB
from cx_app.survey.limits import ImportLimits

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".streamlit" / "config.toml"
HARDENING = {"server.enableXsrfProtection": True, "server.enableCORS": True,
             "server.address": "127.0.0.1", "server.maxUploadSize": 200,
             "browser.gatherUsageStats": False, "client.showErrorDetails": "none"}


def _settings() -> dict[str, object]:
    return {f"{section}.{key}": value
            for section, options in tomllib.loads(CONFIG.read_text(encoding="utf-8")).items()
            for key, value in options.items()}


def test_every_setting_is_an_option_of_this_streamlit_with_its_type():
    options = streamlit_config._config_options_template
    unknown = sorted(set(_settings()) - set(options))
    assert unknown == [], f"Streamlit {streamlit.__version__} has no option {unknown}"
    for name, value in _settings().items():
        expected = options[name].type
        assert isinstance(value, expected), f"{name} = {value!r} is not a {expected.__name__}"
    assert {name: _settings()[name] for name in HARDENING} == HARDENING


def test_the_upload_limit_is_the_importers_file_limit():
    assert _settings()["server.maxUploadSize"] * MB == ImportLimits().max_file_bytes


def test_streamlit_reads_the_hardening_from_this_file(tmp_path):
    """Streamlit's own parser, in a child process started in the repository (the config
    module is process-wide: this process's stays untouched), with a HOME of its own (no
    ~/.streamlit/config.toml of the developer's)."""
    script = ("import json\nfrom streamlit import config\n"
              "config.get_config_options(force_reparse=True)\n"
              f"names = {sorted(HARDENING)!r}\n"
              "print(json.dumps({n: [config.get_option(n), config.get_where_defined(n)] "
              "for n in names}))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    read = json.loads(done.stdout.strip().splitlines()[-1])
    assert {name: value for name, (value, _where) in read.items()} == HARDENING
    assert {Path(where) for _value, where in read.values()} == {CONFIG}
