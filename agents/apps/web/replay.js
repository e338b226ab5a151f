/* The replay view: step through a game record with every hand face up. */
import { api, server } from "./api.js";
import { TABLE_LABELS, bastraBadge, cardBack, cardFace, chip, chips, leftoverNote, positions,
  roundTable, seatPlate } from "./cards.js";
import { $, clear, fillSelect, h, hideMessage, showError, showMessage } from "./dom.js";

const replay = { record: null, positions: [], pos: 0, timer: null, source: "", listed: false };
const BASE_DELAY = 900; // ms per position at 1x

function checkRecord(record) {
  if (!record || typeof record !== "object" || record.format !== "bastra-record") {
    throw new Error('not a Bastra game record (no "bastra-record" format tag)');
  }
  if (record.version !== 1) {
    throw new Error(`record version ${record.version}: this page reads version 1`);
  }
  if (!Array.isArray(record.steps) || !Array.isArray(record.players) || !record.rules) {
    throw new Error("the record has no steps, players or rules");
  }
}

export function loadRecord(record, source) {
  checkRecord(record);
  document.body.dataset.record = "1"; // narrow screens: the table first, the picker below
  replayStop();
  replay.record = record;
  replay.source = source;
  const afterMove = new Map((record.round_results || []).map((r) => [r.after_move, r]));
  replay.positions = [];
  record.steps.forEach((step, index) => {
    replay.positions.push({ kind: "step", index });
    if (afterMove.has(index)) {
      replay.positions.push({ kind: "result", index, result: afterMove.get(index) });
    }
  });
  replay.pos = 0;
  const scrub = $("#rp-scrub");
  scrub.max = Math.max(0, replay.positions.length - 1);
  scrub.value = 0;
  renderReplayInfo();
  renderReplay();
}

function recordSideLabel(record, side) {
  const members = record.players.filter((p) => p.side === side).map((p) => p.name);
  if (record.rules.teams) return `Team ${side === 0 ? "A" : "B"} (${members.join(" + ")})`;
  return members.join(" + ") || `side ${side}`;
}

function recordSeatLabel(record, seat) {
  const player = record.players[seat];
  return `${player.name} \u00b7 seat ${seat}`;
}

function renderReplayInfo() {
  const record = replay.record;
  const info = $("#replay-info");
  if (!record) return;
  const rules = record.rules;
  const final = record.final || {};
  const sides = (final.scores || []).map((_, side) => recordSideLabel(record, side));
  let outcome = "unfinished";
  if (final.done) {
    outcome = final.winner === null || final.winner === undefined ? "a draw"
      : `${sides[final.winner]} won`;
  }
  clear(info,
    h("h3", {}, replay.source),
    h("dl", { class: "facts" },
      h("dt", {}, "Table"), h("dd", {}, TABLE_LABELS[record.table] || record.table ||
        `${rules.num_players} players`),
      h("dt", {}, "Players"), h("dd", {}, record.players.map((p) => p.name).join(", ")),
      h("dt", {}, "Rules"), h("dd", {}, `to ${rules.target_score}` +
        (rules.max_rounds ? `, ${rules.max_rounds} round${rules.max_rounds > 1 ? "s" : ""} max`
          : "") + `, captures: ${rules.capture}`),
      h("dt", {}, "Moves"), h("dd", {}, record.steps.length),
      h("dt", {}, "Result"), h("dd", { "data-testid": "replay-outcome" },
        `${outcome}${final.scores ? ` (${final.scores.join(" \u2013 ")})` : ""}`)));
}

function bottomSeat(record) {
  const human = record.players.find((p) => p.name === "human");
  return human ? human.seat : 0;
}

function renderReplay() {
  const felt = $("#replay-felt");
  const record = replay.record;
  const counter = $("#rp-counter");
  const controls = $("#replay-controls");
  controls.classList.toggle("disabled", !record);
  if (!record) return;
  const total = record.steps.length;
  if (!replay.positions.length) {
    clear(felt, h("div", { class: "felt-empty" }, h("p", {}, "This record has no moves.")));
    counter.textContent = "0 / 0";
    return;
  }
  const position = replay.positions[replay.pos];
  const step = record.steps[position.index];
  const n = record.players.length;
  const before = step.before;
  const where = positions(n, bottomSeat(record));
  const isResult = position.kind === "result";
  const round = (record.rounds || []).find((r) => r.round === step.round);
  felt.dataset.pos = replay.pos;
  felt.dataset.kind = position.kind;
  felt.dataset.move = position.index;
  $("#rp-scrub").value = replay.pos;
  counter.textContent = isResult
    ? `Round ${step.round} over \u00b7 ${position.index + 1} / ${total}`
    : `Move ${position.index + 1} / ${total}`;
  counter.dataset.move = position.index + 1;

  const grid = h("div", { class: `felt-grid n${n} replay` });
  for (let s = 0; s < n; s += 1) {
    const player = record.players[s];
    let cards = before.hands[s] || [];
    if (isResult && s === step.seat) cards = cards.filter((c) => c !== step.card);
    const hand = h("div", { class: "hand open", "data-testid": "replay-hand", "data-seat": s });
    const size = where[s] === "left" || where[s] === "right" ? "small" : "";
    for (const card of cards) {
      const playing = !isResult && s === step.seat && card === step.card;
      hand.append(cardFace(card, { size, testid: "replay-card",
        classes: playing ? ["playing"] : [] }));
    }
    if (!cards.length) hand.append(h("span", { class: "hand-empty" }, "no cards"));
    grid.append(h("div", {
      class: `seat pos-${where[s]} ${!isResult && s === step.seat ? "to-move" : ""}`,
      "data-testid": "replay-seat", "data-seat": s,
    },
    seatPlate(recordSeatLabel(record, s), {
      dealer: round && round.dealer === s,
      captured: isResult ? null : before.captured[s],
      team: record.rules.teams ? (player.side === 0 ? "a" : "b") : null,
      teamLabel: player.side === 0 ? "team A" : "team B",
    }),
    hand));
  }

  const sideLabels = (record.final && record.final.scores ? record.final.scores : before.scores)
    .map((_, side) => recordSideLabel(record, side));
  let middle;
  if (isResult) {
    middle = h("div", { class: "result-card", "data-testid": "replay-round-result" },
      h("h3", {}, `Round ${position.result.round} result`),
      roundTable(position.result, sideLabels), leftoverNote(position.result, sideLabels),
      replay.pos === replay.positions.length - 1 && record.final && record.final.done
        ? h("p", { class: "modal-winner", "data-testid": "replay-winner" },
          record.final.winner === null ? "The game is a draw"
            : `${sideLabels[record.final.winner]} won the game`) : null);
  } else {
    const board = h("div", { class: "board", "data-testid": "replay-board" });
    for (const card of before.board) {
      board.append(cardFace(card, { testid: "replay-board-card",
        classes: step.takes.includes(card) ? ["taken"] : [] }));
    }
    if (!before.board.length) board.append(h("span", { class: "board-empty" }, "empty board"));
    const deck = h("div", { class: "deck", title: "cards left in the deck" },
      before.deck_left ? cardBack("small") : h("div", { class: "card small slot" }),
      h("span", { class: "deck-count" }, `${before.deck_left} left`));
    middle = h("div", { class: "centre-mid" }, n === 2 ? deck : null, board);
    if (n !== 2) grid.append(h("div", { class: "pos-deck" }, deck));
  }
  const caption = stepCaption(record, step, position);
  const copy = caption.cloneNode(true);
  copy.removeAttribute("data-testid");
  grid.append(h("div", { class: "centre-area" },
    h("div", { class: "centre-top" }, h("span", { class: "round-tag" }, `Round ${step.round}`),
      h("div", { class: "felt-last" }, copy)),
    middle));
  clear(felt, grid);

  clear($("#replay-step"), caption);
  renderPolicy(record, step, position);
  const scores = isResult ? position.result.scores : before.scores;
  clear($("#replay-scores"), scores.map((score, side) => h("div", {
    class: "side-score", "data-testid": "replay-side-score", "data-side": side,
  }, h("span", { class: "side-name" }, sideLabels[side]),
  h("span", { class: "score-value" }, score))));
  $("#rp-play").textContent = replay.timer ? "Pause" : "Play";
  $("#rp-play").dataset.playing = replay.timer ? "1" : "0";
}

function stepCaption(record, step, position) {
  if (position.kind === "result") {
    return h("div", { class: "play-line" }, `Round ${step.round} is over: the breakdown.`);
  }
  return h("div", { class: "play-line", "data-testid": "replay-caption" },
    h("b", {}, recordSeatLabel(record, step.seat)), " plays ", chip(step.card),
    step.takes.length ? [" and takes ", chips(step.takes)] : " onto the board",
    " ", bastraBadge(step.bastra));
}

function renderPolicy(record, step, position) {
  const box = $("#replay-policy");
  if (position.kind !== "step") {
    clear(box);
    return;
  }
  const name = record.players[step.seat].name;
  if (!step.policy) {
    clear(box, h("p", { class: "muted small", "data-testid": "no-policy" },
      `${name} has no network to show for this move.`));
    return;
  }
  const value = Number(step.policy.value);
  const chart = h("div", { class: "policy", "data-testid": "policy" },
    h("div", { class: "policy-head" }, h("span", {}, `${name} thought`),
      h("span", { class: `value ${value >= 0 ? "pos" : "neg"}`, "data-testid": "policy-value",
        title: "the value head's estimate for the seat to move, in the reward's units" },
      `value ${value >= 0 ? "+" : ""}${value.toFixed(2)}`)));
  for (const option of step.policy.top || []) {
    const chosen = option.action === step.action;
    const pct = Math.max(0, Math.min(1, Number(option.prob))) * 100;
    chart.append(h("div", {
      class: `policy-bar ${chosen ? "chosen" : ""}`, "data-testid": "policy-bar",
      "data-action": option.action, "data-prob": option.prob,
    },
    h("span", { class: "policy-label" }, chip(option.card),
      option.takes.length ? [" takes ", chips(option.takes)] : " onto the board",
      chosen ? h("span", { class: "played", title: "the move played" }, " \u2713") : null),
    h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: `width:${pct}%` })),
    h("span", { class: "policy-prob" }, `${pct.toFixed(pct < 10 ? 1 : 0)}%`)));
  }
  clear(box, chart);
}

function replayGo(pos) {
  if (!replay.record || !replay.positions.length) return;
  replay.pos = Math.max(0, Math.min(replay.positions.length - 1, pos));
  if (replay.pos === replay.positions.length - 1) replayStop();
  renderReplay();
}

function replayDelay() {
  return BASE_DELAY / Number($("#rp-speed").value || 1);
}

export function replayStop() {
  if (replay.timer) clearInterval(replay.timer);
  replay.timer = null;
  if (replay.record) {
    $("#rp-play").textContent = "Play";
    $("#rp-play").dataset.playing = "0";
  }
}

function replayStart() {
  if (!replay.record || !replay.positions.length) return;
  replayStop();
  if (replay.pos >= replay.positions.length - 1) replay.pos = 0;
  replay.timer = setInterval(() => replayGo(replay.pos + 1), replayDelay());
  renderReplay();
}

function replayToggle() {
  if (replay.timer) {
    replayStop();
    renderReplay();
  } else replayStart();
}

$("#rp-start").addEventListener("click", () => replayGo(0));
$("#rp-back").addEventListener("click", () => replayGo(replay.pos - 1));
$("#rp-forward").addEventListener("click", () => replayGo(replay.pos + 1));
$("#rp-end").addEventListener("click", () => replayGo(replay.positions.length - 1));
$("#rp-play").addEventListener("click", replayToggle);
$("#rp-scrub").addEventListener("input", (event) => replayGo(Number(event.target.value)));
$("#rp-speed").addEventListener("change", () => {
  if (replay.timer) replayStart();
});


document.addEventListener("keydown", (event) => {
  if (document.body.dataset.view !== "replay" || !replay.record) return;
  const target = event.target;
  if (target.closest && target.closest("input, select, textarea")) return;
  const keys = {
    ArrowRight: () => replayGo(replay.pos + 1),
    ArrowLeft: () => replayGo(replay.pos - 1),
    Home: () => replayGo(0),
    End: () => replayGo(replay.positions.length - 1),
    " ": replayToggle,
  };
  if (keys[event.key] && !(event.key === " " && target.closest && target.closest("button"))) {
    event.preventDefault();
    keys[event.key]();
  }
});

export async function loadReplayList() {
  if (replay.listed) return;
  replay.listed = true;
  const select = $("#replay-select");
  const note = $("#replay-server-note");
  const noServer = () => {
    select.disabled = true;
    $("#replay-open").disabled = true;
    clear(select, h("option", {}, "none"));
    note.textContent = "This server offers no replays (start it with --replays DIR). " +
      "You can still open a local record file.";
  };
  if (!server.options.replays) {
    noServer();
    return;
  }
  try {
    const data = await api("/api/replays");
    const names = data.replays || [];
    if (!names.length) {
      noServer();
      note.textContent = "The server's replay folder holds no records yet.";
      return;
    }
    select.disabled = false;
    $("#replay-open").disabled = false;
    fillSelect(select, names, {}, names[0]);
    note.textContent = `${names.length} record${names.length > 1 ? "s" : ""} on the server.`;
  } catch (error) {
    if (error.status === 404) noServer();
    else {
      replay.listed = false;
      showError(error);
    }
  }
}

$("#replay-open").addEventListener("click", async () => {
  const name = $("#replay-select").value;
  if (!name) return;
  hideMessage();
  try {
    loadRecord(await api(`/api/replays/${encodeURIComponent(name)}`), name);
  } catch (error) {
    showError(error);
  }
});

$("#replay-file").addEventListener("change", (event) => {
  const file = event.target.files && event.target.files[0];
  if (!file) return;
  hideMessage();
  const reader = new FileReader();
  reader.onload = () => {
    try {
      loadRecord(JSON.parse(String(reader.result)), file.name);
    } catch (error) {
      showMessage(`${file.name}: ${error.message}`);
    }
  };
  reader.onerror = () => showMessage(`${file.name}: the file can't be read`);
  reader.readAsText(file);
});
