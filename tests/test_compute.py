"""compute.engine: the same chunk tables and vectors in this process and on Dask (4, 2, 1 workers).

Engines run the same task on the same partitions, so results agree by construction; these
tests hold the construction to it on the embedded data: byte-identical chunk tables, vectors
within 1e-6, the same row order. One LocalCluster per worker count serves every check.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from biochunk import compute, params
from biochunk.chunking.base import chunk_corpus
from biochunk.compute import Engine, chunked
from biochunk.corpus import inputs, memory_documents, read_triples, relation_definitions
from biochunk.errors import UserError
from biochunk.io import CHUNKS, TRIPLES, read_table, table_writer, write_table
from biochunk.partitions import chunk_stream, encode_all
from biochunk.vectors import embedding_texts
from tests.conftest import ROOT

PARTITION = 64  # 240 embedded training sentences: 4 partitions, so 4 workers all get one


def _xp(engine: str = "local", rows: int | None = PARTITION, workers: int = 1, **kw):
    return params.section("compute", data={"compute": {"engine": engine, "partition_rows": rows, "workers": workers, **kw}})


def _stage(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "stages" / f"{name}.py"), *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("embedded")
    for r in (
        _stage("download", "--dataset", "embedded", "--out", "raw", "--params", str(ROOT / "params.yaml"), cwd=d),
        _stage(
            "convert", "--dataset", "embedded", "--raw", "raw", "--out", "interim", "--params", str(ROOT / "params.yaml"), cwd=d
        ),
    ):
        assert r.returncode == 0, r.stderr
    return d


@pytest.fixture(scope="module")
def docs(embedded):
    return memory_documents(read_table(embedded / "interim" / "train.parquet", TRIPLES))


def _sections(method: str):
    data = {"chunk": {"method": method}, "embed": {"batch_size": 16}}
    return params.section("chunk", data=data), params.section("embed", data=data)


def _chunk_file(engine: Engine, docs, method: str, rows: int | None, path: Path) -> bytes:
    cp, ep = _sections(method)
    with table_writer(path, CHUNKS) as write:
        for table in chunk_stream(engine, cp, ep, "embedded", chunked(docs, rows)):
            write(table)
    return path.read_bytes()


def _vectors(engine: Engine, texts: list[str], rows: int | None) -> np.ndarray:
    _, ep = _sections("fixed")
    return encode_all(engine, ep, chunked(texts, rows))


@pytest.fixture(scope="module")
def local_results(docs, tmp_path_factory):
    """The in-process reference: partitioned, and the unpartitioned run of before this engine existed."""
    d = tmp_path_factory.mktemp("local")
    with Engine(_xp()) as engine:
        fixed = _chunk_file(engine, docs, "fixed", PARTITION, d / "fixed.parquet")
        adaptive = _chunk_file(engine, docs, "adaptive", PARTITION, d / "adaptive.parquet")
        texts = embedding_texts(pq.read_table(d / "fixed.parquet").to_pandas())
        vecs = _vectors(engine, texts, PARTITION)
    return {"fixed": fixed, "adaptive": adaptive, "texts": texts, "vectors": vecs}


@pytest.fixture(scope="module")
def cluster():
    """One LocalCluster of 4 workers, scaled down to 2 and 1 for the later cases: each count
    is a real cluster of that many workers, and model loads are paid once, not per case."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=4, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as c:
        yield c


def _scale(cluster, n: int) -> None:
    from distributed import Client

    cluster.scale(n)
    with Client(cluster) as client:
        deadline = time.monotonic() + 60
        while len(client.scheduler_info()["workers"]) != n:
            assert time.monotonic() < deadline, f"the cluster did not reach {n} workers"
            time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [4, 2, 1])  # scaled down in this order
def test_dask_matches_local(docs, local_results, cluster, tmp_path, workers):
    _scale(cluster, workers)
    with Engine(_xp("dask", address=cluster.scheduler_address), dashboard=False) as engine:
        assert len(engine.client.scheduler_info()["workers"]) == workers
        assert _chunk_file(engine, docs, "fixed", PARTITION, tmp_path / "fixed.parquet") == local_results["fixed"]
        vecs = _vectors(engine, local_results["texts"], PARTITION)
        if workers == 2:  # a semantic chunker embeds its units on the workers: cuts must not move
            assert _chunk_file(engine, docs, "adaptive", PARTITION, tmp_path / "adaptive.parquet") == local_results["adaptive"]
        # Each worker built its encoder once, however many partitions it ran.
        built = engine.client.run(lambda: sum(1 for k in compute._RESOURCES if k[0] == "encoder"))
    assert vecs.shape == local_results["vectors"].shape
    assert np.abs(vecs - local_results["vectors"]).max() <= 1e-6
    assert set(built.values()) <= {0, 1} and sum(built.values()) >= 1


@pytest.mark.slow
def test_partitions_keep_todays_rows_and_order(docs, local_results, tmp_path):
    # What the chunk stage wrote before compute.* existed: chunk_corpus over every document, one write.
    import pandas as pd

    from biochunk import chunking

    cp, _ = _sections("fixed")
    before = pd.DataFrame(
        [c.row() for c in chunk_corpus(docs, chunking.build(cp, None, dataset="embedded"))], columns=CHUNKS.names
    )
    write_table(before, tmp_path / "before.parquet", CHUNKS)
    with Engine(_xp(rows=None)) as engine:
        # Unpartitioned (the default): the very bytes of before.
        assert _chunk_file(engine, docs, "fixed", None, tmp_path / "whole.parquet") == (tmp_path / "before.parquet").read_bytes()
        whole_vecs = _vectors(engine, local_results["texts"], None)
    # Partitioned: one row group per partition, the same rows in the same order.
    parted = pq.ParquetFile(pa.BufferReader(local_results["fixed"]))
    assert parted.metadata.num_row_groups == -(-len(docs) // PARTITION)
    assert parted.read().equals(pq.read_table(tmp_path / "before.parquet"))
    # The encoder's batches follow the partitions: the last bits may move, nothing more.
    assert np.abs(whole_vecs - local_results["vectors"]).max() <= 1e-6


@pytest.mark.slow
def test_chunk_and_embed_stages_on_dask_write_what_local_writes(embedded, docs, local_results, cluster, tmp_path):
    # The stages through their params: chunk on a LocalCluster of their own (and the log a
    # person reads), embed on the module's cluster through compute.address.
    base = (ROOT / "params.yaml").read_text().replace("  partition_rows: null ", f"  partition_rows: {PARTITION} ")
    (tmp_path / "local.yaml").write_text(base)
    (tmp_path / "dask.yaml").write_text(base.replace("  engine: local ", "  engine: dask "))
    (tmp_path / "address.yaml").write_text(
        base.replace("  engine: local ", "  engine: dask ").replace(
            "  address: null ", f"  address: {cluster.scheduler_address} "
        )
    )
    train = str(embedded / "interim" / "train.parquet")
    for name in ("local", "dask"):
        r = _stage(
            "chunk",
            "--dataset",
            "embedded",
            "--train",
            train,
            "--out",
            str(tmp_path / name),
            "--params",
            str(tmp_path / f"{name}.yaml"),
            cwd=ROOT,
        )
        assert r.returncode == 0, r.stderr
    assert "dask: 2 workers" in r.stderr and "chunk fixed" in r.stderr  # the engine line and the progress bar
    chunks = (tmp_path / "dask" / "chunks.parquet").read_bytes()
    assert chunks == (tmp_path / "local" / "chunks.parquet").read_bytes() == local_results["fixed"]
    assert json.loads((tmp_path / "dask" / "report.json").read_text()) == json.loads(
        (tmp_path / "local" / "report.json").read_text()
    )
    r = _stage(
        "embed", "--chunks", str(tmp_path / "dask" / "chunks.parquet"), "--data", str(embedded / "interim"),
        "--config", str(ROOT / "configs" / "embedded.yaml"), "--out", str(tmp_path / "embed"), "--params", str(tmp_path / "address.yaml"), cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = read_table(tmp_path / "embed" / "vectors.parquet")
    sentences = inputs(read_triples(embedded / "interim"))
    rels = relation_definitions(ROOT / "configs" / "embedded.yaml")
    with Engine(_xp()) as engine:
        want = [
            local_results["vectors"],
            _vectors(engine, sentences["sentence"].tolist(), PARTITION),
            _vectors(engine, [f"{k}: {v}" for k, v in rels.items()], None),
        ]
    ids = pq.read_table(tmp_path / "dask" / "chunks.parquet")["chunk_id"].to_pylist() + sentences["id"].tolist() + list(rels)
    assert got["id"].tolist() == ids
    assert np.abs(np.stack(got["vector"]) - np.concatenate(want)).max() <= 1e-6


def test_unreachable_scheduler_is_one_line_naming_the_key(monkeypatch):
    monkeypatch.setattr(compute, "CONNECT_TIMEOUT_S", 2)
    with pytest.raises(UserError, match=r"^compute\.address: no Dask scheduler answers at tcp://127\.0\.0\.1:9 ") as e:
        with Engine(_xp("dask", address="tcp://127.0.0.1:9")):
            pass
    assert "\n" not in str(e.value)


@pytest.fixture
def silent_port():
    """A loopback port that accepts TCP connections and never sends a byte (a wrong service, a frozen scheduler)."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_scheduler_that_accepts_and_never_answers_times_out_in_one_line(monkeypatch, silent_port):
    # distributed bounds the TCP connect but not the handshake after it: without a deadline
    # on the whole start this hangs forever.
    monkeypatch.setattr(compute, "CONNECT_TIMEOUT_S", 2)
    address = f"tcp://127.0.0.1:{silent_port}"
    # distributed shares one IO-loop thread between the clients of a process: one that an
    # earlier test's cluster still holds is not this client's.
    before = {t.ident for t in threading.enumerate() if t.name == "IO loop"}
    start = time.monotonic()
    with pytest.raises(UserError, match=rf"^compute\.address: no Dask scheduler answers at {re.escape(address)} within 2 s") as e:
        with Engine(_xp("dask", address=address)):
            pass
    assert time.monotonic() - start < 2 + 5
    assert "\n" not in str(e.value)
    # The half-started client's IO thread is stopped, not left behind for the rest of the stage.
    left = [t for t in threading.enumerate() if t.name == "IO loop" and t.ident not in before]
    for t in left:
        t.join(timeout=5)
    assert not [t for t in left if t.is_alive()]


@pytest.mark.parametrize(
    "raw, needle",
    [
        ({"engine": "ray"}, "compute.engine: unknown value 'ray'"),
        ({"engine": "dask", "address": "10.0.0.5:8786", "partition_rows": 8}, "compute.address must be a scheduler address"),
        ({"address": "tcp://10.0.0.5:8786"}, "compute.address is set but compute.engine is 'local'"),
        ({"engine": "dask", "partition_rows": None}, "compute.partition_rows must be set"),
        ({"partition_rows": 0}, "compute.partition_rows must be in [1, inf]"),
        ({"workers": 0}, "compute.workers must be in [1, 4096]"),
        ({"threads_per_worker": 0}, "compute.threads_per_worker must be in [1, 1024]"),
    ],
)
def test_bad_compute_params_name_the_key(raw, needle):
    with pytest.raises(UserError, match=None) as e:
        params.section("compute", data={"compute": raw})
    assert needle in str(e.value)


def test_table_writer_bytes_follow_partitions_not_engines(tmp_path):
    t = pa.table({"a": list(range(10))})
    # One table: exactly write_table's bytes; several: one row group each, the same rows.
    with table_writer(tmp_path / "one.parquet", t.schema) as write:
        write(t)
    pq.write_table(t, tmp_path / "ref.parquet")
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "ref.parquet").read_bytes()
    with table_writer(tmp_path / "parts.parquet", t.schema) as write:
        for i in range(0, 10, 4):
            write(t.slice(i, 4))
    assert pq.ParquetFile(tmp_path / "parts.parquet").metadata.num_row_groups == 3
    assert pq.read_table(tmp_path / "parts.parquet").equals(t)
    with table_writer(tmp_path / "none.parquet", t.schema):
        pass
    assert pq.read_table(tmp_path / "none.parquet").num_rows == 0


def test_chunked_always_yields_the_whole_input_once_when_unpartitioned():
    assert list(chunked([], None)) == [[]]
    assert list(chunked(range(5), None)) == [[0, 1, 2, 3, 4]]
    assert list(chunked(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert list(chunked([], 2)) == []


@pytest.mark.slow
def test_engine_encoder_serves_the_stages_that_embed_from_inside(local_results, cluster):
    # chunk_docs, qa_context and retrieve hand an EngineEncoder to chunkers and retrievers
    # (wrapped in MemoEncoder / CachedEncoder): unpartitioned and local it is the plain
    # encoder's own call; on Dask, the same partitions give what local gives.
    from biochunk.embedding import MemoEncoder, SentenceEncoder
    from biochunk.partitions import EngineEncoder

    _, ep = _sections("fixed")
    texts = local_results["texts"][:300]
    plain = SentenceEncoder(ep.model, ep.batch_size, ep.device).encode(texts)
    with Engine(_xp(rows=None)) as engine:
        assert np.array_equal(EngineEncoder(engine, ep, None).encode(texts), plain)
    with Engine(_xp(rows=PARTITION)) as engine:
        local = MemoEncoder(EngineEncoder(engine, ep, PARTITION)).encode(texts)
    with Engine(_xp("dask", address=cluster.scheduler_address), dashboard=False) as engine:
        enc = MemoEncoder(EngineEncoder(engine, ep, PARTITION))
        assert enc.model_name == ep.model  # attributes are the local encoder's, no weights shipped
        assert enc.identity() == SentenceEncoder(ep.model, ep.batch_size, ep.device).identity()  # asked of a worker
        remote = enc.encode(texts)
    assert np.abs(remote - local).max() <= 1e-6
    assert np.abs(local - plain).max() <= 1e-6


@pytest.mark.slow
def test_covidqa_articles_on_dask_match_local(shared_datasets, cluster, tmp_path):
    # Real long documents (COVID-QA's 98 articles, from the mirror): recursive chunks of whole
    # articles byte-identical, and the first chunks' vectors within 1e-6, local vs 2 workers.
    from biochunk.chunking.base import Document
    from biochunk.io import DOCUMENTS

    text = (ROOT / "params.yaml").read_text().replace("  mirror: null ", f"  mirror: {shared_datasets} ")
    (tmp_path / "params.yaml").write_text(text)
    for r in (
        _stage("download", "--dataset", "covidqa", "--out", "raw", "--params", "params.yaml", cwd=tmp_path),
        _stage("convert", "--dataset", "covidqa", "--raw", "raw", "--out", "interim", "--params", "params.yaml", cwd=tmp_path),
    ):
        assert r.returncode == 0, r.stderr
    table = read_table(tmp_path / "interim" / "documents.parquet", DOCUMENTS)
    articles = [Document(d, t) for d, t in zip(table["doc_id"], table["text"])]
    _scale(cluster, 2)
    files, vecs = {}, {}
    for name, xp in (("local", _xp()), ("dask", _xp("dask", address=cluster.scheduler_address))):
        with Engine(xp, dashboard=False) as engine:
            files[name] = _chunk_file(engine, articles, "recursive", 16, tmp_path / f"{name}.parquet")
            texts = pq.read_table(tmp_path / f"{name}.parquet")["text"].to_pylist()[:48]
            vecs[name] = _vectors(engine, texts, 16)
    assert files["local"] == files["dask"]
    assert pq.read_table(tmp_path / "local.parquet").num_rows > len(articles)  # whole articles were split
    assert np.abs(vecs["local"] - vecs["dask"]).max() <= 1e-6
