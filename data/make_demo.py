"""Regenerate ``demo_memories.jsonl``: the bilingual sample set of memkit's demo and notebooks.

Three users over ~90 days (2025-10-03 .. 2026-01-01 UTC):

- ``user_87`` writes in Chinese (lives in Hangzhou, drinks americano, a backend engineer);
- ``alice`` writes in English (Berlin, data scientist, vegetarian, runs marathons);
- ``bob`` mixes Chinese and English (Shanghai, product manager, learning Japanese).

Each has hand-written long-term facts and preferences (some under keys such as ``user.address``),
short-lived working notes, and episodic events drawn from templates with a fixed seed, so the file is
the same on every run: ``python data/make_demo.py`` rewrites it byte for byte.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

START = datetime(2025, 10, 3, tzinfo=timezone.utc)  # day 0; the demo's "now" is day 90
OUT = Path(__file__).with_name("demo_memories.jsonl")

# (key, content, kind, importance, tags, access, owner)
FACTS = {
    "user_87": [
        ("user.address", "用户住在杭州滨江区", "fact", 0.8, ["address"], "public", None),
        ("user.job", "用户是一名后端工程师，主要写 Go 和 Python", "fact", 0.7, ["work"], "public", None),
        ("user.coffee", "用户喜欢喝美式咖啡，不加糖", "preference", 0.6, ["food"], "public", None),
        ("user.pet", "用户养了一只叫团子的橘猫", "fact", 0.6, ["family"], "public", None),
        ("user.birthday", "用户的生日是 5 月 20 日", "fact", 0.7, ["personal"], "protected", "profile"),
        ("user.language", "用户希望用中文回答", "preference", 0.8, ["style"], "public", None),
        ("user.commute", "用户每天坐地铁 6 号线上班", "fact", 0.4, ["routine"], "public", None),
        ("user.diet", "用户对花生过敏", "fact", 0.9, ["health"], "protected", "health"),
        (None, "用户周末经常去西湖边跑步", "fact", 0.5, ["sport"], "public", None),
        (None, "用户正在准备系统架构师考试", "fact", 0.6, ["study"], "public", None),
        (None, "用户不喜欢太长的回答，希望先给结论", "preference", 0.7, ["style"], "public", None),
        (None, "用户的团队使用 PostgreSQL 和 Kafka", "reference", 0.5, ["work"], "public", None),
        (None, "用户决定下个月换一台 MacBook Pro", "decision", 0.5, ["shopping"], "public", None),
        (None, "用户的妈妈住在宁波", "fact", 0.6, ["family"], "private", None),
        (None, "用户喜欢听周杰伦的歌", "preference", 0.4, ["music"], "public", None),
        (None, "部署前必须先跑完集成测试", "instruction", 0.8, ["work"], "public", None),
        (None, "用户在读《人类简史》", "fact", 0.4, ["study"], "public", None),
        (None, "用户晚上十一点以后不看工作消息", "preference", 0.6, ["routine"], "public", None),
    ],
    "alice": [
        ("user.address", "Alice lives in Berlin, near Tempelhofer Feld", "fact", 0.8, ["address"], "public", None),
        ("user.job", "Alice works as a data scientist at a logistics startup", "fact", 0.7, ["work"], "public", None),
        ("user.diet", "Alice is vegetarian and avoids dairy", "preference", 0.8, ["food"], "public", None),
        ("user.sport", "Alice is training for the Berlin marathon", "fact", 0.6, ["sport"], "public", None),
        ("user.editor", "Alice prefers VS Code with the dark theme", "preference", 0.5, ["tools"], "public", None),
        ("user.timezone", "Alice is in the Europe/Berlin time zone", "fact", 0.6, ["routine"], "public", None),
        ("user.salary", "Alice's salary is confidential; never mention it", "instruction", 0.9, ["work"], "private", None),
        (None, "Alice has a cat called Pixel", "fact", 0.5, ["family"], "public", None),
        (None, "Alice wants answers with code examples in Python", "preference", 0.7, ["style"], "public", None),
        (None, "Alice's team uses Airflow and dbt for pipelines", "reference", 0.5, ["work"], "public", None),
        (None, "Alice decided to learn Rust this winter", "decision", 0.5, ["study"], "public", None),
        (None, "Alice drinks oat milk flat whites", "preference", 0.4, ["food"], "public", None),
        (None, "Alice's manager is called Jonas", "fact", 0.5, ["work"], "protected", "crm"),
        (None, "Alice is allergic to penicillin", "fact", 0.9, ["health"], "protected", "health"),
        (None, "Alice reads science fiction, currently The Three-Body Problem", "fact", 0.4, ["study"], "public", None),
        (None, "Always confirm before deleting files in Alice's repos", "instruction", 0.8, ["work"], "public", None),
    ],
    "bob": [
        ("user.address", "Bob 住在上海徐汇区", "fact", 0.8, ["address"], "public", None),
        ("user.job", "Bob is a product manager at a fintech company in Shanghai", "fact", 0.7, ["work"], "public", None),
        ("user.study", "Bob 正在学日语，目标是 N2", "fact", 0.6, ["study"], "public", None),
        ("user.tea", "Bob prefers 乌龙茶 over coffee", "preference", 0.5, ["food"], "public", None),
        ("user.meeting", "Bob 每周一上午十点开产品例会", "fact", 0.5, ["work"], "public", None),
        (None, "Bob likes concise bullet-point summaries", "preference", 0.7, ["style"], "public", None),
        (None, "Bob 的女儿在读小学三年级", "fact", 0.6, ["family"], "private", None),
        (None, "Bob uses Notion and Jira for roadmaps", "reference", 0.5, ["tools"], "public", None),
        (None, "Bob decided to launch the payment feature in Q1", "decision", 0.7, ["work"], "public", None),
        (None, "Bob 周末喜欢骑自行车去滨江", "fact", 0.4, ["sport"], "public", None),
        (None, "Bob's travel budget is 5000 元 per trip", "fact", 0.5, ["work"], "protected", "finance"),
        (None, "回复 Bob 时中英文都可以", "preference", 0.6, ["style"], "public", None),
        (None, "Bob 对猫毛过敏", "fact", 0.8, ["health"], "protected", "health"),
        (None, "Never share Bob's roadmap outside the team", "instruction", 0.9, ["work"], "public", None),
    ],
}

EVENTS = {
    "user_87": [
        "今天和同事讨论了{topic}的方案",
        "用户问了关于{topic}的问题",
        "用户提到最近在忙{topic}",
        "帮用户整理了{topic}的笔记",
        "用户抱怨{topic}进度太慢",
    ],
    "alice": [
        "Alice asked how to speed up {topic}",
        "Discussed {topic} with Alice for an hour",
        "Alice shared a blog post about {topic}",
        "Helped Alice debug {topic}",
        "Alice is frustrated with {topic} this week",
    ],
    "bob": [
        "Bob 问了 {topic} 的问题",
        "Reviewed the PRD for {topic} with Bob",
        "Bob 这周在忙 {topic}",
        "Bob asked for a summary of {topic}",
        "和 Bob 讨论了 {topic} 的排期",
    ],
}
TOPICS = {
    "user_87": ["接口限流", "数据库迁移", "缓存雪崩", "消息队列", "代码评审", "性能压测", "日志平台", "灰度发布"],
    "alice": ["pandas groupby", "route optimization", "a demand forecast", "the Airflow DAG",
              "feature drift", "a SQL window query", "the A/B test", "marathon pacing"],
    "bob": ["支付功能", "user onboarding", "风控规则", "Q1 roadmap", "竞品分析", "pricing page",
            "客户访谈", "churn dashboard"],
}
NOTES = {
    "user_87": ["用户刚才说等会儿要开会", "用户现在在公司", "用户今天有点累", "用户让我十分钟后提醒他喝水"],
    "alice": ["Alice is on a train right now", "Alice has a call in ten minutes", "Alice is tired today",
              "Alice asked me to hold the summary until later"],
    "bob": ["Bob 现在在开会", "Bob is at the airport", "Bob 说晚点再聊", "Bob wants the numbers by 5pm"],
}


def records() -> list[dict]:
    rng = random.Random(87)
    out = []
    for ns, facts in FACTS.items():
        for key, content, kind, imp, tags, access, owner in facts:
            rec = {"namespace": ns, "content": content, "key": key, "kind": kind, "importance": imp,
                   "layer": "long_term", "tags": tags, "access": access,
                   "created_at": START + timedelta(days=rng.uniform(0, 60), hours=rng.uniform(0, 24))}
            if owner:
                rec["owner"] = owner
            out.append(rec)
        for _ in range(70):
            topic = rng.choice(TOPICS[ns])
            content = rng.choice(EVENTS[ns]).format(topic=topic)
            out.append({"namespace": ns, "content": content, "kind": "event",
                        "layer": "episodic", "importance": round(rng.uniform(0.3, 0.7), 2),
                        "tags": ["event"], "access": "public",
                        "created_at": START + timedelta(days=rng.uniform(0, 90))})
        for note in NOTES[ns]:
            out.append({"namespace": ns, "content": note, "kind": "event", "layer": "short_term",
                        "importance": 0.2, "tags": ["note"], "access": "public",
                        "created_at": START + timedelta(days=89, hours=rng.uniform(0, 23.5))})
    out.sort(key=lambda r: (r["created_at"], r["namespace"]))
    return out


def main() -> None:
    with OUT.open("w", encoding="utf-8") as f:
        for r in records():
            r = {k: v for k, v in r.items() if v is not None}
            r["created_at"] = r["created_at"].isoformat(timespec="seconds")
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
