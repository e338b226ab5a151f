"""The policy-value network shared by every seat, and its checkpoint format.

The network reads the flat observation of ``bastra_env.env`` and returns one logit per action and
a value. Besides the MLP trunk, each action's logit gets a learned linear term of that action's
own summary in the observation (cards and points it takes, bastra), initialised so that an
untrained network already prefers bigger captures (a soft greedy player); training moves on from
there. Illegal actions are masked to a large negative logit, never
``-inf``, so softmax and entropy stay finite.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from bastra_env.env import NUM_ACTIONS, OBSERVATION_SIZE, OFFSETS

CHECKPOINT_FORMAT = "bastra-policy"
CHECKPOINT_VERSION = 1
MASKED_LOGIT = -1e9
INITIAL_FEATURE_WEIGHTS = [10.0, 13.0, 1.0]
"""Logit per unit of each action feature at the start (cards/10, points/13, bastra)."""

_ACTION_FEATURES = (OFFSETS["action_cards"], OFFSETS["action_points"], OFFSETS["action_bastra"])


@dataclass(frozen=True)
class NetworkConfig:
    observation_size: int = OBSERVATION_SIZE
    num_actions: int = NUM_ACTIONS
    hidden: tuple[int, ...] = (256, 256)


class PolicyValueNet(nn.Module):
    def __init__(self, config: NetworkConfig = NetworkConfig()) -> None:
        super().__init__()
        self.config = config
        layers: list[nn.Module] = []
        width = config.observation_size
        for size in config.hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, config.num_actions)
        self.value_head = nn.Linear(width, 1)
        # Start as a soft greedy player: +1 logit per card taken, per point, and for a bastra.
        self.action_feature_weights = nn.Parameter(torch.tensor(INITIAL_FEATURE_WEIGHTS))
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)

    def forward(
        self, observation: torch.Tensor, action_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """observation ``[B, observation_size]``, action_mask ``[B, num_actions]`` (bool) ->
        masked logits ``[B, num_actions]``, values ``[B]``."""
        hidden = self.trunk(observation)
        features = torch.stack([observation[:, s] for s in _ACTION_FEATURES], dim=-1)  # [B, A, 3]
        logits = self.policy_head(hidden) + features @ self.action_feature_weights
        logits = logits.masked_fill(~action_mask, MASKED_LOGIT)
        return logits, self.value_head(hidden).squeeze(-1)


def save_checkpoint(path: str | Path, model: PolicyValueNet, **extra: Any) -> None:
    """Write ``model`` with its shape and whatever training state ``extra`` carries."""
    payload = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "network": asdict(model.config),
        "model": model.state_dict(),
        **extra,
    }
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)  # never leave a half-written checkpoint under the real name


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load and check a checkpoint; ``ValueError`` says what is wrong with a bad one."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no checkpoint at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many kinds for a damaged file
        raise ValueError(
            f"{path} is not a readable checkpoint ({type(error).__name__}: {error})"
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a Bastra policy checkpoint (no {CHECKPOINT_FORMAT!r} tag)")
    if payload.get("version") != CHECKPOINT_VERSION:
        raise ValueError(
            f"{path} has checkpoint version {payload.get('version')}, this code reads "
            f"{CHECKPOINT_VERSION}"
        )
    network = payload.get("network", {})
    expected = {"observation_size": OBSERVATION_SIZE, "num_actions": NUM_ACTIONS}
    for key, value in expected.items():
        if network.get(key) != value:
            raise ValueError(
                f"{path} was trained for {key}={network.get(key)}, this environment has {value}"
            )
    return payload


def build_model(payload: dict[str, Any]) -> PolicyValueNet:
    network = dict(payload["network"])
    network["hidden"] = tuple(network["hidden"])
    model = PolicyValueNet(NetworkConfig(**network))
    try:
        model.load_state_dict(payload["model"])
    except (RuntimeError, KeyError, TypeError) as error:
        raise ValueError(f"checkpoint weights do not fit its network {network}: {error}") from None
    return model
