"""Invariants over thousands of random full games in every table size (RULES.md R5-R17)."""

import random

import pytest

from bastra_env import Game, Rules
from bastra_env.cards import FULL_DECK, NUM_CARDS
from bastra_env.game import PLAYS_PER_ROUND

TABLES = {
    "2p": Rules(num_players=2),
    "3p": Rules(num_players=3),
    "4p": Rules(num_players=4),
    "4p teams": Rules(num_players=4, teams=True),
    "2p variants": Rules(target_score=50, tie_break="draw", capture="auto", last_play_bastra=False),
}
GAMES = 1000


def check_cards_accounted(game: Game) -> None:
    places = [game.board, game.deck_remaining(), *game.hands, *game.captured]
    assert sum(m.bit_count() for m in places) == NUM_CARDS, "a card is in two places"
    assert game.accounted() == FULL_DECK, "a card went missing"


def check_round(rules: Rules, result) -> None:
    if result.leftover_side is not None:
        assert sum(result.card_points) == 13
        assert sum(result.cards) == NUM_CARDS
    most = max(result.cards)
    assert result.most_cards == tuple(
        rules.most_cards_points if c == most else 0 for c in result.cards
    )
    assert result.bastra_points == tuple(
        b * rules.bastra_points + j * rules.jack_bastra_points
        for b, j in zip(result.bastras, result.jack_bastras, strict=True)
    )
    assert result.total == tuple(
        map(sum, zip(result.card_points, result.most_cards, result.bastra_points, strict=True))
    )


def expected_winner(rules: Rules, scores: list[int], rounds: int) -> tuple[bool, int | None]:
    top = max(scores)
    leaders = [s for s, v in enumerate(scores) if v == top]
    if top >= rules.target_score and len(leaders) == 1:
        return True, leaders[0]
    if top >= rules.target_score and rules.tie_break == "draw":
        return True, None
    if rules.max_rounds is not None and rounds >= rules.max_rounds:
        return True, leaders[0] if len(leaders) == 1 else None
    return False, None


@pytest.mark.slow
@pytest.mark.parametrize("table", list(TABLES))
def test_random_full_games_keep_every_invariant(table):
    rules = TABLES[table]
    rng = random.Random(table)
    bastras_seen = 0
    for g in range(GAMES):
        game = Game(rules, seed=g)
        plays_this_round = 0
        rounds_seen = 0
        check_cards_accounted(game)
        while not game.done:
            moves = game.legal_moves()
            assert moves and len(set(moves)) == len(moves)
            game.play(rng.choice(moves))
            plays_this_round += 1
            if len(game.results) > rounds_seen:
                assert plays_this_round == PLAYS_PER_ROUND
                plays_this_round = 0
                rounds_seen += 1
                result = game.results[-1]
                check_round(rules, result)
                bastras_seen += sum(result.bastras)
                done, _ = expected_winner(rules, list(result.scores), rounds_seen)
                assert game.done == done, f"game end wrong after round {rounds_seen}"
            if not game.done:
                check_cards_accounted(game)
        totals = [sum(r.total[s] for r in game.results) for s in range(rules.num_sides)]
        assert totals == game.scores
        assert (True, game.winner) == expected_winner(rules, game.scores, len(game.results))
    assert bastras_seen > 0
