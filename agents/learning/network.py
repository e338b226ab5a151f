"""The policy-value network shared by every seat, and its checkpoint format.

The network scores (state, action) pairs. A trunk embeds the flat observation of
``bastra_env.env``; each legal action's inputs (``agents.learning.features``: card played, cards
taken, board left behind, the action's summary) are embedded by a second layer; one shared head
turns the pair into a logit. So what the network learns about a board left to the opponent carries
over to every card and capture that leaves it. The action's summary features also enter the logit
through a learned linear term, initialised to the heuristic player's score (gain minus the
expected reply), so that an untrained network already plays like a soft heuristic player;
training moves on from there. The value comes from the trunk.

Logits are returned over the full ``Discrete(208)`` action space; actions that are not legal get
a large negative logit, never ``-inf``, so softmax and entropy stay finite.
"""

from __future__ import annotations

import pickle
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from agents.learning.features import ACTION_FEATURES, ESTIMATE_SCALE, PAD_ACTION, SUMMARY_FEATURES
from bastra_env.layout import (
    ACTION_SUMMARIES,
    ACTION_SUMMARY,
    EARLIER_OBSERVATION_SIZES,
    NUM_ACTIONS,
    OBSERVATION_SIZE,
)

CHECKPOINT_FORMAT = "bastra-policy"
CHECKPOINT_VERSION = 3
MASKED_LOGIT = -1e9
HEURISTIC_TEMPERATURE = 1 / 3
"""At the start, logits are the heuristic score (points-equivalents) over this temperature."""
INITIAL_SUMMARY_WEIGHTS = [0.0, 0.0, 0.0] + [
    w / (ESTIMATE_SCALE * HEURISTIC_TEMPERATURE) for w in (1.0, -1.0, 0.0)
]
"""Logit per unit of the summary features (cards, points, bastra; gain, reply, follow-up)."""
assert len(INITIAL_SUMMARY_WEIGHTS) == SUMMARY_FEATURES


SUMMARY_GAIN = 20.0
"""``tied_summary_logits`` scale: the summaries are fractions (cards / 10, points / 13), so their
shared weights reach useful logits within a few hundred optimiser steps."""


def tied_summary_logits(observation: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Flat observations ``[B, OBSERVATION_SIZE]`` -> ``[B, NUM_ACTIONS]`` logits
    ``SUMMARY_GAIN * weights . summary[action]``: one weight per summary kind (cards, points,
    bastra) shared by all actions, so what is learnt about one card carries over to every card.
    Flat-head policies (the sb3 and RLlib integrations) add this to their logits."""
    summaries = observation[:, ACTION_SUMMARY].reshape(-1, len(ACTION_SUMMARIES), NUM_ACTIONS)
    return SUMMARY_GAIN * torch.einsum("bsa,s->ba", summaries, weights)


@dataclass(frozen=True)
class NetworkConfig:
    observation_size: int = OBSERVATION_SIZE
    """The trunk reads the observation's first ``observation_size`` entries: the whole layout, or
    an earlier version of it (``EARLIER_OBSERVATION_SIZES``; the layout only grows at its end)."""
    num_actions: int = NUM_ACTIONS
    action_features: int = ACTION_FEATURES
    hidden: tuple[int, ...] = (256, 256)
    pair_width: int = 64
    """Width of the (state, action) layer; it runs once per legal action, so it stays narrow."""


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
        pair = config.pair_width
        self.state_to_pair = nn.Linear(width, pair)
        self.action_to_pair = nn.Linear(config.action_features, pair)
        self.pair_head = nn.Sequential(nn.ReLU(), nn.Linear(pair, pair), nn.ReLU())
        self.score = nn.Linear(pair, 1)
        self.value_head = nn.Linear(width, 1)
        self.summary_weights = nn.Parameter(torch.tensor(INITIAL_SUMMARY_WEIGHTS))
        nn.init.orthogonal_(self.score.weight, gain=0.01)
        nn.init.zeros_(self.score.bias)

    def slot_logits(
        self, observation: torch.Tensor, actions: torch.Tensor, features: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The same inputs as :meth:`forward` -> logits ``[B, K]`` per slot of ``actions``
        (``MASKED_LOGIT`` on padding slots) and values ``[B]``. A distribution over these K
        slots is the policy's distribution over the legal actions, at a fraction of the cost of
        the full action space (training samples and scores slots)."""
        # only the real (state, action) pairs go through the pair layers: padding rows are most
        # of the K slots (a state has about 3 legal actions of the 16 slots)
        rows, slots = real_pairs(actions)
        return self.pair_logits(observation, rows, slots, features[rows, slots], actions.shape)

    def pair_logits(
        self,
        observation: torch.Tensor,
        rows: torch.Tensor,
        slots: torch.Tensor,
        inputs: torch.Tensor,
        shape: tuple[int, ...] | torch.Size,
        columns: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`slot_logits` from the real pairs alone: pair ``p`` is slot ``slots[p]`` of
        row ``rows[p]`` with the action inputs ``inputs[p]`` (``[P, action_features]``), in
        :func:`real_pairs`' order; ``shape`` is ``(B, K)``. The trainer keeps its rollout in this
        form (a sixth of the padded features' size).

        ``columns``: ``observation`` holds only these columns of the observation (``[B,
        len(columns)]``, ascending, below ``observation_size``), the others being 0 in every row.
        The first layer then reads only those weights: the same function, and about half the
        work where, as in a rollout, most of the observation is 0 in every transition."""
        if columns is None:
            state = self.trunk(observation[:, : self.config.observation_size])  # [B, H]
        else:
            first = self.trunk[0]
            assert isinstance(first, nn.Linear)
            hidden = F.linear(observation, first.weight.index_select(1, columns), first.bias)
            state = self.trunk[1:](hidden)
        pair = self.state_to_pair(state).index_select(0, rows) + self.action_to_pair(inputs)
        scores = self.score(self.pair_head(pair)).squeeze(-1)  # [P]
        scores = scores + inputs[:, -len(INITIAL_SUMMARY_WEIGHTS) :] @ self.summary_weights
        logits = torch.full(shape, MASKED_LOGIT, dtype=scores.dtype, device=scores.device)
        logits = logits.view(-1).scatter(0, rows * shape[1] + slots, scores).view(shape)
        return logits, self.value_head(state).squeeze(-1)

    def forward(
        self, observation: torch.Tensor, actions: torch.Tensor, features: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """observation ``[B, observation_size]``; actions ``[B, K]`` (legal action ids, padded with
        ``PAD_ACTION``); features ``[B, K, action_features]`` -> logits ``[B, num_actions]`` and
        values ``[B]``."""
        slot_logits, values = self.slot_logits(observation, actions, features)
        logits = torch.full(
            (observation.shape[0], self.config.num_actions + 1),
            MASKED_LOGIT,
            dtype=slot_logits.dtype,
            device=slot_logits.device,
        )
        logits = logits.scatter(1, actions, slot_logits)[:, : self.config.num_actions]
        return logits, values


def real_pairs(actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows ``[P]``, slots ``[P]``) of the real actions of ``actions`` ``[B, K]`` (those not
    ``PAD_ACTION``), row by row, slots ascending."""
    rows, slots = torch.nonzero(actions != PAD_ACTION, as_tuple=True)
    return rows, slots


def cpu_state_dict(module: nn.Module) -> dict[str, torch.Tensor]:
    """A copy of ``module``'s weights on the CPU, detached (to send, or to keep frozen)."""
    return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}


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


def safe_load(path: Path, what: str) -> Any:
    """``torch.load`` with only tensors and plain data (``weights_only=True``); a file it cannot
    read raises ``ValueError`` saying why in a line (a damaged or truncated file, or one that
    holds other Python objects, which this package never writes and never loads)."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        reason = (
            "it holds Python objects beyond tensors and plain data, which this package never "
            "writes and never loads"
        )
    except Exception as error:  # torch raises many kinds for a damaged file
        text = str(error)
        if "zip archive" in text or "central directory" in text or isinstance(error, EOFError):
            reason = "the file is damaged or truncated"
        else:
            reason = f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"
    raise ValueError(f"{path} is not a readable {what} ({reason})")


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load and check a checkpoint; ``ValueError`` says what is wrong with a bad one."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no checkpoint at {path}")
    payload = safe_load(path, "checkpoint")
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a Bastra policy checkpoint (no {CHECKPOINT_FORMAT!r} tag)")
    if payload.get("version") != CHECKPOINT_VERSION:
        raise ValueError(
            f"{path} has checkpoint version {payload.get('version')}, this code reads "
            f"{CHECKPOINT_VERSION}"
        )
    network = payload.get("network", {})
    expected = {
        "observation_size": OBSERVATION_SIZE,
        "num_actions": NUM_ACTIONS,
        "action_features": ACTION_FEATURES,
    }
    readable = {"observation_size": (OBSERVATION_SIZE, *EARLIER_OBSERVATION_SIZES)}
    for key, value in expected.items():
        if network.get(key) != value and network.get(key) not in readable.get(key, ()):
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
