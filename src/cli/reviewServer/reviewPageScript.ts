// The review page's own style and script, added to the report page by ReviewServer.ts:
// approve/reject buttons on each output of a reviewed job (keys `a` and `r` on a focused
// tile), bulk actions on the outputs the report's filters show, and the count left. A
// recorded file the folder or store does not hold is shown as missing (it cannot be
// approved unseen; it can be rejected). Built with textContent/setAttribute only, as the
// report is; it talks only to its own server (the page's path holds the access token).

export const REVIEW_CSS = `
#review-bar { position: sticky; top: 42px; z-index: 2; background: var(--card); border-bottom: 1px solid var(--line); padding: 6px 20px; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
#review-bar b { font-size: 15px; }
#review-bar button, .review button { font: inherit; cursor: pointer; }
.review { display: flex; gap: 4px; margin-top: 4px; align-items: center; }
.review .badge { margin-left: auto; font-size: 12px; font-weight: 600; }
.tile[data-review="approved"] { border-color: var(--ok); box-shadow: inset 0 0 0 2px var(--ok); }
.tile[data-review="rejected"] { border-color: var(--bad); box-shadow: inset 0 0 0 2px var(--bad); opacity: 0.7; }
.tile[data-review="awaiting"] .badge { color: var(--wait); }
.tile[data-review="approved"] .badge { color: var(--ok); }
.tile[data-review="rejected"] .badge { color: var(--bad); }
.placeholder.missing { color: var(--bad); }
#review-missing { color: var(--bad); }
`;

export const REVIEW_JS = `
(function () {
  "use strict";
  var report = JSON.parse(document.getElementById("report-data").textContent);
  var rd = null;
  var state = new Map();
  var missingKeys = new Set();
  var missingPaths = new Set();
  var base = location.pathname.replace(/[^/]*$/, "");
  function load(p) {
    rd = p;
    state = new Map();
    missingKeys = new Set();
    missingPaths = new Set(p.missing || []);
    p.items.forEach(function (i) {
      state.set(i.task + "#" + i.output, i.state);
      if (i.missing) missingKeys.add(i.task + "#" + i.output);
    });
  }
  load(JSON.parse(document.getElementById("review-data").textContent));

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  var bar = el("div", { id: "review-bar", role: "region", "aria-label": "review" });
  var left = el("b", { id: "review-left" });
  var counts = el("span", { id: "review-counts" });
  var approveAll = el("button", { type: "button", id: "review-approve-shown" });
  var rejectAll = el("button", { type: "button", id: "review-reject-shown" });
  var status = el("span", { id: "review-status", role: "status" });
  var missingNote = el("span", { id: "review-missing" });
  bar.appendChild(left); bar.appendChild(counts); bar.appendChild(missingNote); bar.appendChild(approveAll); bar.appendChild(rejectAll); bar.appendChild(status);
  bar.appendChild(el("span", { "class": "keys" }, "Keys on a result: a approve, r reject."));
  var nav = document.querySelector("nav");
  nav.parentNode.insertBefore(bar, nav.nextSibling);

  function keyOf(tile) { return tile.getAttribute("data-id") + "#" + tile.getAttribute("data-output"); }
  function target(tile) { return { task: tile.getAttribute("data-id"), output: Number(tile.getAttribute("data-output")) }; }

  /** Reviewable outputs of the tasks the report's filters (kept in the address) show; to approve, only those that can be seen. */
  function selection(toApprove) {
    var q = new URLSearchParams(location.search);
    var job = q.get("job"), st = q.get("state"), values = {};
    q.forEach(function (v, k) { if (k.indexOf("v.") === 0 && v) values[k.slice(2)] = v; });
    var out = [];
    report.tasks.forEach(function (t) {
      if (job && t.job !== job) return;
      if (st && t.state !== st) return;
      for (var a in values) if (t.labels[a] !== values[a]) return;
      t.files.forEach(function (f) {
        var k = t.id + "#" + f.index;
        if (state.has(k) && !(toApprove && missingKeys.has(k))) out.push({ task: t.id, output: f.index });
      });
    });
    return out;
  }

  function paint(tile) {
    var s = state.get(keyOf(tile));
    if (!s) return;
    tile.setAttribute("data-review", s);
    var b = tile.querySelector(".review .badge");
    if (b) b.textContent = s === "awaiting" ? "awaiting review" : s;
  }

  function refresh() {
    document.querySelectorAll(".tile[data-review]").forEach(paint);
    left.textContent = rd.counts.awaiting + " left to review";
    counts.textContent = rd.counts.approved + " approved, " + rd.counts.rejected + " rejected";
    missingNote.textContent = missingKeys.size > 0 ? missingKeys.size + " missing from " + rd.where : "";
    var na = selection(true).length, n = selection(false).length;
    approveAll.textContent = "Approve shown (" + na + ")";
    rejectAll.textContent = "Reject shown (" + n + ")";
    approveAll.disabled = na === 0;
    rejectAll.disabled = n === 0;
  }

  var busy = Promise.resolve();
  function decide(decision, targets) {
    if (targets.length === 0) return busy;
    // One request at a time, in the order made: each is written to the review file at once.
    busy = busy.then(function () {
      return fetch(base + "api/decide", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ decision: decision, targets: targets }) })
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
        .then(function (p) { load(p); status.textContent = decision + " " + targets.length + " output(s), saved"; refresh(); })
        .catch(function (e) { status.textContent = "not saved: " + e.message; });
    });
    return busy;
  }

  function decorate(tile) {
    if (tile.getAttribute("data-review") || !state.has(keyOf(tile))) return;
    var box = el("div", { "class": "review" });
    var a = el("button", { type: "button", "class": "approve", title: "approve (a)" }, "Approve");
    var r = el("button", { type: "button", "class": "reject", title: "reject (r)" }, "Reject");
    a.addEventListener("click", function (e) { e.stopPropagation(); decide("approved", [target(tile)]); });
    r.addEventListener("click", function (e) { e.stopPropagation(); decide("rejected", [target(tile)]); });
    if (missingKeys.has(keyOf(tile))) {
      // Not in the folder or store with its recorded size: nothing to look at, so nothing to approve.
      a.disabled = true;
      a.title = "missing from " + rd.where + ": cannot be approved unseen";
      tile.setAttribute("data-missing", "1");
    }
    box.appendChild(a); box.appendChild(r); box.appendChild(el("span", { "class": "badge" }));
    tile.appendChild(box);
    paint(tile);
  }
  /** The recorded path an img/video of the report points at (a relative, encoded href), or null. */
  function pathOf(media) {
    var src = media.getAttribute("src") || media.getAttribute("data-src");
    if (!src || src.indexOf("./") !== 0) return null;
    try { return src.slice(2).split("#")[0].split("/").map(decodeURIComponent).join("/"); } catch (e) { return null; }
  }
  function markMissing(media) {
    var p = pathOf(media);
    if (p === null || !missingPaths.has(p) || !media.parentNode) return;
    media.parentNode.replaceChild(el("div", { "class": "placeholder missing", title: p, "data-missing-path": p }, "missing from " + rd.where), media);
  }
  function scan(root) {
    if (root.nodeType !== 1) return;
    if (root.matches("img, video")) markMissing(root);
    root.querySelectorAll("img, video").forEach(markMissing);
    if (root.classList.contains("tile")) decorate(root);
    root.querySelectorAll(".tile").forEach(decorate);
  }
  new MutationObserver(function (records) {
    records.forEach(function (m) { m.addedNodes.forEach(scan); });
  }).observe(document.body, { childList: true, subtree: true });
  scan(document.body);

  approveAll.addEventListener("click", function () { decide("approved", selection(true)); });
  rejectAll.addEventListener("click", function () { decide("rejected", selection(false)); });
  // The report's filters change the address: recount the selection.
  nav.addEventListener("change", function () { setTimeout(refresh, 0); });

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key !== "a" && e.key !== "r") return;
    var cur = document.activeElement;
    if (!cur || !cur.classList || !cur.classList.contains("tile") || !cur.getAttribute("data-review")) return;
    e.preventDefault();
    if (e.key === "a" && cur.getAttribute("data-missing")) { status.textContent = "missing from " + rd.where + ": not approved"; return; }
    decide(e.key === "a" ? "approved" : "rejected", [target(cur)]);
    // On to the next output awaiting review.
    var tiles = Array.prototype.slice.call(document.querySelectorAll(".tile[data-review]"));
    var next = tiles.slice(tiles.indexOf(cur) + 1).find(function (t) { return t.getAttribute("data-review") === "awaiting"; });
    if (next) next.focus();
  }, true);

  refresh();
  document.documentElement.setAttribute("data-review-ready", "1");
})();
`;
