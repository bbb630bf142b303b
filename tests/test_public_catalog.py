from workbook.evaluation.public_catalog import catalog_of, public_distractors
from harness.retrieval.records import CatalogTool


RECORDS = [
    CatalogTool("fs/read_file", "read_file", "Read a file from disk.", {"type": "object", "properties": {"path": {"type": "string"}}}, "fs"),
    CatalogTool("other-fs/read_file", "read_file", "Read a file over SFTP.", {"type": "object", "properties": {}}, "other-fs"),
    CatalogTool("api//v1/nutrition", "/v1/nutrition", "Nutrition facts.", {"type": "string"}, "api"),
]


def test_catalog_of_names_like_an_mcp_harness_and_maps_back():
    catalog, id_of = catalog_of(RECORDS)
    assert sorted(id_of) == ["mcp__api___v1_nutrition", "mcp__fs__read_file", "mcp__other_fs__read_file"]
    assert id_of["mcp__fs__read_file"] == "fs/read_file"
    assert [id_of[t.name] for t in catalog.select("read a file from disk", 1)] == ["fs/read_file"]


def test_distractors_skip_taken_and_invalid_names():
    out = public_distractors(RECORDS, taken={"write_file"})
    assert [t.name for t in out] == ["read_file"]
    assert RECORDS[2].to_tool("x").input_schema == {"type": "object", "properties": {}}
