"""Human-facing views of a run: the self-contained HTML report and the dataset card body."""

from prefbuild.analysis.report import build_report, write_report
from prefbuild.hub.card import CardInfo, ConfigSummary, render_card_body

__all__ = ["CardInfo", "ConfigSummary", "build_report", "render_card_body", "write_report"]
