"""Ray for this project's jobs: connecting to a cluster (token authentication included) or
starting Ray here, and the runtime environment that makes the project importable on every node.
The RLlib integration (``agents.integrations.rllib``) and the expert-iteration self-play actors
(``agents.integrations.ray_selfplay``) both start Ray through ``init_ray``.

- **Clusters.** With ``RAY_ADDRESS`` set, ``init_ray`` connects to that cluster and ships this
  project with ``cluster_runtime_env()``: the two packages ``bastra_env`` and ``agents`` as
  ``py_modules`` (only the importable code, not run folders or checkpoints), so the nodes need
  only the dependencies; ``cluster_runtime_env(pip=[...])`` adds a per-job pip install.
- **Token authentication.** A cluster started with ``RAY_AUTH_MODE=token`` accepts a driver that
  has the same mode and the cluster's token (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or
  ``~/.ray/auth_token``); a refused connection says so.
- Without ``RAY_ADDRESS`` it starts a local Ray instance on this machine's cores.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the ``bastra_env`` and ``agents`` packages."""


def cluster_runtime_env(pip: Sequence[str] | None = None) -> dict[str, Any]:
    """The runtime env that makes this project importable on every node of a Ray cluster."""
    runtime_env: dict[str, Any] = {
        "py_modules": [str(ROOT / "bastra_env"), str(ROOT / "agents")],
        "excludes": ["__pycache__", "*.pyc", "pretrained"],
    }
    if pip:
        runtime_env["pip"] = list(pip)
    return runtime_env


def init_ray(runtime_env: dict[str, Any] | None = None, num_cpus: int | None = None) -> bool:
    """Connects to ``RAY_ADDRESS`` if set (shipping the project), else starts Ray locally.
    Returns whether it started Ray (False: Ray was already initialised).

    A cluster with Ray's token authentication needs ``RAY_AUTH_MODE=token`` and the cluster's
    token (``RAY_AUTH_TOKEN``, the file ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``) in this
    process's environment: with an explicit ``RAY_ADDRESS`` Ray 2.60 does not turn it on by itself
    (the cluster then answers ``InvalidAuthToken``). A refused connection raises a
    ``ConnectionError`` that says so."""
    import ray

    if ray.is_initialized():
        return False
    address = os.environ.get("RAY_ADDRESS")
    if address:
        try:
            ray.init(address=address, runtime_env=runtime_env or cluster_runtime_env())
        except ConnectionError as error:
            mode = os.environ.get("RAY_AUTH_MODE", "unset")
            raise ConnectionError(
                f"{error}. If the cluster uses token authentication (the log says "
                f"InvalidAuthToken), set RAY_AUTH_MODE=token (it is {mode}) and give this process "
                "the cluster's token: RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH=<file> or "
                "~/.ray/auth_token (README: Ray RLlib, multi-node)"
            ) from error
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, runtime_env=runtime_env)
    return True
