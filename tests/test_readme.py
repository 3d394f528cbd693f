"""The README's Python blocks run as written (in a temporary directory), and its commands exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_python_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    blocks = _blocks("python")
    assert blocks, "README has no python example"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for code in blocks:
        exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - our own README
    assert "用户住在杭州滨江区" in capsys.readouterr().out
    assert (tmp_path / "memories.duckdb").exists()


def test_readme_commands_are_make_targets() -> None:
    makefile = (README.parent / "Makefile").read_text()
    for target in re.findall(r"^make (\w+)", "\n".join(_blocks("bash")), flags=re.M):
        assert re.search(rf"^{target}:", makefile, flags=re.M), f"make {target} is not in the Makefile"
