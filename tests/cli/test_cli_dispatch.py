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


def test_train_and_program_create_default_to_the_apps_first_model():
    """A newcomer's `cx-app train FILE --out M` trains logistic regression, as `program create`
    and the app's Models page do, instead of stopping at a missing --algorithm."""
    parser = build_parser()
    trained = parser.parse_args(["train", "survey.xlsx", "--out", "m.skops"])
    created = parser.parse_args(["program", "create", "bank", "survey.xlsx"])
    assert (trained.algorithm, created.algorithm) == ("lr", "lr")
    assert parser.parse_args(["train", "s.xlsx", "--out", "m", "--algorithm", "rf"]).algorithm == "rf"


def test_validate_imports_only_what_it_uses():
    """`cx-app validate` reads and checks a file: no scikit-learn, SciPy statistics, Altair or
    report writers in its process (they cost seconds per call)."""
    import subprocess
    import sys

    code = ("import sys; from cx_app.cli import build_parser; build_parser('validate'); "
            "print(' '.join(m for m in ('sklearn', 'scipy.stats', 'altair', 'openpyxl', "
            "'cx_app.reports.content') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == []
