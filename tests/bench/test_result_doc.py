"""The result document is documented: every field of the models appears in docs/evaluation-result.md."""

import json
from pathlib import Path

from bench_tasks.harness.result import SCHEMA_VERSION, Check, EvaluationResult, SizeRow

DOC = (Path(__file__).parents[2] / "docs" / "evaluation-result.md").read_text()


def test_every_field_is_documented():
    for model in (EvaluationResult, SizeRow, Check):
        for name in model.model_fields:
            assert f"`{name}`" in DOC, f"{model.__name__}.{name} is not documented"


def test_doc_names_the_schema_version():
    assert f"schema_version {SCHEMA_VERSION}" in DOC


def _results_in(document):
    if isinstance(document, dict):
        if "schema_version" in document and "verdict" in document:
            return [document]
        return [r for v in document.values() for r in _results_in(v)]
    if isinstance(document, list):
        return [r for v in document for r in _results_in(v)]
    return []


def test_every_stored_result_document_still_loads():
    found = {}
    for path in sorted((Path(__file__).parents[2] / "docs" / "results").glob("*.json")):
        for raw in _results_in(json.loads(path.read_text())):
            result = EvaluationResult.model_validate(raw)
            assert result.task and result.rows is not None
            found[raw["schema_version"]] = found.get(raw["schema_version"], 0) + 1
    assert {"1.0", "1.1"} <= set(found), found  # both older schemas are exercised
    again = EvaluationResult.model_validate_json(EvaluationResult(task="t", precision="fp32", verdict="ok").model_dump_json())
    assert again.schema_version == SCHEMA_VERSION and again.stages == {} and again.refresh_key == ""
