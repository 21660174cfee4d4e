"""``prefbuild report``: a self-contained HTML file, rendered in headless Chromium to check plots and samples."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefbuild.analysis.report import build_report
from prefbuild.cli.analysis import report_command
from prefbuild.io.jsonl import write_records
from tests.publish.factories import make_pair
from tests.report.conftest import SIMULATED_TASKS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium chromium-driver)"
)


class Elements(HTMLParser):
    """Every element as (tag, attributes), plus text per element id."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[str, str] = {}
        self._open_ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        if attributes.get("id"):
            self._open_ids.append(str(attributes["id"]))
            self.text.setdefault(str(attributes["id"]), "")

    def handle_endtag(self, tag: str) -> None:
        pass

    def handle_data(self, data: str) -> None:
        for element_id in self._open_ids[-1:]:
            self.text[element_id] += data

    def find(self, tag: str, **wanted: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == tag and all(a.get(k.replace("_", "-")) == v
                                                                 for k, v in wanted.items())]


def bars(dom: Elements, plot_id: str) -> dict[str, str | None]:
    """``data-label -> data-value`` of the bars drawn inside one plot."""
    found: dict[str, str | None] = {}
    current = None
    for tag, attributes in dom.elements:
        if tag == "svg":
            current = attributes.get("id")
        elif tag == "rect" and current == plot_id and attributes.get("class") == "bar":
            found[str(attributes["data-label"])] = attributes["data-value"]
    return found


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--no-first-run", "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def test_report_is_self_contained(run_dir: Path) -> None:
    html = build_report(run_dir)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html), "no external assets"
    assert "<link" not in html and "<script src" not in html
    for plot in ("plot-failure-modes", "plot-success-by-task-type", "plot-episode-lengths", "plot-prompt-tokens",
                 "plot-chosen-tokens", "plot-rejected-tokens"):
        assert f'id="{plot}"' in html, plot


def test_record_text_is_escaped(tmp_path: Path) -> None:
    pair = make_pair(1).model_copy(update={"evidence": "<script>alert(1)</script>"})
    write_records(tmp_path / "pairs.jsonl", [pair])
    html = build_report(tmp_path / "pairs.jsonl")
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


HOSTILE_TASK_TYPE = "<!--<script>"


def _hostile_pairs(tmp_path: Path) -> Path:
    pair = make_pair(1)
    pair = pair.model_copy(update={"source": pair.source.model_copy(update={"task_type": HOSTILE_TASK_TYPE})})
    write_records(tmp_path / "pairs.jsonl", [pair, make_pair(2)])
    return tmp_path / "pairs.jsonl"


def test_summary_json_cannot_swallow_the_filter_script(tmp_path: Path) -> None:
    """Record text such as ``<!--<script>`` inside the inline JSON would put the HTML parser in the
    script's "double escaped" state, where ``</script>`` no longer ends the block."""
    html = build_report(_hostile_pairs(tmp_path))
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.DOTALL)
    assert match is not None and "<" not in match.group(1)
    assert HOSTILE_TASK_TYPE in json.dumps(_report_data(html))


@needs_chromium
def test_hostile_record_text_keeps_the_script_running(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_text(build_report(_hostile_pairs(tmp_path)))
    dom = Elements()
    dom.feed(chromium(tmp_path, "--dump-dom", out.as_uri()).stdout)
    assert dom.find("body", data_ready="true"), "the inline filter script ran"
    assert dom.text["sample-count"].strip() == "2 of 2 samples shown"


def test_cli_errors_name_file_and_line(bad_pairs: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(report_command, [str(bad_pairs), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 1 and f"{bad_pairs}:3" in result.output
    assert not (tmp_path / "r.html").exists()


@needs_chromium
def test_report_renders_in_headless_chromium(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(report_command, [str(run_dir), "-o", str(out)])
    assert result.exit_code == 0, result.output

    dom = Elements()
    dom.feed(chromium(tmp_path, "--dump-dom", out.as_uri()).stdout)
    assert dom.find("body", data_ready="true"), "the inline script ran"
    plots = {a["id"] for a in dom.find("svg") if a.get("class") == "plot"}
    assert {"plot-failure-modes", "plot-success-by-task-type", "plot-episode-lengths", "plot-prompt-tokens"} <= plots
    assert bars(dom, "plot-failure-modes") == {"loop": "8"}  # 8 failed episodes carry a loop label
    assert bars(dom, "plot-pair-reasons") == {"loop": "4", "invalid_action": "4", "premature_success": "4"}
    assert sum(int(v) for v in bars(dom, "plot-episode-lengths").values()) == 12
    samples = dom.find("article")
    assert len(samples) == 12
    assert dom.text["sample-count"].strip() == "12 of 12 samples shown"

    # A filtered link: the script applies the filters from the URL fragment and hides the rest.
    dom = Elements()
    dom.feed(chromium(tmp_path, "--dump-dom", out.as_uri() + "#reason=loop&split=train").stdout)
    visible = [a for a in dom.find("article") if "hidden" not in a]
    assert {a["data-reason"] for a in visible} == {"loop"} and {a["data-split"] for a in visible} == {"train"}
    assert dom.text["sample-count"].strip() == f"{len(visible)} of 12 samples shown" and len(visible) == 3

    screenshot = tmp_path / "report.png"
    chromium(tmp_path, f"--screenshot={screenshot}", "--window-size=1280,1600", "--hide-scrollbars", out.as_uri())
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and screenshot.stat().st_size > 10_000


def _report_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.DOTALL)
    assert match is not None
    return json.loads(match.group(1).replace("<\\/", "</"))


def test_report_of_a_real_run_counts_each_episode_once(simulated_run: Path) -> None:
    pairs_on_disk = len((simulated_run / "pairs.jsonl").read_text().splitlines())
    for html in (build_report(simulated_run), (simulated_run / "report.html").read_text()):  # ours, and `run`'s
        data = _report_data(html)
        assert data["trajectory"]["trajectories"] == SIMULATED_TASKS
        assert set(data["trajectory"]["pass_at_k"]) == {"pass@1"}
        assert data["pair"]["pairs"] == pairs_on_disk
        dom = Elements()
        dom.feed(html)
        assert sum(int(str(v)) for v in bars(dom, "plot-episode-lengths").values()) == SIMULATED_TASKS
        assert "Simulated data." in dom.text["simulated-note"]


def test_report_of_a_real_model_run_has_no_simulation_note(run_dir: Path) -> None:
    assert 'id="simulated-note"' not in build_report(run_dir)


def test_no_samples_does_not_claim_the_run_has_no_pairs(run_dir: Path, tmp_path: Path) -> None:
    html = build_report(run_dir, samples=0)
    assert "no pairs in this run" not in html and "0 of 12 pairs included" in html
    result = CliRunner().invoke(report_command, [str(run_dir), "-o", str(tmp_path / "r.html"), "--samples", "-1"])
    assert result.exit_code == 2 and not (tmp_path / "r.html").exists()
