"""JSON Schemas of the records and the recipe, generated from the pydantic models.

The files in ``schemas/`` are committed so editors can validate recipes and users can read
the contract without Python; a test regenerates them and fails when they drift.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from prefbuild.recipe import Recipe
from prefbuild.records import RECORD_MODELS

SCHEMA_MODELS: dict[str, type[BaseModel]] = {**RECORD_MODELS, "recipe": Recipe}


def schema_documents() -> dict[str, str]:
    """File name -> JSON Schema text for every record model and the recipe."""
    documents = {}
    for name, model in SCHEMA_MODELS.items():
        schema = model.model_json_schema(mode="validation")
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"prefbuild/{name}.schema.json"
        documents[f"{name}.schema.json"] = json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return documents


def write_schemas(out_dir: str | Path) -> list[Path]:
    """Write every schema into ``out_dir``; returns the paths written."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, text in schema_documents().items():
        path = folder / file_name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
