"""fetch_locomo and ``memkit data locomo``: found, downloaded, checked, cached — never over the network.

Downloads go through a monkeypatched opener or a local ``file://`` URL; the data set is swapped for
a tiny one with a known hash where the real file is not needed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import urllib.error
from pathlib import Path

import pytest

import memkit as mk
from memkit.cli import main
from memkit.evaluate import data

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"
BODY = b'[{"qa": [], "conversation": {}}]'


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> data.Dataset:
    """A stand-in data set whose bytes are BODY; the cache and $MEMKIT_LOCOMO point into tmp_path."""
    fake = dataclasses.replace(data.LOCOMO, sha256=hashlib.sha256(BODY).hexdigest(), size=len(BODY))
    monkeypatch.setattr(data, "LOCOMO", fake)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("MEMKIT_LOCOMO", raising=False)
    return fake


def opener_of(body: bytes, seen: list[str]):
    """An opener that records the URL and serves ``body`` (what urlopen returns, minus HTTP)."""

    def open_(url: str) -> io.BytesIO:
        seen.append(url)
        return io.BytesIO(body)

    return open_


def test_downloads_into_the_cache_checks_and_reuses(tiny, tmp_path: Path) -> None:
    seen: list[str] = []
    lines: list[str] = []
    path = data.fetch_locomo(opener=opener_of(BODY, seen), say=lines.append)
    assert path == tmp_path / "cache" / "memkit" / "locomo10.json" and path.read_bytes() == BODY
    assert seen == [data.LOCOMO_URL] and "/snap-research/LoCoMo/" in seen[0]
    assert any("CC BY-NC 4.0" in line for line in lines)  # the licence is stated on download
    # the second call finds the cached file: no download
    assert data.fetch_locomo(opener=opener_of(b"", seen)) == path and len(seen) == 1


def test_a_wrong_download_is_refused_and_leaves_nothing(tiny, tmp_path: Path) -> None:
    with pytest.raises(data.LocomoUnavailable, match="sha256"):
        data.fetch_locomo(opener=opener_of(b"not it", []))
    assert list((tmp_path / "cache" / "memkit").iterdir()) == []


def test_offline_says_exactly_what_to_do(tiny, tmp_path: Path) -> None:
    def offline(url: str) -> io.BytesIO:
        raise urllib.error.URLError("Name or service not known")

    with pytest.raises(data.LocomoUnavailable) as err:
        data.fetch_locomo(opener=offline)
    msg = str(err.value)
    target = tmp_path / "cache" / "memkit" / "locomo10.json"
    assert data.LOCOMO_URL in msg and str(target) in msg and "MEMKIT_LOCOMO" in msg and "CC BY-NC 4.0" in msg
    assert isinstance(err.value, FileNotFoundError) and isinstance(err.value, mk.MemkitError)
    with pytest.raises(data.LocomoUnavailable, match="download=False"):
        data.fetch_locomo(download=False)


def test_env_and_argument_point_at_a_file_or_folder(
    tiny, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "locomo10.json").write_bytes(BODY)
    monkeypatch.setenv("MEMKIT_LOCOMO", str(folder))
    assert data.fetch_locomo(download=False) == folder / "locomo10.json"
    assert data.fetch_locomo(folder / "locomo10.json", download=False).is_absolute()
    (folder / "locomo10.json").write_bytes(b"edited")  # a file that is there but wrong: refused, kept
    with pytest.raises(mk.ValidationError, match="locomo10.json"):
        data.fetch_locomo()
    assert (folder / "locomo10.json").read_bytes() == b"edited"


def test_the_real_file_through_a_file_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not SHARED.is_file():
        pytest.skip(f"LoCoMo not found at {SHARED}")
    monkeypatch.delenv("MEMKIT_LOCOMO", raising=False)
    path = data.fetch_locomo(tmp_path, url=SHARED.as_uri())  # urllib's own file:// handler
    assert path.read_bytes() == SHARED.read_bytes() and data._sha256(path) == data.LOCOMO_SHA256
    memories, queries = mk.evaluate.load_locomo(path)
    assert (memories.height, queries.height) == (5882, 1986)


def test_cli(tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "locomo", "--path", str(tmp_path / "none"), "--no-download"]) == 2
    assert data.LOCOMO_URL in capsys.readouterr().err
    (tmp_path / "f.json").write_bytes(BODY)
    assert main(["data", "locomo", "--path", str(tmp_path / "f.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == str(tmp_path / "f.json") and "CC BY-NC 4.0" in out[-2]
