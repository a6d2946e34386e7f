#include "observe/html_report.hpp"
#include "base/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "observe/trace.hpp"
#include "memory/size.hpp"

namespace proofline::observe {

using base::fixed;

namespace {

using json = nlohmann::json;

/// Utilization bins per chart: finer than any screen needs at zoom 1, coarse
/// enough to keep the page small (a number of ~6 bytes each).
constexpr size_t utilization_bins = 600;

/// Span categories in the order the page's data indexes them, with their colours.
const std::vector<std::string> categories{"synthesize", "prove", "device", "transfer", "busy",
                                          "finalize",   "purge", "key",    "witness"};
const std::vector<std::string> category_colours{"#4e79a7", "#f28e2b", "#59a14f",
                                                "#76b7b2", "#2e7d32", "#e15759",
                                                "#b07aa1", "#edc948", "#9c755f"};

/// Milliseconds to the microsecond: enough for any span, and a smaller page.
double ms3(double ms) { return std::round(ms * 1000.0) / 1000.0; }

std::string percent(double fraction) { return fixed(fraction * 100.0, 1) + "%"; }

/// JSON text safe inside a <script> element: '<', '>' and '&' only occur in
/// strings there, where the \u escapes mean the same characters.
std::string script_json(const json& j) {
  std::string text = j.dump();
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else
      out += c;
  }
  return out;
}

json page_data(const run_record& rec, const run_report& report) {
  json lanes = json::array();
  for (const auto& l : build_lanes(rec)) {
    json spans = json::array();
    for (const auto& s : l.spans) {
      auto cat = std::find(categories.begin(), categories.end(), s.category) - categories.begin();
      std::string who = s.partition >= 0 ? s.job + "/" + std::to_string(s.partition) : "";
      spans.push_back({ms3(s.start_ms), ms3(s.end_ms), cat, s.name, who});
    }
    lanes.push_back({{"group", l.group}, {"name", l.name}, {"spans", std::move(spans)}});
  }

  // Utilization over time per backend, from the union of its device spans.
  double wall = std::max(rec.wall_ms, 1e-3);
  json util = json::array();
  for (const auto& g : report.gpus) {
    std::vector<std::pair<double, double>> spans;
    for (const auto& j : rec.jobs)
      for (const auto& p : j.partitions)
        if (p.spans.gpu == g.device)
          for (const auto& s : p.spans.device) spans.emplace_back(s.start, s.end);
    json bins = json::array();
    for (double f : busy_series(union_of(std::move(spans)), 0, wall, utilization_bins))
      bins.push_back(std::round(f * 1000.0) / 1000.0);
    json nvml = json::array();
    if (g.cuda_device >= 0)
      if (auto idx = gpu::nvml_index_of_cuda_device(g.cuda_device, rec.nvml_devices))
        for (const auto& s : rec.nvml_samples)
          if (s.device == *idx) nvml.push_back({ms3(s.t_ms), s.gpu_percent});
    util.push_back({{"group", group_name(rec, g.device)},
                    {"bin_ms", wall / utilization_bins},
                    {"busy", std::move(bins)},
                    {"busy_fraction", g.util.busy_fraction},
                    {"nvml", std::move(nvml)}});
  }

  json queues = json::array();
  for (const auto& q : report.queues) queues.push_back({ms3(q.t_ms), q.ready, q.waiting_memory});

  return {{"wall_ms", wall},
          {"categories", categories},
          {"lanes", std::move(lanes)},
          {"util", std::move(util)},
          {"queues", std::move(queues)}};
}

/// Every job of the run: id, status, partitions proved of all, out
/// directory and error (plain HTML, readable without scripts).
std::string jobs_html(const run_report& r) {
  std::string h = "<h2>Jobs</h2>\n<table class=\"jobs\">\n<tr><th>job</th><th>status</th>"
                  "<th>partitions</th><th>output</th><th>error</th></tr>\n";
  for (const auto& j : r.job_table)
    h += "<tr class=\"job-" + html_escape(j.status) + "\"><td>" + html_escape(j.id) + "</td><td>" +
         html_escape(j.status) + "</td><td>" + std::to_string(j.done) + "/" +
         std::to_string(j.total) + "</td><td>" + html_escape(j.out) + "</td><td>" +
         (j.has_error ? html_escape(j.error.message) : std::string()) + "</td></tr>\n";
  return h + "</table>\n";
}

/// The summary figures as an HTML table.
std::string summary_html(const run_record& rec, const run_report& r) {
  std::string h = "<table class=\"summary\">\n";
  auto row = [&](const std::string& key, const std::string& value) {
    h += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>\n";
  };
  if (!r.job_file.empty()) row("job file", r.job_file);
  if (!r.started_at.empty()) row("started", r.started_at);
  row("proofs", std::to_string(r.proofs) + " of " + std::to_string(r.partitions) + " partitions (" +
                    std::to_string(r.failed) + " failed), " + std::to_string(r.jobs) + " job(s)");
  row("wall time", fixed(r.wall_ms / 1000.0, 3) + " s (" + fixed(r.proofs_per_s, 2) + " proofs/s)");
  row("backend", r.backend.empty() ? "none" : r.backend);
  for (const auto& g : r.gpus) {
    const auto& u = g.util;
    std::string busy = percent(u.busy_fraction) + " of " + fixed(u.wall_ms / 1000.0, 3) + " s (" +
                       std::to_string(u.partitions) + " partitions)";
    if (g.nvml_busy_fraction)
      busy += "; NVML " + percent(*g.nvml_busy_fraction) + " over " +
              std::to_string(g.nvml_samples) + " samples";
    row(group_name(rec, g.device) + " busy" + (g.name.empty() ? "" : " — " + g.name), busy);
    row(group_name(rec, g.device) + " hand-off gaps",
        "p50 " + fixed(u.gap_p50_ms, 3) + " ms, p99 " + fixed(u.gap_p99_ms, 3) + " ms, max " +
            fixed(u.gap_max_ms, 3) + " ms over " + std::to_string(u.gaps_ms.size()) + " gaps");
  }
  if (!r.nvml_available) row("NVML", "no samples: " + r.nvml_why);
  auto stage = [&](const char* name, const stage_times& t) {
    if (t.count)
      row(std::string(name) + " per partition", "p50 " + fixed(t.p50_ms, 1) + " ms, p99 " +
                                                    fixed(t.p99_ms, 1) + " ms, max " +
                                                    fixed(t.max_ms, 1) + " ms");
  };
  stage("synthesis", r.synthesize);
  stage("proving", r.prove);
  stage("finalization", r.finalize);
  if (r.memory) {
    const auto& m = *r.memory;
    row("memory", "peak reserved " + memory::format_bytes(m.peak_reserved) + " of a " +
                      memory::format_bytes(m.budget) + " budget; peak RSS " +
                      memory::format_bytes(m.peak_rss));
    std::string threads;
    for (const auto& t : m.purge_threads) threads += (threads.empty() ? "" : ", ") + t;
    row("purges", std::to_string(m.purges_run) + " (" + std::to_string(m.purges) + " requests), " +
                      fixed(m.purge_ms_total, 1) + " ms in all, max " + fixed(m.purge_ms_max, 1) +
                      " ms" + (threads.empty() ? "" : ", on " + threads));
  }
  h += "</table>\n";
  return h;
}

const char* const page_style = R"(
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 8px; }
h2 { font-size: 15px; margin: 18px 0 6px; }
table.summary { border-collapse: collapse; }
table.summary th { text-align: left; padding: 2px 14px 2px 0; font-weight: 600; white-space: nowrap; }
table.summary td { padding: 2px 0; }
table.jobs { border-collapse: collapse; }
table.jobs th, table.jobs td { text-align: left; padding: 2px 14px 2px 0; }
table.jobs tr.job-failed td, table.jobs tr.job-cancelled td { color: #b71c1c; }
#controls button { margin-right: 6px; }
#plots { overflow-x: auto; border: 1px solid #ddd; padding: 4px 0; }
.legend span { display: inline-block; margin-right: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
.group-label { font-weight: 600; font-size: 12px; }
.lane-label, .axis text, .chart-label { font-size: 11px; fill: #444; }
.lane-bg { fill: #f6f6f6; }
.axis line { stroke: #ccc; }
.busy-area { fill: #59a14f; fill-opacity: 0.5; stroke: #2e7d32; stroke-width: 1; }
.nvml-line { fill: none; stroke: #d62728; stroke-width: 1.5; }
.ready-line { fill: none; stroke: #4e79a7; stroke-width: 1.5; }
.waiting-line { fill: none; stroke: #e15759; stroke-width: 1.5; }
.chart-label.ready-label { fill: #4e79a7; } .chart-label.waiting-label { fill: #e15759; }
.chart-label.nvml-label { fill: #d62728; }
)";

// Draws the lanes and charts from the embedded data. Everything shares one
// x mapping (labelW + t / wall * plotW), so charts line up with the lanes.
const char* const page_script = R"(
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('proofline-data').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  const labelW = 190, rowH = 16, groupH = 20, axisH = 22, chartH = 70;
  let zoom = 1;

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, attrs, s) {
    const t = el('text', attrs, parent);
    t.textContent = s;
    return t;
  }
  function fmtMs(ms) {
    if (ms >= 1000) return (ms / 1000).toFixed(3) + ' s';
    return ms.toFixed(ms < 10 ? 3 : 1) + ' ms';
  }
  function niceStep(range, ticks) {
    const raw = range / ticks;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5]) if (m * p >= raw) return m * p;
    return 10 * p;
  }
  function axis(svg, x, wall, height) {
    const g = el('g', {class: 'axis'}, svg);
    const step = niceStep(wall, Math.max(2, Math.floor((x(wall) - labelW) / 90)));
    for (let t = 0; t <= wall + 1e-9; t += step) {
      el('line', {x1: x(t), x2: x(t), y1: axisH - 4, y2: height}, g);
      text(g, {x: x(t) + 2, y: axisH - 8}, fmtMs(t));
    }
  }

  function drawLanes(box, x, width) {
    let rows = 0, groups = 0, last = null;
    for (const l of data.lanes) {
      if (l.group !== last) { groups++; last = l.group; }
      rows++;
    }
    const height = axisH + groups * groupH + rows * rowH;
    const svg = el('svg', {class: 'timeline', width: width, height: height}, box);
    axis(svg, x, data.wall_ms, height);
    let y = axisH;
    last = null;
    for (const l of data.lanes) {
      if (l.group !== last) {
        text(svg, {class: 'group-label', x: 4, y: y + 14}, l.group);
        y += groupH;
        last = l.group;
      }
      const g = el('g', {class: 'lane', 'data-group': l.group, 'data-lane': l.name}, svg);
      el('rect', {class: 'lane-bg', x: labelW, y: y, width: width - labelW, height: rowH - 2}, g);
      text(g, {class: 'lane-label', x: 14, y: y + 11}, l.name);
      for (const s of l.spans) {  // [start, end, category, name, job/partition]
        const r = el('rect', {class: 'span cat-' + data.categories[s[2]], x: x(s[0]), y: y + 1,
                              width: Math.max(0.5, x(s[1]) - x(s[0])), height: rowH - 4}, g);
        const tip = el('title', {}, r);
        tip.textContent = (s[4] ? s[4] + ' ' : '') + s[3] + ': ' + fmtMs(s[1] - s[0]) +
                          ', from ' + fmtMs(s[0]);
      }
      y += rowH;
    }
  }

  function drawUtil(box, x, width) {
    for (const u of data.util) {
      const svg = el('svg', {class: 'util', 'data-group': u.group, width: width,
                             height: chartH + 16}, box);
      const y = f => 4 + (1 - f) * chartH;
      text(svg, {class: 'chart-label', x: 4, y: 14}, u.group + ' busy');
      text(svg, {class: 'chart-label', x: 4, y: 28},
           (u.busy_fraction * 100).toFixed(1) + '% overall');
      text(svg, {class: 'chart-label', x: labelW - 30, y: y(1) + 8}, '100%');
      text(svg, {class: 'chart-label', x: labelW - 20, y: y(0)}, '0%');
      el('rect', {class: 'lane-bg', x: labelW, y: y(1), width: width - labelW, height: chartH}, svg);
      let d = 'M' + x(0) + ',' + y(0);
      u.busy.forEach((f, i) => {
        d += 'L' + x(i * u.bin_ms) + ',' + y(f) + 'L' + x((i + 1) * u.bin_ms) + ',' + y(f);
      });
      d += 'L' + x(u.busy.length * u.bin_ms) + ',' + y(0) + 'Z';
      el('path', {class: 'busy-area', d: d}, svg);
      if (u.nvml.length) {
        text(svg, {class: 'chart-label nvml-label', x: 4, y: 42}, 'NVML samples');
        const pts = u.nvml.map(p => x(p[0]) + ',' + y(p[1] / 100)).join(' ');
        el('polyline', {class: 'nvml-line', points: pts}, svg);
      }
    }
  }

  function drawQueues(box, x, width) {
    if (!data.queues.length) return;
    let top = 1;
    for (const q of data.queues) top = Math.max(top, q[1], q[2]);
    const svg = el('svg', {class: 'queues', width: width, height: chartH + 16}, box);
    const y = v => 4 + (1 - v / top) * chartH;
    text(svg, {class: 'chart-label', x: 4, y: 14}, 'queued partitions');
    text(svg, {class: 'chart-label ready-label', x: 4, y: 28}, 'ready to prove');
    text(svg, {class: 'chart-label waiting-label', x: 4, y: 42}, 'waiting (memory, pacing)');
    text(svg, {class: 'chart-label', x: labelW - 30, y: y(top) + 8}, String(top));
    el('rect', {class: 'lane-bg', x: labelW, y: y(top), width: width - labelW, height: chartH}, svg);
    const line = (i, cls) => el('polyline', {class: cls, points:
        data.queues.map(q => x(q[0]) + ',' + y(q[i])).join(' ')}, svg);
    line(1, 'ready-line');
    line(2, 'waiting-line');
  }

  function draw() {
    const box = document.getElementById('plots');
    box.textContent = '';
    const width = Math.round(Math.max(700, (box.clientWidth || 1100) - 10) * zoom);
    const wall = Math.max(data.wall_ms, 1e-3);
    const x = t => labelW + (t / wall) * (width - labelW - 10);
    drawUtil(box, x, width);
    drawQueues(box, x, width);
    drawLanes(box, x, width);
  }

  document.getElementById('zoom-in').onclick = () => { zoom = Math.min(zoom * 2, 1024); draw(); };
  document.getElementById('zoom-out').onclick = () => { zoom = Math.max(zoom / 2, 1); draw(); };
  document.getElementById('zoom-fit').onclick = () => { zoom = 1; draw(); };
  window.addEventListener('resize', draw);
  draw();
})();
)";

}  // namespace

std::vector<double> busy_series(const std::vector<std::pair<double, double>>& busy, double t0,
                                double t1, size_t bins) {
  std::vector<double> out(bins, 0.0);
  if (bins == 0 || !(t1 > t0)) return out;
  const double width = (t1 - t0) / static_cast<double>(bins);
  for (const auto& [start, end] : busy) {
    double s = std::max(start, t0), e = std::min(end, t1);
    if (!(e > s)) continue;
    auto first = static_cast<size_t>((s - t0) / width);
    for (size_t b = std::min(first, bins - 1); b < bins; ++b) {
      double lo = t0 + width * static_cast<double>(b), hi = lo + width;
      if (lo >= e) break;
      double covered = std::min(hi, e) - std::max(lo, s);
      if (covered > 0) out[b] += covered / width;
    }
  }
  for (double& f : out) f = std::min(f, 1.0);  // rounding at bin edges only
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

std::string html_report(const run_record& rec, const run_report& report) {
  std::string title = "proofline run: " + std::to_string(report.proofs) + " proofs in " +
                      fixed(report.wall_ms / 1000.0, 3) + " s";
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>" + html_escape(title) + "</title>\n<style>" + page_style;
  // A category's colour fills its SVG spans and its legend swatch.
  for (size_t c = 0; c < categories.size(); ++c)
    h += ".cat-" + categories[c] + " { fill: " + category_colours[c] +
         "; background: " + category_colours[c] + "; }\n";
  h += "</style>\n</head>\n";
  h += "<body>\n<h1>" + html_escape(title) + "</h1>\n";
  h += summary_html(rec, report);
  h += jobs_html(report);
  h += "<h2>Timeline</h2>\n<p class=\"legend\">";
  for (const auto& c : categories) h += "<span><i class=\"cat-" + c + "\"></i>" + c + "</span>";
  if (report.backend == "cpu")
    h += "</p>\n<p>backend: cpu (no GPU in this run). Device spans are the CPU backend's "
         "proving time; the busy lane is their union, so gaps between partitions show as "
         "breaks. Utilization charts: the busy fraction of the CPU backend from those spans. "
         "Hover a span for its partition and duration.</p>\n";
  else
    h += "</p>\n<p>Device spans are the backend's own (CUDA events on a GPU); the busy lane is "
         "their union, so gaps between partitions show as breaks. Utilization charts: green is "
         "the busy fraction from device spans, red NVML's samples. Hover a span for its "
         "partition and duration.</p>\n";
  h += "<div id=\"controls\"><button id=\"zoom-in\">zoom in</button><button "
       "id=\"zoom-out\">zoom out</button><button id=\"zoom-fit\">fit</button></div>\n";
  h += "<div id=\"plots\"></div>\n<noscript>The timeline needs JavaScript; the figures above "
       "do not.</noscript>\n";
  h += "<script type=\"application/json\" id=\"proofline-data\">" +
       script_json(page_data(rec, report)) + "</script>\n";
  h += "<script>" + std::string(page_script) + "</script>\n</body>\n</html>\n";
  return h;
}

}  // namespace proofline::observe
