"""Play Bastra in the terminal against a checkpoint or a built-in player.

    python -m agents.play [--opponent heuristic] [--table 2p|4p_teams] [--partner heuristic]
                          [--seat 0] [--seed N] [--target-score 100] [--max-rounds N]

You are ``player_<seat>``. Each turn shows the table and numbered choices; type a number (or
``q`` to quit). In the team game your partner sits opposite and is played by ``--partner``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import torch

import bastra_env
from agents.registry import make_policy
from bastra_env import parse_card
from bastra_env.cards import points, pretty
from bastra_env.layout import OFFSETS
from bastra_env.render import render_text


def describe(env: bastra_env.raw_env, action: int) -> str:
    card, capture = env.decode_action(action)
    played = pretty(parse_card(card))
    if not capture:
        return f"{played} (trail)"
    taken = sorted(parse_card(c) for c in capture)
    mask = sum(1 << c for c in taken) | 1 << parse_card(card)
    extras = f"{len(taken) + 1} cards, {points(mask)} pts"
    features = env.observe(env.agent_selection)["observation"][OFFSETS["action_bastra"]]
    if features[action]:
        extras += ", BASTRA"
    elif env.game is not None and mask ^ (1 << parse_card(card)) == env.game.board:
        extras += ", sweeps the board"
    return f"{played} takes {' '.join(pretty(c) for c in taken)} ({extras})"


def ask(prompt: str, choices: int, read: Callable[[str], str]) -> int | None:
    """A choice in 1..choices, asked again until valid; ``None`` on quit or end of input."""
    while True:
        try:
            text = read(prompt).strip().lower()
        except EOFError:
            return None
        if text in ("q", "quit", "exit"):
            return None
        if text.isdigit() and 1 <= int(text) <= choices:
            return int(text) - 1
        print(f"  please type a number from 1 to {choices}, or q to quit")


def play(args: argparse.Namespace, read: Callable[[str], str] = input) -> int:
    table: dict[str, Any] = (
        {"num_players": 4, "teams": True} if args.table == "4p_teams" else {"num_players": 2}
    )
    env = bastra_env.raw_env(**table, target_score=args.target_score, max_rounds=args.max_rounds)
    n = env.rules.num_players
    if not 0 <= args.seat < n:
        print(f"--seat must be in 0..{n - 1}", file=sys.stderr)
        return 2
    policies = {}
    for seat in range(n):
        if seat == args.seat:
            continue
        partner = env.rules.teams and env.rules.side_of(seat) == env.rules.side_of(args.seat)
        policies[seat] = make_policy(args.partner if partner else args.opponent, seed=seat)
    names = [f"player_{s}" + (" (you)" if s == args.seat else "") for s in range(n)]
    env.reset(seed=args.seed)
    game = env.game
    assert game is not None  # reset deals it; the env plays on this one game
    rounds_shown = 0
    while not game.done:
        seat = game.current
        if seat == args.seat:
            print("\n" + render_text(game, names))
            actions = env.legal_actions()
            for i, action in enumerate(actions, start=1):
                print(f"  {i}) {describe(env, action)}")
            choice = ask("your play> ", len(actions), read)
            if choice is None:
                print("bye")
                return 0
            env.step(actions[choice])
        else:
            action = policies[seat].act(env.observe(env.agent_selection), env=env)
            text = describe(env, action)
            env.step(action)
            print(f"  {names[seat]} plays {text}")
        if len(game.results) > rounds_shown:
            rounds_shown = len(game.results)
            r = game.results[-1]
            sides = " | ".join(
                f"side {s}: +{t} (total {sc})"
                for s, (t, sc) in enumerate(zip(r.total, r.scores, strict=True))
            )
            print(f"\n== round {r.round} scored: {sides}")
    print("\n" + render_text(game, names, reveal_hands=True))
    winner = game.winner
    mine = env.rules.side_of(args.seat)
    print("You win!" if winner == mine else "A draw." if winner is None else "You lose.")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opponent", default="heuristic", help="baseline name or checkpoint")
    parser.add_argument("--partner", default="heuristic", help="your partner in the team game")
    parser.add_argument("--table", choices=["2p", "4p_teams"], default="2p")
    parser.add_argument("--seat", type=int, default=0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--target-score", type=int, default=100)
    parser.add_argument("--max-rounds", type=int, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # one game at a time: batch-1 inference is fastest on one thread
    try:
        return play(args)
    except (ValueError, TypeError) as error:  # a bad checkpoint or rule option
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nbye")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
