"""A text picture of the table, from the engine state alone."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import mask_str, points
from .game import PLAYS_PER_ROUND, Game


def _cards(mask: int) -> str:
    return mask_str(mask, symbols=True) if mask else "-"


def render_text(game: Game, names: Sequence[str], reveal_hands: bool = False) -> str:
    """The table as text: header, scores, board, each seat (hand hidden but for the seat to move,
    unless ``reveal_hands``), and the last play with what it took."""
    rules = game.rules
    n = rules.num_players
    table = f"{n} players" + (", teams 0+2 v 1+3" if rules.teams else "")
    state = "game over" if game.done else f"play {game.plays + 1}/{PLAYS_PER_ROUND}"
    lines = [
        f"Bastra · {table} · round {game.round} · {state} · dealer {names[game.dealer]}",
        "Scores: "
        + " | ".join(f"{names[s]} {game.scores[rules.side_of(s)]}" for s in range(n))
        + f"  (target {rules.target_score})",
        f"Deck: {len(game.deck) - game.deck_pos} cards left",
        f"Board: {_cards(game.board)}",
    ]
    width = max(len(name) for name in names)
    for seat in range(n):
        marker = "▶" if seat == game.current else " "
        hand = game.hands[seat]
        shown = (
            _cards(hand) if reveal_hands or seat == game.current else f"{hand.bit_count()} cards"
        )
        pile = game.captured[seat]
        extra = ""
        if game.bastras[seat] or game.jack_bastras[seat]:
            extra = f", {game.bastras[seat] + game.jack_bastras[seat]} bastra(s)"
        lines.append(
            f"{marker} {names[seat]:<{width}}  hand: {shown:<16} "
            f"pile: {pile.bit_count()} cards, {points(pile)} pts{extra}"
        )
    if game.last_move is not None:
        seat, card, capture = game.last_move
        taken = f"took {_cards(capture)}" if capture else "trailed"
        lines.append(f"Last: {names[seat]} played {_cards(1 << card)}, {taken}")
    if game.results:
        r = game.results[-1]
        lines.append(
            f"Round {r.round} scored: "
            + " | ".join(f"side {side}: +{total}" for side, total in enumerate(r.total))
        )
    if game.done:
        if game.winner is None:
            lines.append("Result: draw")
        else:
            winners = [names[s] for s in range(n) if rules.side_of(s) == game.winner]
            lines.append(f"Result: {' + '.join(winners)} win")
    return "\n".join(lines)
