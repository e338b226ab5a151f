import dataclasses

import pytest

from bastra_env import Rules


def test_defaults_are_the_game_of_rules_md():
    r = Rules()
    assert (r.num_players, r.teams, r.target_score, r.max_rounds) == (2, False, 100, None)
    assert (r.tie_break, r.capture, r.last_play_bastra) == ("extra_rounds", "choose", True)
    assert (r.bastra_points, r.jack_bastra_points, r.most_cards_points) == (10, 50, 3)


def test_rules_are_frozen_and_hashable():
    r = Rules(num_players=4, teams=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.num_players = 3
    assert hash(r) == hash(Rules(num_players=4, teams=True))


def test_sides_and_seats():
    teams = Rules(num_players=4, teams=True)
    assert teams.num_sides == 2 and [teams.side_of(s) for s in range(4)] == [0, 1, 0, 1]
    solo = Rules(num_players=3)
    assert solo.num_sides == 3 and [solo.side_of(s) for s in range(3)] == [0, 1, 2]


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"num_players": 5}, ValueError, "2, 3 or 4"),
        ({"num_players": 1}, ValueError, "at least 2"),
        ({"num_players": 2, "teams": True}, ValueError, "teams needs num_players=4"),
        ({"num_players": 3, "teams": True}, ValueError, "teams needs num_players=4"),
        ({"target_score": -5}, ValueError, "target_score must be at least 1"),
        ({"target_score": 0}, ValueError, "target_score must be at least 1"),
        ({"max_rounds": 0}, ValueError, "max_rounds must be at least 1"),
        ({"tie_break": "coin"}, ValueError, "tie_break must be one of"),
        ({"capture": "max"}, ValueError, "capture must be one of"),
        ({"bastra_points": -1}, ValueError, "bastra_points must be at least 0"),
        ({"num_players": "2"}, TypeError, "num_players must be an int"),
        ({"num_players": 2.0}, TypeError, "num_players must be an int"),
        ({"teams": 1}, TypeError, "teams must be True or False"),
        ({"last_play_bastra": "yes"}, TypeError, "last_play_bastra must be True or False"),
        ({"target_score": True}, TypeError, "target_score must be an int"),
    ],
)
def test_impossible_rules_are_refused_when_built(kwargs, error, message):
    with pytest.raises(error, match=message):
        Rules(**kwargs)


def test_unknown_fields_are_named():
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Rules(colour="red")
    with pytest.raises(TypeError, match=r"unknown Rules field\(s\) \['colour'\]; valid fields"):
        Rules.from_dict({"num_players": 2, "colour": "red"})


def test_dict_round_trip():
    r = Rules(num_players=4, teams=True, max_rounds=1, tie_break="draw")
    assert Rules.from_dict(r.to_dict()) == r
