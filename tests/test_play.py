"""The terminal game: numbered choices, bad input asked again, quitting, never a crash."""

import argparse

from agents.apps.play import main, play


def args(**overrides):
    base = dict(opponent="greedy", partner="greedy", table="2p", seat=0, seed=1,
                target_score=100, max_rounds=1)  # fmt: skip
    base.update(overrides)
    return argparse.Namespace(**base)


def scripted(answers):
    answers = iter(answers)

    def read(prompt):
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    return read


def test_a_whole_round_with_bad_input_asked_again(capsys):
    answers = ["", "zero", "0", "99", "-1", "1.5"] + ["1"] * 30
    assert play(args(), read=scripted(answers)) == 0
    out = capsys.readouterr().out
    assert out.count("please type a number from 1 to") == 6
    assert "== round 1 scored" in out and ("You win!" in out or "You lose." in out or "draw" in out)


def test_team_game_with_a_partner_and_quitting(capsys):
    assert play(args(table="4p_teams", seat=2), read=scripted(["2", "q"])) == 0
    out = capsys.readouterr().out
    assert "player_2 (you)" in out and "bye" in out


def test_end_of_input_quits_cleanly(capsys):
    assert play(args(), read=scripted([])) == 0
    assert "bye" in capsys.readouterr().out


def test_bad_options_are_reported_not_raised(capsys):
    assert main(["--opponent", "missing.pt", "--max-rounds", "1"]) == 2
    assert "unknown policy 'missing.pt'" in capsys.readouterr().err
    assert main(["--seat", "5", "--max-rounds", "1"]) == 2
