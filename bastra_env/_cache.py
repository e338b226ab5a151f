"""Where numba keeps the compiled kernels: one folder per version of the kernels' sources.

numba invalidates a cached function only when the file that defines it changes, yet a kernel in
one file compiles the kernels it calls from other files into itself. So every cache of this
project lives under a folder named by a fingerprint of the rules kernels' sources
(``~/.cache/bastra_env/numba-<fingerprint>``, or under ``$XDG_CACHE_HOME``): a change to the
rules gives every dependent kernel a fresh cache. A ``NUMBA_CACHE_DIR`` set by the user wins.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

SOURCES = ("cards.py", "layout.py", "compiled_rules.py", "vector.py")


def fingerprint(extra: tuple[Path, ...] = ()) -> str:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256(numba.__version__.encode())
    for path in (*(here / name for name in SOURCES), *extra):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def configure(extra: tuple[Path, ...] = ()) -> None:
    """Point numba's cache at the folder of this fingerprint. Packages of kernels that call the
    rules kernels, or each other across files, call it again before defining theirs, naming their
    kernel files in ``extra``: kernels defined from then on cache under a fingerprint of those
    too (numba reads the folder when a kernel is defined)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bastra_env"
    folder = base / f"numba-{fingerprint(extra)}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return  # not writable: numba's own choice of folder stands
    # numba.config makes its options at import (in globals()), so no checker sees them
    numba.config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]


configure()
