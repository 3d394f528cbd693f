"""memkit/store/audit.py ``scrub``: an id of memkit's own shape (16 lowercase hex digits) or a UUID in a
``log_context`` detail is a random token, as an import judges it (memkit/portable/ids.py): a run of
digits in it that reads as a phone number is chance, so it stays as written (about one id in 2,000
holds one: the agent's "dropped as a duplicate of …" named a digest instead, a flaky test found it);
a secret in one, and a phone number in any other string, still become digests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import memkit as mk
from memkit.store.audit import digest, scrub

NOW = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "token", ["19158894556e57d6", "0013812345678abc", "13812345-6789-4abc-9def-0123456789ab"]
)
def test_a_random_token_that_reads_as_a_phone_number_stays(token: str) -> None:
    assert scrub({"dropped": [{"id": token, "reason": "duplicate of 2d95b565076e6588"}]}) == {
        "dropped": [{"id": token, "reason": "duplicate of 2d95b565076e6588"}]
    }
    s = mk.MemoryStore(":memory:")
    m = s.add("用户喜欢美式咖啡", namespace="u", now=NOW)
    s.log_context([m.id], namespace="u", now=NOW, dropped=[{"id": token, "reason": f"duplicate of {m.id}"}])
    detail = s.audit("u", op="context")["detail"][0]
    assert token in detail and "b2:" not in detail
    s.close()


def test_other_strings_and_secrets_in_tokens_are_still_digested() -> None:
    assert scrub({"note": "13812345678", "id": "doc-13812345678"}) == {
        "note": digest("13812345678"), "id": digest("doc-13812345678")
    }  # fmt: skip
    key = "AKIAIOSFODNN7EXAMPLE"  # a secret is a secret in any string
    assert scrub({"id": key}) == {"id": digest(key)}
