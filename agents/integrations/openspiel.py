"""The project's players as OpenSpiel bots, for ``python_bastra`` (``bastra_env.openspiel``).

    import pyspiel
    from agents import make_policy
    from agents.integrations.openspiel import PolicyBot
    from open_spiel.python.algorithms import evaluate_bots

    game = pyspiel.load_game("python_bastra")
    bots = [PolicyBot(make_policy("heuristic"), 0), PolicyBot(make_policy("bastra_2p"), 1)]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))

A bot acts on its seat's own observation (the AEC env's, from the engine's encoder) and the legal
actions; it keeps no state between moves. Needs the ``openspiel`` extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from bastra_env.layout import NUM_ACTIONS


class PolicyBot(pyspiel.Bot):
    """A player of ``agents`` (anything with ``act({"observation", "action_mask"})``) in seat
    ``player`` of an OpenSpiel ``python_bastra`` game."""

    def __init__(self, policy: Any, player: int) -> None:
        pyspiel.Bot.__init__(self)
        self.policy = policy
        self.player = player

    def step(self, state: Any) -> int:
        if state.current_player() != self.player:
            raise ValueError(
                f"this bot plays seat {self.player}; seat {state.current_player()} is to move"
            )
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[state.legal_actions()] = 1
        observation = np.asarray(state.observation_tensor(self.player), dtype=np.float32)
        return int(self.policy.act({"observation": observation, "action_mask": mask}))

    def restart_at(self, state: Any) -> None:
        """Nothing to forget: the bot keeps no state between moves."""

    def inform_action(self, state: Any, player_id: int, action: int) -> None:
        """Nothing to note: the next observation carries what the bot needs."""


__all__ = ["PolicyBot"]
