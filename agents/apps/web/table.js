/* The play view: a live game against the agents, the coach's hints, the round results. */
import { api, server } from "./api.js";
import { bastraBadge, cardBack, cardFace, cardLabel, cardTitle, chip, chips, leftoverNote,
  positions, roundTable, seatPlate } from "./cards.js";
import { $, clear, h, hideMessage, showError } from "./dom.js";
import { collectForm, form } from "./form.js";
import { loadRecord } from "./replay.js";

const coach = { on: false, key: "", hint: null }; // the Hint toggle and the latest hint
const game = {
  state: null,
  busy: false,
  seenResults: 0,
  log: new Map(), // move -> play, merged from every state's history
  lastMine: -1, // the move number of the human's latest play
  choosing: null, // the card whose capture options are shown
};

function sideLabel(state, side) {
  if (state.rules.teams) return side === state.side ? "You + partner" : "Opponents";
  const player = state.players.find((p) => p.side === side);
  if (!player) return `side ${side}`;
  return player.you ? "You" : player.name;
}

function sideMembers(state, side) {
  return state.players.filter((p) => p.side === side).map((p) => p.name).join(" + ");
}

function seatLabel(state, seat) {
  const player = state.players[seat];
  if (player.you) return "You";
  if (state.rules.teams) {
    const role = player.side === state.side ? "partner" : "opponent";
    return `${player.name} (${role})`;
  }
  return player.name;
}

function winnerText(state) {
  if (state.draw) return "It's a draw";
  if (state.winner === null || state.winner === undefined) return "";
  if (state.rules.teams) {
    return state.winner === state.side ? "You and your partner win!" : "The opponents win";
  }
  return state.winner === state.side ? "You win!" : `${sideLabel(state, state.winner)} wins`;
}

async function newGame() {
  if (!server.options) return;
  hideMessage();
  const body = collectForm();
  game.busy = true;
  $("#new-game").disabled = true;
  renderGame();
  try {
    const state = await api("/api/games", { method: "POST", body });
    game.log = new Map();
    game.seenResults = 0;
    game.lastMine = -1;
    game.choosing = null;
    closeModal();
    game.busy = false;
    applyState(state);
  } catch (error) {
    game.busy = false;
    showError(error);
    renderGame();
  } finally {
    $("#new-game").disabled = false;
  }
}

function applyState(state) {
  game.state = state;
  document.body.dataset.game = "1"; // narrow screens: the table first, the form below it
  for (const play of state.history || []) game.log.set(play.move, play);
  if (state.last_play) game.log.set(state.last_play.move, state.last_play);
  const results = state.round_results || [];
  if (results.length > game.seenResults) {
    game.seenResults = results.length;
    openRoundModal(state, results.length - 1);
  }
  renderGame();
  fetchHint();
}

async function fetchHint() {
  // the coach's view of the human's moves, asked for on the human's turn while Hint is on
  const state = game.state;
  if (!coach.on || !state || !state.your_turn || state.done || !state.coach) return;
  const key = `${state.game_id}:${state.move}`;
  if (coach.key === key && coach.hint) return;
  coach.key = key;
  coach.hint = null;
  try {
    const hint = await api(`/api/games/${encodeURIComponent(state.game_id)}/hint`);
    if (coach.key !== key) return; // the game moved on meanwhile
    coach.hint = hint;
    renderGame();
  } catch (error) {
    if (error.status !== 409) showError(error);
  }
}

function hintFor(state) {
  // {action: move} of the hint for this position, or null
  if (!coach.on || !coach.hint || coach.key !== `${state.game_id}:${state.move}`) return null;
  const moves = {};
  for (const move of coach.hint.moves) moves[move.action] = move;
  return moves;
}

function percent(p) {
  return `${Math.round(100 * p)}%`;
}

function hintToggle(state) {
  const box = h("input", { type: "checkbox", "data-testid": "hint-toggle", checked: coach.on });
  box.addEventListener("change", () => {
    coach.on = box.checked;
    renderGame();
    fetchHint();
  });
  return h("label", { class: "hint-toggle", title: state.coach
    ? `${state.coach}'s view of your moves, from your own cards only`
    : "no coach for this table" }, box, " Hint");
}

async function playAction(action) {
  const state = game.state;
  if (!state || game.busy || !state.your_turn) return;
  game.busy = true;
  game.choosing = null;
  game.lastMine = state.move;
  hideMessage();
  renderGame();
  try {
    const next = await api(`/api/games/${encodeURIComponent(state.game_id)}/actions`, {
      method: "POST", body: { action, move: state.move },
    });
    if (game.state.game_id !== state.game_id) return; // a new game started meanwhile
    game.busy = false;
    applyState(next);
  } catch (error) {
    if (game.state.game_id !== state.game_id) return;
    game.busy = false;
    showError(error);
    if (error.status === 409) refreshGame();
    else renderGame();
  }
}

async function refreshGame() {
  if (!game.state) return;
  try {
    applyState(await api(`/api/games/${encodeURIComponent(game.state.game_id)}`));
  } catch (error) {
    showError(error);
    renderGame();
  }
}

function clickCard(card) {
  const state = game.state;
  if (!state || game.busy || !state.your_turn) return;
  const choices = state.legal.filter((option) => option.card === card);
  if (choices.length === 0) return;
  if (choices.length === 1) {
    playAction(choices[0].action);
    return;
  }
  game.choosing = game.choosing === card ? null : card;
  renderGame();
}

function highlightBoard(root, takes) {
  for (const node of root.querySelectorAll(".board .card")) {
    node.classList.toggle("target", takes.includes(node.dataset.card));
  }
}


function facedownHand(count, size) {
  const fan = h("div", { class: "fan", "data-testid": "opponent-hand", "data-count": count });
  for (let i = 0; i < count; i += 1) fan.append(cardBack(size));
  if (count === 0) fan.append(h("span", { class: "fan-empty" }, "no cards"));
  else {
    fan.append(h("span", { class: "fan-count", "data-testid": "hand-count",
      title: `${count} card${count > 1 ? "s" : ""} in hand` }, count));
  }
  return fan;
}

function lastPlayLine(play, nameOf) {
  if (!play) return h("p", { class: "muted" }, "\u2014");
  return h("div", { class: "play-line" },
    h("b", {}, nameOf(play.seat)), " played ", chip(play.card),
    play.takes.length ? [" and took ", chips(play.takes)] : " onto the board",
    " ", bastraBadge(play.bastra));
}

function renderGame() {
  const felt = $("#felt");
  const state = game.state;
  felt.dataset.busy = game.busy ? "1" : "0";
  if (!state) return;
  const n = state.players.length;
  felt.dataset.gameId = state.game_id;
  felt.dataset.move = state.move;
  felt.dataset.yourTurn = state.your_turn ? "1" : "0";
  felt.dataset.done = state.done ? "1" : "0";
  const where = positions(n, state.seat);
  const grid = h("div", { class: `felt-grid n${n}` });

  for (let s = 0; s < n; s += 1) {
    if (s === state.seat) continue;
    const player = state.players[s];
    const team = state.rules.teams ? (player.side === state.side ? "us" : "them") : null;
    grid.append(h("div", {
      class: `seat pos-${where[s]} ${state.current === s ? "to-move" : ""}`,
      "data-testid": "seat", "data-seat": s,
    },
    seatPlate(player.name, {
      dealer: state.dealer === s, captured: state.captured[s],
      bastras: state.bastras[s] + state.jack_bastras[s],
      team, teamLabel: team === "us" ? "partner" : "opponent",
    }),
    facedownHand(state.hand_sizes[s], "small")));
  }

  // the centre: deck, board, the last play, whose turn
  const board = h("div", { class: "board", "data-testid": "board" });
  for (const card of state.board) board.append(cardFace(card, { testid: "board-card" }));
  if (!state.board.length) board.append(h("span", { class: "board-empty" }, "the board is empty"));
  const deck = h("div", { class: "deck", "data-testid": "deck", "data-count": state.deck_left,
    title: "cards left in the deck" },
  state.deck_left ? cardBack("small") : h("div", { class: "card small slot" }),
  h("span", { class: "deck-count" }, `${state.deck_left} left`));
  const nameOf = (seat) => seatLabel(state, seat);
  let note;
  if (state.done) note = "Game over";
  else if (game.busy) note = "Thinking\u2026";
  else if (state.your_turn) note = "Your turn: play a card";
  else note = `${nameOf(state.current)} to play`;
  const centre = h("div", { class: "centre-area" },
    h("div", { class: "centre-top" },
      h("span", { class: "round-tag" }, `Round ${state.round}`),
      h("div", { class: "felt-last", "data-testid": "felt-last-play" },
        state.last_play ? lastPlayLine(state.last_play, nameOf) : null)),
    h("div", { class: "centre-mid" }, n === 2 ? deck : null, board),
    h("div", { class: `turn-note ${state.your_turn && !game.busy ? "mine" : ""}`,
      "data-testid": "turn-note" }, note));
  if (state.done) centre.append(winnerBanner(state));
  grid.append(centre);
  if (n !== 2) grid.append(h("div", { class: "pos-deck" }, deck));

  // the human's seat
  const hand = h("div", { class: "hand", "data-testid": "hand" });
  const canPlay = state.your_turn && !game.busy && !state.done;
  const hint = canPlay ? hintFor(state) : null;
  let best = null;
  if (hint) {
    for (const move of Object.values(hint)) if (!best || move.prob > best.prob) best = move;
  }
  for (const card of state.hand) {
    const choices = state.legal.filter((option) => option.card === card);
    const legal = canPlay && choices.length > 0;
    const node = cardFace(card, {
      tag: "button", testid: "hand-card",
      classes: [legal ? "legal" : "dimmed", game.choosing === card ? "choosing" : ""],
      title: legal ? describeChoices(choices) : cardTitle(card),
    });
    node.disabled = !legal;
    node.dataset.options = choices.length;
    if (legal && choices.length > 1) {
      node.append(h("span", { class: "ways" }, `${choices.length} ways`));
    } else if (legal && choices[0].bastra) {
      node.append(h("span", { class: "ways bastra" }, "bastra!"));
    }
    if (hint && legal) {
      const prob = choices.reduce((sum, option) => sum + ((hint[option.action] || {}).prob || 0), 0);
      const isBest = choices.some((option) => best && option.action === best.action);
      node.classList.toggle("hint-best", isBest);
      node.append(h("span", { class: "hint-mark", "data-testid": "hint-mark",
        "data-prob": prob.toFixed(4) }, percent(prob)));
    }
    node.addEventListener("click", () => clickCard(card));
    if (legal && choices.length === 1) {
      node.addEventListener("mouseenter", () => highlightBoard(felt, choices[0].takes));
      node.addEventListener("mouseleave", () => highlightBoard(felt, []));
    }
    hand.append(node);
  }
  if (!state.hand.length) hand.append(h("span", { class: "hand-empty" }, "no cards in hand"));
  const mine = h("div", {
    class: `seat pos-bottom me ${state.current === state.seat ? "to-move" : ""}`,
    "data-testid": "seat", "data-seat": state.seat,
  },
  h("div", { class: "me-bar" },
    seatPlate("You", {
      dealer: state.dealer === state.seat, captured: state.captured[state.seat],
      bastras: state.bastras[state.seat] + state.jack_bastras[state.seat],
    }),
    state.coach ? hintToggle(state) : null),
  hand);
  if (game.choosing && canPlay) mine.append(chooser(state, game.choosing, felt));
  grid.append(mine);
  clear(felt, grid);
  renderInfo(state);
}

function describeChoices(choices) {
  return choices.map((option) => {
    const what = option.takes.length ? `takes ${option.takes.map(cardLabel).join(" ")}`
      : "goes onto the board";
    return `${cardLabel(option.card)} ${what}${option.bastra ? " (bastra!)" : ""}`;
  }).join("\n");
}

function chooser(state, card, felt) {
  const box = h("div", { class: "chooser", "data-testid": "capture-chooser", role: "dialog",
    "aria-label": `what ${cardLabel(card)} takes` },
  h("div", { class: "chooser-title" }, "Play ", chip(card), ": take which?"));
  const hint = hintFor(state);
  for (const option of state.legal.filter((o) => o.card === card)) {
    const move = hint ? hint[option.action] : null;
    const button = h("button", {
      type: "button", class: "option", "data-testid": "capture-option",
      "data-action": option.action, "data-takes": option.takes.join(" "),
    },
    option.takes.length ? ["takes ", chips(option.takes)] : "onto the board",
    option.bastra ? [" ", bastraBadge("bastra")] : null,
    move ? h("span", { class: "hint-mark", "data-testid": "hint-mark",
      "data-prob": move.prob.toFixed(4),
      title: move.search === null ? "the coach's probability" : "probability; search value" },
    percent(move.prob), move.search === null ? null : ` \u00b7 ${move.search.toFixed(1)}`) : null);
    button.addEventListener("click", () => playAction(option.action));
    button.addEventListener("mouseenter", () => highlightBoard(felt, option.takes));
    button.addEventListener("focus", () => highlightBoard(felt, option.takes));
    button.addEventListener("mouseleave", () => highlightBoard(felt, []));
    box.append(button);
  }
  box.append(h("button", { type: "button", class: "link", "data-testid": "capture-cancel",
    onclick: () => { game.choosing = null; renderGame(); } }, "cancel"));
  return box;
}

function winnerBanner(state) {
  const scores = state.scores.map((score, side) => `${sideLabel(state, side)} ${score}`);
  return h("div", { class: "banner", "data-testid": "winner",
    "data-winner": state.winner === null ? "" : state.winner, "data-draw": state.draw ? "1" : "0" },
  h("div", { class: "banner-title" }, winnerText(state)),
  h("div", { class: "banner-scores" }, scores.join("  \u00b7  ")),
  h("div", { class: "banner-actions" },
    h("button", { type: "button", class: "primary", "data-testid": "watch-replay",
      onclick: watchReplay }, "Watch the replay"),
    h("button", { type: "button", "data-testid": "play-again", onclick: newGame },
      "New game")));
}

function renderInfo(state) {
  const scores = $("#scores");
  const best = Math.max(...state.scores);
  clear(scores, state.scores.map((score, side) => h("div", {
    class: `side-score ${side === state.side ? "mine" : ""} ${score === best && best > 0 ? "leading" : ""}`,
    "data-testid": "side-score", "data-side": side, "data-score": score,
  },
  h("span", { class: "side-name" }, sideLabel(state, side),
    state.rules.teams ? h("small", {}, sideMembers(state, side)) : null),
  h("span", { class: "score-value" }, score))));
  scores.append(h("p", { class: "muted small" }, `playing to ${state.rules.target_score}`,
    state.rules.max_rounds ? `, at most ${state.rules.max_rounds} round` +
      (state.rules.max_rounds > 1 ? "s" : "") : ""));
  const facts = [
    ["Round", state.round],
    ["Dealer", seatLabel(state, state.dealer)],
    ["Deck", `${state.deck_left} cards left`],
    ["Move", state.move],
    ["To play", state.done ? "\u2014" : seatLabel(state, state.current)],
  ];
  clear($("#game-facts"), facts.map(([key, value]) => [h("dt", {}, key),
    h("dd", { "data-testid": `fact-${key.toLowerCase().replace(/ /g, "-")}` }, value)]));
  const nameOf = (seat) => seatLabel(state, seat);
  clear($("#last-play"), lastPlayLine(state.last_play, nameOf));
  const log = $("#play-log");
  const plays = [...game.log.values()].sort((a, b) => b.move - a.move).slice(0, 40);
  clear(log, plays.map((play) => h("li", {
    class: `${play.seat === state.seat ? "mine" : ""} ${play.move > game.lastMine ? "fresh" : ""}`,
    "data-testid": "play-log-entry", "data-move": play.move,
  },
  h("span", { class: "log-move", title: `round ${play.round}, move ${play.move + 1}` },
    `${play.move + 1}.`),
  h("span", { class: "log-who" }, nameOf(play.seat)), " ", chip(play.card),
  play.takes.length ? [" \u2192 ", chips(play.takes)] : null, " ", bastraBadge(play.bastra))));
  const rounds = $("#round-list");
  clear(rounds, (state.round_results || []).map((result, index) => h("button", {
    type: "button", class: "link", "data-testid": "round-result-open",
    onclick: () => openRoundModal(state, index),
  }, `Round ${result.round}: ${result.total.join(" \u2013 ")}`)));
}


const modal = $("#modal");

function openRoundModal(state, index) {
  const result = state.round_results[index];
  const labels = state.scores.map((_, side) => sideLabel(state, side));
  const last = index === state.round_results.length - 1;
  $("#modal-title").textContent = `Round ${result.round} result`;
  clear($("#modal-body"), roundTable(result, labels), leftoverNote(result, labels),
    last && state.done ? h("p", { class: "modal-winner" }, `Game over: ${winnerText(state)}`)
      : null);
  modal.dataset.round = result.round;
  modal.hidden = false;
  $("#modal-close").focus();
}

function closeModal() {
  modal.hidden = true;
}

$("#modal-close").addEventListener("click", closeModal);
modal.addEventListener("click", (event) => {
  if (event.target === modal) closeModal();
});

async function watchReplay() {
  if (!game.state) return;
  try {
    const record = await api(`/api/games/${encodeURIComponent(game.state.game_id)}/record`);
    loadRecord(record, "your last game");
    location.hash = "#replay";
  } catch (error) {
    showError(error);
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  newGame();
});

document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  if (!modal.hidden) closeModal();
  else if (game.choosing) {
    game.choosing = null;
    renderGame();
  }
});
