"""The committed JSON Schemas must match the models: a model change without regeneration fails here."""

from __future__ import annotations

import json
from pathlib import Path

from prefbuild.io.schemas import schema_documents

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_committed_schemas_match_the_models() -> None:
    expected = schema_documents()
    committed = {path.name: path.read_text(encoding="utf-8") for path in SCHEMAS.glob("*.schema.json")}
    assert sorted(committed) == sorted(expected), "run `prefbuild schema --out schemas/`"
    for name, text in expected.items():
        assert committed[name] == text, f"schemas/{name} drifted from the models: run `prefbuild schema --out schemas/`"


def test_drift_is_detected_when_a_model_changes(monkeypatch) -> None:
    from prefbuild.io import schemas as schema
    from prefbuild.records import Label

    class ChangedLabel(Label):
        extra_field: int = 0

    monkeypatch.setitem(schema.SCHEMA_MODELS, "label", ChangedLabel)
    changed = schema.schema_documents()["label.schema.json"]
    assert changed != (SCHEMAS / "label.schema.json").read_text(encoding="utf-8")


def test_schemas_are_valid_json_with_ids() -> None:
    for path in SCHEMAS.glob("*.schema.json"):
        document = json.loads(path.read_text())
        assert document["$id"] == f"prefbuild/{path.name}"
