"""The result document is documented: every field of the models appears in docs/evaluation-result.md."""

from pathlib import Path

from bench_tasks.harness.result import SCHEMA_VERSION, EvaluationResult, SizeRow

DOC = (Path(__file__).parents[2] / "docs" / "evaluation-result.md").read_text()


def test_every_field_is_documented():
    for model in (EvaluationResult, SizeRow):
        for name in model.model_fields:
            assert f"`{name}`" in DOC, f"{model.__name__}.{name} is not documented"


def test_doc_names_the_schema_version():
    assert f"schema_version {SCHEMA_VERSION}" in DOC
