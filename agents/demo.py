"""Watch a game between two built-in players, then a short match over swapped-seat deals.

python -m agents.demo [--games 100] [--seed 0] [--players greedy random]
"""

from __future__ import annotations

import argparse

import bastra_env
from agents import BASELINES


def play(env, players, seed: int, show: bool = False) -> dict[str, float]:
    """One game; ``players`` maps agent -> policy. Returns each agent's final reward."""
    env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        returns[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        env.step(players[agent].act(observation, env=env.unwrapped))
    if show:
        print(env.unwrapped.render())
    return returns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="deals in the match (x2 seats)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--players", nargs=2, default=["greedy", "random"], choices=list(BASELINES))
    args = parser.parse_args()
    first, second = (BASELINES[name]() for name in args.players)
    env = bastra_env.env(render_mode="ansi")
    print(f"One game, {args.players[0]} (player_0) against {args.players[1]} (player_1):\n")
    play(env, {"player_0": first, "player_1": second}, args.seed, show=True)
    wins = draws = 0
    for deal in range(args.games):
        for swap in (False, True):
            seats = (second, first) if swap else (first, second)
            players = dict(zip(env.possible_agents, seats, strict=True))
            returns = play(env, players, args.seed + deal)
            mine = returns["player_1" if swap else "player_0"]
            wins += mine > 0
            draws += mine == 0
    games = 2 * args.games
    print(
        f"\n{args.players[0]} against {args.players[1]}: {wins}/{games} games won "
        f"({wins / games:.1%}), {draws} drawn, over {args.games} deals with seats swapped"
    )


if __name__ == "__main__":
    main()
