"""Save the importer's outcome of every reference case (``importer_cases.py``) in
``importer_reference/``.

Run once with the importer whose answers are the reference:
``.venv/bin/python tests/survey/make_importer_reference.py``.
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
    with tempfile.TemporaryDirectory() as folder:
        for case in cases():
            result = case.load(Path(folder))
            text = json.dumps(result, sort_keys=True, ensure_ascii=False)
            saved_path(case).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
            print(case.name, "error" if "error" in result else len(result["index"]))


if __name__ == "__main__":
    main()
