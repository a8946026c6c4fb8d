"""The editable column mapping: schema → rows → schema, with the library's rules."""

from __future__ import annotations

import numpy as np
import pytest

from cx_app.errors import SchemaError
from cx_app.survey.mapping import mapping_table, schema_from_mapping_table
from cx_app.survey.schema import schema_from_mapping


@pytest.fixture
def base():
    return schema_from_mapping(target="Likelihood to recommend", scale="0-10",
                               attributes=["Price", "Network"], segments=["Region"],
                               respondent_id="ID", missing_codes=[99])


def test_unchanged_rows_give_back_the_same_schema(base):
    assert schema_from_mapping_table(mapping_table(base), base) == base


def test_ignored_columns_are_left_out_and_a_segment_without_a_kind_gets_its_guessed_kind(base):
    rows = mapping_table(base)
    rows.loc[rows["column"] == "Network", "role"] = "ignore"
    rows.loc[rows["column"] == "Region", "segment_role"] = np.nan  # an empty editor cell
    schema = schema_from_mapping_table(rows, base)
    assert [a.column for a in schema.attributes] == ["Price"]
    assert [(s.column, s.role) for s in schema.segments] == [("Region", "region")]
    assert schema.missing_codes == (99,) and schema.respondent_id.column == "ID"


def test_an_attribute_turned_segment_without_a_kind_just_works(base):
    rows = mapping_table(base)
    rows.loc[rows["column"] == "Price", "role"] = "segment"  # kind cell left empty (None)
    rows.loc[rows["column"] == "Region", ["segment_role", "column"]] = [None, "Month"]
    schema = schema_from_mapping_table(rows, base)
    assert [(s.column, s.role) for s in schema.segments] == [("Price", "other"),
                                                             ("Month", "wave")]
    assert [a.column for a in schema.attributes] == ["Network"]


def test_a_new_target_scale_takes_the_library_kind_and_default_plan(base):
    rows = mapping_table(base)
    rows.loc[0, "column"] = "Overall satisfaction"  # a CSAT question on 1-5
    rows.loc[0, ["scale_min", "scale_max"]] = [1, 5]
    schema = schema_from_mapping_table(rows, base)
    assert schema.target.kind == "csat"  # guess_kind, as the CLI and inference (was "custom")
    groups = [[g.name for g in step.groups] for step in schema.plan]
    assert groups[0] == ["dissatisfied", "neutral", "satisfied"]


def test_errors_name_what_to_fix(base):
    rows = mapping_table(base)
    rows.loc[rows["column"] == "Price", "role"] = "target"
    with pytest.raises(SchemaError, match="exactly one column as the target"):
        schema_from_mapping_table(rows, base)
    rows = mapping_table(base)
    rows.loc[rows["column"] == "Price", "scale_max"] = None
    with pytest.raises(SchemaError, match="'Price': give its scale"):
        schema_from_mapping_table(rows, base)
