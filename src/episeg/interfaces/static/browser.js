// episeg memory browser: plain DOM, no framework, no build step.
// Every value from the server goes through textContent (never innerHTML).
"use strict";
const KEY = "episeg.key";
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "class") node.className = value;
    else if (name === "style") node.style.cssText = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: { Authorization: "Bearer " + sessionStorage.getItem(KEY) } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    throw new Error(response.status + ": " + detail);
  }
  return data;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

const when = (ts) => {
  const date = new Date(ts * 1000);  // an imported time far off the calendar: shown as it is
  return Number.isNaN(date.getTime()) ? `${ts}s` : date.toISOString().replace("T", " ").slice(0, 19);
};
const salienceScore = (ep) => (ep.salience && ep.salience.score !== null ? ep.salience.score : null);
const hue = (score) => (score === null ? "0, 0%, 60%" : `${(10 - score) * 12}, 70%, 45%`);

function episodeCard(ep) {
  const score = salienceScore(ep);
  const card = el("article", { class: "card" + (ep.archived ? " archived" : "") + (ep.pinned ? " pinned" : ""),
                               "data-id": ep.id, "data-pinned": String(Boolean(ep.pinned)),
                               style: `border-left-color: hsl(${hue(score)})` });
  const forget = el("button", { class: "forget", type: "button" }, "Forget");
  forget.addEventListener("click", () => forgetEpisode(ep));
  const pin = el("button", { class: "pin", type: "button", "aria-pressed": String(Boolean(ep.pinned)),
                             title: "a pinned episode is never decayed or archived" },
                 ep.pinned ? "Unpin" : "Pin");
  pin.addEventListener("click", () => pinEpisode(ep, !ep.pinned));
  const byUser = ep.salience && ep.salience.by_user;
  card.append(
    el("div", { class: "meta" },
      ep.pinned ? el("span", { class: "pinned-flag" }, "pinned") : null,
      el("span", { class: "sal", title: ep.salience ? ep.salience.reason : "no scorer" },
         score === null ? "unscored" : `salience ${score}/10${byUser ? " (set by you)" : ""}`),
      el("span", {}, `${when(ep.opened_at)} → ${when(ep.closed_at)}`),
      el("span", {}, `${ep.turn_count} turns`),
      el("span", { class: "recalls" }, `recalled ${ep.recall_count}×`),
      el("span", {}, `strength ${ep.strength.toFixed(1)} d`),
      ep.parent_id ? el("span", {}, "sub-episode") : null,
      ep.archived ? el("span", {}, "archived") : null,
      pin, forget),
    el("p", { class: "summary" }, ep.summary));
  const labels = Object.entries(ep.metadata || {});
  if (labels.length) {
    card.append(el("p", { class: "labels muted" }, labels.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join("  ")));
  }
  const reasons = ep.boundary_reasons.length ? ep.boundary_reasons : ["start of session"];
  const list = el("ul", { class: "reasons" });
  for (const reason of reasons) list.append(el("li", {}, reason));
  for (const v of ep.boundary_verdicts.filter((v) => v.signal === "combiner")) {
    list.append(el("li", { class: "muted" }, `combiner: ${v.decision} (${v.score}) ${v.reason}`));
  }
  card.append(list);
  return card;
}

function sessionTimeline(name, episodes) {
  const start = Math.min(...episodes.map((e) => e.opened_at));
  const end = Math.max(...episodes.map((e) => e.closed_at));
  const span = Math.max(end - start, 1);
  const bar = el("div", { class: "bar", "aria-hidden": "true" });
  for (const ep of episodes) {
    const left = ((ep.opened_at - start) / span) * 100;
    const width = Math.max(((ep.closed_at - ep.opened_at) / span) * 100, 0.5);
    bar.append(el("div", { class: "band", title: ep.summary,
      style: `left:${left}%;width:${width}%;background:hsl(${hue(salienceScore(ep))})` }));
  }
  const section = el("section", { class: "session", "data-session": name },
    el("h3", {}, `session ${name}`, el("span", { class: "muted" }, ` · ${episodes.length} episodes`)), bar);
  for (const ep of episodes) section.append(episodeCard(ep));
  return section;
}

const PAGE = 1000;  // the largest page the service gives

async function allEpisodes() {
  const episodes = [];
  for (let offset = 0; ; offset += PAGE) {  // every page: the newest may be past the first
    const page = await api("GET", `/v1/episodes?limit=${PAGE}&offset=${offset}&include_archived=true`);
    episodes.push(...page.episodes);
    if (page.episodes.length < PAGE) return episodes;
  }
}

async function load() {
  const episodes = await allEpisodes();
  const bySession = new Map();
  for (const ep of [...episodes].sort((a, b) => a.opened_at - b.opened_at)) {
    if (!bySession.has(ep.session)) bySession.set(ep.session, []);
    bySession.get(ep.session).push(ep);
  }
  const container = $("sessions");
  container.replaceChildren(...[...bySession].map(([name, eps]) => sessionTimeline(name, eps)));
  $("count").textContent = `${episodes.length} episodes in ${bySession.size} sessions`;
  $("tenant").textContent = episodes.length ? `tenant: ${episodes[0].user}` : "tenant: (no episodes yet)";
}

async function forgetEpisode(ep) {
  if (!window.confirm(`Forget this episode for good?\n\n${ep.summary}`)) return;
  try {
    await api("DELETE", "/v1/episode?id=" + encodeURIComponent(ep.id));
    document.querySelectorAll(`[data-id="${CSS.escape(ep.id)}"]`).forEach((n) => n.remove());
    await load();
  } catch (err) { showError(err.message); }
}

async function pinEpisode(ep, pinned) {
  try {
    await api("PATCH", "/v1/episode?id=" + encodeURIComponent(ep.id), { pinned });
    await load();
  } catch (err) { showError(err.message); }
}

function term(label, value) {
  return el("span", { class: "term" }, `${label} ${value.toFixed(3)}`,
    el("span", { class: "fill", style: `width:${Math.round(Math.max(value, 0) * 60)}px` }));
}

function matchedTurns(hit) {
  // The turns recall matched (newer services send them); none: the summary stands alone.
  if (!Array.isArray(hit.turns) || !hit.turns.length) return null;
  const list = el("ul", { class: "reasons matched" });
  for (const turn of hit.turns) list.append(el("li", {}, `${turn.actor}: ${turn.text}`));
  return list;
}

async function search(event) {
  event.preventDefault();
  try {
    const body = { query: $("query").value, k: Number($("k").value) };
    const { results } = await api("POST", "/v1/recall", body);
    const hits = $("hits");
    hits.replaceChildren(...results.map((hit) => el("li", { class: "hit", "data-id": hit.episode.id },
      el("div", { class: "terms" }, el("strong", {}, `score ${hit.score.toFixed(3)}`),
        term("recency", hit.recency), term("importance", hit.importance),
        term("similarity", hit.similarity),
        hit.reinforcement === undefined ? null : term("reinforcement", hit.reinforcement),
        el("span", { class: "muted" },
          `raw cosine ${hit.raw_similarity.toFixed(3)}${hit.importance_imputed ? ", importance imputed" : ""}`)),
      el("p", { class: "summary" }, hit.episode.summary),
      matchedTurns(hit))));
    $("results").hidden = false;
    await load();  // recall counts changed
  } catch (err) { showError(err.message); }
}

async function open() {
  showError("");
  try {
    await load();
    $("login").hidden = true;
    $("app").hidden = false;
    $("signout").hidden = false;
  } catch (err) {
    sessionStorage.removeItem(KEY);
    showError(err.message);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("key").value);
    open();
  });
  $("signout").addEventListener("click", () => { sessionStorage.removeItem(KEY); location.reload(); });
  $("search").addEventListener("submit", search);
  if (sessionStorage.getItem(KEY)) open();
});
