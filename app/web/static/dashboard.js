/* cudamaster dashboard: live updates (server-sent events) and charts (uPlot, vendored).
   The pages render on the server; this script only adds what needs the browser. Every chart is kept in
   window.cmCharts[name] (a uPlot instance: .data holds exactly what is plotted). */
(function () {
  "use strict";
  const charts = (window.cmCharts = {});
  const COLORS = ["#1f6f43", "#0b5cad", "#b42318", "#a15c07", "#6941c6", "#0e7490", "#be185d", "#4d7c0f", "#374151", "#c2410c"];
  const ACTIVE = ["queued", "running", "waiting_for_input"];

  function readJson(id) {
    const el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }
  /* The pages' number formats, the twins of app/web/fmt.py's Jinja filters (num, p, usd, pct). */
  function num(v, digits) {
    if (v === null || v === undefined) return "–";
    if (Number.isInteger(v) && digits === undefined) return v.toLocaleString("en-US");
    const d = digits === undefined ? 2 : digits;
    return v.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
  }
  function p(v) {
    return v === null || v === undefined ? "–" : num(Number(v), 3);
  }
  function usd(v) {
    if (v === null || v === undefined) return "–";
    return "$" + v.toLocaleString("en-US", { minimumFractionDigits: v < 1 ? 4 : 2, maximumFractionDigits: v < 1 ? 4 : 2 });
  }
  function pct(v) {
    return v === null || v === undefined ? "–" : (100 * v).toLocaleString("en-US", { maximumFractionDigits: 0 }) + "%";
  }
  window.cmFormat = { num: num, p: p, usd: usd, pct: pct };
  function text(tag, value, cls) {
    const el = document.createElement(tag);
    el.textContent = value;
    if (cls) el.className = cls;
    return el;
  }

  /* One chart: replaces the previous one of the same name. series: [{label, ...}] after the x series.
     The legend shows each series' value at `legendAt` (default: the last x) unless the cursor is on the chart:
     never "--" only because nothing is hovered. */
  const HEIGHT = 300;
  const EXPANDED_HEIGHT = 460;
  function chartHeight(el) {
    const fig = el.closest("figure");
    return fig && fig.classList.contains("expanded") ? EXPANDED_HEIGHT : HEIGHT;
  }
  function chartWidth(el) {
    return Math.max(260, el.clientWidth || 400);
  }
  function restingLegend(u, at) {
    const n = u.data[0].length;
    if (n === 0) return;
    const idx = at === undefined ? n - 1 : Math.min(Math.max(0, at), n - 1);
    if (u.legend.idx === null || u.legend.idx === undefined) u.setLegend({ idx: idx }, false);
  }
  function plot(name, el, opts, data) {
    if (charts[name]) charts[name].destroy();
    el.textContent = "";
    const hasData = data.length > 1 && data[0].length > 0 && data.slice(1).some((s) => s.some((v) => v !== null));
    if (!hasData) el.appendChild(text("div", "No data yet.", "nodata"));
    const at = opts.legendAt;
    const settle = (u) => restingLegend(u, at);
    const hooks = Object.assign({}, opts.hooks || {});
    hooks.ready = (hooks.ready || []).concat([settle]);
    hooks.setLegend = (hooks.setLegend || []).concat([settle]);
    const o = Object.assign({ width: chartWidth(el), height: chartHeight(el), legend: { live: true } }, opts, { hooks: hooks });
    delete o.legendAt;
    const u = new uPlot(o, data, el);
    if (!hasData) u.root.style.display = "none";
    charts[name] = u;
    expandable(el);
    return u;
  }
  function resize(u) {
    const el = u.root.parentElement;
    u.setSize({ width: chartWidth(el), height: chartHeight(el) });
  }
  window.addEventListener("resize", function () { Object.values(charts).forEach(resize); });
  /* A figure's "expand" button: the chart takes the whole row, taller; again to shrink it back. */
  function expandable(el) {
    const fig = el.closest("figure");
    if (!fig || fig.querySelector("button.expand")) return;
    const button = text("button", "expand", "expand link");
    button.type = "button";
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", function () {
      const wide = fig.classList.toggle("expanded");
      button.textContent = wide ? "shrink" : "expand";
      button.setAttribute("aria-expanded", wide ? "true" : "false");
      Object.values(charts).forEach(resize);
    });
    const caption = fig.querySelector("figcaption");
    (caption || fig).appendChild(button);
  }
  function series(label, i, extra) {
    return Object.assign({ label: label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true,
                           points: { show: true, size: 6 }, value: (u, v) => (v === null || v === undefined ? "–" : num(v, 3)) },
                         extra || {});
  }
  // Ticks on whole numbers, thinned on a narrow screen (1, 2, 5, 10...): an axis keeps its ticks at 390 px.
  const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
  // The speedup charts' reference: the baseline's own speed (1×), a dashed grey line across every size.
  const BASELINE_LABEL = "baseline (1×)";
  function baselineSeries() {
    return { label: BASELINE_LABEL, stroke: "#6b7280", width: 1.5, dash: [8, 5], points: { show: false }, value: () => "1×" };
  }
  /* Each attempt's number in its job (1, 2, 3 in the job's order), by its id and by its key (events name the key). */
  function attemptNumbers(job) {
    const numbers = new Map();
    (job.attempts || []).forEach((a, i) => { numbers.set(a.id, i + 1); numbers.set(a.attempt_key, i + 1); });
    numbers.count = (job.attempts || []).length;
    return numbers;
  }

  /* ---- one job ------------------------------------------------------------------------------------ */
  function sizeOf(params) {
    return Object.values(params || {}).reduce((a, b) => a * (typeof b === "number" ? b : 1), 1);
  }
  function sizeLabel(params) {
    return Object.entries(params || {}).map(([k, v]) => k + "=" + v).join(" ");
  }
  function jobCharts(job) {
    const attempts = job.attempts || [];
    // No attempt yet: one line says so, not three empty charts (they appear with the first attempt).
    const section = document.getElementById("job-charts");
    const none = document.getElementById("no-charts");
    if (section) section.hidden = attempts.length === 0;
    if (none) none.hidden = attempts.length > 0;
    if (attempts.length === 0) return;
    // P per attempt, in the job's order (round, debug step).
    const xs = attempts.map((_, i) => i + 1);
    const labels = attempts.map((a) => a.round + "." + a.debug_step);
    let best = null;
    const scores = attempts.map((a) => (a.score === null ? null : a.score));
    const bestSoFar = attempts.map((a) => {
      if (a.verdict === "ok" && a.score !== null && (best === null || a.score > best)) best = a.score;
      return best;
    });
    plot("score", document.getElementById("chart-score"), {
      scales: { x: { time: false }, y: { range: (u, min, max) => [0, Math.max(1.1, max * 1.1)] } },
      axes: [{ label: "attempt (round.debug step)", incrs: WHOLE_STEPS, values: (u, splits) => splits.map((s) => labels[s - 1] || "") },
             { label: "P (weighted speedup)" }],
      series: [{ label: "attempt", value: (u, v) => (v === null ? "–" : v + " (" + (labels[v - 1] || "") + ")") },
               series("P of the attempt", 0, { value: (u, v) => p(v) }),
               series("best correct so far", 1, { dash: [6, 4], points: { show: false }, value: (u, v) => p(v) })],
    }, [xs, scores, bestSoFar]);

    // Speedup and roofline % per size: one series per attempt with measurements; x = problem size.
    const measured = attempts.filter((a) => (a.measurements || []).length > 0);
    const sizes = new Map();
    measured.forEach((a) => a.measurements.forEach((m) => sizes.set(sizeOf(m.params), sizeLabel(m.params))));
    const sx = Array.from(sizes.keys()).sort((a, b) => a - b);
    const col = (field) => measured.map((a) => sx.map((x) => {
      const m = a.measurements.find((mm) => sizeOf(mm.params) === x);
      return m && m[field] !== null && m[field] !== undefined ? m[field] : null;
    }));
    const logX = sx.length > 1 && sx[0] > 0 && sx[sx.length - 1] / sx[0] >= 10;
    const numbers = attemptNumbers(job);
    const sLabels = measured.map((a) => "attempt " + numbers.get(a.id) + " (" + a.round + "." + a.debug_step + ")");
    // Short axis labels (the figure's caption says what the size is): they fit a chart 260 px wide.
    const xAxis = { label: "problem size" + (logX ? " (log)" : ""),
                    values: (u, splits) => splits.map((s) => (s >= 1e6 ? (s / 1e6) + "M" : s >= 1e3 ? (s / 1e3) + "k" : s)) };
    const speed = col("speedup");
    const posSpeed = speed.flat().filter((v) => v !== null && v > 0);
    const logY = posSpeed.length > 0 && Math.max(...posSpeed) / Math.min(...posSpeed) >= 10;
    plot("speedup", document.getElementById("chart-speedup"), {
      scales: { x: { time: false, distr: logX ? 3 : 1 }, y: { distr: logY ? 3 : 1 } },
      axes: [xAxis, { label: "speedup (×" + (logY ? ", log" : "") + ")" }],
      series: [{ label: "size", value: (u, v) => (v === null ? "–" : sizes.get(v) || v) }]
        .concat(sLabels.map((l, i) => series(l, i, { value: (u, v) => (v === null || v === undefined ? "–" : num(v, 3) + "×") })))
        .concat(sx.length ? [baselineSeries()] : []),
    }, [sx].concat(speed).concat(sx.length ? [sx.map(() => 1)] : []));
    plot("roofline", document.getElementById("chart-roofline"), {
      scales: { x: { time: false, distr: logX ? 3 : 1 }, y: { range: (u, min, max) => [0, Math.max(100, max || 0)] } },
      axes: [xAxis, { label: "roofline % (floor / time)" }],
      series: [{ label: "size", value: (u, v) => (v === null ? "–" : sizes.get(v) || v) }]
        .concat(sLabels.map((l, i) => series(l, i, { value: (u, v) => (v === null || v === undefined ? "–" : num(v, 1) + "%") }))),
    }, [sx].concat(col("candidate_roofline_pct")));
  }

  function eventSummary(e, numbers) {
    switch (e.type) {
      case "attempt":
        return "attempt " + ((numbers && numbers.get(e.attempt_id)) || e.attempt_id || "") + ": " + (e.verdict || e.evaluation_verdict || "") +
          (e.score !== null && e.score !== undefined ? ", P " + p(e.score) : "") + (e.message ? " · " + e.message : "") +
          (e.strategy ? " · strategy: " + e.strategy : "");
      case "llm_call":
        return (e.role || "") + " called " + (e.model || "?") + ": " + num(e.input_tokens || 0) + " in / " +
          num(e.output_tokens || 0) + " out tokens, " + usd(e.cost_usd || 0);
      case "interrupt":
        return "waiting for a person: " + ((e.question && e.question.question) || "");
      case "finished":
        return "finished";
      case "profile":
        return "profiled: " + (e.bottleneck_class || "") + " bound";
      default:
        return [e.verdict, e.message, e.detail].filter(Boolean).join(" · ") || (e.node ? "entered " + e.node : "");
    }
  }
  function addTimeline(body, e, id, numbers) {
    if (e.type === "attempt" && e.attempt_id && !numbers.has(e.attempt_id)) numbers.set(e.attempt_id, (numbers.count += 1));
    const tr = document.createElement("tr");
    tr.append(text("td", id), text("td", e.type || "node"), text("td", e.round === undefined || e.round === null ? "–" : e.round),
              text("td", e.node || ""), text("td", eventSummary(e, numbers)));
    body.appendChild(tr);
  }
  function showJob(job, root) {
    const status = document.getElementById("job-status");
    status.textContent = job.status;
    status.className = "status s-" + job.status;
    document.getElementById("job-message").textContent = job.message;
    document.getElementById("best-score").textContent = p(job.best_score);
    document.getElementById("attempts-count").textContent = num(job.totals.attempts_count);
    document.getElementById("llm-count").textContent = num(job.totals.llm_calls_count);
    document.getElementById("tokens").textContent = num(job.totals.input_tokens) + " / " + num(job.totals.output_tokens);
    document.getElementById("cost").textContent = usd(job.totals.cost_usd);
    if (root.dataset.canAct === "yes") {
      document.getElementById("cancel-form").hidden = ACTIVE.indexOf(job.status) < 0;
      document.getElementById("resume-form").hidden = ["cancelled", "failed"].indexOf(job.status) < 0;
    }
    // The question: with the answer box for a key that may answer, else with the reason it may not (job.html).
    const waiting = job.status === "waiting_for_input";
    document.getElementById("question").hidden = !waiting;
    const asked = job.question && job.question.question;
    if (waiting && asked) {
      document.getElementById("question-text").textContent = asked.question || "";
      document.getElementById("question-role").textContent = asked.role ? "asked by the " + asked.role + " (round " + (asked.round || 0) + ")" : "";
      // a stale page answers with the id of the question it shows: the service refuses it (409) once the job moved on
      const id = document.getElementById("question-id");
      if (id) id.value = asked.question_id || "";
    }
    jobCharts(job);
  }
  function jobPage() {
    const root = document.getElementById("job");
    const jobId = root.dataset.job;
    let job = readJson("job-data");
    const body = document.querySelector("#timeline tbody");
    const numbers = attemptNumbers(job); // grows with the attempts the event stream announces
    (readJson("job-events") || []).forEach((e, i) => addTimeline(body, e, i + 1, numbers));
    let count = body.children.length;
    showJob(job, root);
    let pending = null;
    let latest = 0;
    function refresh() {
      if (pending) return;
      pending = setTimeout(function () {
        pending = null;
        const mine = (latest += 1);
        const get = (url) => fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then((r) => (r.ok ? r.json() : Promise.reject(r.status)));
        const id = encodeURIComponent(jobId);
        // The job (status, totals, charts) and its attempts and LLM-calls rows as the server renders them.
        Promise.all([get("/api/v1/jobs/" + id), get("/jobs/" + id + "/rows?chosen=" + encodeURIComponent(root.dataset.chosen))])
          .then(function ([j, rows]) {
            if (mine !== latest) return; // a later refresh was sent: its answer is the newer one
            job = j;
            showJob(job, root);
            document.querySelector("#attempts tbody").innerHTML = rows.attempts;
            document.querySelector("#llm-calls tbody").innerHTML = rows.llm_calls;
          })
          .catch(function () { /* the next event retries */ });
      }, 150);
    }
    if (["queued", "running"].indexOf(job.status) < 0) return;
    const es = new EventSource("/api/v1/jobs/" + encodeURIComponent(jobId) + "/events?after=" + (root.dataset.after || 0));
    ["node", "attempt", "llm_call", "interrupt", "finished", "profile"].forEach(function (kind) {
      es.addEventListener(kind, function (msg) {
        count += 1;
        addTimeline(body, JSON.parse(msg.data), count, numbers);
        refresh();
      });
    });
    es.addEventListener("end", function () {
      es.close();
      refresh();
    });
  }

  /* ---- jobs table --------------------------------------------------------------------------------- */
  function jobsPage() {
    const form = document.getElementById("submit-form");
    if (form) {
      const sync = function () {
        const kind = form.querySelector("input[name=kind]:checked").value;
        form.querySelectorAll("[data-kind]").forEach((el) => { el.hidden = el.dataset.kind !== kind; });
      };
      form.querySelectorAll("input[name=kind]").forEach((el) => el.addEventListener("change", sync));
      sync();
    }
    const table = document.getElementById("jobs-table");
    const body = table.querySelector("tbody");
    const rows = () => Array.from(body.querySelectorAll("tr[data-job]"));
    const state = document.getElementById("live-state");
    // The rows shown, and the jobs created since the page read them that match its filters (event new_job).
    const query = new URLSearchParams(table.dataset.filters);
    query.set("ids", rows().map((r) => r.dataset.job).join(","));
    query.set("since", table.dataset.since);
    const es = new EventSource("/jobs/live?" + query.toString());
    es.onopen = function () { state.textContent = "● live"; };
    es.onerror = function () { state.textContent = "reconnecting…"; };
    es.addEventListener("service_stopping", function () { state.textContent = "service stopping: reconnecting…"; });
    es.addEventListener("job", function (msg) {
      const j = JSON.parse(msg.data);
      const tr = body.querySelector('tr[data-job="' + j.id + '"]');
      if (!tr) return;
      const set = (field, value) => { const el = tr.querySelector('[data-field="' + field + '"]'); if (el) el.textContent = value; };
      const status = tr.querySelector('[data-field="status"]');
      status.className = "status s-" + j.status;
      status.title = j.message;
      set("status", j.status);
      set("models", j.models);
      set("best_score", p(j.best_score));
      set("rounds_used", j.rounds_used);
      set("tokens", num(j.tokens));
      set("cost_usd", usd(j.cost_usd));
    });
    let unseen = 0;
    es.addEventListener("new_job", function (msg) {
      const j = JSON.parse(msg.data);
      if (body.querySelector('tr[data-job="' + j.id + '"]')) return;
      if (table.dataset.newRows !== "insert") {
        // Another order or page: where the job belongs is not on this page; say that it exists.
        unseen += 1;
        document.querySelector("#new-jobs [data-new-count]").textContent = unseen;
        document.getElementById("new-jobs").hidden = false;
        return;
      }
      // The first page, newest first: the job goes in its place by submission time.
      const shown = rows();
      const pageSize = Number(table.dataset.pageSize);
      const next = shown.find((r) => r.dataset.created < j.created_at);
      if (!next && shown.length >= pageSize) return; // older than a full page: it belongs to a later one
      const tpl = document.createElement("template");
      tpl.innerHTML = j.html.trim();
      const empty = body.querySelector("tr.no-rows");
      if (empty) empty.remove();
      ["compare-form", "range"].forEach((id) => { const el = document.getElementById(id); if (el) el.hidden = false; });
      body.insertBefore(tpl.content.firstElementChild, next || null);
      if (shown.length + 1 > pageSize) shown[shown.length - 1].remove();
      document.querySelectorAll("[data-total]").forEach((el) => { el.textContent = Number(el.textContent) + 1; });
      document.querySelectorAll("[data-shown-to]").forEach((el) => { el.textContent = rows().length; });
    });
  }

  /* ---- leaderboard and costs ---------------------------------------------------------------------- */
  function leaderboardPage() {
    const data = readJson("leaderboard-data");
    const thresholds = ["1", "2", "4", "8"];
    const n = data.shares.length;
    plot("shares", document.getElementById("chart-shares"), {
      scales: { x: { time: false, range: [-0.5, 3.5] }, y: { range: [0, 100] } },
      axes: [{ label: "best P at least", incrs: WHOLE_STEPS, values: (u, splits) => splits.map((s) => (thresholds[s] ? "P ≥ " + thresholds[s] : "")) },
             { label: "share of tasks tried (%)" }],
      legendAt: 0,
      series: [{ label: "threshold", value: (u, v) => (v === null ? "–" : "P ≥ " + thresholds[v]) }].concat(data.shares.map((s, i) =>
        series(s.precision + (s.gpu ? " · " + s.gpu : "") + " (" + num(s.tasks) + " tasks)", i, {
          fill: COLORS[i % COLORS.length] + "cc", points: { show: false }, paths: groupedBars(i, n),
          value: (u, v) => (v === null || v === undefined ? "–" : pct(v / 100)),
        }))),
    }, [[0, 1, 2, 3]].concat(data.shares.map((s) => thresholds.map((t) => 100 * s.at_least[t]))));
  }
  /* Bars of `n` series side by side in each x slot (0.8 of a slot shared out), never drawn over each other.
     Each chart keeps the pixel spans it drew per series (u.cmBars[i] = [[left, right], ...]). */
  function groupedBars(i, n) {
    const group = 0.8;
    const share = group / Math.max(n, 1);
    return function (u, sidx, i0, i1) {
      const fill = new Path2D();
      const spans = [];
      const zero = u.valToPos(0, "y", true);
      for (let k = i0; k <= i1; k++) {
        const v = u.data[sidx][k];
        if (v === null || v === undefined) continue;
        const left = u.data[0][k] - group / 2 + i * share;
        const x0 = u.valToPos(left, "x", true);
        const x1 = u.valToPos(left + share, "x", true) - 1;
        const y = u.valToPos(v, "y", true);
        fill.rect(x0, Math.min(y, zero), Math.max(1, x1 - x0), Math.abs(zero - y));
        spans.push([x0, x1]);
      }
      (u.cmBars = u.cmBars || {})[i] = spans;
      return { stroke: fill, fill: fill };
    };
  }
  /* The x range of a chart of days: up to today (never a future day), back to the first day with data or at least
     a week (no more than the window asked for), half a day either side; its ticks fall on days, never hours. */
  const DAY = 86400;
  function dayRange(xs, today, days) {
    const last = Math.max(today, xs.length ? xs[xs.length - 1] : today);
    const first = Math.min(xs.length ? xs[0] : last, last - (Math.min(days, 7) - 1) * DAY);
    return [first - DAY / 2, last + DAY / 2];
  }
  function dayAxis(label) {
    return { label: label, incrs: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY, 91 * DAY, 365 * DAY],
             values: (u, splits) => splits.map((s) => new Date(s * 1000).toISOString().slice(5, 10)) };
  }
  function costsPage() {
    const data = readJson("costs-data");
    const days = Array.from(new Set(data.per_model_day.map((d) => d.day))).sort();
    const models = Array.from(new Set(data.per_model_day.map((d) => d.model))).sort();
    const xs = days.map((d) => Date.parse(d + "T00:00:00Z") / 1000);
    const el = document.getElementById("chart-costs");
    const today = Date.parse(el.dataset.today + "T00:00:00Z") / 1000;
    plot("costs", el, {
      scales: { x: { time: true, range: () => dayRange(xs, today, Number(el.dataset.days)) }, y: { range: (u, min, max) => [0, Math.max(0.01, max * 1.1)] } },
      axes: [dayAxis("day (UTC, month-day)"), { label: "cost (US$)", size: 84, values: (u, splits) => splits.map((s) => usd(s)) }],
      series: [{ label: "day", value: (u, v) => (v === null ? "–" : new Date(v * 1000).toISOString().slice(0, 10)) }]
        .concat(models.map((m, i) => series(m, i, { value: (u, v) => usd(v) }))),
    }, [xs].concat(models.map((m) => days.map((d) => {
      const row = data.per_model_day.find((r) => r.day === d && r.model === m);
      return row ? row.cost_usd : null;
    }))));
  }

  /* ---- campaigns ---------------------------------------------------------------------------------- */
  // A campaign changes when its jobs do: while one may still change, its page asks the server every few
  // seconds for the parts it renders (the same HTML as the page) and redraws the chart.
  const POLL_MS = 2000;
  function poll(url, apply, state) {
    function tick() {
      fetch(url(), { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then((r) => (r.ok ? r.json() : Promise.reject(r.status)))
        .then(function (body) {
          state.textContent = "● live";
          if (apply(body)) setTimeout(tick, POLL_MS);
          else state.textContent = "";
        })
        .catch(function () { state.textContent = "reconnecting…"; setTimeout(tick, 2 * POLL_MS); });
    }
    setTimeout(tick, POLL_MS);
  }
  function successChart(data) {
    const taus = data.taus;
    const label = (i) => (taus[i] === undefined ? "" : taus[i] === 0 ? "correct" : "P ≥ " + taus[i]);
    plot("success", document.getElementById("chart-success"), {
      scales: { x: { time: false, range: [-0.2, taus.length - 0.8] }, y: { range: [0, 100] } },
      axes: [{ label: "τ (best P at least; τ = 0: a correct kernel)", incrs: WHOLE_STEPS, values: (u, splits) => splits.map(label) },
             { label: "share of variants (%)" }],
      legendAt: 0,
      series: [{ label: "τ", value: (u, v) => (v === null ? "–" : label(v)) }]
        .concat(data.series.map((s, i) => series(s.label, i, { value: (u, v) => (v === null ? "–" : pct(v / 100)) }))),
    }, [taus.map((_, i) => i)].concat(data.series.map((s) => s.share.map((x) => 100 * x))));
  }
  function campaignPage() {
    const root = document.getElementById("campaign");
    successChart(readJson("campaign-chart"));
    if (root.dataset.live !== "yes") return;
    const id = encodeURIComponent(root.dataset.campaign);
    poll(() => "/campaigns/" + id + "/live", function (c) {
      const status = document.getElementById("campaign-status");
      status.textContent = c.status;
      status.className = "status s-" + c.status;
      document.getElementById("campaign-message").textContent = c.message;
      document.getElementById("campaign-progress").innerHTML = c.progress;
      document.querySelector("#variants tbody").innerHTML = c.variants;
      document.getElementById("report").innerHTML = c.tables;
      if (root.dataset.canAct === "yes") {
        document.getElementById("cancel-form").hidden = !c.can_cancel;
        document.getElementById("resume-form").hidden = !c.can_resume;
      }
      successChart(c.chart);
      root.dataset.live = c.live ? "yes" : "no";
      return c.live;
    }, document.getElementById("live-state"));
  }
  function campaignsPage() {
    const table = document.getElementById("campaigns-table");
    if (table.dataset.live !== "yes") return;
    poll(() => "/campaigns/rows?" + table.dataset.query, function (page) {
      table.querySelector("tbody").innerHTML = page.rows;
      document.querySelectorAll("[data-total]").forEach((el) => { el.textContent = page.total; });
      table.dataset.live = page.live ? "yes" : "no";
      return page.live;
    }, document.getElementById("live-state"));
  }

  const pages = { job: jobPage, jobs: jobsPage, leaderboard: leaderboardPage, costs: costsPage, campaign: campaignPage, campaigns: campaignsPage };
  const run = pages[document.body.dataset.page];
  if (run) run();
})();
