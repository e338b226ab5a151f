/* The leaderboard view: round-robins from --leaderboard and the policies rated on the ladders. */
import { api, server } from "./api.js";
import { TABLE_LABELS } from "./cards.js";
import { $, clear, h, showError } from "./dom.js";

let leaderboardLoaded = false;

export async function loadLeaderboard() {
  if (leaderboardLoaded) return;
  const page = $("#leaderboard");
  const none = () => clear(page, h("p", { class: "notice", "data-testid": "leaderboard-none" },
    "No leaderboard loaded: start the server with --leaderboard FILE"));
  if (!server.options.leaderboard) {
    none();
    leaderboardLoaded = true;
    return;
  }
  try {
    const data = await api("/api/leaderboard");
    leaderboardLoaded = true;
    clear(page, (data.leaderboards || []).map(renderBoard));
  } catch (error) {
    if (error.status === 404) {
      none();
      leaderboardLoaded = true;
    } else {
      clear(page, h("p", { class: "notice" }, "The leaderboard could not be loaded."));
      showError(error);
    }
  }
}

const pct = (x) => `${(100 * x).toFixed(0)}%`;

function renderRated(board) {
  const rows = board.rows || [];
  const best = rows.length ? rows[0].rating : 0;
  const worst = rows.length ? rows[rows.length - 1].rating : 0;
  const span = best - worst || 1;
  const body = h("tbody", {}, rows.map((row, index) => h("tr", { "data-testid": "rated-row",
    "data-player": row.player, "data-rating": row.rating, class: row.member ? "muted" : "" },
  h("td", { class: "rank" }, index + 1),
  h("th", { scope: "row" }, row.player),
  h("td", { class: "rating" }, h("span", { class: "rating-bar",
    style: `width:${15 + 85 * (row.rating - worst) / span}%` }),
  h("span", { class: "rating-num" }, row.rating.toFixed(0))),
  h("td", {}, row.member ? "frozen"
    : `${row.low.toFixed(0)} \u2013 ${row.high.toFixed(0)}`),
  h("td", {}, row.member ? "ladder" : row.games))));
  return h("section", { class: "panel board-card", "data-testid": "rated-board",
    "data-name": board.name },
  h("h2", {}, board.name),
  h("p", { class: "muted" }, `${TABLE_LABELS[board.table] || board.table}, ladder ` +
    `${board.ladder}: whole games, variance-reduced duplicate deals (bastra rate)`),
  h("table", { class: "ratings", "data-testid": "rated" },
    h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Player"), h("th", {}, "Elo"),
      h("th", {}, "95% interval"), h("th", {}, "Games"))), body),
  h("p", { class: "muted small" },
    "Ladder members keep the ratings they were fitted with; each rated policy is fitted " +
    "against them, so ratings made on different days compare."));
}

function renderBoard(board) {
  if (board.kind === "rated") return renderRated(board);
  const results = board.results || [];
  const ratings = board.ratings || {};
  const intervals = board.rating_intervals || null;
  const names = [...new Set([...Object.keys(ratings), ...results.flatMap((r) => [r.a, r.b])])];
  names.sort((x, y) => (ratings[y] ?? -Infinity) - (ratings[x] ?? -Infinity));
  const tally = Object.fromEntries(names.map((n) => [n, { w: 0, d: 0, l: 0, games: 0 }]));
  for (const r of results) {
    tally[r.a].w += r.wins; tally[r.a].d += r.draws; tally[r.a].l += r.losses;
    tally[r.b].w += r.losses; tally[r.b].d += r.draws; tally[r.b].l += r.wins;
    tally[r.a].games += r.games; tally[r.b].games += r.games;
  }
  const first = results[0];
  const about = first ? `${TABLE_LABELS[first.table] || first.table}, ` +
    `${first.mode === "round" ? "single rounds" : "whole games"}, ${first.games} per pairing`
    : "no matches";

  const ratingTable = h("table", { class: "ratings", "data-testid": "ratings" },
    h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Player"), h("th", {}, "Rating"),
      intervals ? h("th", {}, "95% interval") : null, h("th", {}, "W \u2013 D \u2013 L"),
      h("th", {}, "Games"))));
  const best = names.length ? ratings[names[0]] : 0;
  const worst = names.length ? ratings[names[names.length - 1]] : 0;
  const body = h("tbody");
  names.forEach((name, index) => {
    const rating = ratings[name];
    const t = tally[name];
    const span = best - worst || 1;
    const width = rating === undefined ? 0 : 15 + 85 * (rating - worst) / span;
    const interval = intervals && intervals[name];
    body.append(h("tr", { "data-testid": "rating-row", "data-player": name,
      "data-rating": rating },
    h("td", { class: "rank" }, index + 1),
    h("th", { scope: "row" }, name),
    h("td", { class: "rating" }, h("span", { class: "rating-bar", style: `width:${width}%` }),
      h("span", { class: "rating-num" }, rating === undefined ? "\u2014" : rating.toFixed(0))),
    intervals ? h("td", { class: "muted" }, interval
      ? `${Number(interval[0]).toFixed(0)} \u2013 ${Number(interval[1]).toFixed(0)}` : "\u2014")
      : null,
    h("td", {}, `${t.w} \u2013 ${t.d} \u2013 ${t.l}`),
    h("td", {}, t.games)));
  });
  ratingTable.append(body);

  const cell = (row, col) => {
    if (row === col) return h("td", { class: "diag" }, "\u2014");
    let r = results.find((x) => x.a === row && x.b === col);
    let flip = false;
    if (!r) {
      r = results.find((x) => x.a === col && x.b === row);
      flip = true;
    }
    if (!r) return h("td", { class: "muted" }, "");
    const rate = flip ? 1 - r.win_rate : r.win_rate;
    const low = flip ? 1 - r.ci_high : r.ci_low;
    const high = flip ? 1 - r.ci_low : r.ci_high;
    const wins = flip ? r.losses : r.wins;
    const losses = flip ? r.wins : r.losses;
    const diff = flip ? -r.point_diff : r.point_diff;
    const title = `${row} vs ${col}: ${(100 * rate).toFixed(1)}% ` +
      `(95% CI ${(100 * low).toFixed(1)}\u2013${(100 * high).toFixed(1)}%), ` +
      `${r.games} games: ${wins}W ${r.draws}D ${losses}L, ` +
      `mean point difference ${diff >= 0 ? "+" : ""}${Number(diff).toFixed(2)}`;
    return h("td", { class: "h2h-cell", "data-testid": "h2h-cell", "data-row": row,
      "data-col": col, "data-rate": rate, title,
      style: `background:hsl(${Math.round(rate * 120)},55%,${80 - 10 * Math.abs(rate - 0.5)}%)` },
    pct(rate), h("small", {}, `${pct(low)}\u2013${pct(high)}`));
  };
  const matrix = h("table", { class: "h2h", "data-testid": "h2h" },
    h("thead", {}, h("tr", {}, h("th", { class: "corner-cell" }, "row vs column"),
      names.map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, names.map((row) => h("tr", { "data-player": row },
      h("th", { scope: "row" }, row), names.map((col) => cell(row, col))))));

  return h("section", { class: "panel board-card", "data-testid": "leaderboard-board",
    "data-name": board.name },
  h("h2", {}, board.name), h("p", { class: "muted" }, about),
  h("div", { class: "board-columns" },
    h("div", {}, h("h3", {}, "Ratings"), ratingTable,
      h("p", { class: "muted small" },
        "Bradley\u2013Terry ratings on an Elo-like scale (mean 1500).")),
    h("div", { class: "h2h-wrap" }, h("h3", {}, "Head to head"), matrix,
      h("p", { class: "muted small" },
        "The row player's win rate against the column player (draws count half); " +
        "hover a cell for its 95% interval and record."))));
}
