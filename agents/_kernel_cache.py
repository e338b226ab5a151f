"""Where numba keeps the players' kernels (see ``bastra_env._cache``).

They call each other across files (the search players' opponent model is the heuristic's kernel),
and numba only notices a change to the file a kernel is defined in, so their cache folder is named
by a fingerprint of all of these files together with the rules kernels'.
"""

from __future__ import annotations

from pathlib import Path

from bastra_env import _cache

KERNEL_FILES = ("compiled.py", "endgame_kernels.py", "search_kernels.py")

_cache.configure(tuple(Path(__file__).resolve().parent / name for name in KERNEL_FILES))
