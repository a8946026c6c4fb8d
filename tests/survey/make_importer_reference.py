"""Save the importer's outcome of every reference case (``importer_cases.py``) in
``importer_reference/``.

Run once with the importer whose answers are the reference:
``.venv/bin/python tests/survey/make_importer_reference.py``; with ``--missing``, only the cases
that have no saved outcome yet (a file added to the corpus) are written.
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from importer_cases import SAVED, cases, saved_path  # noqa: E402


def main() -> None:
    SAVED.mkdir(exist_ok=True)
    missing_only = "--missing" in sys.argv[1:]
    with tempfile.TemporaryDirectory() as folder:
        for case in cases():
            if missing_only and saved_path(case).exists():
                continue
            result = case.load(Path(folder))
            text = json.dumps(result, sort_keys=True, ensure_ascii=False)
            saved_path(case).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
            print(case.name, "error" if "error" in result else len(result["index"]))


if __name__ == "__main__":
    main()
