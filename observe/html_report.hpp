// The HTML report (`--html FILE`): one self-contained page, no external
// assets, that shows a run: the summary figures, every lane of the trace
// (observe/trace.hpp) on one time axis, each GPU's utilization over time (from
// its device spans, with NVML's samples beside it when there are any) and the
// queue depths.
//
// The page carries its data as JSON in a <script type="application/json">
// element and draws inline SVG from it with a small script: each lane is a
// <g class="lane" data-group=... data-lane=...>, each utilization chart an
// <svg class="util" data-group=...>. The summary table is plain HTML, so the
// figures read without scripts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "observe/report.hpp"

namespace proofline::observe {

/// Fraction of each of `bins` equal stretches of [t0, t1) covered by
/// `busy` (sorted, disjoint intervals as union_of returns). O(B + I).
std::vector<double> busy_series(const std::vector<std::pair<double, double>>& busy, double t0,
                                double t1, size_t bins);

/// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string html_escape(const std::string& text);

/// The page for a run and its report.
std::string html_report(const run_record& rec, const run_report& report);

}  // namespace proofline::observe
