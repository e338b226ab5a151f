"""A text picture of the table, from the engine state alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .cards import mask_str, points, pretty
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


# ------------------------------------------------------------------------------- image
WIDTH, HEIGHT = 960, 640
CARD_W, CARD_H, GAP = 56, 80, 8
FELT, INK, RED, BACK, GOLD = (
    (22, 92, 52),
    (20, 20, 20),
    (190, 20, 30),
    (40, 60, 140),
    (240, 200, 60),
)


def _fonts() -> tuple[Any, Any]:
    """DejaVu Sans (shipped with matplotlib, with the suit symbols), else Pillow's default."""
    from PIL import ImageFont

    try:
        import matplotlib

        path = f"{matplotlib.get_data_path()}/fonts/ttf/DejaVuSans.ttf"
        return ImageFont.truetype(path, 22), ImageFont.truetype(path, 15)
    except (ImportError, OSError):
        return ImageFont.load_default(), ImageFont.load_default()


def _card(draw: Any, x: int, y: int, card: int | None, big: Any) -> None:
    """One card with its top-left corner at (x, y); ``None`` draws its back."""
    box = (x, y, x + CARD_W, y + CARD_H)
    if card is None:
        draw.rounded_rectangle(box, radius=6, fill=BACK, outline=(230, 230, 230), width=2)
        return
    draw.rounded_rectangle(box, radius=6, fill=(250, 250, 245), outline=INK, width=1)
    colour = RED if card & 3 in (1, 2) else INK
    draw.text((x + CARD_W / 2, y + CARD_H / 2), pretty(card), font=big, fill=colour, anchor="mm")


def _row(draw: Any, cards: Sequence[int | None], cx: int, y: int, big: Any) -> None:
    width = len(cards) * (CARD_W + GAP) - GAP
    x = cx - width // 2
    for card in cards:
        _card(draw, x, y, card, big)
        x += CARD_W + GAP


def render_image(game: Game, names: Sequence[str], reveal_hands: bool = False) -> np.ndarray:
    """The table as an RGB image (``uint8[HEIGHT, WIDTH, 3]``): the board in the middle, each
    seat's hand around it (face down but for the seat to move, unless ``reveal_hands``)."""
    from PIL import Image, ImageDraw

    from .cards import iter_cards

    big, small = _fonts()
    image = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(image)
    rules = game.rules
    n = rules.num_players
    state = "game over" if game.done else f"play {game.plays + 1}/{PLAYS_PER_ROUND}"
    draw.text((16, 12), f"Bastra · round {game.round} · {state}", font=big, fill=(255, 255, 255))
    scores = "   ".join(f"{names[s]} {game.scores[rules.side_of(s)]}" for s in range(n))
    draw.text(
        (16, 44), f"{scores}   (target {rules.target_score})", font=small, fill=(230, 230, 230)
    )
    deck_left = len(game.deck) - game.deck_pos
    draw.text((WIDTH - 16, 16), f"deck: {deck_left}", font=small, fill=(230, 230, 230), anchor="ra")
    board = list(iter_cards(game.board))
    for start in range(0, len(board), 8):  # the board in rows of 8
        y = HEIGHT // 2 - CARD_H // 2 + (start // 8) * (CARD_H + GAP) - (len(board) > 8) * 44
        _row(draw, board[start : start + 8], WIDTH // 2, y, big)
    # the viewer sits at the bottom: the seat to move, or seat 0 once the game is over
    viewer = game.current if game.current >= 0 else 0
    spots = {0: (WIDTH // 2, HEIGHT - CARD_H - 40), 1: (150, HEIGHT // 2 - CARD_H // 2)}
    spots.update({2: (WIDTH // 2, 104), 3: (WIDTH - 150, HEIGHT // 2 - CARD_H // 2)})
    slots = {2: (0, 2), 3: (0, 1, 3), 4: (0, 1, 2, 3)}[n]  # a lone opponent sits opposite
    for offset in range(n):
        seat = (viewer + offset) % n
        cx, y = spots[slots[offset]]
        hand = list(iter_cards(game.hands[seat]))
        shown = reveal_hands or seat == game.current
        cards: Sequence[int | None] = hand if shown else [None] * len(hand)
        if slots[offset] in (1, 3):  # side seats: hands drawn narrower, two by two
            for i in range(0, len(cards), 2):
                _row(draw, cards[i : i + 2], cx, y + (i // 2) * (CARD_H // 2) - 40, big)
        else:
            _row(draw, cards, cx, y, big)
        marker = "▶ " if seat == game.current else ""
        pile = game.captured[seat]
        label = f"{marker}{names[seat]} · pile {pile.bit_count()} cards, {points(pile)} pts"
        if game.bastras[seat] or game.jack_bastras[seat]:
            label += f", {game.bastras[seat] + game.jack_bastras[seat]} bastra"
        label_y = y + CARD_H + 6 if slots[offset] != 2 else y - 22
        colour = GOLD if seat == game.current else (255, 255, 255)
        draw.text((cx, label_y), label, font=small, fill=colour, anchor="ma")
    if game.last_move is not None:
        seat, card, capture = game.last_move
        taken = f"took {mask_str(capture, symbols=True)}" if capture else "trailed"
        text = f"last: {names[seat]} played {pretty(card)}, {taken}"
        draw.text((16, HEIGHT - 24), text, font=small, fill=(230, 230, 230))
    return np.asarray(image, dtype=np.uint8)
