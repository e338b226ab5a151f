"""The installed wheel, from an empty directory: the packaged models by name play one whole game
each through ``bastra_env.env()``. Run by ``.ci/wheel_check.sh``; argument: the checkout."""

import sys
from pathlib import Path

import agents
import bastra_env
from agents import load_policy

checkout = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
for module in (agents, bastra_env):
    where = Path(module.__file__).resolve()
    assert "site-packages" in where.parts, f"{module.__name__} imported from {where}"
    assert checkout is None or checkout not in where.parents, f"{where} is the checkout's"

for name, table in (
    ("bastra_2p", {"num_players": 2}),
    ("bastra_4p_teams", {"num_players": 4, "teams": True}),
):
    policy = load_policy(name)
    env = bastra_env.env(**table)
    env.reset(seed=0)
    plays = 0
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        assert not truncated, f"{name}: {agent} truncated"
        env.step(None if terminated else policy.act(observation))
        plays += not terminated
    game = env.unwrapped.game
    assert game.done and not env.agents, f"{name}: the game did not finish"
    print(f"{name}: a whole game, {plays} plays, {len(game.results)} rounds, scores {game.scores}")
