"""Per-action inputs for the network, derived from the observation alone.

For each legal action the network sees what the play does: the card played, the board cards it
takes and the board it leaves behind (three 52-card planes), the observation's own summary of the
action (cards and points to the pile, bastra), and the heuristic player's estimates of it
(``agents.players.heuristic.play_estimates``: gain, expected best reply of the next player, best
follow-up capture of my remaining cards; points-equivalents scaled by ``ESTIMATE_SCALE``). Scoring
each (state, action) pair with one shared function lets the network learn "what does this board
leave my opponent" once for every card, instead of once per action slot.

The work is the compiled kernel ``agents.players.observation_kernels.action_inputs_batch``, which
does many observations at once (into reused buffers if given); ``action_inputs`` is its one-row
case.
"""

from __future__ import annotations

import numpy as np

from agents.players import observation_kernels as compiled
from agents.players.observation_kernels import MAX_LEGAL, action_inputs_batch

__all__ = [
    "ACTION_FEATURES",
    "ESTIMATE_SCALE",
    "MAX_LEGAL",
    "PAD_ACTION",
    "SUMMARY_FEATURES",
    "action_inputs",
    "action_inputs_batch",
]

PAD_ACTION = compiled.PAD_ACTION
"""Index of padding rows: one past the last action."""
ESTIMATE_SCALE = compiled.ESTIMATE_SCALE
"""Estimates enter the network in tens of points."""
SUMMARY_FEATURES = compiled.SUMMARY_FEATURES
"""The last features of each action: the observation's summary, then the heuristic estimates."""
ACTION_FEATURES = compiled.ACTION_FEATURES
"""Per action: three 52-card planes (card played, cards taken, board left), then the summary."""


def action_inputs(
    observation: np.ndarray, action_mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(actions ``int64[MAX_LEGAL]`` padded with ``PAD_ACTION``, features
    ``float32[MAX_LEGAL, ACTION_FEATURES]``) for one observation."""
    observation = np.asarray(observation)
    action_mask = np.asarray(action_mask)
    if observation.ndim != 1 or action_mask.ndim != 1:
        raise ValueError(
            "action_inputs takes one flat observation and its action mask (1-D); got shapes "
            f"{observation.shape} and {action_mask.shape} (for batches: action_inputs_batch)"
        )
    actions, features = action_inputs_batch(observation[None], action_mask[None])
    return actions[0], features[0]
