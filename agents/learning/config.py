"""What a learned player searches around its network: one frozen ``SearchConfig``, and the named
presets of the shipped players, built here and nowhere else.

A learned player (``agents.learning.policy.LearnedPolicy``) picks the network's most probable
move, except where a search applies:

- the endgame search (``agents.search.endgame.solve``) once the deck is empty (two players; the
  team game from three cards in hand), and in 2p also the last-but-one deal (``endgame_deals=2``),
  scoring a round's end by the chance of winning the game (``objective="game"``) or by its points;
- with ``infer_worlds > 0``, before that, PIMC (``agents.search.players.PIMCPolicy``) on worlds
  inferred from the deal's plays, the network's log-probability added to each move's value, the
  endgame's samples inferred too.

The names people type are presets: a packaged model's name is its default search, and the
suffixes change one part of it, combinable (``bastra_2p:last-deal:points``):

=================  =====================================================================
``MODEL``          the endgame search on the last two deals (2p), on the game's chance
``MODEL:network``  the network alone (``endgame=False``)
``MODEL:last-deal``  the endgame search on the last deal only (``endgame_deals=1``)
``MODEL:points``   the endgame search on the round's points (``objective="points"``)
``MODEL:infer``    PIMC on 64 inferred worlds first, with the weights measured for the table
=================  =====================================================================

Every weight here was measured in full games or paired single rounds (the docs' experiments
page); ``:infer``'s differ by the table the model was trained for, the only place a table picks a
value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from agents.search.endgame import MODEL_WEIGHT, OBJECTIVES


@dataclass(frozen=True)
class SearchConfig:
    """The search a learned player plays around its network (module docs). Checked when built:
    a bad field raises ``ValueError``/``TypeError`` naming it."""

    endgame: bool = True
    """Play the endgame search's move where it applies (``agents.search.endgame.solve``), the
    network breaking ties; ``False``: the network alone (``MODEL:network``)."""
    endgame_deals: int = 2
    """2: in 2p, the last two deals (the last-but-one on sampled deals of the unseen cards); 1:
    the last deal only (``MODEL:last-deal``). The team game searches its last three cards."""
    objective: str = "game"
    """What the endgame search maximises: ``"game"``, the chance of winning the game from the
    scores (``agents.search.equity``); ``"points"``, the round's point difference
    (``MODEL:points``). The PIMC search on inferred worlds always scores the round's points."""
    infer_worlds: int = 0
    """Above 0 (``MODEL:infer``: 64): where the endgame search does not apply, PIMC on this many
    worlds inferred from the deal's plays, and the endgame search's samples inferred too."""
    opponent_model: bool = True
    """With ``infer_worlds``: the other sides played as the heuristic player in the PIMC rollouts
    (the model the inference reads their plays by) and weighed in the endgame search
    (``model_weight``); ``False``: the rollout policy and minimax alone. A research option
    (``experiments/inference_gain.py --no-opponent-model``)."""
    model_weight: float = MODEL_WEIGHT
    """With the opponent model: the endgame search's weight on its value against the model, the
    rest minimax's (``solve``'s ``model_weight``), in [0, 1]."""
    network_weight: float = 0.1
    """With ``infer_worlds``: points a nat of the network's log-probability added to each move's
    PIMC value (0 or more)."""
    rollout_model_weight: float = 1.0
    """With the opponent model: the modelled rollouts' share of a move's PIMC value where the
    other seats' plays of this deal fit the model, the rest from rollouts of the same worlds by
    the rollout policy on every seat, in [0, 1]."""
    misfit_rollout_model_weight: float = 1.0
    """The same share where the deal's plays fit the model worse than ``misfit``."""
    misfit: float = -0.5
    """The log Bayes factor of the opponent model over a uniform choice on the deal's plays
    (``agents.search.positions.deal_fit``) under which they misfit it: at -0.5, uniform play is
    at least 1.65 times likelier."""

    def __post_init__(self) -> None:
        for name in ("endgame", "opponent_model"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"SearchConfig.{name} must be True or False, got "
                                f"{getattr(self, name)!r}")  # fmt: skip
        for name in ("endgame_deals", "infer_worlds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"SearchConfig.{name} must be an int, got {value!r}")
        if self.endgame_deals not in (1, 2):
            raise ValueError(f"SearchConfig.endgame_deals must be 1 or 2, got {self.endgame_deals}")
        if self.infer_worlds < 0:
            raise ValueError(
                f"SearchConfig.infer_worlds must be 0 (no PIMC) or more, got {self.infer_worlds}"
            )
        if self.objective not in OBJECTIVES:
            raise ValueError(
                f"SearchConfig.objective must be one of {OBJECTIVES}, got {self.objective!r}"
            )
        for name in ("model_weight", "network_weight", "rollout_model_weight",
                     "misfit_rollout_model_weight", "misfit"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"SearchConfig.{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"SearchConfig.{name} must be finite, got {value!r}")
        if self.network_weight < 0:
            raise ValueError(
                f"SearchConfig.network_weight must be 0 or more (points a nat), got "
                f"{self.network_weight!r}"
            )
        for name in ("model_weight", "rollout_model_weight", "misfit_rollout_model_weight"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"SearchConfig.{name} must be in [0, 1], got "
                                 f"{getattr(self, name)!r}")  # fmt: skip

    @property
    def searches(self) -> bool:
        """Whether the player searches at all (the endgame, or PIMC on inferred worlds)."""
        return self.endgame or self.infer_worlds > 0

    @property
    def modelled(self) -> bool:
        """Whether the opponent model is in play: PIMC on inferred worlds with the model."""
        return self.infer_worlds > 0 and self.opponent_model

    @property
    def endgame_model_weight(self) -> float:
        """``solve``'s ``model_weight``: ``model_weight`` with the opponent model, else 0
        (minimax alone)."""
        return self.model_weight if self.modelled else 0.0

    def rollout_share(self, fit: float | None) -> float:
        """The modelled rollouts' share of PIMC's values for a deal of this ``fit``
        (``deal_fit``; ``None``: not measured, the share where the plays fit); 0 without the
        opponent model."""
        if not self.modelled:
            return 0.0
        if fit is not None and fit < self.misfit:
            return self.misfit_rollout_model_weight
        return self.rollout_model_weight

    def needs_fit(self) -> bool:
        """Whether ``rollout_share`` depends on the deal's fit (the two shares differ)."""
        return self.modelled and self.rollout_model_weight != self.misfit_rollout_model_weight

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> SearchConfig:
        """Build from a mapping, naming any unknown field and the valid ones."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise TypeError(f"unknown SearchConfig field(s) {unknown}; valid fields are {known}")
        return cls(**values)


NETWORK_ALONE = ":network"
LAST_DEAL_ONLY = ":last-deal"
POINTS_OBJECTIVE = ":points"
INFERENCE = ":infer"

INFERENCE_BY_TABLE: dict[str | None, dict[str, Any]] = {
    "2p": {"infer_worlds": 64, "network_weight": 0.3, "misfit_rollout_model_weight": 0.5},
    None: {"infer_worlds": 64},
}
"""What ``:infer`` sets, by the table the model was trained for (``bastra_env.rules.TABLES``'s
name; ``None``: every other table). In 2p the network's log-probability counts for more (0.3
points a nat instead of 0.1), and where the deal's plays misfit the opponent model half of a
move's value comes from rollouts by the rollout policy; both values won the 2p matches that chose
them (the figures: the docs' experiments page, "The network's weight beside the search" and
"The modelled rollouts' share, by the deal's fit"). The team game was not measured at
other values and keeps the defaults."""

SUFFIXES: dict[str, Any] = {
    NETWORK_ALONE: {"endgame": False},
    LAST_DEAL_ONLY: {"endgame_deals": 1},
    POINTS_OBJECTIVE: {"objective": "points"},
    INFERENCE: INFERENCE_BY_TABLE,
}
"""What each suffix after a model's name changes in its ``SearchConfig``."""


def search_preset(table: str | None, suffixes: Sequence[str] = ()) -> SearchConfig:
    """The ``SearchConfig`` of a model trained for ``table`` (``"2p"``, ``"4p_teams"`` or
    ``None``) under the spec ``suffixes`` (``(":infer",)``, ``(":last-deal", ":points")``);
    ``ValueError`` on an unknown suffix."""
    changes: dict[str, Any] = {}
    for suffix in suffixes:
        if suffix not in SUFFIXES:
            raise ValueError(f"unknown suffix {suffix!r}: the suffixes are {list(SUFFIXES)}")
        change = SUFFIXES[suffix]
        if suffix == INFERENCE:
            change = change.get(table, change[None])
        changes.update(change)
    return replace(SearchConfig(), **changes)


PRESETS: dict[str, SearchConfig] = {
    f"{model}{''.join(suffixes)}": search_preset(table, suffixes)
    for model, table in (("bastra_2p", "2p"), ("bastra_4p_teams", "4p_teams"))
    for suffixes in (
        (),
        (NETWORK_ALONE,),
        (LAST_DEAL_ONLY,),
        (POINTS_OBJECTIVE,),
        (LAST_DEAL_ONLY, POINTS_OBJECTIVE),
        (INFERENCE,),
    )
}
"""The shipped players by name (``bastra_2p``, ``bastra_2p:infer``, ``bastra_4p_teams:network``,
...): what ``make_policy`` builds for those specs."""
