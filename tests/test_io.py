import pandas as pd
import pytest

from biochunk.io import TRIPLES, atomic_path, read_table, write_table


def test_atomic_path_leaves_nothing_when_interrupted(tmp_path):
    target = tmp_path / "out" / "chunks.parquet"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half a file")
            raise RuntimeError("killed")
    assert not target.exists()
    assert list((tmp_path / "out").iterdir()) == []


def test_atomic_directory_replaces_old_output(tmp_path):
    target = tmp_path / "dir"
    target.mkdir()
    (target / "old").write_text("x")
    with atomic_path(target) as tmp:
        tmp.mkdir()
        (tmp / "new").write_text("y")
    assert sorted(p.name for p in target.iterdir()) == ["new"]


def test_write_table_enforces_schema(tmp_path):
    df = pd.DataFrame([{"id": "a", "split": "test", "sentence": "s", "head": "h", "relation": "r", "tail": "t"}])
    write_table(df, tmp_path / "t.parquet", TRIPLES)
    assert read_table(tmp_path / "t.parquet", TRIPLES).to_dict("records") == df.to_dict("records")
    with pytest.raises(ValueError, match="lacks columns"):
        write_table(df.drop(columns=["tail"]), tmp_path / "u.parquet", TRIPLES)
