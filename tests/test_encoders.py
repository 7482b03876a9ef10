"""The Encoder protocol, its wrapper chain, and the disk cache's key (issue 26, items 1 and 4)."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

from biochunk import params
from biochunk.compute import Engine
from biochunk.embedding import (
    CountingEncoder,
    Encoder,
    EncoderWrapper,
    MemoEncoder,
    SentenceEncoder,
    model_revision,
)
from biochunk.partitions import EngineEncoder
from biochunk.retrieval import cache
from biochunk.retrieval.cache import CachedEncoder, encode_cached

MEMBERS = {"model_name", "dim", "model", "identity", "encode"}
CONCRETE = [SentenceEncoder, EncoderWrapper, MemoEncoder, CountingEncoder, CachedEncoder, EngineEncoder]


class Fake:
    """A whole ``Encoder`` without a model: a text's vector is (length, 1), normalised."""

    model_name = "fake"
    dim = 2
    model = None

    def __init__(self, dtype: str = "float32", device: str = "cpu") -> None:
        self.dtype, self.device, self.seen = dtype, device, []

    def identity(self) -> dict[str, str]:
        return {"model": "fake", "revision": "r1", "dtype": self.dtype, "device": self.device}

    def encode(self, texts, progress: bool = False) -> np.ndarray:
        self.seen.extend(texts)
        v = np.array([[len(t), 1.0] for t in texts], np.float32).reshape(-1, 2)
        return v / np.linalg.norm(v, axis=1, keepdims=True) if len(v) else v


def test_the_protocol_lists_what_callers_use() -> None:
    assert {n for n in vars(Encoder) if not n.startswith("_")} == MEMBERS


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda c: c.__name__)
def test_every_encoder_class_implements_the_protocol_explicitly(cls) -> None:
    # Checked without reading a member: isinstance reads properties (on Python < 3.12), and a
    # SentenceEncoder's model / dim load weights. (Its model_name is set per instance.)
    subject = SentenceEncoder("minilm") if cls is SentenceEncoder else cls
    for name in MEMBERS:
        inspect.getattr_static(subject, name)  # raises AttributeError when missing
    assert "__getattr__" not in {n for c in cls.__mro__ for n in vars(c)}, "no delegation by __getattr__"
    assert cls is SentenceEncoder or issubclass(cls, EncoderWrapper)


def test_the_chain_composes_and_forwards(tmp_path) -> None:
    inner = Fake()
    counting = CountingEncoder(inner)
    chain = CountingEncoder(CachedEncoder(MemoEncoder(counting), tmp_path))
    for link in (inner, counting, chain.inner, chain.inner.inner, chain):
        assert isinstance(link, Encoder)
    assert (chain.model_name, chain.dim, chain.model, chain.identity()) == ("fake", 2, None, inner.identity())
    texts = ["a", "bb", "a", "ccc"]
    np.testing.assert_array_equal(chain.encode(texts), Fake().encode(texts))
    assert chain.texts == 4 and counting.texts == 3 and inner.seen == ["a", "bb", "ccc"]
    chain.encode(texts)
    assert counting.texts == 3, "the memo and the disk cache answer a repeat"
    assert chain.encode([]).shape == (0, 2)
    assert not hasattr(chain, "seen"), "only the protocol goes through"
    assert not hasattr(MemoEncoder(SentenceEncoder()), "batch_size")


def test_a_dtype_or_device_change_misses_the_disk_cache(tmp_path) -> None:
    cache._STORES.clear()
    cpu = Fake("float32", "cpu")
    encode_cached(cpu, ["x", "yy"], tmp_path)
    for other in (Fake("float16", "cpu"), Fake("float32", "cuda"), Fake("float16", "cuda")):
        encode_cached(other, ["x", "yy"], tmp_path)
        assert other.seen == ["x", "yy"], f"{other.identity()} read {cpu.identity()}'s vectors"
    again = Fake("float32", "cpu")
    cache._STORES.clear()  # a fresh process: read back from the shards
    encode_cached(again, ["x", "yy"], tmp_path)
    assert again.seen == [], "the same identity hits"
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert len(folders) == 4 and all((tmp_path / f / "identity.json").is_file() for f in folders)


def test_another_float_pin_or_vendor_misses_the_disk_cache(tmp_path, monkeypatch) -> None:
    # Vectors made under MKL's AVX2 branch on an Intel machine differ in their last bits from
    # an AMD machine's COMPATIBLE ones: a cache folder carried between them must not answer.
    cache._STORES.clear()
    monkeypatch.setattr(cache.numerics, "cpu_vendor", lambda: "GenuineIntel")
    monkeypatch.setenv("MKL_CBWR", "AVX2,STRICT")
    encode_cached(Fake(), ["x", "yy"], tmp_path)
    for vendor, pin in (("GenuineIntel", "COMPATIBLE,STRICT"), ("AuthenticAMD", "AVX2,STRICT")):
        monkeypatch.setattr(cache.numerics, "cpu_vendor", lambda v=vendor: v)
        monkeypatch.setenv("MKL_CBWR", pin)
        other = Fake()
        encode_cached(other, ["x", "yy"], tmp_path)
        assert other.seen == ["x", "yy"], f"{vendor} {pin} read another pin's vectors"
    monkeypatch.setattr(cache.numerics, "cpu_vendor", lambda: "GenuineIntel")
    monkeypatch.setenv("MKL_CBWR", "AVX2,STRICT")
    cache._STORES.clear()
    again = Fake()
    encode_cached(again, ["x", "yy"], tmp_path)
    assert again.seen == [], "the same pin hits"
    written = {json.loads((f / "identity.json").read_text())["mkl_cbwr"] for f in tmp_path.iterdir()}
    assert written == {"AVX2,STRICT", "COMPATIBLE,STRICT"}


def test_sentence_encoder_identity_follows_dtype_device_and_revision(tmp_path) -> None:
    cpu = SentenceEncoder("minilm", device="cpu")
    gpu = SentenceEncoder("minilm", device="cuda:1")
    a, b = cpu.identity(), gpu.identity()
    assert (a["dtype"], a["device"]) == ("float32", "cpu") and (b["dtype"], b["device"]) == ("float16", "cuda")
    assert a["model"] == b["model"] == "minilm" and a["revision"] == b["revision"] and a["revision"].startswith("sha256:")
    assert SentenceEncoder("minilm", device="cuda", dtype="float32").identity()["dtype"] == "float32"
    assert cache.identity_key(a) != cache.identity_key(b)
    assert "model" not in cpu.__dict__ and "model" not in gpu.__dict__, "identity() loaded weights"
    # A local model folder's revision is the hash of its files: a changed file is a new revision.
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "w.safetensors").write_bytes(b"\0" * 10)
    first = model_revision(str(tmp_path))
    (tmp_path / "w.safetensors").write_bytes(b"\1" * 10)
    assert model_revision(str(tmp_path)) != first


def test_engine_encoder_is_its_local_encoder_on_the_local_engine() -> None:
    ep = params.section("embed", data={"embed": {"device": "cpu"}})
    xp = params.section("compute", data={"compute": {"engine": "local", "partition_rows": None}})
    with Engine(xp) as engine:
        enc = EngineEncoder(engine, ep, None)
        assert isinstance(enc.inner, SentenceEncoder) and enc.model_name == ep.model
        assert enc.identity() == SentenceEncoder(ep.model, ep.batch_size, "cpu").identity()
        assert "model" not in enc.inner.__dict__


def test_a_hub_models_revision_is_its_cached_commit(tmp_path, monkeypatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo = tmp_path / "models--org--enc"
    for commit in ("a" * 40, "b" * 40):
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "snapshots" / commit / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    assert model_revision("org/enc") == "a" * 40
    (repo / "refs" / "main").write_text("b" * 40)  # the hub's main moved on, and was fetched
    assert SentenceEncoder("org/enc", device="cpu").identity()["revision"] == "b" * 40
