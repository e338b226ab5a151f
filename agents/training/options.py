"""Command lines that suggest: an argparse error names the closest option or choice. Standard
library only, so the ``bastra`` command (``agents.cli``) can use it without loading torch."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from typing import NoReturn


def close_match(word: str, candidates: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1)
    return found[0] if found else None


def option_hint(parser: argparse.ArgumentParser, message: str) -> str:
    """``"; did you mean --x?"`` for an argparse error about an unknown option or a wrong choice,
    naming the closest known one; ``""`` when there is none (or the message already has one)."""
    if "did you mean" in message:
        return ""
    if message.startswith("unrecognized arguments: "):
        known = [o for o in parser._option_string_actions if o.startswith("--")]
        guesses = []
        for token in message.split(": ", 1)[1].split():
            if token.startswith("--"):
                guess = close_match(token.split("=", 1)[0], known)
                if guess and guess not in guesses:
                    guesses.append(guess)
        return f"; did you mean {' or '.join(guesses)}?" if guesses else ""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        guess = close_match(choice[1], re.findall(r"'([^']*)'", choice[2]))
        return f"; did you mean {guess!r}?" if guess else ""
    return ""


class SuggestingParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors add the closest option or choice to argparse's message."""

    def error(self, message: str) -> NoReturn:
        super().error(message + option_hint(self, message))
