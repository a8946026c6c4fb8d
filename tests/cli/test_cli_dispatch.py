import subprocess
import sys

from cx_app.cli import build_parser


def test_version_and_help_run():
    out = subprocess.run([sys.executable, "-m", "cx_app", "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("cx-app ")


def test_app_subcommand_is_registered():
    parser = build_parser()
    args = parser.parse_args(["app", "--port", "9999"])
    assert args.port == 9999
