"""Materialise a dataset's raw files: from the project, a mirror directory, or the network.

Every file is checked against its pinned checksum before it is accepted; a mismatch
is refused with both sums in the message.
"""

from __future__ import annotations

import hashlib
import io
import logging
import shutil
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from tqdm import tqdm

from biochunk.datasets.registry import DatasetSpec, RemoteFile
from biochunk.errors import UserError
from biochunk.io import atomic_path

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[2]
MIRROR_HINT = "set download.mirror to a directory laid out like ../shared/datasets (e.g. `dvc exp run -S download.mirror=../shared/datasets`)"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_sha256sums(folder: Path) -> dict[str, str]:
    """Parse a ``sha256sum`` listing: path (without a leading ./) -> digest."""
    sums_file = folder / "SHA256SUMS"
    if not sums_file.exists():
        raise UserError(f"mirror folder {folder} has no SHA256SUMS; a mirror must carry one per dataset folder")
    sums = {}
    for n, line in enumerate(sums_file.read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2:
            raise UserError(f"{sums_file}:{n}: expected '<sha256>  <path>', got {line!r}")
        digest, name = parts
        sums[name.lstrip("*").removeprefix("./")] = digest
    return sums


def verify(path: Path, expected: str, what: str) -> None:
    actual = sha256_file(path)
    if actual != expected:
        raise UserError(f"checksum mismatch for {what}: expected sha256 {expected}, got {actual}; refusing the file")


def download(spec: DatasetSpec, out: Path, mirror: str | None, timeout_s: int = 60) -> dict[str, int]:
    """Fetch every file of ``spec`` into ``out`` (atomically); returns bytes per file."""
    sizes: dict[str, int] = {}
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        sums = None
        for f in tqdm(spec.files, desc=f"download {spec.name}", unit="file"):
            dest = tmp / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            if f.url and f.url.startswith("package:"):
                _copy(REPO / f.url.removeprefix("package:"), dest, f)
            elif mirror is not None:
                folder = Path(mirror) / spec.mirror_dir
                if sums is None:
                    sums = read_sha256sums(folder)
                _from_mirror(folder, dest, f, sums)
            else:
                _from_network(dest, f, timeout_s)
            sizes[f.path] = dest.stat().st_size
    return sizes


def _copy(src: Path, dest: Path, f: RemoteFile) -> None:
    if not src.exists():
        raise UserError(f"packaged dataset file {src} is missing; the checkout is incomplete")
    shutil.copyfile(src, dest)
    if f.sha256:
        verify(dest, f.sha256, str(src))


def _from_mirror(folder: Path, dest: Path, f: RemoteFile, sums: dict[str, str]) -> None:
    src = folder / f.path
    if not src.exists():
        raise UserError(f"download.mirror: {src} not found; the mirror must hold {f.path} in {folder}")
    if f.path not in sums:
        raise UserError(f"{folder / 'SHA256SUMS'} has no line for {f.path}")
    shutil.copyfile(src, dest)
    verify(dest, sums[f.path], f"{src} (mirror SHA256SUMS)")
    # Where the mirror copy is byte-identical to upstream, the registry pins it too.
    if f.sha256:
        verify(dest, f.sha256, f"{src} (registry pin)")


def _fetch(url: str, timeout_s: int) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            return r.read()
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise UserError(f"download of {url} failed ({reason}); without network, {MIRROR_HINT}") from None


_ARCHIVES: dict[str, bytes] = {}


def _from_network(dest: Path, f: RemoteFile, timeout_s: int) -> None:
    if f.url:
        log.info("fetching %s", f.url)
        dest.write_bytes(_fetch(f.url, timeout_s))
        if f.sha256:
            verify(dest, f.sha256, f.url)
        return
    assert f.archive and f.member
    if f.archive not in _ARCHIVES:
        log.info("fetching archive %s", f.archive)
        blob = _fetch(f.archive, timeout_s)
        if f.archive_md5:
            actual = hashlib.md5(blob).hexdigest()
            if actual != f.archive_md5:
                raise UserError(f"checksum mismatch for {f.archive}: publisher's md5 {f.archive_md5}, got {actual}; refusing it")
        _ARCHIVES[f.archive] = blob
    with zipfile.ZipFile(io.BytesIO(_ARCHIVES[f.archive])) as z:
        try:
            dest.write_bytes(z.read(f.member))
        except KeyError:
            raise UserError(f"{f.archive} has no member {f.member}; the registry entry is stale") from None
