// report.html: one self-contained static page (inline CSS and script, no network, no
// CDN) that opens from the file system or an unpacked CI artifact and links the media by
// relative paths. Its data is embedded as JSON in a <script type="application/json">,
// escaped so nothing in it (prompts, service messages: untrusted) can end the script or
// open a comment; the page builds its DOM with textContent and setAttribute only.
// Contact sheets render in batches of rows as they scroll into view, so 10,000 outputs
// do not freeze the page.

import type { ReportData, ReportFrame } from "./reportData.js";

/** JSON safe inside a <script> element: `<`, `>`, `&` and the JS line separators escaped. */
export const scriptSafeJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const CSS = `
:root { color-scheme: light dark; --bg: #f6f6f4; --fg: #1d1d1f; --muted: #6b6b70; --card: #fff; --line: #d9d9dc; --accent: #2a4d8f;
  --ok: #2e7d4f; --bad: #b3261e; --wait: #8a6d00; }
@media (prefers-color-scheme: dark) { :root { --bg: #17171a; --fg: #ececef; --muted: #a0a0a8; --card: #222227; --line: #3a3a40; --accent: #8fb0f0;
  --ok: #6cc58f; --bad: #ff8a80; --wait: #e0c060; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
header { padding: 16px 20px 8px; }
h1 { margin: 0 0 4px; font-size: 20px; }
h2 { font-size: 16px; margin: 18px 20px 8px; }
.emulated { display: inline-block; background: #b3261e; color: #fff; font-weight: 600; padding: 2px 8px; border-radius: 4px; margin-left: 8px; font-size: 12px; vertical-align: middle; }
.totals { color: var(--muted); display: flex; flex-wrap: wrap; gap: 4px 18px; }
.totals b { color: var(--fg); }
nav { position: sticky; top: 0; z-index: 2; background: var(--bg); border-bottom: 1px solid var(--line); padding: 8px 20px; display: flex; flex-wrap: wrap; gap: 8px 14px; align-items: center; }
nav label { color: var(--muted); }
#f-values { display: contents; }
select { font: inherit; }
#shown { margin-left: auto; color: var(--muted); }
.failures { margin: 8px 20px; }
.failures details { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 4px 0; }
.failures summary { cursor: pointer; color: var(--bad); }
.failures button { font: inherit; margin: 2px; }
.sheet { margin: 0 20px 24px; overflow-x: auto; }
.grid { display: grid; gap: 6px; align-items: start; }
.colhead, .rowhead { font-weight: 600; color: var(--muted); padding: 4px; position: sticky; }
.rowhead { left: 0; background: var(--bg); z-index: 1; max-width: 180px; overflow-wrap: anywhere; }
.cell { display: flex; flex-wrap: wrap; gap: 6px; min-height: 20px; }
.tile { width: 168px; background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 4px; cursor: pointer; outline: none; }
.tile:focus-visible, .tile:focus { border-color: var(--accent); box-shadow: 0 0 0 2px var(--accent); }
.media { display: flex; gap: 4px; height: 120px; align-items: center; justify-content: center; background: rgba(127,127,127,.12); border-radius: 4px; overflow: hidden; }
.media img, .media video { max-width: 100%; max-height: 120px; object-fit: contain; display: block; }
.media.pair img.from { max-width: 38%; opacity: .9; }
.media.pair video { max-width: 58%; }
.arrow { color: var(--muted); }
.placeholder { color: var(--muted); padding: 8px; text-align: center; font-size: 12px; overflow: hidden; max-height: 120px; }
.meta { display: flex; justify-content: space-between; gap: 4px; font-size: 12px; margin-top: 3px; }
.sub { font-size: 11px; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.state-downloaded, .state-succeeded { color: var(--ok); }
.tile.old { opacity: 0.6; outline: 1px dashed var(--line); }
.standing { text-transform: uppercase; font-size: 0.8em; }
.state-failed, .state-rejected { color: var(--bad); }
.state-planned, .state-submitting, .state-submitted, .state-processing { color: var(--wait); }
.more { height: 40px; margin: 0 20px; color: var(--muted); }
dialog { max-width: min(900px, 94vw); width: 900px; border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--fg); padding: 0; }
dialog::backdrop { background: rgba(0,0,0,.45); }
.dhead { display: flex; gap: 8px; align-items: center; padding: 10px 14px; border-bottom: 1px solid var(--line); position: sticky; top: 0; background: var(--card); }
.dhead h3 { margin: 0; flex: 1; font-size: 15px; }
.dbody { padding: 10px 14px; }
.dbody h4 { margin: 12px 0 4px; font-size: 13px; color: var(--muted); }
.dbody pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; background: rgba(127,127,127,.1); padding: 6px 8px; border-radius: 4px; font-size: 12px; }
.dbody .prompt { font-size: 14px; }
.dbody table { border-collapse: collapse; font-size: 12px; }
.dbody td, .dbody th { border-bottom: 1px solid var(--line); padding: 3px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
.dmedia { display: flex; gap: 8px; flex-wrap: wrap; }
.dmedia img, .dmedia video { max-width: 420px; max-height: 320px; }
.linkbtn { background: none; border: 0; color: var(--accent); cursor: pointer; padding: 0; font: inherit; text-decoration: underline; }
.keys { color: var(--muted); font-size: 12px; padding: 0 20px 16px; }
`;

/**
 * The page's script. Written without template literals (it sits in one here): every
 * value from the data goes through textContent, setAttribute or a relative, encoded href.
 */
const CLIENT_JS = String.raw`
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var byId = new Map();
  data.tasks.forEach(function (t) { byId.set(t.id, t); });
  var jobsById = new Map();
  data.jobs.forEach(function (j) { jobsById.set(j.id, j); });
  var STATES = ["downloaded", "succeeded", "processing", "submitted", "submitting", "planned", "failed", "rejected"];
  var BATCH_TILES = 300;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  /** A path relative to the outputs folder as a relative URL: each segment encoded, so never a scheme. */
  function href(path) {
    return "./" + String(path).split("/").map(encodeURIComponent).join("/");
  }
  function fileOf(taskId, index) {
    var t = byId.get(taskId);
    if (!t) return undefined;
    for (var i = 0; i < t.files.length; i++) if (index < 0 || t.files[i].index === index) return t.files[i];
    return undefined;
  }

  // ------------------------------------------------------------ state from the query string
  var params = new URLSearchParams(location.search);
  var filters = { job: params.get("job") || "", state: params.get("state") || "", rows: params.get("rows") || "", cols: params.get("cols") || "", old: params.get("old") === "1", values: {} };
  params.forEach(function (v, k) { if (k.indexOf("v.") === 0) filters.values[k.slice(2)] = v; });
  function saveQuery() {
    var p = new URLSearchParams();
    if (filters.job) p.set("job", filters.job);
    if (filters.state) p.set("state", filters.state);
    if (filters.rows) p.set("rows", filters.rows);
    if (filters.cols) p.set("cols", filters.cols);
    if (filters.old) p.set("old", "1");
    Object.keys(filters.values).forEach(function (k) { if (filters.values[k]) p.set("v." + k, filters.values[k]); });
    var q = p.toString();
    try { history.replaceState(null, "", q ? "?" + q : location.pathname); } catch (e) { /* some file:// contexts refuse; the filters still apply */ }
  }

  // ------------------------------------------------------------ header and totals
  document.getElementById("title").textContent = data.name;
  if (data.emulated) document.getElementById("title").appendChild(el("span", { "class": "emulated", title: "run with --emulate: nothing was sent to the service and nothing was charged" }, "EMULATED"));
  var totals = document.getElementById("totals");
  var outputs = 0;
  data.tasks.forEach(function (t) { if (t.standing !== "superseded") outputs += t.files.length; });
  function total(label, value) {
    var s = el("span", null, label + " ");
    s.appendChild(el("b", null, value));
    totals.appendChild(s);
  }
  var apart = data.apart.superseded;
  total("tasks", data.tasks.length - apart);
  if (data.apart.superseded) total("superseded", data.apart.superseded);
  if (data.apart.orphaned) total("orphaned", data.apart.orphaned);
  total("outputs", outputs);
  Object.keys(data.states).forEach(function (s) { total(s, data.states[s]); });
  total("spent", data.spent + (data.emulated ? " (emulated, not charged)" : ""));
  if (data.budget) total("budget", data.budget);
  if (data.estimate) total("estimate", data.estimate);
  if (data.lost) total("LOST results (deleted at the service, not here)", data.lost.length);
  total("written", data.generated_at);

  // ------------------------------------------------------------ controls
  var fJob = document.getElementById("f-job");
  var fState = document.getElementById("f-state");
  var fRows = document.getElementById("f-rows");
  var fCols = document.getElementById("f-cols");
  var fValues = document.getElementById("f-values");
  function option(select, value, label) { select.appendChild(el("option", { value: value }, label)); }
  option(fJob, "", "all jobs");
  data.jobs.forEach(function (j) { option(fJob, j.id, j.id + " (" + j.tasks + ")"); });
  option(fState, "", "any state");
  STATES.forEach(function (s) { if (data.states[s]) option(fState, s, s + " (" + data.states[s] + ")"); });
  function currentAxes() {
    var axes = [];
    data.jobs.forEach(function (j) { if (!filters.job || j.id === filters.job) j.axes.forEach(function (a) { if (axes.indexOf(a) < 0) axes.push(a); }); });
    return axes;
  }
  function fillAxisControls() {
    var axes = currentAxes();
    fRows.textContent = ""; fCols.textContent = ""; fValues.textContent = "";
    option(fRows, "", "first axis");
    axes.forEach(function (a) { option(fRows, a, a); });
    option(fCols, "", "the other axes");
    axes.forEach(function (a) { option(fCols, a, a); });
    fRows.value = axes.indexOf(filters.rows) >= 0 ? filters.rows : "";
    fCols.value = axes.indexOf(filters.cols) >= 0 ? filters.cols : "";
    axes.forEach(function (a) {
      var seen = [];
      data.tasks.forEach(function (t) {
        if (filters.job && t.job !== filters.job) return;
        var v = t.labels[a];
        if (v !== undefined && seen.indexOf(v) < 0) seen.push(v);
      });
      var label = el("label", null, a + " ");
      var s = el("select", { "data-axis": a, id: "f-v-" + a });
      option(s, "", "any");
      seen.forEach(function (v) { option(s, v, v); });
      s.value = seen.indexOf(filters.values[a]) >= 0 ? filters.values[a] : "";
      s.addEventListener("change", function () { filters.values[a] = s.value; update(); });
      label.appendChild(s);
      fValues.appendChild(label);
    });
  }
  fJob.value = jobsById.has(filters.job) ? filters.job : "";
  fState.value = filters.state;
  fJob.addEventListener("change", function () { filters.job = fJob.value; filters.values = {}; fillAxisControls(); update(); });
  fState.addEventListener("change", function () { filters.state = fState.value; update(); });
  fRows.addEventListener("change", function () { filters.rows = fRows.value; update(); });
  fCols.addEventListener("change", function () { filters.cols = fCols.value; update(); });
  // Superseded results: hidden unless asked (the checkbox, or ?old=1).
  var fOld = document.getElementById("f-old");
  if (apart === 0) fOld.parentNode.hidden = true;
  document.getElementById("f-old-count").textContent = String(apart);
  fOld.checked = filters.old;
  fOld.addEventListener("change", function () { filters.old = fOld.checked; update(); });

  // ------------------------------------------------------------ failures, grouped by reason
  (function () {
    var groups = new Map();
    data.tasks.forEach(function (t) {
      if (t.state !== "failed" && t.state !== "rejected") return;
      if (t.standing === "superseded") return;
      var err = t.record.error || {};
      var key = (err.code !== undefined ? "[" + err.code + "] " : "") + (err.message || "no reason given");
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(t);
    });
    var box = document.getElementById("failures");
    if (groups.size === 0) return;
    box.appendChild(el("h2", null, "Failures"));
    groups.forEach(function (list, reason) {
      var d = el("details", { "class": "failure-group" });
      d.appendChild(el("summary", null, list.length + " \u00d7 " + reason));
      list.forEach(function (t) {
        var b = el("button", { type: "button", "data-id": t.id }, t.job + " " + describe(t));
        b.addEventListener("click", function () { openDetail(t.id); });
        d.appendChild(b);
      });
      box.appendChild(d);
    });
  })();

  function describe(t) {
    var parts = [];
    Object.keys(t.labels).forEach(function (k) { parts.push(k + "=" + t.labels[k]); });
    return parts.length ? parts.join(" ") : t.id;
  }

  // ------------------------------------------------------------ contact sheets, rendered in batches
  var sheets = document.getElementById("sheets");
  var pending = []; // { grid, rows: [...], next: index, sentinel }
  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) { if (e.isIntersecting) renderMore(e.target.__sheet); });
  }, { rootMargin: "1200px 0px" }) : null;
  var mediaObserver = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (!e.isIntersecting) return;
      var v = e.target;
      mediaObserver.unobserve(v);
      if (v.dataset.src) { v.src = v.dataset.src; delete v.dataset.src; }
    });
  }, { rootMargin: "600px 0px" }) : null;

  function matches(t) {
    if (!filters.old && t.standing === "superseded") return false;
    if (filters.job && t.job !== filters.job) return false;
    if (filters.state && t.state !== filters.state) return false;
    for (var a in filters.values) if (filters.values[a] && t.labels[a] !== filters.values[a]) return false;
    return true;
  }

  function mediaFor(file, cls) {
    if (file.type === "video") {
      var v = el("video", { preload: "metadata", muted: "", playsinline: "", "class": cls || null, title: file.path });
      v.muted = true;
      var src = href(file.path) + "#t=0.1";
      if (mediaObserver) { v.dataset.src = src; mediaObserver.observe(v); } else v.src = src;
      return v;
    }
    return el("img", { loading: "lazy", decoding: "async", src: href(file.path), alt: file.path, "class": cls || null });
  }

  function tile(t, file, sub) {
    var d = el("div", { "class": "tile" + (t.standing !== "current" ? " old" : ""), tabindex: "0", "data-id": t.id, "data-state": t.state, "data-standing": t.standing });
    if (file) d.setAttribute("data-output", String(file.index));
    var m = el("div", { "class": "media" });
    var up = t.record.upstream_files && t.record.upstream_files[0];
    if (file) {
      var still = up && fileOf(up.task, up.output);
      if (still && still.type === "image" && file.type === "video") {
        m.className = "media pair";
        m.appendChild(mediaFor(still, "from"));
        m.appendChild(el("span", { "class": "arrow" }, "\u2192"));
      }
      m.appendChild(mediaFor(file));
    } else {
      var text = t.state === "failed" || t.state === "rejected" ? (t.record.error && t.record.error.message) || t.state
        : t.state === "succeeded" ? "succeeded, not downloaded yet" : t.state;
      m.appendChild(el("div", { "class": "placeholder" }, text));
    }
    d.appendChild(m);
    var meta = el("div", { "class": "meta" });
    meta.appendChild(el("span", { "class": "state-" + t.state }, t.state));
    if (t.standing !== "current") meta.appendChild(el("span", { "class": "standing", title: t.record.superseded_by ? "superseded by " + t.record.superseded_by : "no longer in the manifest" }, t.standing));
    meta.appendChild(el("span", null, t.cost || ""));
    d.appendChild(meta);
    if (sub) d.appendChild(el("div", { "class": "sub", title: sub }, sub));
    return d;
  }

  function buildSheet(job, tasks) {
    var rowAxis = filters.rows && job.axes.indexOf(filters.rows) >= 0 ? filters.rows : job.axes[0];
    var colAxes = filters.cols && job.axes.indexOf(filters.cols) >= 0 && filters.cols !== rowAxis ? [filters.cols]
      : job.axes.filter(function (a) { return a !== rowAxis; });
    var rowKeys = [], rowMap = new Map(), colKeys = [], colSeen = new Set();
    tasks.forEach(function (t, i) {
      // No axes: rows of 10 tasks, so a big job without a matrix still renders in batches.
      var r = rowAxis ? (t.labels[rowAxis] || "") : "#" + (Math.floor(i / 10) * 10 + 1);
      var c = colAxes.map(function (a) { return t.labels[a] || ""; }).join(" \u00b7 ");
      if (!rowMap.has(r)) { rowMap.set(r, new Map()); rowKeys.push(r); }
      var cells = rowMap.get(r);
      if (!cells.has(c)) cells.set(c, []);
      cells.get(c).push(t);
      if (!colSeen.has(c)) { colSeen.add(c); colKeys.push(c); }
    });
    var section = el("section", { "class": "job", "data-job": job.id });
    section.appendChild(el("h2", null, job.id + " \u2014 " + job.kind + (job.upstream ? " from " + job.upstream : "") + " (" + tasks.length + " tasks" +
      (rowAxis ? "; rows: " + rowAxis : "") + (colAxes.length ? "; columns: " + colAxes.join(" \u00b7 ") : "") + ")"));
    var wrap = el("div", { "class": "sheet" });
    var grid = el("div", { "class": "grid", role: "grid" });
    grid.style.gridTemplateColumns = "max-content repeat(" + colKeys.length + ", max-content)";
    grid.appendChild(el("div", { "class": "colhead" }, rowAxis || ""));
    colKeys.forEach(function (c) { grid.appendChild(el("div", { "class": "colhead" }, c)); });
    wrap.appendChild(grid);
    section.appendChild(wrap);
    var sentinel = el("div", { "class": "more" }, "");
    section.appendChild(sentinel);
    var sheet = { axes: job.axes, rowAxis: rowAxis, grid: grid, rows: rowKeys, rowMap: rowMap, colKeys: colKeys, next: 0, sentinel: sentinel, colAxes: colAxes };
    sentinel.__sheet = sheet;
    sheets.appendChild(section);
    pending.push(sheet);
    renderMore(sheet);
    return sheet;
  }

  function renderMore(sheet) {
    if (!sheet || sheet.next >= sheet.rows.length) return;
    var budget = BATCH_TILES;
    var frag = document.createDocumentFragment();
    while (sheet.next < sheet.rows.length && budget > 0) {
      var r = sheet.rows[sheet.next++];
      var cells = sheet.rowMap.get(r);
      var head = el("div", { "class": "rowhead", role: "rowheader" }, r);
      frag.appendChild(head);
      sheet.colKeys.forEach(function (c) {
        var cell = el("div", { "class": "cell", "data-row": r, "data-col": c });
        (cells.get(c) || []).forEach(function (t) {
          var sub = sheet.axes.filter(function (a) { return t.labels[a] !== undefined && a !== sheet.rowAxis && sheet.colAxes.indexOf(a) < 0; })
            .map(function (a) { return a + "=" + t.labels[a]; }).join(" ");
          var extra = (t.record.take > 1 ? "take " + t.record.take + " " : "") + sub;
          if (t.files.length === 0) { cell.appendChild(tile(t, null, extra)); budget--; }
          t.files.forEach(function (f) { cell.appendChild(tile(t, f, extra + (t.files.length > 1 ? " #" + (f.index + 1) : ""))); budget--; });
        });
        frag.appendChild(cell);
      });
    }
    sheet.grid.appendChild(frag);
    var left = sheet.rows.length - sheet.next;
    sheet.sentinel.textContent = left > 0 ? left + " more rows below\u2026" : "";
    // Observed anew after each batch: a sentinel still in range reports again and the next batch follows.
    if (observer) observer.unobserve(sheet.sentinel);
    if (left > 0 && observer) observer.observe(sheet.sentinel);
    if (left > 0 && !observer) renderMore(sheet);
  }

  function update() {
    saveQuery();
    pending.forEach(function (s) { if (observer) observer.unobserve(s.sentinel); });
    pending = [];
    sheets.textContent = "";
    var shown = 0, shownTasks = 0;
    var perJob = new Map();
    data.tasks.forEach(function (t) {
      if (!matches(t)) return;
      shownTasks++;
      shown += Math.max(1, t.files.length);
      if (!perJob.has(t.job)) perJob.set(t.job, []);
      perJob.get(t.job).push(t);
    });
    data.jobs.forEach(function (j) { if (perJob.has(j.id)) buildSheet(j, perJob.get(j.id)); });
    if (shownTasks === 0) sheets.appendChild(el("p", { "class": "keys" }, "Nothing matches these filters."));
    document.getElementById("shown").textContent = shownTasks + " tasks, " + shown + " tiles shown";
  }

  // ------------------------------------------------------------ details
  var dialog = document.getElementById("detail");
  var dtitle = document.getElementById("d-title");
  var dbody = document.getElementById("d-body");
  var currentId = null;
  function section(title, node) {
    dbody.appendChild(el("h4", null, title));
    dbody.appendChild(node);
  }
  function pre(value, cls) {
    return el("pre", { "class": cls || null }, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  }
  function link(path) {
    return el("a", { href: href(path), target: "_blank", rel: "noopener" }, path);
  }
  function taskButton(id, label) {
    var b = el("button", { type: "button", "class": "linkbtn" }, label);
    b.addEventListener("click", function () { openDetail(id); });
    return b;
  }
  function openDetail(id) {
    var t = byId.get(id);
    if (!t) return;
    currentId = id;
    var r = t.record;
    dtitle.textContent = t.job + " \u2014 " + describe(t);
    dbody.textContent = "";
    var media = el("div", { "class": "dmedia" });
    t.files.forEach(function (f) {
      var m = f.type === "video" ? el("video", { controls: "", preload: "metadata", src: href(f.path) }) : el("img", { src: href(f.path), alt: f.path });
      media.appendChild(m);
    });
    if (t.files.length) section("Result", media);
    var st = el("p", null, "");
    st.appendChild(el("b", { "class": "state-" + t.state }, t.state));
    st.appendChild(document.createTextNode((t.cost ? "  \u00b7  cost " + t.cost : "") + (r.estimate ? "  \u00b7  estimate " + r.estimate.amount + " " + r.estimate.currency : "")));
    dbody.appendChild(st);
    if (r.error) section("Why it failed", pre((r.error.code !== undefined ? "[" + r.error.code + "] " : "") + r.error.message));
    if (r.request) {
      section("Prompt", pre(r.request.prompt, "prompt"));
      section("Settings", pre(r.request.settings));
      if (r.request.options && Object.keys(r.request.options).length) section("Options", pre(r.request.options));
      if (r.request.inputs.length) {
        var table = el("table");
        var head = el("tr");
        ["role", "name", "file or URL", "sha256", "declared at"].forEach(function (h) { head.appendChild(el("th", null, h)); });
        table.appendChild(head);
        r.request.inputs.forEach(function (i) {
          var row = el("tr");
          row.appendChild(el("td", null, i.role));
          row.appendChild(el("td", null, i.name || ""));
          var where = el("td");
          if (i.upstream) { where.appendChild(link(i.path)); where.appendChild(document.createTextNode(" ")); where.appendChild(taskButton(i.upstream.task, "(its task)")); }
          else where.textContent = i.path || i.url || (i.element_id ? "element " + i.element_id : "");
          row.appendChild(where);
          row.appendChild(el("td", { title: i.sha256 || "" }, i.sha256 ? i.sha256.slice(0, 12) + "\u2026" : ""));
          row.appendChild(el("td", null, i.source || ""));
          table.appendChild(row);
        });
        section("Inputs", table);
      }
    } else {
      section("Prompt", el("p", null, "Not in the manifest as it is now (the task was made by an earlier version of it, or during a run); see results.jsonl of that run."));
    }
    if (r.upstream_files && r.upstream_files.length) {
      var ul = el("div");
      r.upstream_files.forEach(function (u) {
        var line = el("div");
        if (u.path) { line.appendChild(link(u.path)); line.appendChild(document.createTextNode(" ")); }
        line.appendChild(taskButton(u.task, u.job + " task " + u.task));
        ul.appendChild(line);
      });
      section("Made from", ul);
    }
    if (r.downstream && r.downstream.length) {
      var dl = el("div");
      r.downstream.forEach(function (u) {
        var line = el("div");
        if (u.path) { line.appendChild(link(u.path)); line.appendChild(document.createTextNode(" ")); }
        line.appendChild(taskButton(u.task, u.job + " task " + u.task));
        dl.appendChild(line);
      });
      section("Used by", dl);
    }
    var ids = { external_task_id: r.id, task_id: r.task_id, take: r.take, attempt: r.attempt, folder: r.dir, manifest: r.source, matrix: r.vars };
    section("Ids and place", pre(ids));
    if (r.outputs && r.outputs.length) {
      var files = el("table");
      r.outputs.forEach(function (o) {
        var row = el("tr");
        var c = el("td");
        if (o.path) c.appendChild(link(o.path)); else c.textContent = "(not downloaded)";
        row.appendChild(c);
        row.appendChild(el("td", null, o.type + " " + o.variant));
        row.appendChild(el("td", { title: o.sha256 || "" }, o.sha256 ? "sha256 " + o.sha256.slice(0, 12) + "\u2026" : ""));
        row.appendChild(el("td", null, o.remote_id || ""));
        files.appendChild(row);
      });
      section("Files", files);
    }
    if (r.times) section("Times", pre(r.times));
    if (!dialog.open) dialog.showModal();
  }
  document.getElementById("d-close").addEventListener("click", function () { dialog.close(); });
  function step(delta) {
    var tiles = Array.prototype.slice.call(document.querySelectorAll(".tile"));
    var i = tiles.findIndex(function (x) { return x.getAttribute("data-id") === currentId; });
    var next = tiles[i + delta];
    if (next) { openDetail(next.getAttribute("data-id")); next.focus({ preventScroll: false }); }
  }
  document.getElementById("d-prev").addEventListener("click", function () { step(-1); });
  document.getElementById("d-next").addEventListener("click", function () { step(1); });
  dialog.addEventListener("close", function () {
    var back = currentId && document.querySelector('.tile[data-id="' + CSS.escape(currentId) + '"]');
    if (back) back.focus();
  });

  // ------------------------------------------------------------ keyboard
  sheets.addEventListener("click", function (e) {
    var t = e.target.closest && e.target.closest(".tile");
    if (t) { t.focus(); openDetail(t.getAttribute("data-id")); }
  });
  document.addEventListener("keydown", function (e) {
    if (dialog.open) {
      if (e.key === "ArrowRight" || e.key === "j") { step(1); e.preventDefault(); }
      else if (e.key === "ArrowLeft" || e.key === "k") { step(-1); e.preventDefault(); }
      return;
    }
    var cur = document.activeElement;
    var onTile = cur && cur.classList && cur.classList.contains("tile");
    if (!onTile) {
      if (e.key === "ArrowDown" && document.activeElement === document.body) {
        var first = document.querySelector(".tile");
        if (first) { first.focus(); e.preventDefault(); }
      }
      return;
    }
    var tiles;
    if (e.key === "Enter" || e.key === " ") { openDetail(cur.getAttribute("data-id")); e.preventDefault(); return; }
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      tiles = Array.prototype.slice.call(document.querySelectorAll(".tile"));
      var i = tiles.indexOf(cur) + (e.key === "ArrowRight" ? 1 : -1);
      if (tiles[i]) { tiles[i].focus(); tiles[i].scrollIntoView({ block: "nearest", inline: "nearest" }); }
      e.preventDefault();
    } else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      // The tile in the next row (of cells) nearest in x.
      var box = cur.getBoundingClientRect();
      tiles = Array.prototype.slice.call(document.querySelectorAll(".tile"));
      var best = null, bestScore = Infinity;
      tiles.forEach(function (x) {
        if (x === cur) return;
        var b = x.getBoundingClientRect();
        var dy = e.key === "ArrowDown" ? b.top - box.bottom : box.top - b.bottom;
        if (dy < -2) return;
        var score = dy * 4 + Math.abs(b.left - box.left);
        if (score < bestScore) { bestScore = score; best = x; }
      });
      if (best) { best.focus(); best.scrollIntoView({ block: "nearest", inline: "nearest" }); }
      e.preventDefault();
    }
  });

  fillAxisControls();
  update();
  document.documentElement.setAttribute("data-ready", "1");
})();
`;

/** The page up to its data (which follows at once). */
const pageHead = (data: Pick<ReportData, "name" | "emulated">): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' file: data: blob:; media-src 'self' file: blob:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(`${data.name}${data.emulated ? " (emulated)" : ""} — omnibatch report`)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1 id="title"></h1>
<div class="totals" id="totals"></div>
</header>
<nav aria-label="filters">
<label>job <select id="f-job"></select></label>
<label>state <select id="f-state"></select></label>
<span id="f-values"></span>
<label title="results replaced by a changed task (orphaned ones, no longer in the manifest, are always shown, marked)"><input type="checkbox" id="f-old"> superseded (<span id="f-old-count"></span>)</label>
<label>rows <select id="f-rows"></select></label>
<label>columns <select id="f-cols"></select></label>
<span id="shown"></span>
</nav>
<section class="failures" id="failures"></section>
<main id="sheets"></main>
<p class="keys">Keys: arrows move between results, Enter opens one, Esc closes, ←/→ (or j/k) step through results while open. The address keeps the filters (?job=…&amp;state=…&amp;rows=…&amp;cols=…&amp;v.axis=value).</p>
<dialog id="detail" aria-labelledby="d-title">
<div class="dhead"><h3 id="d-title"></h3><button type="button" id="d-prev" aria-label="previous">←</button><button type="button" id="d-next" aria-label="next">→</button><button type="button" id="d-close">Close</button></div>
<div class="dbody" id="d-body"></div>
</dialog>
<script type="application/json" id="report-data">`;

/** The page after its data. */
const pageTail = `</script>
<script>${CLIENT_JS}</script>
</body>
</html>
`;

/** The whole page for the data. */
export const formatReportHtml = (data: ReportData): string => `${pageHead(data)}${scriptSafeJson(data)}${pageTail}`;

/**
 * The same page as `formatReportHtml(reportData(input))`, byte for byte, in parts made as
 * they are asked for: each task's row is made and encoded when its turn comes (the page
 * of 200,000 tasks is 85 MB of text, its rows 220 MB of objects: neither is held whole).
 */
export function* reportHtmlParts(frame: ReportFrame): Generator<string, void, undefined> {
  yield pageHead(frame.head);
  // The data's keys in ReportData's order: the head's (jobs last), tasks, then lost.
  const head = scriptSafeJson(frame.head);
  yield `${head.slice(0, -1)},"tasks":[`;
  for (let i = 0; i < frame.ids.length; i++) yield `${i > 0 ? "," : ""}${scriptSafeJson(frame.row(frame.ids[i]!))}`;
  yield `]${frame.lost ? `,"lost":${scriptSafeJson(frame.lost)}` : ""}}`;
  yield pageTail;
}
