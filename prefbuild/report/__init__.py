"""Human-facing views of a run: the self-contained HTML report and the dataset card body."""

from prefbuild.report.card import CardInfo, ConfigSummary, render_card_body
from prefbuild.report.html import build_report, write_report

__all__ = ["CardInfo", "ConfigSummary", "build_report", "render_card_body", "write_report"]
