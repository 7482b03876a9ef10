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
    packaged = [f.url is not None and f.url.startswith("package:") for f in spec.files]
    folder = None
    if mirror is not None and not all(packaged):
        folder = mirror_folder(spec, mirror)
    elif mirror is None and (missing := [f.path for f in spec.files if f.mirror_only]):
        raise UserError(f"{spec.name}: {missing[0]} is published only on a mirror; {MIRROR_HINT}")
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        sums = read_sha256sums(folder) if folder is not None else None
        for f, package in zip(tqdm(spec.files, desc=f"download {spec.name}", unit="file"), packaged):
            dest = tmp / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            if package:
                _copy(REPO / f.url.removeprefix("package:"), dest, f)
            elif folder is not None and sums is not None:
                _from_mirror(spec, folder, dest, f, sums)
            else:
                _from_network(dest, f, timeout_s)
            sizes[f.path] = dest.stat().st_size
    return sizes


def mirror_folder(spec: DatasetSpec, mirror: str) -> Path:
    """The dataset's folder in the mirror, checked before anything is written."""
    root = Path(mirror)
    if not root.is_dir():
        raise UserError(f"download.mirror: folder {root} does not exist; {MIRROR_HINT}")
    folder = root / spec.mirror_dir
    if not folder.is_dir():
        raise UserError(f"download.mirror: {root} has no folder {spec.mirror_dir}/ for dataset {spec.name}")
    return folder


def _copy(src: Path, dest: Path, f: RemoteFile) -> None:
    if not src.exists():
        raise UserError(f"packaged dataset file {src} is missing; the checkout is incomplete")
    shutil.copyfile(src, dest)
    if f.sha256:
        verify(dest, f.sha256, str(src))


def _from_mirror(spec: DatasetSpec, folder: Path, dest: Path, f: RemoteFile, sums: dict[str, str]) -> None:
    src = folder / f.path
    if not src.exists():
        raise UserError(f"download.mirror: {src} not found; the mirror must hold {f.path} in {folder}")
    if f.path not in sums:
        raise UserError(f"{folder / 'SHA256SUMS'} has no line for {f.path}")
    # A mirror's SHA256SUMS only says the file is what the mirror meant to hold; whoever could
    # edit the file could rewrite the sums too. The registry pin says it is the published data.
    shutil.copyfile(src, dest)
    verify(dest, sums[f.path], f"{src} (mirror SHA256SUMS)")
    pin = f.sha256 or f.mirror_sha256
    if pin is None:
        raise UserError(f"configs/datasets.yaml: {spec.name} file {f.path} pins neither sha256 nor mirror_sha256; a mirror copy cannot be checked")
    verify(dest, pin, f"{src} (registry pin)")


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
