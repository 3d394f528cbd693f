"""A check the fact-slot tests share: one text admitted alone (``admit``, Python ``re``) and in a batch
(``admit_many``, polars) gives the same Admission, key and all."""

from __future__ import annotations

from memkit.commands import Admission, admit, admit_many


def admits_alike(texts: list[str]) -> None:
    """``admit(text)`` equals the row ``admit_many(texts)`` gives for it, for every text."""
    frame = admit_many(texts)
    for text, row in zip(texts, frame.iter_rows(named=True), strict=True):
        assert admit(text) == Admission(**{f: row[f] for f in Admission.__dataclass_fields__}), text
