"""The run report: one self-contained HTML file with plots and a filterable list of sample pairs.

It is meant to be mailed, attached to a model card or opened on a machine without network, so
it holds no external assets: plots are inline SVG generated here, styles and the few lines of
filtering JavaScript are inline, and every piece of record text is HTML-escaped.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable, Iterator, Sequence
from html import escape
from pathlib import Path
from typing import Any

from prefbuild import __version__
from prefbuild.analysis.stats import (
    iter_pairs,
    iter_trajectories,
    pair_frame,
    pair_stats,
    record_files,
    trajectory_frames,
    trajectory_stats,
)
from prefbuild.analysis.svg import bar_chart, histogram
from prefbuild.analysis.text import clip, rate
from prefbuild.errors import PrefbuildError
from prefbuild.eval.views import evaluation_section
from prefbuild.io.jsonl import atomic_write_text
from prefbuild.io.overwrite import refuse_inputs_as_output
from prefbuild.io.permissions import make_shareable
from prefbuild.records import Pair

SAMPLE_LIMIT = 200
TEXT_LIMIT = 4000
SIMULATED_NOTE = (
    '<p class="simulated" id="simulated-note"><b>Simulated data.</b> Episodes of the <code>scripted</code> '
    "teacher backend were not played by a language model: an expert followed the environment's solution and made "
    "mistakes on purpose at the recipe's rates. Use them to test a pipeline, not as a model's real behaviour.</p>"
)

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:0 auto;max-width:1200px;padding:16px;color:#222}
h1{margin-bottom:4px}.sub{color:#666;margin-top:0}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px}
.card b{display:block;font-size:1.4em}.plots{display:flex;flex-wrap:wrap;gap:16px}
svg.plot{border:1px solid #eee;border-radius:6px;background:#fff}
.plot-title{font-weight:600;font-size:13px}.label,.value{font-size:11px;fill:#333}
table.counts{border-collapse:collapse;margin:8px 0}
table.counts td,table.counts th{border:1px solid #ddd;padding:2px 8px}
.filters{display:flex;gap:8px;flex-wrap:wrap;margin:8px 0;position:sticky;top:0;background:#fff;padding:6px 0}
article.sample{border:1px solid #ddd;border-radius:6px;margin:10px 0;padding:8px}
article.sample header{font-size:13px;color:#444}.reason{font-weight:700;color:#b00}
.side{display:grid;grid-template-columns:1fr 1fr;gap:8px}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:6px;border-radius:4px;font-size:12px}
pre.obs{background:#f3f6fb}.chosen pre{background:#eaf7ea}.rejected pre{background:#fbeaea}
.evidence{background:#fff6d5;padding:4px 6px;border-radius:4px;font-size:13px}
.simulated{background:#fff3cd;border:1px solid #e0c36c;padding:8px 12px;border-radius:6px}
"""

SCRIPT = """
(function(){
  var selects = document.querySelectorAll('.filters select');
  var text = document.getElementById('filter-text');
  var samples = document.querySelectorAll('article.sample');
  var counter = document.getElementById('sample-count');
  function apply(){
    var shown = 0, needle = (text.value || '').toLowerCase();
    samples.forEach(function(el){
      var ok = true;
      selects.forEach(function(sel){ if (sel.value && el.dataset[sel.dataset.key] !== sel.value) ok = false; });
      if (ok && needle && el.textContent.toLowerCase().indexOf(needle) < 0) ok = false;
      el.hidden = !ok; if (ok) shown++;
    });
    counter.textContent = shown + ' of ' + samples.length + ' samples shown';
  }
  selects.forEach(function(sel){ sel.addEventListener('change', apply); });
  text.addEventListener('input', apply);
  // A link such as report.html#reason=loop&task-type=clean opens with those filters set.
  location.hash.replace(/^#/, '').split('&').forEach(function(part){
    var kv = part.split('='); if (kv.length !== 2) return;
    var value = decodeURIComponent(kv[1]);
    var el = document.getElementById('filter-' + kv[0]);
    if (el) el.value = value;
  });
  document.body.dataset.ready = 'true';
  apply();
})();
"""


def _clip(text: str) -> str:
    return clip(text, TEXT_LIMIT)


def _reservoir(pairs: Iterable[Pair], keep: list[Pair], limit: int, seed: int) -> Iterator[Pair]:
    """Pass pairs through while keeping a seeded uniform sample of ``limit`` of them in ``keep``."""
    rng = random.Random(seed)
    for seen, pair in enumerate(pairs):
        if len(keep) < limit:
            keep.append(pair)
        elif (slot := rng.randrange(seen + 1)) < limit:
            keep[slot] = pair
        yield pair


def _counts_table(rows: Sequence[dict[str, Any]], key: str, table_id: str) -> str:
    body = "".join(f"<tr><td>{escape(str(row[key]))}</td><td>{row['count']}</td></tr>" for row in rows)
    return f'<table class="counts" id="{table_id}"><tr><th>{escape(key)}</th><th>count</th></tr>{body}</table>'


def _card(label: str, value: Any) -> str:
    return f'<div class="card">{escape(label)}<b>{escape(str(value))}</b></div>'


def _sample_html(pair: Pair) -> str:
    reason = pair.reason if pair.reason else "none"
    task_type = pair.source.task_type or "unknown"
    last = pair.prompt[-1]

    def turns(messages: Iterable[Any]) -> str:
        return "".join(f"<pre>[{m.role}] {escape(_clip(m.content))}</pre>" for m in messages)

    evidence = f'<div class="evidence">{escape(_clip(pair.evidence))}</div>' if pair.evidence else ""
    return (
        f'<article class="sample" data-reason="{escape(reason, quote=True)}" '
        f'data-strategy="{escape(pair.strategy, quote=True)}" data-task-type="{escape(task_type, quote=True)}" '
        f'data-split="{escape(pair.split, quote=True)}" id="{escape("sample-" + pair.id, quote=True)}">'
        f"<header><b>{escape(pair.id)}</b> · <span class=\"reason\">{escape(reason)}</span> · "
        f"{escape(pair.strategy)} · {escape(pair.split)} · task {escape(pair.source.task_id)} "
        f"({escape(task_type)}) · {escape(pair.source.teacher_model)}</header>"
        f"{evidence}<pre class=\"obs\">[{last.role}] {escape(_clip(last.content))}</pre>"
        f'<div class="side"><div class="chosen"><b>chosen</b>{turns(pair.chosen)}</div>'
        f'<div class="rejected"><b>rejected</b>{turns(pair.rejected)}</div></div></article>'
    )


def _select(key: str, label: str, values: Iterable[str]) -> str:
    options = "".join(f'<option value="{escape(v, quote=True)}">{escape(v)}</option>' for v in sorted(set(values)))
    return (f'<label>{escape(label)} <select id="filter-{key}" data-key="{_dataset_key(key)}">'
            f'<option value="">all</option>{options}</select></label>')


def _dataset_key(key: str) -> str:
    """``task-type`` -> ``taskType``: how ``data-task-type`` appears in ``element.dataset``."""
    head, *rest = key.split("-")
    return head + "".join(part.capitalize() for part in rest)


def build_report(path: str | os.PathLike[str], *, samples: int = SAMPLE_LIMIT, seed: int = 0) -> str:
    """The report of a run directory (or one record file) as one HTML string.

    Args:
        path: a run directory (its files come from ``prefbuild.io.rundir.run_record_files``, so every
            episode counts once) or one trajectory / pair file.
        samples: sample pairs to include (a seeded uniform sample).
        seed: seed of that sample.

    Returns:
        The HTML page; it says when the episodes are simulated (scripted teacher).

    Example:
        >>> html = build_report("runs/simulate")  # doctest: +SKIP
        >>> "Simulated data" in html  # doctest: +SKIP
        True
    """
    grouped = record_files(path)
    if not grouped["pair"] and not grouped["trajectory"]:
        raise PrefbuildError(f"{path}: no trajectory or pair records, nothing to report")
    title = Path(path).resolve().name
    sections: list[str] = []
    cards: list[str] = []
    plots: list[str] = []
    summary: dict[str, Any] = {}
    if grouped["trajectory"]:
        episodes, labels = trajectory_frames(iter_trajectories(grouped["trajectory"]))
        stats = trajectory_stats(episodes, labels)
        summary["trajectory"] = stats
        if stats["simulated"]:
            sections.append(SIMULATED_NOTE)
        cards += [_card("episodes", stats["trajectories"]), _card("tasks", stats["tasks"]),
                  _card("success rate", rate(stats["success_rate"]))]
        cards += [_card(name, f"{value:.1%}") for name, value in stats["pass_at_k"].items()]
        plots.append(bar_chart([(row["mode"], row["count"]) for row in stats["labels_by_mode"]],
                               "Failure modes (labels in episodes)", plot_id="plot-failure-modes"))
        plots.append(bar_chart([(row["task_type"], row["success_rate"]) for row in stats["success_by_task_type"]
                                if row["success_rate"] is not None],
                               "Success rate by task type", plot_id="plot-success-by-task-type", max_value=1.0,
                               fmt=lambda v: f"{v:.0%}", color="#54a24b"))
        plots.append(histogram(episodes["steps"].to_list(), "Episode lengths (steps)", plot_id="plot-episode-lengths"))
        plots.append(histogram(episodes["output_tokens"].to_list(), "Teacher output per episode (tokens)",
                               plot_id="plot-episode-tokens"))
        sections.append("<h2>Episodes</h2>" + _counts_table(stats["by_stop_reason"], "stop_reason", "table-stop")
                        + _success_table(stats["success_by_task_type"])
                        + _passk_table(stats["pass_at_k_by_domain"]))
        sections.append(evaluation_section(path))
    kept: list[Pair] = []
    if grouped["pair"]:
        frame = pair_frame(_reservoir(iter_pairs(grouped["pair"]), kept, samples, seed))
        stats = pair_stats(frame)
        summary["pair"] = stats
        cards.append(_card("pairs", stats["pairs"]))
        cards += [_card(f"{row['split']} pairs", row["count"]) for row in stats["by_split"]]
        if not grouped["trajectory"]:
            plots.append(bar_chart([(row["reason"], row["count"]) for row in stats["by_reason"]],
                                   "Failure modes (pair reasons)", plot_id="plot-failure-modes"))
        else:
            plots.append(bar_chart([(row["reason"], row["count"]) for row in stats["by_reason"]],
                                   "Pairs per reason", plot_id="plot-pair-reasons"))
        for part in ("prompt", "chosen", "rejected"):
            plots.append(histogram(frame[f"{part}_tokens"].to_list(), f"{part.capitalize()} length (tokens)",
                                   plot_id=f"plot-{part}-tokens"))
        sections.append("<h2>Pairs</h2>" + _counts_table(stats["by_strategy"], "strategy", "table-strategy")
                        + _counts_table(stats["by_task_type"], "task_type", "table-task-type"))
    sections.append(_samples_section(kept, summary.get("pair", {}).get("pairs", 0)))
    return _page(title, cards, plots, sections, summary)


def _passk_table(rows: Sequence[dict[str, Any]]) -> str:
    """pass@k per domain / category (the columns every domain has a value for, then the rest)."""
    if not rows:
        return ""
    ks = list(dict.fromkeys(key for row in rows for key in row if key.startswith("pass@")))
    head = "".join(f"<th>{escape(k)}</th>" for k in ks)
    body = "".join(
        f"<tr><td>{escape(str(row['domain']))}</td><td>{row['tasks']}</td><td>{row['episodes']}</td>"
        + "".join(f"<td>{row[k]:.1%}</td>" if row.get(k) is not None else "<td>-</td>" for k in ks)
        + "</tr>"
        for row in rows
    )
    return ('<h3>pass@k by domain</h3><table class="counts" id="table-passk-domain"><tr><th>domain</th>'
            f"<th>tasks</th><th>episodes</th>{head}</tr>{body}</table>")


def _success_table(rows: Sequence[dict[str, Any]]) -> str:
    body = "".join(
        f"<tr><td>{escape(str(row['task_type']))}</td><td>{row['episodes']}</td><td>{row['successes']}</td>"
        f"<td>{rate(row['success_rate'])}</td><td>{row['mean_steps']}</td></tr>"
        for row in rows
    )
    return ('<table class="counts" id="table-success"><tr><th>task_type</th><th>episodes</th><th>successes</th>'
            f"<th>success rate</th><th>mean steps</th></tr>{body}</table>")


def _samples_section(kept: list[Pair], total: int) -> str:
    if not kept:
        shown = f"0 of {total} pairs included (--samples 0)" if total else "no pairs in this run"
        return f'<h2>Sample pairs</h2><p id="sample-count">{shown}</p>' \
               '<div class="filters" hidden><input id="filter-text"></div>'
    kept = sorted(kept, key=lambda pair: pair.id)
    filters = (
        '<div class="filters">'
        + _select("reason", "reason", (p.reason if p.reason else "none" for p in kept))
        + _select("strategy", "strategy", (p.strategy for p in kept))
        + _select("task-type", "task type", (p.source.task_type or "unknown" for p in kept))
        + _select("split", "split", (p.split for p in kept))
        + '<input id="filter-text" type="search" placeholder="search text">'
        + '<span id="sample-count"></span></div>'
    )
    note = f"<p>{len(kept)} of {total} pairs, sampled uniformly.</p>"
    return "<h2>Sample pairs</h2>" + note + filters + "".join(_sample_html(pair) for pair in kept)


def _page(title: str, cards: list[str], plots: list[str], sections: list[str], summary: dict[str, Any]) -> str:
    # ``<``, ``>`` and ``&`` as JSON escapes: record text such as ``<!--<script>`` in a task type would
    # otherwise put the HTML parser in its "double escaped" script state, where ``</script>`` no longer
    # closes the block, and swallow the filtering script after it (``</`` alone is not enough).
    data = json.dumps(summary, default=str).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>prefbuild report: {escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>prefbuild report: {escape(title)}</h1>"
        f'<p class="sub">prefbuild {escape(__version__)} · token lengths are word/punctuation estimates</p>'
        f'<section class="cards" id="summary">{"".join(cards)}</section>'
        f'<h2>Plots</h2><section class="plots" id="plots">{"".join(plots)}</section>'
        f"{''.join(sections)}"
        f'<script type="application/json" id="report-data">{data}</script>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def write_report(path: str | os.PathLike[str], out: str | os.PathLike[str], **options: Any) -> Path:
    """Write the report of ``path`` to ``out`` atomically; returns ``out``. ``out`` may not be one of
    the record files the report reads (``path``, or a JSONL file of the run directory ``path``)."""
    source = Path(path)
    refuse_inputs_as_output(out, sorted(source.rglob("*.jsonl")) if source.is_dir() else [source])
    html = build_report(path, **options)
    atomic_write_text(out, html)
    make_shareable(out)  # a report is for sharing: ordinary file permissions, not mkstemp's 0600
    return Path(out)
