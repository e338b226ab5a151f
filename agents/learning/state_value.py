"""The full-state value function that variance-reduced evaluation subtracts luck with.

It reads a game as it stands once the game is over and every card is known, except the order of
the cards still in the deck: every hand, the board, each side's captured cards, the jacks known to
lie at the deck's bottom (turned up on the board, R5), the cards still unknown, the round's bastra
points, who deals, who plays next, who captured last, the plays made and the scores. It predicts,
for side 0 (seat 0, or seats 0 and 2 in the team game), the round's point difference (side 0's
round points minus side 1's) and the probability that side 0 wins the game.

A position is one ``int64[VIEW_SIZE]`` row (the ``V_`` offsets below). The features are sparse:
:func:`feature_entries` lists a view's non-zero inputs once, and both the dense rows the network
trains on (:func:`dense_features`) and the first layer's pre-activations of the compiled evaluator
(:func:`first_layer`) are built from that one list, so they cannot drift. The network is a small
MLP (``features -> hidden[0] -> hidden[1] -> 2``) whose forward pass also runs compiled
(:func:`mlp_tail`), without torch, inside the evaluator's kernels.

Files: ``agents/pretrained/state_value_<table>.pt``, written by ``agents.training.state_value``
(``bastra train-value --config state_value_2p``); :func:`load_state_value` checks that a file is
this format, for this table and this feature layout.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numba import njit
from torch import nn

from agents.learning.network import safe_load
from bastra_env import Rules
from bastra_env.cards import NUM_CARDS
from bastra_env.compiled_rules import (
    BASTRA,
    CAPTURE_WORK,
    JACK_BASTRA,
    bastra_kind,
    card_captures,
    card_points,
    lowest_card,
    popcount,
)
from bastra_env.rules import TABLES

VALUE_FORMAT = "bastra-state-value"
VALUE_VERSION = 1
PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "pretrained"

# ------------------------------------------------------------------------- a view of the game
V_HANDS = 0  # 4 card masks, one per seat (seats past the table's stay 0)
V_BOARD = 4
V_CAPTURED = 5  # 2 card masks, one per side
V_UNKNOWN = 7  # the cards the deck may still deal in any order
V_BOTTOM = 8  # the jacks turned up on the board this round, now at the deck's bottom
V_BASTRA_POINTS = 9  # 2: this round's bastra points per side
V_CURRENT = 11  # the seat that plays next (after a deal: the deal's first player)
V_DEALER = 12
V_LAST = 13  # the seat that captured last this round, -1: nobody yet
V_PLAYS = 14  # plays made this round (0-48)
V_SCORES = 15  # 2: the game's scores before this round, per side
VIEW_SIZE = 17

SIDES = 2
"""The value function is for the two-sided tables (``TABLES``: 2p and the team game)."""
ROUND_SCALE = 10.0
"""The network's round output is in units of 10 points."""


def num_locations(num_players: int) -> int:
    """Where a card can be: a seat's hand, the board, a side's pile, unknown, the deck's bottom."""
    return num_players + 5


CAPTURE_FEATURES = 5
"""Per seat, what its hand can take from the board as it stands (see :func:`feature_entries`)."""


def feature_count(num_players: int) -> int:
    """Card locations one-hot, then the seat to play, the dealer and the last capturer one-hot,
    then 10 scalars, then each seat's capture features (see :func:`feature_entries`)."""
    return (NUM_CARDS * num_locations(num_players) + 3 * num_players + 1 + 10
            + CAPTURE_FEATURES * num_players)  # fmt: skip


MAX_ENTRIES = NUM_CARDS + 3 + 10 + CAPTURE_FEATURES * 4
"""At most this many non-zero features: one location per card, three one-hots, the scalars,
the capture features."""
SCRATCH = CAPTURE_WORK + 64
"""Entries of the scratch array the feature kernels take (the capture search's)."""


@njit(cache=True)
def _capture_features(hand: int, board: int, scratch: np.ndarray) -> tuple:
    """What ``hand`` can take from ``board``: the most points and the most cards one play takes
    (the played card included), whether it can make a bastra, a jack bastra, and how many of its
    cards capture."""
    best_points = 0
    best_cards = 0
    bastra = 0
    jack_bastra = 0
    capturing = 0
    out = scratch[CAPTURE_WORK:]
    while hand:
        card = lowest_card(hand)
        hand &= hand - 1
        found = card_captures(card, board, out, 64, scratch)
        if found > 0:
            capturing += 1
        for k in range(max(found, 0)):
            taken = out[k] | (1 << card)
            best_points = max(best_points, card_points(taken))
            best_cards = max(best_cards, popcount(taken))
            kind = bastra_kind(card, out[k], board)
            if kind == BASTRA:
                bastra = 1
            elif kind == JACK_BASTRA:
                jack_bastra = 1
    return best_points, best_cards, bastra, jack_bastra, capturing


@njit(cache=True)
def feature_entries(
    view: np.ndarray, n: int, target: int, index: np.ndarray, value: np.ndarray,
    scratch: np.ndarray,
) -> int:  # fmt: skip
    """The view's non-zero features as ``(index[k], value[k])``; returns their number.
    ``scratch``: ``SCRATCH`` entries for the capture search."""
    k = 0
    locations = (V_HANDS, V_HANDS + 1, V_HANDS + 2, V_HANDS + 3)
    for slot in range(n + 5):
        if slot < n:
            cards = view[locations[slot]]
        elif slot == n:
            cards = view[V_BOARD]
        elif slot <= n + 2:
            cards = view[V_CAPTURED + slot - n - 1]
        elif slot == n + 3:
            cards = view[V_UNKNOWN]
        else:
            cards = view[V_BOTTOM]
        while cards:
            low = cards & -cards
            c = popcount(low - 1)
            index[k] = slot * NUM_CARDS + c
            value[k] = 1.0
            k += 1
            cards ^= low
    base = NUM_CARDS * (n + 5)
    index[k] = base + view[V_CURRENT]
    value[k] = 1.0
    index[k + 1] = base + n + view[V_DEALER]
    value[k + 1] = 1.0
    index[k + 2] = base + 2 * n + 1 + view[V_LAST]
    value[k + 2] = 1.0
    k += 3
    at = base + 3 * n + 1
    scale = float(max(target, 1))
    scalars = (
        view[V_BASTRA_POINTS] / 10.0,
        view[V_BASTRA_POINTS + 1] / 10.0,
        popcount(view[V_CAPTURED]) / 26.0,
        popcount(view[V_CAPTURED + 1]) / 26.0,
        card_points(view[V_CAPTURED]) / 13.0,
        card_points(view[V_CAPTURED + 1]) / 13.0,
        view[V_PLAYS] / 48.0,
        view[V_SCORES] / scale,
        view[V_SCORES + 1] / scale,
        (view[V_SCORES] - view[V_SCORES + 1]) / scale,
    )
    for i in range(10):
        index[k] = at + i
        value[k] = scalars[i]
        k += 1
    at += 10
    for seat in range(n):
        points, cards, bastra, jack_bastra, capturing = _capture_features(
            view[V_HANDS + seat], view[V_BOARD], scratch
        )
        captures = (points / 5.0, cards / 10.0, float(bastra), float(jack_bastra),
                    capturing / 4.0)  # fmt: skip
        for i in range(CAPTURE_FEATURES):
            index[k] = at + CAPTURE_FEATURES * seat + i
            value[k] = captures[i]
            k += 1
    return k


@njit(cache=True)
def dense_features(views: np.ndarray, n: int, target: int, out: np.ndarray) -> None:
    """``out[i]`` (zeroed first) = the features of ``views[i]``: the rows the network trains on."""
    index = np.empty(MAX_ENTRIES, dtype=np.int64)
    value = np.empty(MAX_ENTRIES, dtype=np.float32)
    scratch = np.empty(SCRATCH, dtype=np.int64)
    out[:] = 0.0
    for i in range(views.shape[0]):
        count = feature_entries(views[i], n, target, index, value, scratch)
        for k in range(count):
            out[i, index[k]] = value[k]


@njit(cache=True)
def first_layer(
    view: np.ndarray, n: int, target: int, w1: np.ndarray, b1: np.ndarray, out: np.ndarray,
    index: np.ndarray, value: np.ndarray, scratch: np.ndarray,
) -> None:  # fmt: skip
    """``out = b1 + features(view) @ w1`` (``w1``: ``[features, hidden]``), from the sparse
    entries; ``index``/``value`` are scratch of ``MAX_ENTRIES``, ``scratch`` of ``SCRATCH``."""
    count = feature_entries(view, n, target, index, value, scratch)
    out[:] = b1
    for k in range(count):
        row = w1[index[k]]
        v = value[k]
        for j in range(out.shape[0]):
            out[j] += v * row[j]


@njit(cache=True, fastmath=True)
def mlp_tail(
    pre: np.ndarray, w2: np.ndarray, b2: np.ndarray, w3: np.ndarray, b3: np.ndarray,
    hidden: np.ndarray,
) -> tuple:  # fmt: skip
    """The network after its first layer's pre-activations ``pre``: (round points for side 0,
    side 0's win probability). ``w2``: ``[hidden0, hidden1]``, ``w3``: ``[hidden1, 2]``;
    ``hidden`` is scratch of ``hidden1``."""
    hidden[:] = b2
    for i in range(pre.shape[0]):
        x = pre[i]
        if x > 0.0:
            row = w2[i]
            for j in range(hidden.shape[0]):
                hidden[j] += x * row[j]
    points = b3[0]
    logit = b3[1]
    for j in range(hidden.shape[0]):
        h = hidden[j]
        if h > 0.0:
            points += h * w3[j, 0]
            logit += h * w3[j, 1]
    return ROUND_SCALE * points, 1.0 / (1.0 + np.exp(-logit))


# ------------------------------------------------------------------------- the network
class StateValueNet(nn.Module):
    """``features -> hidden[0] -> hidden[1] -> (round points / 10, win logit)``, ReLU between."""

    def __init__(self, num_players: int, hidden: tuple[int, int] = (128, 64)) -> None:
        super().__init__()
        self.num_players = num_players
        self.hidden = tuple(hidden)
        self.layers = nn.Sequential(
            nn.Linear(feature_count(num_players), hidden[0]),
            nn.ReLU(),
            nn.Linear(hidden[0], hidden[1]),
            nn.ReLU(),
            nn.Linear(hidden[1], 2),
        )

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """``[B, features] -> [B, 2]``: round points / ``ROUND_SCALE`` and the win logit."""
        out: torch.Tensor = self.layers(features)
        return out


@dataclass(frozen=True)
class StateValue:
    """A trained value function as the compiled evaluator reads it: float32 weights, the table
    and rules it was trained for. ``weights``: ``(w1 [F, H0], b1, w2 [H0, H1], b2, w3 [H1, 2],
    b3)``."""

    table: str
    rules: Rules
    weights: tuple[np.ndarray, ...]
    meta: dict[str, Any]

    @classmethod
    def from_network(
        cls, net: StateValueNet, table: str, meta: dict[str, Any] | None = None
    ) -> StateValue:
        linear = [m for m in net.layers if isinstance(m, nn.Linear)]
        weights: list[np.ndarray] = []
        for layer in linear:
            weights.append(np.ascontiguousarray(layer.weight.detach().numpy().T, dtype=np.float32))
            weights.append(np.ascontiguousarray(layer.bias.detach().numpy(), dtype=np.float32))
        return cls(table, Rules(**TABLES[table]), tuple(weights), dict(meta or {}))

    @classmethod
    def random(cls, table: str, seed: int = 0, hidden: tuple[int, int] = (16, 8),
               scale: float = 1.0) -> StateValue:  # fmt: skip
        """A value function of random numbers (unbiasedness tests): any value function keeps
        the estimate unbiased, a poor one only makes it noisier."""
        rules = Rules(**TABLES[table])
        rng = np.random.default_rng(seed)
        sizes = (feature_count(rules.num_players), *hidden, 2)
        weights: list[np.ndarray] = []
        for fan_in, fan_out in itertools.pairwise(sizes):
            weights.append((rng.normal(size=(fan_in, fan_out)) * scale).astype(np.float32))
            weights.append((rng.normal(size=fan_out) * scale).astype(np.float32))
        return cls(table, rules, tuple(weights), {"random": seed})

    def network(self) -> StateValueNet:
        """The torch network with these weights."""
        w1, _, w2, _, _, _ = self.weights
        net = StateValueNet(self.rules.num_players, (w1.shape[1], w2.shape[1]))
        linear = [m for m in net.layers if isinstance(m, nn.Linear)]
        with torch.no_grad():
            for k, layer in enumerate(linear):
                layer.weight.copy_(torch.from_numpy(self.weights[2 * k].T.copy()))
                layer.bias.copy_(torch.from_numpy(self.weights[2 * k + 1].copy()))
        return net

    def save(self, path: str | Path) -> None:
        net = self.network()
        torch.save(
            {
                "format": VALUE_FORMAT,
                "version": VALUE_VERSION,
                "table": self.table,
                "num_players": self.rules.num_players,
                "features": feature_count(self.rules.num_players),
                "hidden": list(net.hidden),
                "state_dict": net.state_dict(),
                "meta": self.meta,
            },
            path,
        )


def state_value_path(table: str) -> Path:
    """The packaged value function of a table (``TABLES``)."""
    return PRETRAINED_DIR / f"state_value_{table}.pt"


def load_state_value(source: str | Path | None = None, table: str = "2p") -> StateValue:
    """A value function from a file that ``agents.training.state_value`` wrote, or the packaged
    one of ``table`` (``source=None``). A file that is not one, or one for another table or
    another feature layout, raises ``ValueError`` naming what differs."""
    if table not in TABLES:
        raise ValueError(f"value functions exist for the tables {list(TABLES)}, got {table!r}")
    path = Path(source) if source is not None else state_value_path(table)
    if not path.is_file():
        raise ValueError(f"no value function file at {path}")
    payload = safe_load(path, "value function file")
    if not isinstance(payload, dict) or payload.get("format") != VALUE_FORMAT:
        raise ValueError(f"{path}: not a state value file (format {VALUE_FORMAT!r} expected)")
    if payload.get("version") != VALUE_VERSION:
        raise ValueError(
            f"{path}: value file version {payload.get('version')}, this package reads "
            f"{VALUE_VERSION}"
        )
    if payload.get("table") != table:
        raise ValueError(
            f"{path}: a value function for the {payload.get('table')!r} table, asked for {table!r}"
        )
    players = TABLES[table].get("num_players", 2)
    if payload.get("features") != feature_count(players):
        raise ValueError(
            f"{path}: {payload.get('features')} input features, the {table} layout has "
            f"{feature_count(players)} (a file from another feature layout)"
        )
    net = StateValueNet(players, tuple(payload["hidden"]))
    try:
        net.load_state_dict(payload["state_dict"])
    except (RuntimeError, KeyError) as error:
        raise ValueError(f"{path}: its weights do not fit the network ({error})") from None
    return StateValue.from_network(net, table, payload.get("meta"))

