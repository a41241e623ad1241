"""Writing a file only its owner may read, in one step: the files that hold keys or decisions
about what code may run (auth.json, trust.json)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def replace_private_file(path: Path, text: str, mode: int = FILE_MODE) -> None:
    """Replace ``path`` with a file holding ``text`` (0600 unless ``mode`` says otherwise):
    written to a temporary file in the same folder, fsynced, renamed over it; no moment exists
    where the file is half written or readable by others. Raises OSError (the temporary file is
    removed)."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
        raise
