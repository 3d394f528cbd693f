"""The guard stage of the write pipeline (:mod:`memkit.guard` applied to a batch of rows).

:meth:`GuardMixin._screen` runs before anything is embedded or written, for every write the store
makes (``add``, ``add_many``, ``import_``, merged rows):

- the **text** and every **field** that can carry words (the structured ``value``, ``key``,
  ``tags``, ``owner``, ``created_by``: :mod:`memkit.guard.fields`) are screened with the same rules;
- PII is redacted (typed placeholders in text and values, pseudonyms in names);
- a secret anywhere refuses the whole call (:class:`~memkit.errors.WriteRefused`, audited as a
  ``deny`` event that holds codes and row numbers, never the text);
- a suspected injection makes the row ``quarantined``; findings are kept per row (JSON), merged with
  any the row already had (an imported row keeps its own).

:meth:`GuardMixin._near_lessons` then quarantines rows whose embedding is close to a *lesson* (a
memory a reviewer confirmed bad, :mod:`memkit.store.review`).

Each row ends with one action, the strictest any of its texts earned
(``store`` < ``quarantine`` < ``refuse``, :func:`memkit.guard.fields.strictest`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from ..errors import ValidationError, WriteRefused
from ..guard import is_rule_message, lesson_similarity, screen_many
from ..guard.fields import screen_fields, strictest
from ..guard.rules import LESSON
from ..schema import check_text
from .audit import AuditMixin, digest
from .names import log_names
from .vectors import VectorsMixin

__all__ = ["GuardMixin", "merge_findings"]

# the fields besides content that can carry words, in the order their findings are listed
_FIELDS = ("value", "key", "owner", "created_by", "tags")


def merge_findings(old: str | None, new: list[dict[str, Any]]) -> str | None:
    """A row's findings JSON plus ``new`` ones (duplicates dropped) -> JSON, or None when empty.

    >>> merge_findings('[{"code": "MG101"}]', [{"code": "MG101"}, {"code": "MG301"}])
    '[{"code": "MG101"}, {"code": "MG301"}]'
    """
    found = (json.loads(old) if old else []) + new
    unique = list({json.dumps(f, sort_keys=True): f for f in found}.values())
    return json.dumps(unique, ensure_ascii=False) if unique else None


class GuardMixin(AuditMixin, VectorsMixin):
    """Screens batches before they are written; quarantines repeats of lessons. Needs the audit
    writer (a refusal is logged) and the vectors (lessons are compared by embedding)."""

    _importing = False  # True inside _as_import(): the writes bring another tool's rows in

    @contextmanager
    def _as_import(self) -> Iterator[None]:
        """The writes inside are an import (an adapter's ``add_many``: chat, mem0, COGX): screened and
        refused as :meth:`import_`'s rows are (see :meth:`_screen`). Holds the store's lock, so no other
        thread's write is taken for one."""
        with self._lock:
            was, self._importing = self._importing, True
            try:
                yield
            finally:
                self._importing = was

    def _screen(
        self,
        cols: dict[str, list[Any]],
        requester: str | None,
        now: datetime,
        *,
        op: str = "add",
        where: Callable[[int], str] = lambda i: f"row {i}",
        refuse: bool = True,
        released: Sequence[int] = (),
    ) -> list[int]:
        """Screen ``cols`` in place (see the module docstring) -> the rows whose text was redacted.

        Raises WriteRefused (after a ``deny`` event) when a row holds a secret; ``where(i)`` names
        row ``i`` in its message (``row 3``, ``line 7``). ``refuse=False`` marks such rows with status
        ``refused`` instead (a caller that drops them: consolidation). ``released`` rows keep their status
        where the guard would quarantine them (a reviewer's approval an operator's import carries).

        An import's rows (``op="import"``, or inside :meth:`_as_import`) are screened as ``source="import"``
        whatever source the file claims (a claim is only text: ``"user"`` would pick the lenient
        threshold), or as their claim where that one is the stricter; they keep it as stored (the
        provenance a round trip carries). Their refusal is audited as ``attempted: "import"``.
        """
        n = len(cols["content"])
        cols.setdefault("findings", [None] * n)  # an imported row may already carry findings
        if not self.guard.enabled:
            return []
        sources = cols.get("source")
        if op == "import" or self._importing:
            op = "import"
            if "import" in self.guard.strict_sources:  # else a claim in strict_sources keeps its threshold
                sources = ["import"] * n
        text = screen_many(cols["content"], self.guard, sources=sources)
        fields = screen_fields({f: cols[f] for f in _FIELDS if f in cols}, self.guard)
        actions = list(text.actions)
        if fields.actions.count("store") != n:  # a field earned more than storing: row by row
            actions = [strictest(a, b) for a, b in zip(actions, fields.actions, strict=True)]
        parts = [f for f in (text.findings, fields.findings) if f.height]
        found = pl.concat(parts).sort("row", maintain_order=True) if parts else text.findings
        refused = [i for i, a in enumerate(actions) if a == "refuse"] if "refuse" in actions else []
        if refused and not refuse:  # the caller drops these rows (status "refused" is never stored)
            cols["status"] = [
                "refused" if a == "refuse" else st for a, st in zip(actions, cols["status"], strict=True)
            ]
        elif refused:
            bad = found.filter(pl.col("row").is_in(refused))
            # the deny event keeps what the log may hold: codes and spans, no text, no message
            brief = bad.filter(pl.col("kind").is_in(["secret", "topic"])).select(
                "row", "code", "kind", "start", "end"
            )
            self._log("deny", now, cols["namespace"][refused[0]], requester, attempted=op, reason="guard",
                      rows=n, findings=brief.to_dicts())  # fmt: skip
            codes = ", ".join(dict.fromkeys(brief["code"].to_list()))
            more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
            place = f" in {where(refused[0])}{more}" if n > 1 else ""
            raise WriteRefused(f"write refused by the guard{place}: {codes}", bad)
        # rows whose text changed: a vector the caller brings for them would still encode the original.
        # Only a text with findings may have changed (screen_many redacts nothing else): no pass over all
        maybe = text.findings["row"].unique().sort().to_list() if text.findings.height else []
        redacted = [i for i in maybe if cols["content"][i] != text.texts[i]]
        cols["content"] = text.texts  # (a bulk write's texts, unredacted, still hold their Arrow array)
        cols.update(fields.columns)
        kept = set(released)  # a reviewer released these: their findings are kept, not their quarantine
        if "quarantine" in actions:
            cols["status"] = [
                "quarantined" if a == "quarantine" and i not in kept else st
                for i, (a, st) in enumerate(zip(actions, cols["status"], strict=True))
            ]
        for (row,), part in found.group_by("row") if found.height else ():  # only rows with findings
            # a custom detector's message may quote the text (an LLM judge's "flagged: ..."): every
            # reader sees findings, so what is not one of the guard's own messages is kept as a digest
            kept = [{**f, "message": f["message"] if is_rule_message(f["message"]) else digest(f["message"])}
                    for f in part.drop("row").to_dicts()]  # fmt: skip
            cols["findings"][row] = merge_findings(cols["findings"][row], kept)
        return redacted

    def screen(self, texts: list[str], *, namespace: str) -> pl.DataFrame:
        """What the guard stage would do with ``texts`` written to ``namespace``, lessons included
        -> ``text`` (redacted), ``action`` (``store``, ``quarantine``, ``refuse``), ``codes``. Nothing
        is written. :class:`~memkit.agent.MemoryAgent` keeps its turn buffer this way."""
        namespace = self._space(namespace)
        if isinstance(texts, str) or not isinstance(texts, (list, tuple, pl.Series, np.ndarray)):  # not chars
            raise ValidationError("texts", f"must be a list of str, got {type(texts).__name__}")
        if getattr(texts, "ndim", 1) != 1:
            raise ValidationError("texts", "must be a list of str, got an array of other shape")
        texts = [str(check_text("texts", t)) for t in texts]
        s = screen_many(texts, self.guard)
        actions = list(s.actions)
        found: dict[int, dict[str, None]] = {}  # row -> its distinct codes, in order (one pass over findings)
        for r, c in zip(s.findings["row"].to_list(), s.findings["code"].to_list(), strict=True):
            found.setdefault(r, {})[c] = None
        codes = [list(found.get(i, ())) for i in range(len(texts))]
        # lessons compare embeddings: not in a stale file, whose vectors are another embedder's
        if texts and self.guard.enabled and self.guard.screen_injection and self._stale is None:
            emb = self._check_embeddings(self.embedder.embed(s.texts), len(texts))
            near = lesson_similarity(emb, self._lesson_matrix(namespace)) >= self.guard.lesson_similarity
            for i in np.flatnonzero(near):
                actions[i] = strictest(actions[i], "quarantine")
                codes[i].append(LESSON[0])
        return pl.DataFrame(
            {"text": s.texts, "action": actions, "codes": codes},
            schema={"text": pl.String, "action": pl.String, "codes": pl.List(pl.String)},
        )

    def _lesson_matrix(self, namespace: str) -> np.ndarray:
        """The lessons' embeddings of a namespace ``(m, dim)``, cached until a lesson changes: those
        stored under its plain name and under its log name (:func:`~memkit.store.names.log_names`).

        Lessons are per namespace: one tenant's reviewer never changes what another tenant may store.
        """
        names = tuple(log_names(namespace))  # as it is and as the log names it
        if names not in self._lesson_cache or self._pg is not None:  # a server: another process
            # may have learned a lesson since, so the lessons are read for every write and guarded search
            t = self._sql("SELECT embedding FROM lessons WHERE namespace IN (SELECT unnest(?::VARCHAR[]))"
                          f" ORDER BY {self._lesson_order}", [list(names)])  # fmt: skip
            self._lesson_cache[names] = (
                np.stack(t["embedding"].to_numpy()).astype(np.float32) if t.height
                else np.zeros((0, self.embedder.dim), np.float32)
            )  # fmt: skip
        return self._lesson_cache[names]

    def _near_lessons(self, cols: dict[str, list[Any]], emb: np.ndarray, given: Sequence[int] = ()) -> None:
        """Quarantine the rows whose embedding is within ``lesson_similarity`` of a lesson of their
        namespace.

        ``given`` rows hold a vector the caller brought (``add_many``'s ``embedding`` column, an
        import's): it says nothing certain about the text (a random vector is near no lesson), so such
        a row in a namespace with lessons is also compared by this store's embedding of its text, and
        held when either vector is that close. Only then is a given row's text embedded: a write of
        given vectors costs no embedding where no lesson was learned."""
        if not self.guard.enabled or not self.guard.screen_injection:
            return
        spaces = list(dict.fromkeys(cols["namespace"]))  # a batch spans few namespaces
        lessons = {ns: self._lesson_matrix(ns) for ns in spaces}
        if not any(len(m) for m in lessons.values()):  # no lesson learned: nothing to compare
            return
        namespaces = np.asarray(cols["namespace"], dtype=object)
        own = np.zeros(len(namespaces), bool)  # rows whose given vector is checked against the text's
        if len(given):
            own[np.asarray(given, np.intp)] = True
            own &= np.isin(namespaces, [ns for ns, m in lessons.items() if len(m)])
        ours = self._embed([cols["content"][i] for i in np.flatnonzero(own)])[0] if own.any() else None
        for ns in spaces:
            rows = np.flatnonzero(namespaces == ns)
            if not len(lessons[ns]):
                continue
            sim = lesson_similarity(emb[rows], lessons[ns])
            if ours is not None and own[rows].any():  # the text's own vector too: the closer counts
                at = np.searchsorted(np.flatnonzero(own), rows[own[rows]])  # their rows in `ours`
                sim[own[rows]] = np.maximum(sim[own[rows]], lesson_similarity(ours[at], lessons[ns]))
            for i in rows[sim >= self.guard.lesson_similarity]:
                code, kind, severity, message = LESSON
                s = float(sim[np.searchsorted(rows, i)])  # i's position within `rows` (sorted)
                finding = {"code": code, "kind": kind, "severity": severity, "start": None, "end": None,
                           "message": f"{message} (cosine {s:.3f})"}  # fmt: skip
                cols["findings"][i] = merge_findings(cols["findings"][i], [finding])
                cols["status"][i] = "quarantined"
