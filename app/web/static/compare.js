/* cudamaster comparison pages (app/web/compare_pages.py): the runs' or campaigns' curves overlaid, one
   colour per column (the tables' swatches use the same). Charts are uPlot (vendored) and are kept in
   window.cmCharts[name] like the other pages' (.data holds exactly what is plotted). */
(function () {
  "use strict";
  const COLORS = ["#1f6f43", "#0b5cad", "#b42318", "#a15c07", "#6941c6", "#0e7490", "#be185d", "#4d7c0f", "#374151", "#c2410c"];
  const DASHES = [[], [8, 4], [2, 4], [12, 4, 2, 4]]; // equal curves (a common case in an ablation) stay visible
  const charts = (window.cmCharts = window.cmCharts || {});
  const el = document.getElementById("compare-data");
  if (!el || typeof uPlot === "undefined") return;
  const data = JSON.parse(el.textContent);

  document.querySelectorAll(".swatch[data-color]").forEach(function (s) {
    s.style.background = COLORS[Number(s.dataset.color) % COLORS.length];
  });

  /* The legend shows the values at the hovered point, and at `rest` (an x index) when nothing is hovered. */
  function series(label, i, rest, fmt) {
    return { label: label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true, points: { show: true, size: 6 }, dash: DASHES[i % DASHES.length],
             value: (u, v, si, idx) => fmt(u.data[si][idx === null ? rest : idx]) };
  }
  function xSeries(label, rest, name) {
    return { label: label, value: (u, v, si, idx) => name(u.data[0][idx === null ? rest : idx]) };
  }
  function fixed(digits, unit) {
    return (v) => (v === null || v === undefined ? "–" : v.toFixed(digits) + unit);
  }
  function plot(name, target, opts, rows) {
    if (!target) return;
    target.textContent = "";
    const hasData = rows.length > 1 && rows[0].length > 0 && rows.slice(1).some((s) => s.some((v) => v !== null));
    if (!hasData) {
      const none = document.createElement("div");
      none.className = "nodata";
      none.textContent = "No data.";
      target.appendChild(none);
    }
    const width = Math.max(280, target.clientWidth || 400);
    const u = new uPlot(Object.assign({ width: width, height: 280, legend: { live: true } }, opts), rows, target);
    if (!hasData) u.root.style.display = "none";
    charts[name] = u;
  }
  window.addEventListener("resize", function () {
    ["compare_speedup", "compare_roofline", "compare_success"].forEach(function (name) {
      const u = charts[name];
      if (u) u.setSize({ width: Math.max(280, u.root.parentElement.clientWidth || 400), height: 280 });
    });
  });
  function short(s) {
    if (s === null || s === undefined) return "";
    return s >= 1e9 ? s / 1e9 + "G" : s >= 1e6 ? s / 1e6 + "M" : s >= 1e3 ? s / 1e3 + "k" : String(s);
  }

  function runCharts() {
    const labels = data.runs.map(function (r) {
      const name = data.kind === "jobs" ? r.job_id : "attempt #" + r.attempt_number + " of " + r.job_id;
      return name + " (P " + (r.score === null ? "–" : r.score.toFixed(3)) + ")";
    });
    const xs = data.sizes.map((s) => s.size);
    const names = new Map(data.sizes.map((s) => [s.size, s.label]));
    const logX = xs.length > 1 && xs[0] > 0 && xs[xs.length - 1] / xs[0] >= 10;
    const xAxis = { label: "problem size (product of the size parameters)" + (logX ? ", log" : ""), values: (u, splits) => splits.map(short) };
    const last = Math.max(0, xs.length - 1);
    const sizeX = xSeries("size", last, (v) => (v === null || v === undefined ? "–" : names.get(v) || String(v)));
    const speed = data.runs.map((_, i) => data.sizes.map((s) => s.speedup[i]));
    const pos = speed.flat().filter((v) => v !== null && v > 0);
    const logY = pos.length > 0 && Math.max(...pos) / Math.min(...pos) >= 10;
    plot("compare_speedup", document.getElementById("chart-compare-speedup"), {
      scales: { x: { time: false, distr: logX ? 3 : 1 }, y: { distr: logY ? 3 : 1 } },
      axes: [xAxis, { label: "speedup over baseline (×" + (logY ? ", log" : "") + ")" }],
      series: [sizeX].concat(labels.map((l, i) => series(l, i, last, fixed(3, "×")))),
    }, [xs].concat(speed));
    plot("compare_roofline", document.getElementById("chart-compare-roofline"), {
      scales: { x: { time: false, distr: logX ? 3 : 1 }, y: { range: (u, min, max) => [0, Math.max(100, max || 0)] } },
      axes: [xAxis, { label: "roofline floor / time (%)" }],
      series: [sizeX].concat(labels.map((l, i) => series(l, i, last, fixed(1, "%")))),
    }, [xs].concat(data.runs.map((_, i) => data.sizes.map((s) => s.roofline_pct[i]))));
  }

  function campaignCharts() {
    const taus = data.taus;
    const xs = taus.map((_, i) => i);
    plot("compare_success", document.getElementById("chart-compare-success"), {
      scales: { x: { time: false }, y: { range: [0, 100] } },
      axes: [{ label: "tau", incrs: [1], values: (u, splits) => splits.map((s) => (taus[s] === 0 ? "correct" : taus[s] === undefined ? "" : "P ≥ " + taus[s])) },
             { label: "share of variants (%)" }],
      series: [xSeries("tau", 1, (v) => (v === null || v === undefined ? "–" : taus[v] === 0 ? "correct" : "P ≥ " + taus[v]))]
        .concat(data.campaigns.map((c, i) => series((c.name || c.id) + " (" + c.profile_tokens.mode + ")", i, 1, fixed(0, "%")))),
    }, [xs].concat(data.campaigns.map((c) => c.success.map((x) => 100 * x))));
  }

  if (data.runs) runCharts();
  if (data.campaigns) campaignCharts();
})();
