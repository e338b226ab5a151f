"""The figures the README and the docs quote from measurement files, rendered in one place.

A page marks each quoted block (a table, or a phrase inside a sentence) with an HTML comment
pair that neither GitHub nor the docs site shows::

    <!-- figures:vector_speed -->
    | env | steps/s | ...
    <!-- /figures:vector_speed -->

and the block's text is what ``BLOCKS[name]`` renders from its measurement file (a JSON file
the benchmark or evaluation command writes). A figure quoted on several pages is the same block
on each, so it comes from one file and cannot drift:

    python docs/figures.py          # rewrite every block from its file (after a new measurement)
    python docs/figures.py --check  # list the blocks that differ from their files (CI runs it)

``tests/test_docs.py`` fails when a block differs from its rendering, names a block that does
not exist, or when the README quotes a measured figure outside a block.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
"""The pages that may quote blocks."""

MARK = re.compile(
    r"<!-- figures:(?P<name>[a-z0-9_]+) -->(?P<body>.*?)<!-- /figures:(?P=name) -->", re.DOTALL
)


# --------------------------------------------------------------------------- formats
def load(path: str) -> Any:
    """A measurement file's contents (``path`` relative to the repository root)."""
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def pct(share: float) -> str:
    """0.746 -> ``74.6%``."""
    return f"{100 * share:.1f}%"


def interval(row: dict[str, Any], prefix: str = "") -> str:
    """A win rate with its 95% interval: ``74.6% [71.8%, 77.2%]``."""
    return (
        f"{pct(row[prefix + 'win_rate'])} [{pct(row[prefix + 'ci_low'])}, "
        f"{pct(row[prefix + 'ci_high'])}]"
    )


def points(row: dict[str, Any], prefix: str = "") -> str:
    """A mean point difference with its 95% half-width: ``+20.84 ± 0.99``."""
    return f"{row[prefix + 'point_diff']:+.2f} ± {row[prefix + 'point_diff_ci']:.2f}"


def count(value: float) -> str:
    """4202636.4 -> ``4,202,636``."""
    return f"{value:,.0f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def block(text: str) -> str:
    """A block's body on lines of its own (tables); phrases inside a sentence stay inline."""
    return f"\n{text}\n"


# --------------------------------------------------------------------------- the quick run
QUICK_RUN = "docs/quick_run.json"


def quick_run_time() -> str:
    """README, getting started and the speed page: the README's first command, timed by
    ``benchmarks/quick_run.py`` (``docs/quick_run.json``)."""
    run = load(QUICK_RUN)
    return (
        f"{run['plays']:,} plays: {run['train_seconds']} s of training, "
        f"{run['wall_seconds']} s in all on a {run['cores']}-core machine"
    )


def quick_run_rates() -> str:
    """README and getting started: the quick run's win rates (``docs/quick_run.json``)."""
    run = load(QUICK_RUN)
    rates = [f"{rate}%" for rate in run["win_rates"].values()]
    return (
        f"{', '.join(rates[:-1])} and {rates[-1]} of {run['eval_games']} single rounds on "
        "duplicate deals"
    )


# --------------------------------------------------------------------------- strength
STRENGTH = "docs/strength_packaged_models.json"
REDUCED = "docs/strength_variance_reduced.json"
RATINGS_2P = "agents/pretrained/ratings_2p.json"
LADDER_RUNS = "docs/ladder_runs.json"


def side(name: str, table_name: str) -> str:
    """How a strength table names a side: a team side is a pair of copies (``X pair``) or the
    player with a greedy partner."""
    if "+" in name:
        player, partner = name.split("+")
        return f"`{player}` + {partner} partner"
    shown = name if name in ("random", "greedy", "heuristic") else f"`{name}`"
    return f"{shown} pair" if table_name == "4p_teams" else shown


def head_to_head() -> str:
    """README: the shipped players head to head, full games on duplicate deals, each line's
    command (``docs/strength_packaged_models.json``; the network against ``pimc:64`` from the
    plain half of ``docs/strength_variance_reduced.json``, the same games)."""
    lines = load(STRENGTH)
    network_pimc = plain(find(REDUCED, "bastra_2p:network", "pimc:64"))
    chosen = [
        lines["ig_pimc"],
        lines["ig_heur"],
        lines["ship_heur"],
        lines["net_heur"],
        network_pimc,
        lines["ig_team"],
        lines["team_ship_heur"],
    ]
    rows = []
    for row in chosen:
        command = (
            f"`{row['command'].replace('benchmarks/inference_gain', 'experiments/inference_gain')}`"
        )
        rows.append(
            [
                side(row["a"], row["table"]),
                side(row["b"], row["table"]),
                str(row["games"]),
                interval(row),
                f"{row['point_diff']:+.2f}",
                command,
            ]
        )
    for i in (3, 4):  # the same command as the line above but for the players
        rows[i][5] = f"the same, `{chosen[i]['a']} {chosen[i]['b']}`"
    header = ["player", "opponent", "games", "win rate [95% CI]", "points a game", "command"]
    return block(table(header, rows))


def variance_reduced() -> str:
    """README: the same games with the luck priced out, beside the plain estimates
    (``docs/strength_variance_reduced.json``)."""
    rows = []
    for row in load(REDUCED):
        rows.append(
            [
                side(row["a"], row["table"]),
                side(row["b"], row["table"]),
                str(row["games"]),
                interval(row),
                interval(row, "raw_"),
                points(row),
                points(row, "raw_"),
            ]
        )
    header = [
        "player",
        "opponent",
        "games",
        "win rate, reduced [95% CI]",
        "plain",
        "points a game, reduced",
        "plain",
    ]
    return block(table(header, rows))


ENDGAME_STAGE = "docs/strength_endgame_stage.json"


def find(path: str, a: str, b: str, games: int | None = None) -> dict[str, Any]:
    """The line of ``a`` against ``b`` in a measurement file (a list of lines, or a dict of them
    under ``results`` or ``lines``)."""
    found = load(path)
    if isinstance(found, dict):
        found = found.get("results") or found.get("lines") or list(found.values())
    for row in found:
        if row["a"] == a and row["b"] == b and games in (None, row["games"]):
            return row
    raise KeyError(f"{path} has no line {a} against {b}")


def plain(row: dict[str, Any]) -> dict[str, Any]:
    """A variance-reduced line's plain duplicate estimate (the same games)."""
    return {
        **row,
        **{key: row["raw_" + key] for key in ("win_rate", "ci_low", "ci_high", "point_diff")},
    }


PACKAGED = [
    # (the line, its file and key; the PPO stage's line on the same deals, its file, a, b)
    ("ship_greedy", ("docs/strength_2p.json", "bastra_2p", "greedy")),
    ("ship_heur", ("docs/strength_2p.json", "bastra_2p", "heuristic")),
    ("ship_pimc", ("docs/vs_search_2p.json", "bastra_2p", "pimc:64")),
    ("net_greedy", ("docs/strength_2p_network.json", "bastra_2p-network", "greedy")),
    ("net_heur", ("docs/strength_2p_network.json", "bastra_2p-network", "heuristic")),
    ("net_pimc", (ENDGAME_STAGE, "bastra_2p:network (PPO stage)", "pimc:64")),
    ("team_ship_greedy", ("docs/strength_4p_teams.json", "bastra_4p_teams", "greedy")),
    ("team_ship_heur", ("docs/strength_4p_teams.json", "bastra_4p_teams", "heuristic")),
    ("team_ship_pimc", ("docs/vs_search_4p_teams.json", "bastra_4p_teams", "pimc:64")),
    ("team_ship_partner", ("docs/strength_4p_teams.json", "bastra_4p_teams+greedy", "greedy")),
    (
        "team_net_greedy",
        ("docs/strength_4p_teams_network.json", "bastra_4p_teams-network", "greedy"),
    ),
    (
        "team_net_heur",
        ("docs/strength_4p_teams_network.json", "bastra_4p_teams-network", "heuristic"),
    ),
    ("team_net_pimc", (ENDGAME_STAGE, "bastra_4p_teams:network (PPO stage)", "pimc:64")),
    (
        "team_net_partner",
        ("docs/strength_4p_teams_network.json", "bastra_4p_teams-network+greedy", "greedy"),
    ),
]
"""The evaluation page's table of the packaged models, line by line."""


def packaged_models() -> str:
    """The evaluation page: every packaged model's line, beside the PPO stage alone on the same
    seed (``docs/strength_packaged_models.json`` and the PPO stage's files; the networks alone
    against ``pimc:64`` from ``docs/strength_variance_reduced.json`` and
    ``docs/strength_endgame_stage.json``)."""
    lines = load(STRENGTH)
    lines["net_pimc"] = plain(find(REDUCED, "bastra_2p:network", "pimc:64"))
    lines["team_net_pimc"] = find(ENDGAME_STAGE, "bastra_4p_teams:network", "pimc:64")
    rows = []
    for key, (path, a, b) in PACKAGED:
        row, before = lines[key], find(path, a, b)
        starred = "*" if key == "team_net_pimc" else ""
        shown_before = pct(before["win_rate"]) if row["b"] == "greedy" else interval(before)
        rows.append(
            [
                side(row["a"], row["table"]),
                side(row["b"], row["table"]),
                str(row["games"]),
                interval(row) + starred,
                f"{row['point_diff']:+.2f}",
                shown_before,
            ]
        )
    header = [
        "model",
        "opponent",
        "games",
        "win rate [95% CI]",
        "mean point diff",
        "PPO stage alone",
    ]
    return block(table(header, rows))


def inference_lines() -> str:
    """The evaluation page: the players with inference from the deal's plays, full games on
    duplicate deals (``docs/strength_packaged_models.json``)."""
    lines = load(STRENGTH)
    rows = []
    for key in ("ig_heur", "ig_pimc", "ship_pimcinf", "ig_team", "team_ship_pimcinf"):
        row = lines[key]
        seed = row["command"].split("--seed ")[1].split()[0]
        rows.append(
            [
                side(row["a"], row["table"]),
                f"{side(row['b'], row['table'])} (seed {seed})",
                str(row["games"]),
                interval(row),
                f"{row['point_diff']:+.2f}",
            ]
        )
    return block(
        table(["player", "opponent", "games", "win rate [95% CI]", "mean point diff"], rows)
    )


def reduced_narrower() -> str:
    """README and the evaluation page: how much narrower the variance-reduced point intervals
    are than the plain ones on the same games (``docs/strength_variance_reduced.json``)."""
    ratios = [row["point_diff_ci"] / row["raw_point_diff_ci"] for row in load(REDUCED)]
    return f"{100 * (1 - max(ratios)):.0f}-{100 * (1 - min(ratios)):.0f}%"


VARIANCE_REDUCTION = "docs/variance_reduction.json"


def variance_reduction() -> str:
    """The evaluation page: the plain duplicate estimate and the variance-reduced one of the
    same games, line by line (``docs/variance_reduction.json``, ``benchmarks/
    variance_reduction.py``)."""
    rows = []
    for row in load(VARIANCE_REDUCTION):
        win = ""
        if row["mode"] == "game":
            win = (f"{pct(row['raw_win_rate'])} → {pct(row['win_rate'])} "
                   f"({row['win_se_ratio']:.2f})")  # fmt: skip
        share = row["correction_seconds"] / row["seconds"]
        rows.append([row["table"], f"`{row['a']}`", f"`{row['b']}`", f"{row['mode']}s",
                     str(row["games"]),
                     f"{row['raw_point_diff']:+.2f} ± {row['raw_point_diff_se']:.2f}",
                     f"{row['point_diff']:+.2f} ± {row['point_diff_se']:.2f}",
                     f"**{row['point_se_ratio']:.2f}**", win,
                     f"{row['correction_seconds']:.0f} of {row['seconds']:.0f} s "
                     f"({100 * share:.0f}%)"])  # fmt: skip
    header = ["table", "A", "B", "mode", "games", "plain points ± se", "variance-reduced ± se",
              "se ratio", "win rate: plain → reduced (se ratio)", "corrections' time"]  # fmt: skip
    return block(table(header, rows))


VR_BEFORE_ENDGAME = "docs/variance_reduction_before_endgame.json"


VR_TEAMS_ENDGAME = "docs/variance_reduction_teams_endgame.json"
VR_STAGES = "docs/vr_stages.json"


def vr_endgame_gain() -> str:
    """The research log: the benchmark's lines whose rollouts now play a search seat's endgame,
    their ratios before (``docs/variance_reduction_before_endgame.json``) and after
    (``docs/variance_reduction.json``) on the same games."""
    return _vr_compare(VR_BEFORE_ENDGAME, VARIANCE_REDUCTION, "2p")


def vr_teams_endgame() -> str:
    """The research log: the team game's strong lines as shipped (``docs/variance_reduction.
    json``) and with the searching seats' last three cards rolled out by minimax on the true
    hands (``docs/variance_reduction_teams_endgame.json``; not shipped)."""
    return _vr_compare(VARIANCE_REDUCTION, VR_TEAMS_ENDGAME, "4p_teams")


def vr_stages() -> str:
    """The research log: the chance corrections fitted by the deal's stage against the shipped
    fit, on the same games (``docs/vr_stages.json``, ``experiments/vr_stages.py``; not shipped)."""
    rows = []
    for row in load(VR_STAGES):
        if not row["check_shipped_equals_result"]:
            raise ValueError(f"{row['line']}: the shipped fit was not the match's own")
        rows.append([row["table"], f"`{row['a']}`", f"`{row['b']}`", f"{row['mode']}s",
                     str(2 * row["deals"]),
                     f"{row['shipped_ratio']:.2f}", f"{row['staged_ratio']:.2f}"])  # fmt: skip
    header = ["table", "A", "B", "mode", "games", "se ratio, shipped fit", "by the deal's stage"]
    return block(table(header, rows))


VR_STREAM = "docs/vr_stream.json"


def _vr_stream_rows() -> list[dict[str, Any]]:
    """The stream experiment's lines, each checked to be the benchmark's match in its first
    replicate."""
    bench = {(r["table"], r["a"], r["b"], r["mode"]): r for r in load(VARIANCE_REDUCTION)}
    rows = load(VR_STREAM)
    for row in rows:
        same = bench.get((row["table"], row["a"], row["b"], row["mode"]))
        if same is None or abs(same["raw_point_diff"] - row["plain_means"][0]) > 1e-9:
            raise ValueError(f"{row['line']} ({row['mode']}s): not the benchmark's games")
    return rows


def vr_stream() -> str:
    """The research log: each line played twice on the same deals with the players' random
    streams changed, the share of a deal's variance that moves with the streams alone
    (``docs/vr_stream.json``, ``experiments/vr_stream.py``)."""
    rows = []
    for row in _vr_stream_rows():
        floor = f"{row['stream_floor']:.2f}" if row["reduced_within"] > 0 else "0"
        rows.append([row["table"], f"`{row['a']}`", f"`{row['b']}`", f"{row['mode']}s",
                     str(row["games"]), pct(row["plain_share"]), pct(row["reduced_share"]),
                     f"{row['se_ratio']:.2f}", floor])  # fmt: skip
    header = ["table", "A", "B", "mode", "games (two runs)", "plain: share, cards fixed",
              "reduced: share, cards fixed", "se ratio", "the streams' part alone"]  # fmt: skip
    return block(table(header, rows))


def vr_stream_floor() -> str:
    """The evaluation page: the se ratios the searches' streams alone leave (PIMC lines)."""
    floors = [r["stream_floor"] for r in _vr_stream_rows() if r["reduced_within"] > 0]
    return f"{min(floors):.2f}-{max(floors):.2f}"


def vr_stream_share() -> str:
    """The evaluation page: the share of the plain duplicate variance that moves with the
    searches' streams alone (PIMC lines)."""
    shares = [r["plain_share"] for r in _vr_stream_rows() if r["plain_within"] > 0]
    return f"{100 * min(shares):.0f}-{100 * max(shares):.0f}%"


def _vr_compare(before_file: str, after_file: str, table_name: str) -> str:
    """The strong lines of ``table_name`` in two runs of the benchmark on the same games."""
    before = {(r["table"], r["a"], r["b"], r["mode"]): r for r in load(before_file)}
    rows = []
    for row in load(after_file):
        old = before[(row["table"], row["a"], row["b"], row["mode"])]
        if old["raw_point_diff"] != row["raw_point_diff"]:
            raise ValueError(f"{row['a']} vs {row['b']}: not the same games before and after")
        if row["table"] != table_name or _vr_kind(row) != "strong":  # no seat with a search
            continue
        win = ""
        if row["mode"] == "game":
            win = f"{old['win_se_ratio']:.2f} → {row['win_se_ratio']:.2f}"
        rows.append([row["table"], f"`{row['a']}`", f"`{row['b']}`", f"{row['mode']}s",
                     f"{old['point_se_ratio']:.2f} → **{row['point_se_ratio']:.2f}**", win,
                     f"{old['correction_seconds']:.0f} of {old['seconds']:.0f} s → "
                     f"{row['correction_seconds']:.0f} of {row['seconds']:.0f} s"])  # fmt: skip
    header = ["table", "A", "B", "mode", "points' se ratio", "win rate's", "corrections' time"]
    return block(table(header, rows))


def _vr_kind(row: dict[str, Any]) -> str:
    """A benchmark line's kind: both sides baselines, a network alone against the heuristic,
    or a pair with a search player or a network against its own search (``strong``)."""
    if {row["a"], row["b"]} <= {"greedy", "heuristic"}:
        return "baselines"
    if row["a"].endswith(":network") and row["b"] == "heuristic":
        return "network"
    return "strong"


def _vr_range(kind: str) -> str:
    ratios = [row["point_se_ratio"] for row in load(VARIANCE_REDUCTION) if _vr_kind(row) == kind]
    return f"{min(ratios):.2f}-{max(ratios):.2f}"


def vr_range_baselines() -> str:
    """The evaluation page: the standard-error ratios between the baselines."""
    return _vr_range("baselines")


def vr_range_network() -> str:
    """The evaluation page: the ratios of a network alone against the heuristic."""
    return _vr_range("network")


def vr_range_strong() -> str:
    """The evaluation page: the ratios between strong players (a search player in the pair, or
    a network against its own search)."""
    return _vr_range("strong")


RATED_2P = {
    "bastra_2p:infer": "the packaged 2p model with the search on inferred worlds, the endgame "
    "against the opponent model too",
    "bastra_2p": "the packaged 2p model as `load_policy` plays it: network + two-deal search on "
    "the game's chance",
    "bastra_2p:last-deal:points": "the same network + last-deal search on the round's points",
    "bastra_2p:network": "the same network alone",
    "ismcts:400": "IS-MCTS, 400 iterations",
    "pimc:64": "PIMC, 64 determinizations",
    "heuristic": "one-ply heuristic",
    "ismcts:100": "IS-MCTS, 100 iterations",
    "greedy": "greedy",
    "random": "random",
}
"""What each player of the 2p ratings is."""


def ratings_2p() -> str:
    """README and the players page: the 2p round-robin's Bradley-Terry ratings with their
    bootstrap intervals (``agents/pretrained/ratings_2p.json``)."""
    fitted = load(RATINGS_2P)
    ratings, intervals = fitted["ratings"], fitted["rating_intervals"]
    order = sorted(ratings, key=lambda name: (-round(ratings[name]), list(RATED_2P).index(name)))
    rows = [
        [
            f"`{name}`",
            RATED_2P[name],
            f"{ratings[name]:.0f}",
            f"{intervals[name][0]:.0f} to {intervals[name][1]:.0f}",
        ]
        for name in order
    ]
    return block(table(["player", "what it is", "rating", "95% interval"], rows))


def ratings_2p_words() -> str:
    """The web page: the ratings of the players its form offers (``ratings_2p.json``)."""
    ratings = load(RATINGS_2P)["ratings"]
    shown = ["bastra_2p:infer", "bastra_2p", "pimc:64", "heuristic", "random"]
    return ", ".join(f"`{name}` {ratings[name]:.0f}" for name in shown)


def rated_network() -> str:
    """README: the shipped 2p network rated on the frozen ladder (``docs/ladder_runs.json``)."""
    run = load(LADDER_RUNS)["runs"][0]
    return f"`{run['policy']}`: {run['rating']:.0f} ± {run['ci']:.0f} in {run['seconds']:.0f} s"


def ladder_runs() -> str:
    """The evaluation page: ``bastra rate`` runs on this machine (``docs/ladder_runs.json``)."""
    rows = []
    for run in load(LADDER_RUNS)["runs"]:
        table_flag = " --table 4p_teams" if run["table"] == "4p_teams" else ""
        rows.append(
            [
                f"`{run['policy']}{table_flag}`",
                f"{run['rating']:.0f}",
                f"±{run['ci']:.0f}",
                str(run["games"]),
                f"{run['seconds']:.0f} s",
                f"{run['ladder_rating']:.0f}",
                f"{run['plain']['rating']:.0f} ±{run['plain']['ci']:.0f}",
            ]
        )
    header = ["`bastra rate ...`", "rating", "95% interval", "games", "time", "frozen rating",
              "plain, the same games"]  # fmt: skip
    return block(table(header, rows))


def ladder_gain() -> str:
    """The evaluation page: how much the corrections take off the ladder runs' intervals
    against the plain fit of the same games (``docs/ladder_runs.json``)."""
    gains = [1 - run["ci"] / run["plain"]["ci"] for run in load(LADDER_RUNS)["runs"]]
    return f"{100 * min(gains):.0f}-{100 * max(gains):.0f}%"


# --------------------------------------------------------------------------- lines in sentences
STRENGTH_2P_PPO = "docs/strength_2p.json"
STRENGTH_4P_PPO = "docs/strength_4p_teams.json"
NETWORK_2P_PPO = "docs/strength_2p_network.json"
NETWORK_4P_PPO = "docs/strength_4p_teams_network.json"
VS_SEARCH_2P = "docs/vs_search_2p.json"
VS_SEARCH_4P = "docs/vs_search_4p_teams.json"
PREVIOUS_MODELS = "docs/strength_vs_previous_models.json"
CURVES = {"2p": "docs/eval_2p.csv", "4p_teams": "docs/eval_4p_teams.csv"}

LINES: dict[str, Callable[[], dict[str, Any]]] = {
    # the packaged networks alone (the endgame stage), 1,000 full games a line, seed 2026
    "network_2p_heuristic": lambda: find(STRENGTH, "bastra_2p:network", "heuristic"),
    "network_2p_pimc": lambda: plain(find(REDUCED, "bastra_2p:network", "pimc:64")),
    "network_4p_heuristic": lambda: find(STRENGTH, "bastra_4p_teams:network", "heuristic"),
    "network_4p_pimc": lambda: find(ENDGAME_STAGE, "bastra_4p_teams:network", "pimc:64"),
    # the PPO stage's networks alone (packaged before 0.4.0), the same deals
    "ppo_network_2p_heuristic": lambda: find(NETWORK_2P_PPO, "bastra_2p-network", "heuristic"),
    "ppo_network_2p_pimc": lambda: find(ENDGAME_STAGE, "bastra_2p:network (PPO stage)", "pimc:64"),
    "ppo_network_4p_heuristic": lambda: find(
        NETWORK_4P_PPO, "bastra_4p_teams-network", "heuristic"
    ),
    "ppo_network_4p_pimc": lambda: find(
        ENDGAME_STAGE, "bastra_4p_teams:network (PPO stage)", "pimc:64"
    ),
    # the PPO stage's models as `load_policy` played them (network + endgame search)
    "ppo_2p_greedy": lambda: find(STRENGTH_2P_PPO, "bastra_2p", "greedy"),
    "ppo_2p_heuristic": lambda: find(STRENGTH_2P_PPO, "bastra_2p", "heuristic"),
    "ppo_2p_pimc": lambda: find(VS_SEARCH_2P, "bastra_2p", "pimc:64"),
    "ppo_4p_greedy": lambda: find(STRENGTH_4P_PPO, "bastra_4p_teams", "greedy"),
    "ppo_4p_heuristic": lambda: find(STRENGTH_4P_PPO, "bastra_4p_teams", "heuristic"),
    "ppo_4p_partner": lambda: find(STRENGTH_4P_PPO, "bastra_4p_teams+greedy", "greedy"),
    "ppo_4p_pimc": lambda: find(VS_SEARCH_4P, "bastra_4p_teams", "pimc:64"),
}
"""Full-game lines that sentences and table cells quote, each read from its measurement file."""

FORMS: dict[str, Callable[[dict[str, Any]], str]] = {
    "rate": lambda row: pct(row["win_rate"]),
    "ci": interval,
    "line": lambda row: f"{interval(row)}, {row['point_diff']:+.2f}",
}
"""How a line is quoted: ``74.6%``, ``74.6% [71.8%, 77.2%]`` or ``74.6% [71.8%, 77.2%], +21.17``."""


def quote(line: str, form: str) -> Callable[[], str]:
    """The renderer of block ``LINE_FORM``: line ``line`` of ``LINES`` in form ``form``."""

    def render() -> str:
        return FORMS[form](LINES[line]())

    render.__doc__ = f"Line {line!r} of LINES as {form!r} (its file in LINES)."
    return render


QUOTED = {
    f"{line}_{form}": quote(line, form)
    for line, form in [
        ("network_2p_heuristic", "line"),
        ("network_2p_pimc", "line"),
        ("network_2p_pimc", "rate"),
        ("network_4p_heuristic", "line"),
        ("network_4p_pimc", "line"),
        ("ppo_network_2p_heuristic", "line"),
        ("ppo_network_2p_heuristic", "rate"),
        ("ppo_network_2p_pimc", "ci"),
        ("ppo_network_4p_heuristic", "ci"),
        ("ppo_network_4p_heuristic", "rate"),
        ("ppo_network_4p_pimc", "ci"),
        ("ppo_2p_greedy", "rate"),
        ("ppo_2p_heuristic", "rate"),
        ("ppo_2p_pimc", "rate"),
        ("ppo_4p_greedy", "rate"),
        ("ppo_4p_heuristic", "rate"),
        ("ppo_4p_partner", "rate"),
        ("ppo_4p_pimc", "rate"),
    ]
}
"""The blocks that quote one line of ``LINES`` (training, evaluation and players pages)."""


def heuristic_gains(better: str, base: str) -> str:
    """How many points of win rate against the heuristic lines ``{better}_2p_heuristic`` and
    ``{better}_4p_heuristic`` of ``LINES`` are above ``base``'s, on the same games:
    ``"X points of win rate against the heuristic in 2p and Y in"``."""
    gains = [
        100 * (LINES[f"{better}_{game}_heuristic"]()["win_rate"]
               - LINES[f"{base}_{game}_heuristic"]()["win_rate"])
        for game in ("2p", "4p")
    ]  # fmt: skip
    return f"{gains[0]:.1f} points of win rate against the heuristic in 2p and {gains[1]:.1f} in"


def endgame_gain() -> str:
    """The evaluation and training pages: what the endgame stage added to the network alone
    against the heuristic, on the same 1,000 games."""
    return heuristic_gains("network", "ppo_network") + " the team game"


def ppo_search_gain() -> str:
    """The evaluation page: what the endgame search added to the PPO stage's networks against
    the heuristic, on the same 1,000 games."""
    return heuristic_gains("ppo", "ppo_network")


def ppo_network_words() -> str:
    """The evaluation page: the PPO stage's networks alone in full games
    (``docs/strength_2p_network.json``, ``docs/strength_4p_teams_network.json``)."""
    two, team = "bastra_2p-network", "bastra_4p_teams-network"
    random_2p, random_team = (
        find(NETWORK_2P_PPO, two, "random"),
        find(NETWORK_4P_PPO, team, "random"),
    )
    return (
        f"2p {pct(random_2p['win_rate'])} against random, "
        f"{interval(find(NETWORK_2P_PPO, two, 'greedy'))} against greedy, "
        f"{interval(find(NETWORK_2P_PPO, two, 'heuristic'))} against the heuristic; team pair "
        f"{pct(random_team['win_rate'])}, {interval(find(NETWORK_4P_PPO, team, 'greedy'))} and "
        f"{interval(find(NETWORK_4P_PPO, team, 'heuristic'))}, and "
        f"{interval(find(NETWORK_4P_PPO, team + '+greedy', 'greedy'))} with a greedy partner "
        "against a greedy pair"
    )


def ppo_stage() -> str:
    """The evaluation page: the PPO stage's models as ``load_policy`` played them, beside the
    models before them on the same deals (``docs/strength_2p.json``,
    ``docs/strength_4p_teams.json``, ``docs/strength_vs_previous_models.json``)."""
    previous = load(PREVIOUS_MODELS)
    before = {
        (row["a"], row["b"]): row
        for key in ("2p_v1_same_deals", "4p_v1_same_deals")
        for row in previous[key]
    }
    rows = []
    for row in load(STRENGTH_2P_PPO) + load(STRENGTH_4P_PPO):
        model, plus, partner = row["a"].partition("+")
        then = before[(f"{model}_v1{plus}{partner}", row["b"])]
        rows.append(
            [
                side(row["a"], row["table"]),
                side(row["b"], row["table"]),
                str(row["games"]),
                interval(row),
                f"{row['point_diff']:+.2f}",
                pct(then["win_rate"]) if row["b"] == "random" else interval(then),
            ]
        )
    header = [
        "model",
        "opponent",
        "games",
        "win rate [95% CI]",
        "mean point diff",
        "the models before",
    ]
    return block(table(header, rows))


VS_SEARCH_NAMES = {
    "bastra_2p": "`bastra_2p` (two-deal search on the game's chance, the default)",
    "bastra_2p:points": "`bastra_2p:points` (two-deal search, the round's points)",
    "bastra_4p_teams": "`bastra_4p_teams` pair (game's chance, the default)",
}
"""How the players page names the PPO stage's presets against the search players."""


def vs_search() -> str:
    """The players page: the PPO stage's models against the search players, full games
    (``docs/vs_search_2p.json``, ``docs/vs_search_4p_teams.json``)."""
    opponents = ["pimc:64", "pimc:1ms", "ismcts:1ms"]  # the page's order, each player's kept
    lines = load(VS_SEARCH_2P)["results"] + load(VS_SEARCH_4P)["results"]
    rows = []
    for row in sorted(lines, key=lambda row: (row["table"], opponents.index(row["b"]))):
        rows.append(
            [
                VS_SEARCH_NAMES.get(row["a"], side(row["a"], row["table"])),
                side(row["b"], row["table"]),
                str(row["games"]),
                interval(row),
                points(row),
            ]
        )
    header = ["player", "opponent", "games", "win rate [95% CI]", "points a game [95% CI]"]
    return block(table(header, rows))


def curve_share(text: str) -> str:
    """A learning curve's win rate as ``eval.csv`` writes it (``0.5075``), rounded half up:
    200 games give exact halves of a tenth of a percent."""
    return f"{(100 * Decimal(text)).quantize(Decimal('0.1'), ROUND_HALF_UP)}%"


def curves_heuristic() -> str:
    """The evaluation and training pages: the PPO runs' single-round win rate against the
    heuristic, first point, last point and peak (``docs/eval_2p.csv``,
    ``docs/eval_4p_teams.csv``)."""
    ends = {}
    for name, path in CURVES.items():
        with (ROOT / path).open(encoding="utf-8", newline="") as file:
            points = [row for row in csv.DictReader(file) if row["opponent"] == "heuristic"]
        peak = max(points, key=lambda row: Decimal(row["win_rate"]))["win_rate"]
        ends[name] = (points[0], points[-1]["win_rate"], peak)
    (first, last, peak), (team_first, team_last, team_peak) = ends["2p"], ends["4p_teams"]
    return (
        f"from {curve_share(first['win_rate'])} at the first evaluation "
        f"({int(first['env_steps']):,} plays) to {curve_share(last)} at the end in 2p (peak "
        f"{curve_share(peak)}), and from {curve_share(team_first['win_rate'])} to "
        f"{curve_share(team_last)} in the team game (peak {curve_share(team_peak)})"
    )


# --------------------------------------------------------------------------- speed
VECTOR_SPEED = "docs/vector_speed.json"
TRAIN_SPEED = "docs/train_speed.json"
BUSY_MACHINE = "docs/busy_machine.json"
VECTOR_ROWS = [
    ("vector 2p, 2 threads", "**vector env, 2p, 2 threads**", True),
    ("vector 2p, 1 thread", "vector env, 2p, 1 thread", False),
    ("vector 4p teams, 2 threads", "**vector env, 4p teams, 2 threads**", True),
    ("vector 4p teams, 1 thread", "vector env, 4p teams, 1 thread", False),
    ("aec 2p", "Bastra AEC env, 2p", False),
    ("reference 2p", "Python reference engine (no observation)", False),
    ("connect_four_v3", "PettingZoo `connect_four_v3`", False),
    ("pgx connect_four", "Pgx `connect_four`", False),
    ("pgx leduc_holdem", "Pgx `leduc_holdem`", False),
]
"""``benchmarks/vector_speed.py``'s runners as the speed tables name them (bold: the headline)."""
FRONT_PAGE_VECTOR = [
    "vector 2p, 2 threads",
    "vector 2p, 1 thread",
    "vector 4p teams, 2 threads",
    "aec 2p",
    "connect_four_v3",
    "pgx connect_four",
]


def vector_cell(rate: float, bold: bool) -> str:
    return f"**{count(rate)}**" if bold else count(rate)


def vector_speed() -> str:
    """README: the vector env beside its anchors (``docs/vector_speed.json``)."""
    rates = load(VECTOR_SPEED)["steps_per_s"]
    anchor = rates["connect_four_v3"]
    rows = []
    for key, label, bold in VECTOR_ROWS:
        if key in FRONT_PAGE_VECTOR and key in rates:
            if key == "pgx connect_four":
                label = "Pgx `connect_four` (JAX on the CPU, both cores)"
            rows.append([label, vector_cell(rates[key], bold), f"{rates[key] / anchor:.1f}x"])
    return block(table(["env", "steps/s", "vs `connect_four_v3`"], rows))


def vector_speed_full() -> str:
    """The speed page: every runner of ``benchmarks/vector_speed.py``, with the threads' scaling
    and both anchors (``docs/vector_speed.json``)."""
    rates = load(VECTOR_SPEED)["steps_per_s"]
    c4, pgx = rates["connect_four_v3"], rates.get("pgx connect_four")
    rows = []
    for key, label, bold in VECTOR_ROWS:
        if key not in rates:
            continue
        rate = rates[key]
        one = key.split(",")[0] + ", 1 thread"
        scaling = f"{rate / rates[one]:.2f}x" if key.startswith("vector") else ""
        versus_pgx = (
            f"{rate / pgx:.2f}x"
            if pgx and (key.startswith("vector") or key == "pgx connect_four")
            else ""
        )
        rows.append([label, vector_cell(rate, bold), scaling, f"{rate / c4:.1f}x", versus_pgx])
    header = ["env", "steps/s", "vs one thread", "vs `connect_four_v3`", "vs Pgx `connect_four`"]
    return block(table(header, rows))


def vector_speed_words() -> str:
    """README's opening: the 2p vector env's plays a second on one and two threads."""
    rates = load(VECTOR_SPEED)["steps_per_s"]
    one, two = rates["vector 2p, 1 thread"], rates["vector 2p, 2 threads"]
    return f"{one / 1e6:.1f} million plays a second on one core and {two / 1e6:.1f} million on two"


def vector_speed_date() -> str:
    """When and on what ``docs/vector_speed.json`` was measured."""
    measured = load(VECTOR_SPEED)
    return f"{measured['date']}, {measured['cores']} cores"


def train_speed_rows() -> str:
    """The speed page: ``benchmarks/train_speed.py``'s figures and where an update's time goes
    (``docs/train_speed.json``: one run per thread count)."""
    measured = load(TRAIN_SPEED)
    parts = measured["parts"]
    rows = []
    for run in measured["runs"]:
        for name, figures in run["tables"].items():
            shares = [f"{100 * figures[part] / figures['seconds']:.1f}%" for part in parts]
            steps = figures["steps"] / figures["seconds"]
            samples = figures["samples"] / figures["seconds"]
            rows.append([name, str(run["threads"]), count(steps), count(samples), *shares])
    header = [
        "table",
        "threads",
        "env steps/s",
        "learner samples/s",
        "vector env",
        "heuristic opponents",
        "per-action inputs",
        "rollout forward",
        "PPO update",
    ]
    return block(table(header, rows))


def train_speed_words() -> str:
    """README and the research log: 2p training's env steps/s on two threads."""
    for run in load(TRAIN_SPEED)["runs"]:
        if run["threads"] == 2:
            figures = run["tables"]["2p"]
            return f"{count(figures['steps'] / figures['seconds'])} env steps/s"
    raise ValueError(f"{TRAIN_SPEED} has no two-thread run")


def busy_machine() -> str:
    """The speed page: the quick config with one core busy (``docs/busy_machine.json``)."""
    measured = load(BUSY_MACHINE)
    anchor = measured["rows"][1]["steps_per_s"]
    rows = [
        [row["label"], count(row["steps_per_s"]), f"{row['steps_per_s'] / anchor:.2f}x"]
        for row in measured["rows"]
    ]
    return block(table(["configs/quick.yaml", "env steps/s", "vs `--threads 1`, busy"], rows))


def busy_machine_words() -> str:
    """README and the training page: ``threads: auto`` and two threads against one, one core
    busy (``docs/busy_machine.json``)."""
    rows = load(BUSY_MACHINE)["rows"]
    anchor = rows[1]["steps_per_s"]
    auto, two = rows[0]["steps_per_s"] / anchor, rows[2]["steps_per_s"] / anchor
    return (
        f"`threads: auto` trains at {auto:.2f}x the speed of `--threads 1`, where two threads "
        f"fall to {two:.2f}x"
    )


# --------------------------------------------------------------------------- issue-42 studies
DMC_VS_PPO = "docs/dmc_vs_ppo.json"


def equal_time(path: str, arms: tuple[tuple[str, str], ...]) -> str:
    """An equal wall-clock study's arms (``arms``: key, name), each network alone against the
    heuristic (``path``: ``experiments/dmc_vs_ppo.py``'s or ``league_vs_ppo.py``'s file)."""
    study = load(path)
    lines = {line["a"]: line for line in study["lines"] if line["b"] == "heuristic"}
    rows = []
    for arm, name in arms:
        line, found = lines[arm], study["arms"][arm]
        rows.append(
            [
                name,
                count(found["plays"]),
                str(line["games"]),
                interval(line),
                points(line),
                f"{pct(line['raw_win_rate'])}, {points(line, 'raw_')}",
            ]
        )
    header = [
        f"trained {study['minutes']:g} minutes",
        "plays",
        "games",
        "against the heuristic, reduced [95% CI]",
        "points a game, reduced",
        "plain",
    ]
    return block(table(header, rows))


def head_to_head_words(path: str) -> str:
    """An equal wall-clock study's challenger against PPO, in words (``path`` as above)."""
    line = next(line for line in load(path)["lines"] if line["b"] != "heuristic")
    return (
        f"{interval(line)} of {line['games']} full games, {points(line)} points a game "
        f"(plain {pct(line['raw_win_rate'])}, {points(line, 'raw_')})"
    )


def dmc_vs_ppo() -> str:
    """The research log: Deep Monte-Carlo and PPO after the same minutes of training, each
    network alone against the heuristic (``docs/dmc_vs_ppo.json``)."""
    return equal_time(DMC_VS_PPO, (("ppo", "PPO"), ("dmc", "Deep Monte-Carlo")))


def dmc_head_to_head() -> str:
    """The research log: the DMC network against the PPO one (``docs/dmc_vs_ppo.json``)."""
    return head_to_head_words(DMC_VS_PPO)


LEAGUE_VS_PPO = "docs/league_vs_ppo.json"


def league_vs_ppo() -> str:
    """The research log: the league and PPO after the same minutes of training, each network
    alone against the heuristic (``docs/league_vs_ppo.json``)."""
    return equal_time(LEAGUE_VS_PPO, (("ppo", "PPO"), ("league", "league")))


def league_head_to_head() -> str:
    """The research log: the league's network against PPO's (``docs/league_vs_ppo.json``)."""
    return head_to_head_words(LEAGUE_VS_PPO)


def league_probes() -> str:
    """The research log: the exploiters of the league's run, and the same probe on each final
    network (``docs/league_vs_ppo.json``)."""
    study = load(LEAGUE_VS_PPO)
    rows = []
    for row in study["league_probes"]:
        line = {k: float(row[k]) for k in ("win_rate", "ci_low", "ci_high", "point_diff",
                                           "point_diff_ci")}  # fmt: skip
        rows.append([f"league, exploiter {row['phase']}", count(int(row["env_steps"])),
                     interval(line), points(line)])  # fmt: skip
    for arm, name in (("league", "league, final network"), ("ppo", "PPO, final network")):
        line = study["final_probes"][arm]
        rows.append([name, count(study["arms"][arm]["plays"]), interval(line), points(line)])
    header = ["probed", "its plays", "exploiter's rounds won [95% CI]",
              "exploiter's points a round, reduced"]  # fmt: skip
    return block(table(header, rows))


TEACHER_2P = "docs/teacher_table_2p.json"
TEACHERS = {
    "heuristic": "the heuristic player (the rollout policy's kind)",
    "bastra_2p": "the network + the two-deal endgame search (the shipped player)",
    "bastra_2p:last-deal:points": "the network + the last deal's search",
    "bastra_2p:infer": "the network + PIMC on inferred worlds + the endgame searches",
    "pimc:64": "PIMC, 64 worlds, heuristic rollouts",
    "pimc:64:infer": "PIMC, 64 inferred worlds",
    "pimc:128:infer": "PIMC, 128 inferred worlds",
    "pimc:30ms:infer": "PIMC on inferred worlds, 30 ms a move",
    "pimc:64:infer:bastra_2p": "PIMC, 64 inferred worlds, the network breaking near-ties",
    "ismcts:400": "IS-MCTS, 400 iterations",
    "ismcts:30ms:bastra_2p": "IS-MCTS, 30 ms a move, the network as prior",
}
"""What each expert of the teacher table is."""


def teacher_table() -> str:
    """The research log: search experts against the network alone, single rounds, with their
    time a move (``docs/teacher_table_2p.json``)."""
    rows = []
    for line in load(TEACHER_2P)["lines"]:
        rows.append([f"`{line['expert']}`", TEACHERS.get(line["expert"], ""),
                     points(line),
                     points(line, "raw_"),
                     f"{1000 * line['seconds_a_move']:.1f}"])  # fmt: skip
    header = ["expert", "what it is", "points a round above the network, reduced", "plain",
              "ms a move"]  # fmt: skip
    return block(table(header, rows))


SCALING_2P = "docs/scaling_2p.json"


def scaling_2p() -> str:
    """The research log: the 2p scaling run's network alone at points on a log axis of plays,
    full games against each yardstick, variance-reduced (``docs/scaling_2p.json``)."""
    return scaling(SCALING_2P)


SCALING_4P_TEAMS = "docs/scaling_4p_teams.json"


def scaling_4p_teams() -> str:
    """The research log: the team scaling run's network pair, as ``scaling_2p``
    (``docs/scaling_4p_teams.json``)."""
    return scaling(SCALING_4P_TEAMS)


SCALING_2P_CONTROL = "docs/scaling_2p_50m.json"


def scaling_2p_control() -> str:
    """The research log: the schedule control (a run whose learning rate reaches 0 at 50 million
    plays, ``docs/scaling_2p_50m.json``) beside the 100-million run's points at 50 and 100 million
    (``docs/scaling_2p.json``), the same yardsticks on the same deals."""
    main = load(SCALING_2P)["lines"]
    control = load(SCALING_2P_CONTROL)["lines"]
    opponents = list(dict.fromkeys(line["opponent"] for line in control))
    rows = []
    for label, lines, point in (
        ("100M schedule, at 50M plays (rate at half)", main, 5e7),
        ("50M schedule, at its end (rate at 0)", control, 5e7),
        ("100M schedule, at its end (rate at 0)", main, 1e8),
    ):
        by = {line["opponent"]: line for line in lines if line["point"] == point}
        plays = next(iter(by.values()))["plays"]
        rows.append([label, count(plays), *(interval(by[o]) for o in opponents)])
    names = (f"against `{o}`" if ":" in o else f"against {o}" for o in opponents)
    return block(table(["run", "plays", *names], rows))


def scaling(path: str) -> str:
    """A scaling study's table (``experiments/scaling_eval.py``'s file)."""
    study = load(path)
    opponents = list(dict.fromkeys(line["opponent"] for line in study["lines"]))
    by_plays: dict[int, dict[str, dict[str, Any]]] = {}
    for line in study["lines"]:
        by_plays.setdefault(line["plays"], {})[line["opponent"]] = line
    rows = []
    for plays in sorted(by_plays):
        cells = [interval(by_plays[plays][o]) if o in by_plays[plays] else "" for o in opponents]
        rows.append([count(plays), *cells])
    header = ["plays", *(f"against `{o}`" if ":" in o else f"against {o}" for o in opponents)]
    return block(table(header, rows))


CANDIDATE_2P = "docs/candidate_2p.json"


def candidate_2p() -> str:
    """The research log: the 2p candidate (the scaling run's network with the endgame learning)
    against the packaged model as shipped, and both networks alone against the yardsticks
    (``docs/candidate_2p.json``)."""
    return candidate(CANDIDATE_2P)


CANDIDATE_4P_TEAMS = "docs/candidate_4p_teams.json"


def candidate_4p_teams() -> str:
    """The research log: the team candidate (the team scaling run's network with the endgame
    learning), as ``candidate_2p`` (``docs/candidate_4p_teams.json``)."""
    return candidate(CANDIDATE_4P_TEAMS)


def candidate(path: str) -> str:
    """A candidate's table (``experiments/candidate.py``'s file)."""
    return match_table(load(path)["lines"])


def match_table(lines: list[dict[str, Any]]) -> str:
    """Variance-reduced matches, one a row: the players, the games, the reduced win rate and
    points with their intervals, the plain figures beside them."""
    rows = []
    for line in lines:
        plain_figures = f"{pct(line['raw_win_rate'])}, {points(line, 'raw_')}"
        rows.append([f"`{line['a']}`", f"`{line['b']}`", str(line["games"]), interval(line),
                     points(line), plain_figures])  # fmt: skip
    header = ["player", "against", "games", "won, reduced [95% CI]", "points a game, reduced",
              "plain"]  # fmt: skip
    return block(table(header, rows))


DISTILL_2P = "docs/distill_2p.json"


def distill_2p() -> str:
    """The research log: the distilled student (``docs/distill_2p.json``) beside the packaged
    network on the same deals (``docs/candidate_2p.json``)."""
    packaged = {line["b"]: line for line in load(CANDIDATE_2P)["lines"]
                if line["a"] == "bastra_2p:network"}  # fmt: skip
    rows = []
    for line in load(DISTILL_2P)["lines"]:
        rows.append(line)
        if line["a"] == "student:network" and line["b"] in packaged:
            rows.append(packaged[line["b"]])
    return match_table(rows)


def distill_2p_training() -> str:
    """The research log: the student's held-out figures before and after distilling, every
    few epochs (``docs/distill_2p.json``)."""
    history = load(DISTILL_2P)["distill"]["history"]
    shown = [row for row in history if row["epoch"] % 4 == 0 or row is history[-1]]
    rows = [[str(row["epoch"]), f"{row['kl']:.3f}", pct(row["agreement"]),
             f"{row['points_lost_before_endgame']:.3f}", f"{row['points_lost_endgame']:.3f}",
             f"{row['points_lost']:.3f}"] for row in shown]  # fmt: skip
    header = ["epoch", "KL to the teacher", "the teacher's best move",
              "points given up, before the endgame", "in the endgame", "all"]  # fmt: skip
    return block(table(header, rows))


DISTILL_2P_REGRET = "docs/distill_2p_regret.json"


def _packaged_network_lines() -> dict[str, str]:
    """The packaged 2p network alone against each yardstick on the students' 300 deals
    (``docs/candidate_2p.json``): the win rate with its interval, by opponent."""
    return {line["b"]: interval(line) for line in load(CANDIDATE_2P)["lines"]
            if line["a"] == "bastra_2p:network"}  # fmt: skip


def distill_losses() -> str:
    """The research log: the student by the cross-entropy to the teacher's distribution and by
    the expected regret under its values, held out and in full games (``docs/distill_2p.json``,
    ``docs/distill_2p_regret.json``)."""
    start = load(DISTILL_2P)["distill"]["history"][0]
    packaged = _packaged_network_lines()
    rows = [["none (the packaged network)", f"{start['points_lost_before_endgame']:.3f}",
             f"{start['points_lost_endgame']:.3f}", "", "", packaged["heuristic"],
             packaged["pimc:64"]]]  # fmt: skip
    for path in (DISTILL_2P, DISTILL_2P_REGRET):
        study = load(path)
        last = study["distill"]["history"][-1]
        won = {(line["a"], line["b"]): interval(line) for line in study["lines"]}
        rows.append([study["distill"].get("loss", "cross-entropy"),
                     f"{last['points_lost_before_endgame']:.3f}",
                     f"{last['points_lost_endgame']:.3f}",
                     won[("student:network", "bastra_2p:network")],
                     won[("student", "bastra_2p")], won[("student:network", "heuristic")],
                     won[("student:network", "pimc:64")]])  # fmt: skip
    header = ["loss", "points given up, before the endgame", "in the endgame",
              "network alone vs `bastra_2p:network`", "as shipped vs `bastra_2p`",
              "network alone vs heuristic", "network alone vs `pimc:64`"]  # fmt: skip
    return block(table(header, rows))


DISTILL_2P_256 = "docs/distill_2p_256.json"


def distill_256() -> str:
    """The research log: the student of the 256-world teacher (expected regret), held out by that
    teacher's values and on decisions it learnt from, and in full games
    (``docs/distill_2p_256.json``; the packaged network's lines on the same deals from
    ``docs/candidate_2p.json``)."""
    study = load(DISTILL_2P_256)
    history, learnt = study["distill"]["history"], study["distill"]["learnt"]
    won = {(line["a"], line["b"]): interval(line) for line in study["lines"]}
    packaged = _packaged_network_lines()
    rows = [["the packaged network", f"{history[0]['points_lost_before_endgame']:.3f}",
             f"{history[0]['points_lost_endgame']:.3f}", "", "", "", packaged["heuristic"],
             packaged["pimc:64"]],
            [f"the student ({study['distill']['decisions_learnt']:,} decisions)",
             f"{history[-1]['points_lost_before_endgame']:.3f}",
             f"{history[-1]['points_lost_endgame']:.3f}",
             f"{learnt['points_lost_before_endgame']:.3f}",
             won[("student:network", "bastra_2p:network")], won[("student", "bastra_2p")],
             won[("student:network", "heuristic")],
             won[("student:network", "pimc:64")]]]  # fmt: skip
    header = ["network", "held out: before the endgame", "in the endgame",
              "learnt: before the endgame", "network alone vs `bastra_2p:network`",
              "as shipped vs `bastra_2p`", "network alone vs heuristic",
              "network alone vs `pimc:64`"]  # fmt: skip
    return block(table(header, rows))


DISTILL_CURVE = "docs/distill_data_curve.json"


def distill_curve() -> str:
    """The research log: the student by the share of the teacher's decisions it learnt from,
    held out and on decisions it learnt from (``docs/distill_data_curve.json``)."""
    study = load(DISTILL_CURVE)
    start = study["start"]
    rows = [["0 (the packaged network)", f"{start['points_lost_before_endgame']:.3f}", "",
             f"{start['points_lost_endgame']:.3f}", "", ""]]  # fmt: skip
    for point in study["points"]:
        held, learnt = point["held_out"], point["learnt"]
        gain = f"{point['gain_before_endgame']:+.4f} ± {point['gain_before_endgame_ci']:.4f}"
        rows.append([f"{point['decisions']:,}", f"{held['points_lost_before_endgame']:.3f}",
                     gain, f"{held['points_lost_endgame']:.3f}",
                     f"{learnt['points_lost_before_endgame']:.3f}",
                     f"{learnt['points_lost_endgame']:.3f}"])  # fmt: skip
    header = ["decisions learnt", "held out: before the endgame", "less than the packaged network",
              "in the endgame", "learnt: before the endgame", "in the endgame"]  # fmt: skip
    return block(table(header, rows))


TEACHER_NOISE = "docs/distill_teacher_noise.json"


def teacher_noise() -> str:
    """The research log: a second teacher on independent worlds and the network alone, scored
    by the first teacher's values (``docs/distill_teacher_noise.json``)."""
    study = load(TEACHER_NOISE)
    rows = []
    for phase, entry in study["phases"].items():
        for who in ("second teacher", "network"):
            lost = f"{entry[who]['points_lost']:.3f} ± {entry[who]['points_lost_ci']:.3f}"
            rows.append([phase, f"{entry['decisions']:,}", f"the {who}",
                         pct(entry[who]["agreement"]), lost])  # fmt: skip
    header = ["decisions", "how many", "chooser", "the first teacher's best move",
              "points given up a decision [95% CI]"]  # fmt: skip
    return block(table(header, rows))


TEACHER_NOISE_256 = "docs/distill_teacher_noise_256.json"


def teacher_noise_worlds() -> str:
    """The research log: the teacher's noise before the endgame at 64 and at 256 worlds
    (``docs/distill_teacher_noise.json``, ``docs/distill_teacher_noise_256.json``)."""
    rows = []
    for path in (TEACHER_NOISE, TEACHER_NOISE_256):
        study = load(path)
        entry = study["phases"]["before the endgame"]
        second, network = entry["second teacher"], entry["network"]
        rows.append([str(study["worlds"]), f"{study['games']}", f"{entry['decisions']:,}",
                     f"{second['points_lost']:.3f} ± {second['points_lost_ci']:.3f}",
                     f"{network['points_lost']:.3f} ± {network['points_lost_ci']:.3f}",
                     f"{network['points_lost'] - second['points_lost']:.3f}"])  # fmt: skip
    header = ["worlds", "rounds", "decisions before the endgame", "second teacher gives up",
              "the network gives up", "the difference"]  # fmt: skip
    return block(table(header, rows))


EXPLOITABILITY_2P = "docs/exploitability_2p.json"


def exploitability_2p() -> str:
    """The research log: the exploitability probe on the 2p scaling run's checkpoints
    (``docs/exploitability_2p.json``)."""
    study = load(EXPLOITABILITY_2P)
    rows = []
    for line in study["lines"]:
        rows.append([count(line["plays"]), count(line["exploiter_plays"]), interval(line),
                     points(line)])  # fmt: skip
    header = ["the network's plays", "the exploiter's plays", "exploiter's rounds won [95% CI]",
              "exploiter's points a round, reduced"]  # fmt: skip
    return block(table(header, rows))


ORACLE_CEILING = "docs/oracle_ceiling.json"
ORACLE_HEURISTIC = "docs/oracle_ceiling_heuristic.json"
HAND_INFERENCE_RATE = "docs/hand_inference_rate.json"
HAND_INFERENCE_QUALITY = "docs/hand_inference_quality.json"


def _won(row: dict[str, Any]) -> str:
    """``experiments/oracle_ceiling.py``'s line: its win rate with the 95% interval."""
    low, high = row["win_ci"]
    return f"{pct(row['win_rate'])} [{pct(low)}, {pct(high)}]"


def _paired_win_difference(row: dict[str, Any], base: dict[str, Any]) -> str:
    """Two ``oracle_ceiling.py`` lines on the same deals: ``row``'s win rate minus ``base``'s,
    deal by deal, in points of win rate with the 95% half-width (``+0.3 ± 4.7``)."""
    diff = [(a - b) / 2 for a, b in zip(row["per_deal_wins"], base["per_deal_wins"], strict=True)]
    half = 1.96 * statistics.stdev(diff) / len(diff) ** 0.5
    return f"{100 * statistics.fmean(diff):+.1f} ± {100 * half:.1f}"


def oracle_ceiling() -> str:
    """The research log: players that see the other hand (and the deck) against
    ``pimc:64:infer``, beside the fair players on the same seeds (``docs/oracle_ceiling.json``,
    the fair lines from ``docs/hand_inference_rate.json``)."""
    oracle = load(ORACLE_CEILING)["lines"]
    fair = load(HAND_INFERENCE_RATE)["lines"]
    sees = {
        "bastra_2p:infer": "its own hand and the table; worlds inferred from the deal's plays",
        "oracle-hand:bastra_2p:infer": "the same, its worlds holding the other hand's true cards",
        "oracle-hand:pimc:64": "`pimc:64:infer` with the other hand's true cards in its worlds",
        "oracle-all:pimc": "PIMC on the one true world: the other hand and the deck's order",
        "placebo-hand:pimc:64": "the control: the oracles' code with the other hand dealt at "
        "random from the unseen cards",
    }
    rows = []
    for name, what in sees.items():
        row = fair[name] if name in fair else oracle[name]
        rows.append([f"`{name}`", what, f"{row['games']:,}", _won(row),
                     f"{row['points']:+.2f} ± {row['points_half_width']:.2f}"])  # fmt: skip
    header = ["player", "what it knows", "games", "won against `pimc:64:infer` [95% CI]",
              "points a game"]  # fmt: skip
    return block(table(header, rows))


def oracle_heuristic() -> str:
    """The research log: no inference, the heuristic's likelihood (exact against the
    heuristic) and the true hand, against the heuristic (``docs/oracle_ceiling_heuristic.json``)."""
    lines = load(ORACLE_HEURISTIC)["lines"]
    sees = {
        "placebo-hand:pimc:64": "a random hand in its worlds: no inference",
        "pimc:64:infer": "worlds weighed by the heuristic's likelihood, the model of this opponent",
        "oracle-hand:pimc:64": "the other hand's true cards in its worlds",
    }
    rows = [[f"`{name}`", what, f"{lines[name]['games']:,}", _won(lines[name]),
             f"{lines[name]['points']:+.2f} ± {lines[name]['points_half_width']:.2f}"]
            for name, what in sees.items()]  # fmt: skip
    header = ["player", "its worlds", "games", "won against `heuristic` [95% CI]",
              "points a game"]  # fmt: skip
    return block(table(header, rows))


def hand_inference() -> str:
    """The research log: how much of the other hand each inference's worlds hold, and the
    shipped player's search on the network's inference in full games
    (``docs/hand_inference_quality.json``, ``docs/hand_inference_rate.json``)."""
    quality = load(HAND_INFERENCE_QUALITY)
    rate = load(HAND_INFERENCE_RATE)["lines"]
    names = [("shipped inference worlds", "the heuristic player's likelihood (shipped)"),
             *[(k, "the packaged 2p network's likelihood, its softmax at T = "
                + k.rsplit("=", 1)[1]) for k in quality if k.startswith("network inference")],
             ("model probability", "a network predicting the hand: its probabilities"),
             ("model worlds", "a network predicting the hand: worlds drawn from them"),
             ("the true hand", "the oracle's worlds (the true hand)")]  # fmt: skip
    players = ["heuristic", "pimc:64:infer", "bastra_2p:network", "bastra_2p",
               "bastra_2p:infer"]  # fmt: skip
    by = quality["by_player"]
    rows = []
    for key, what in names:
        row = quality[key]
        diff = ("" if key in ("shipped inference worlds", "the true hand") else
                f"{row['minus_shipped']:+.3f} ± {row['minus_shipped_half_width']:.3f}")
        rows.append([what, f"{row['all']:.2f}", diff,
                     *[f"{by[p][key]:.2f}" for p in players]])  # fmt: skip
    header = [f"inference ({quality['positions']:,} held-out positions)", "all positions",
              "against the shipped inference",
              *[f"`{p}` after its first play ({by[p]['positions']})" for p in players]]  # fmt: skip
    base = rate["bastra_2p:infer"]
    games = []
    for name, row in rate.items():
        paired = "" if name == "bastra_2p:infer" else _paired_win_difference(row, base)
        games.append([f"`{name}`", f"{row['games']:,}", _won(row),
                      f"{row['points']:+.2f} ± {row['points_half_width']:.2f}", paired])
    return block(table(header, rows) + "\n\n" + table(
        ["player", "games", "won against `pimc:64:infer` [95% CI]", "points a game",
         "win rate minus `bastra_2p:infer`'s, same deals"], games))


SEARCH_STREAM = "docs/search_stream.json"
STREAM_FULL_GAMES = "docs/search_stream_games.json"


def search_stream() -> str:
    """The research log: the shipped player's PIMC on the uniform stream and on the yardsticks'
    stream against ``pimc:64:infer``, single rounds on the same deals, variance-reduced, and the
    difference deal by deal (``docs/search_stream.json``), with the full games of the same
    comparison (``docs/search_stream_games.json``, ``docs/hand_inference_rate.json``)."""
    study = load(SEARCH_STREAM)
    rows = [[f"`{row['player']}`", f"{row['games']:,} rounds",
             f"{row['point_diff']:+.2f} ± {row['point_diff_ci']:.2f}",
             f"{row['raw_point_diff']:+.2f} ± {row['raw_point_diff_ci']:.2f}", ""]
            for row in study["lines"]]  # fmt: skip
    reduced, plain = study["difference_deal_values"], study["difference_raw_deal_values"]
    rows.append(["the difference, deal by deal", "", f"{reduced[0]:+.2f} ± {reduced[1]:.2f}",
                 f"{plain[0]:+.2f} ± {plain[1]:.2f}", ""])  # fmt: skip
    games = load(STREAM_FULL_GAMES)["lines"]["uniform-stream:bastra_2p:infer"]
    base = load(HAND_INFERENCE_RATE)["lines"]["bastra_2p:infer"]
    rows += [
        ["`uniform-stream:bastra_2p:infer`", f"{games['games']:,} full games", "",
         f"{games['points']:+.2f} ± {games['points_half_width']:.2f}", _won(games)],
        ["`bastra_2p:infer`", f"{base['games']:,} full games", "",
         f"{base['points']:+.2f} ± {base['points_half_width']:.2f}", _won(base)],
        ["the difference, deal by deal", "", "", "",
         f"{_paired_win_difference(games, base)} points of win rate"],
    ]  # fmt: skip
    header = ["player, against `pimc:64:infer`", "games", "points, reduced", "points, plain",
              "won [95% CI]"]  # fmt: skip
    return block(table(header, rows))


BLOCKS: dict[str, Callable[[], str]] = {
    "dmc_vs_ppo": dmc_vs_ppo,
    "dmc_head_to_head": dmc_head_to_head,
    "league_vs_ppo": league_vs_ppo,
    "league_head_to_head": league_head_to_head,
    "league_probes": league_probes,
    "teacher_table": teacher_table,
    "scaling_2p": scaling_2p,
    "scaling_4p_teams": scaling_4p_teams,
    "scaling_2p_control": scaling_2p_control,
    "candidate_2p": candidate_2p,
    "candidate_4p_teams": candidate_4p_teams,
    "distill_2p": distill_2p,
    "distill_2p_training": distill_2p_training,
    "teacher_noise": teacher_noise,
    "exploitability_2p": exploitability_2p,
    "quick_run_time": quick_run_time,
    "quick_run_rates": quick_run_rates,
    "head_to_head": head_to_head,
    "packaged_models": packaged_models,
    "inference_lines": inference_lines,
    "variance_reduced": variance_reduced,
    "reduced_narrower": reduced_narrower,
    "variance_reduction": variance_reduction,
    "vr_endgame_gain": vr_endgame_gain,
    "vr_teams_endgame": vr_teams_endgame,
    "vr_stages": vr_stages,
    "teacher_noise_worlds": teacher_noise_worlds,
    "distill_256": distill_256,
    "oracle_ceiling": oracle_ceiling,
    "oracle_heuristic": oracle_heuristic,
    "hand_inference": hand_inference,
    "search_stream": search_stream,
    "vr_range_baselines": vr_range_baselines,
    "vr_range_network": vr_range_network,
    "vr_range_strong": vr_range_strong,
    "vr_stream": vr_stream,
    "vr_stream_floor": vr_stream_floor,
    "vr_stream_share": vr_stream_share,
    "distill_losses": distill_losses,
    "distill_curve": distill_curve,
    "ratings_2p": ratings_2p,
    "ratings_2p_words": ratings_2p_words,
    "rated_network": rated_network,
    "ladder_runs": ladder_runs,
    "ladder_gain": ladder_gain,
    **QUOTED,
    "endgame_gain": endgame_gain,
    "ppo_search_gain": ppo_search_gain,
    "ppo_network_words": ppo_network_words,
    "ppo_stage": ppo_stage,
    "vs_search": vs_search,
    "curves_heuristic": curves_heuristic,
    "vector_speed": vector_speed,
    "vector_speed_full": vector_speed_full,
    "vector_speed_words": vector_speed_words,
    "vector_speed_date": vector_speed_date,
    "train_speed": train_speed_rows,
    "train_speed_words": train_speed_words,
    "busy_machine": busy_machine,
    "busy_machine_words": busy_machine_words,
}
"""Every quoted block by name: what renders it from its measurement file."""


# --------------------------------------------------------------------------- the pages
def render(text: str, where: str = "") -> str:
    """``text`` with every block rewritten from its file; an unknown name raises ``KeyError``."""

    def rewrite(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in BLOCKS:
            raise KeyError(f"{where}: no figures block named {name!r} (docs/figures.py BLOCKS)")
        return f"<!-- figures:{name} -->{BLOCKS[name]()}<!-- /figures:{name} -->"

    return MARK.sub(rewrite, text)


def stale(pages: list[Path] = PAGES) -> list[str]:
    """The pages (and their blocks) whose text differs from what their files render."""
    found = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        current = {m["name"]: m["body"] for m in MARK.finditer(text)}
        rendered = {m["name"]: m["body"] for m in MARK.finditer(render(text, page.name))}
        found += [
            f"{page.name if ROOT not in page.parents else page.relative_to(ROOT)}: {name}"
            for name in current
            if current[name] != rendered[name]
        ]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="list the blocks that differ from their files; exit 1 if any",
    )
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        for line in found:
            print(f"stale: {line}")
        return 1 if found else 0
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        new = render(text, page.name)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
