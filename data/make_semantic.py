"""Regenerate ``semantic_memories.jsonl`` and ``semantic_labels.csv``: memkit's semantic sample set.

Four users over six months (2025-08-01 .. 2026-01-31 UTC; the set's "now" is 2026-02-01):

- ``user_87`` writes in Chinese (a backend engineer in Hangzhou);
- ``alice`` writes in English (a data scientist in Berlin);
- ``bob`` mixes Chinese and English (a product manager in Shanghai);
- ``chen`` is a researcher's lab assistant, in both languages.

Every memory was written by hand for memkit, as one of these roles (the ``role`` column of the labels):

- ``paraphrase`` — the same fact said 2–5 ways, graded by ``variant``: ``orig``, ``near`` (near-verbatim:
  punctuation, one word), ``reword`` (same meaning, other words), ``xlang`` (the other language). These
  rows share a ``group``: a merge inside a group is right.
- ``near_miss`` — the template of a paraphrase group with a different fact ("allergic to peanuts" /
  "allergic to penicillin", "lives in Binjiang" / "her colleague lives in Binjiang"); ``near_of`` names
  the group it imitates. Merging it into that group is wrong.
- ``update`` — versions of a keyed fact over time (same ``key``, a new value each time).
- ``contradiction`` — an unkeyed statement that contradicts a paraphrase group (``near_of``).
- ``distractor`` — everything else an agent remembers: events, notes, unrelated facts.

A merge is right iff both rows have the same ``group``. ``created_at`` comes from a fixed seed, so
``python data/make_semantic.py`` rewrites both files byte for byte. The embeddings are a separate step
(``embed_semantic.py``): this script needs nothing but the standard library.
"""

from __future__ import annotations

import csv
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

START = datetime(2025, 8, 1, tzinfo=UTC)  # day 0; the set's "now" is day 184 (2026-02-01)
DAYS = 183
HERE = Path(__file__).parent
OUT = HERE / "semantic_memories.jsonl"
LABELS = HERE / "semantic_labels.csv"

# ------------------------------------------------------------------------------------------ groups
# (group, kind, importance, tags, [(variant, text), ...]); variants of one group share every field.
# Optional 6th item: dict of overrides (layer, access, owner, key).
# fmt: off
PARAPHRASES: dict[str, list[tuple]] = {
    "user_87": [
        ("home", "fact", 0.8, ["address"], [
            ("orig", "用户住在杭州滨江区"), ("near", "用户住在杭州市滨江区。"),
            ("reword", "他家在杭州的滨江"), ("xlang", "The user lives in Binjiang, Hangzhou")]),
        ("coffee", "preference", 0.6, ["food"], [
            ("orig", "用户喜欢喝美式咖啡，不加糖"), ("near", "用户喜欢喝美式咖啡，不要加糖"),
            ("reword", "他平时只喝不加糖的美式"),
            ("xlang", "The user likes americano coffee with no sugar")]),
        ("peanut", "fact", 0.9, ["health"], [
            ("orig", "用户对花生过敏"), ("near", "用户对花生过敏。"),
            ("reword", "他吃花生会过敏，饭菜里不能有花生"),
            ("xlang", "The user is allergic to peanuts")], {"access": "protected", "owner": "health"}),
        ("job", "fact", 0.7, ["work"], [
            ("orig", "用户是后端工程师，主要写 Go 和 Python"),
            ("near", "用户是一名后端工程师，主要写 Go 和 Python"),
            ("reword", "他做后端开发，日常用 Go 和 Python"),
            ("xlang", "The user is a backend engineer who mostly writes Go and Python")]),
        ("cat", "fact", 0.6, ["family"], [
            ("orig", "用户养了一只叫团子的橘猫"), ("near", "用户养了一只橘猫，叫团子"),
            ("reword", "团子是他家的橘猫"), ("xlang", "The user has an orange cat named Tuanzi")]),
        ("style", "preference", 0.7, ["style"], [
            ("orig", "用户希望回答先给结论，再讲细节"), ("near", "用户希望回答先给结论再讲细节。"),
            ("reword", "回答他的时候先说结论，然后再展开"),
            ("xlang", "The user wants the conclusion first, then the details")]),
        ("run", "fact", 0.5, ["sport"], [
            ("orig", "用户周末经常去西湖边跑步"), ("near", "周末用户经常去西湖边跑步"),
            ("xlang", "The user often goes jogging by West Lake at weekends")]),
        ("exam", "fact", 0.6, ["study"], [
            ("orig", "用户正在准备系统架构师考试"), ("reword", "他在备考系统架构设计师"),
            ("xlang", "The user is preparing for the system architect exam")]),
        ("metro", "fact", 0.4, ["routine"], [
            ("orig", "用户每天坐地铁 6 号线上班"), ("near", "用户每天坐 6 号线地铁上班"),
            ("xlang", "The user takes metro line 6 to work every day")]),
        ("deploy", "instruction", 0.8, ["work"], [
            ("orig", "部署前必须先跑完集成测试"), ("near", "部署之前必须先跑完集成测试"),
            ("reword", "上线前一定要把集成测试全部跑通"),
            ("xlang", "Always run the integration tests before deploying")]),
        ("late", "preference", 0.6, ["routine"], [
            ("orig", "用户晚上十一点以后不看工作消息"), ("reword", "晚上 11 点后别给他发工作消息"),
            ("xlang", "The user ignores work messages after 11 pm")]),
        ("laptop", "decision", 0.5, ["shopping"], [
            ("orig", "用户决定下个月换一台 MacBook Pro"), ("reword", "他打算下个月买台新的 MacBook Pro")]),
        ("ev-pressure", "event", 0.5, ["event"], [
            ("orig", "和用户讨论了双十一的压测方案"), ("near", "和用户讨论了双十一压测的方案"),
            ("xlang", "Discussed the Double 11 load-test plan with the user")], {"layer": "episodic"}),
        ("ev-kafka", "event", 0.4, ["event"], [
            ("orig", "帮用户排查了 Kafka 消费延迟的问题"),
            ("reword", "一起定位了 Kafka 消费者延迟高的原因")], {"layer": "episodic"}),
    ],
    "alice": [
        ("home", "fact", 0.8, ["address"], [
            ("orig", "Alice lives in Berlin, near Tempelhofer Feld"),
            ("near", "Alice lives in Berlin near the Tempelhofer Feld."),
            ("reword", "Alice's flat is close to Tempelhofer Feld in Berlin"),
            ("xlang", "Alice 住在柏林，离滕珀尔霍夫公园很近")]),
        ("diet", "preference", 0.8, ["food"], [
            ("orig", "Alice is vegetarian and avoids dairy"),
            ("near", "Alice is a vegetarian and avoids dairy."),
            ("reword", "Alice eats no meat and no dairy products"), ("xlang", "Alice 吃素，也不吃奶制品")]),
        ("penicillin", "fact", 0.9, ["health"], [
            ("orig", "Alice is allergic to penicillin"), ("near", "Alice is allergic to penicillin."),
            ("reword", "Alice has a penicillin allergy"),
            ("xlang", "Alice 对青霉素过敏")], {"access": "protected", "owner": "health"}),
        ("marathon", "fact", 0.6, ["sport"], [
            ("orig", "Alice is training for the Berlin marathon"),
            ("near", "Alice is training for the Berlin Marathon in September"),
            ("reword", "Alice runs most mornings to prepare for the Berlin marathon"),
            ("xlang", "Alice 正在为柏林马拉松做训练")]),
        ("editor", "preference", 0.5, ["tools"], [
            ("orig", "Alice prefers VS Code with the dark theme"),
            ("near", "Alice prefers VS Code with a dark theme"),
            ("reword", "Alice codes in VS Code and always switches it to dark mode")]),
        ("python", "preference", 0.7, ["style"], [
            ("orig", "Alice likes explanations with code examples in Python"),
            ("near", "Alice likes explanations that include Python code examples"),
            ("reword", "When explaining something to Alice, show a Python snippet"),
            ("xlang", "给 Alice 的回答要带 Python 代码示例")]),
        ("flatwhite", "preference", 0.4, ["food"], [
            ("orig", "Alice drinks oat milk flat whites"),
            ("reword", "Alice's usual coffee is a flat white with oat milk"),
            ("xlang", "Alice 喝燕麦奶的馥芮白")]),
        ("pixel", "fact", 0.5, ["family"], [
            ("orig", "Alice has a cat called Pixel"), ("near", "Alice has a cat named Pixel."),
            ("reword", "Pixel is the name of Alice's cat"), ("xlang", "Alice 养了一只叫 Pixel 的猫")]),
        ("confirm", "instruction", 0.8, ["work"], [
            ("orig", "Always confirm before deleting files in Alice's repos"),
            ("reword", "Ask Alice before you delete any file in her repositories"),
            ("xlang", "删除 Alice 仓库里的文件之前一定要先确认")]),
        ("rust", "decision", 0.5, ["study"], [
            ("orig", "Alice decided to learn Rust this winter"),
            ("reword", "Alice plans to pick up Rust over the winter")]),
        ("manager", "fact", 0.5, ["work"], [
            ("orig", "Alice's manager is called Jonas"),
            ("reword", "Jonas is Alice's manager")], {"access": "protected", "owner": "crm"}),
        ("ev-dag", "event", 0.5, ["event"], [
            ("orig", "Helped Alice debug the Airflow DAG for the invoice pipeline"),
            ("near", "Helped Alice debug the Airflow DAG of the invoice pipeline"),
            ("reword", "Fixed the failing invoice DAG in Airflow together with Alice")],
         {"layer": "episodic"}),
        ("ev-groupby", "event", 0.4, ["event"], [
            ("orig", "Alice asked how to speed up a slow pandas groupby"),
            ("reword", "Alice wanted to know why her pandas groupby is so slow")], {"layer": "episodic"}),
    ],
    "bob": [
        ("home", "fact", 0.8, ["address"], [
            ("orig", "Bob 住在上海徐汇区"), ("near", "Bob 住在上海市徐汇区。"), ("reword", "Bob 家在徐汇"),
            ("xlang", "Bob lives in Xuhui, Shanghai")]),
        ("japanese", "fact", 0.6, ["study"], [
            ("orig", "Bob 正在学日语，目标是 N2"), ("near", "Bob 正在学日语，目标是考过 N2"),
            ("reword", "Bob 在备考日语能力考试 N2"), ("xlang", "Bob is studying Japanese for the JLPT N2")]),
        ("tea", "preference", 0.5, ["food"], [
            ("orig", "Bob prefers 乌龙茶 over coffee"), ("reword", "比起咖啡，Bob 更喜欢喝乌龙茶"),
            ("xlang", "Bob would rather drink oolong tea than coffee")]),
        ("monday", "fact", 0.5, ["work"], [
            ("orig", "Bob 每周一上午十点开产品例会"), ("near", "Bob 每周一上午 10 点开产品例会"),
            ("reword", "Bob 的产品例会固定在周一早上十点"),
            ("xlang", "Bob has the product team meeting every Monday at 10 am")]),
        ("bullets", "preference", 0.7, ["style"], [
            ("orig", "Bob likes concise bullet-point summaries"),
            ("near", "Bob likes concise summaries in bullet points"),
            ("reword", "Keep summaries for Bob short and in bullet points"),
            ("xlang", "给 Bob 的总结要简短，用要点列出")]),
        ("cathair", "fact", 0.8, ["health"], [
            ("orig", "Bob 对猫毛过敏"), ("near", "Bob 对猫毛过敏。"),
            ("xlang", "Bob is allergic to cat hair")], {"access": "protected", "owner": "health"}),
        ("payment", "decision", 0.7, ["work"], [
            ("orig", "Bob decided to launch the payment feature in Q1"),
            ("near", "Bob decided to launch the payments feature in Q1"),
            ("reword", "The payment feature ships in Q1: Bob's call"),
            ("xlang", "Bob 决定在 Q1 上线支付功能")]),
        ("roadmap", "instruction", 0.9, ["work"], [
            ("orig", "Never share Bob's roadmap outside the team"),
            ("reword", "Bob's roadmap must not leave the team"),
            ("xlang", "不要把 Bob 的路线图发给团队以外的人")]),
        ("daughter", "fact", 0.6, ["family"], [
            ("orig", "Bob 的女儿在读小学三年级"), ("reword", "Bob 的女儿今年上三年级"),
            ("xlang", "Bob's daughter is in third grade")], {"access": "private"}),
        ("cycling", "fact", 0.4, ["sport"], [
            ("orig", "Bob 周末喜欢骑自行车去滨江"), ("near", "Bob 周末喜欢骑车去滨江"),
            ("xlang", "Bob likes cycling to the riverside at the weekend")]),
        ("ev-roadmap", "event", 0.5, ["event"], [
            ("orig", "和 Bob 讨论了 Q1 roadmap 的排期"), ("near", "和 Bob 讨论了 Q1 roadmap 排期"),
            ("xlang", "Discussed the Q1 roadmap schedule with Bob")], {"layer": "episodic"}),
    ],
    "chen": [
        ("gpus", "fact", 0.6, ["compute"], [
            ("orig", "陈老师的实验跑在 4 张 A100 上"), ("near", "陈老师的实验跑在四张 A100 上"),
            ("xlang", "Chen's experiments run on four A100 GPUs")]),
        ("deadline", "fact", 0.9, ["paper"], [
            ("orig", "陈老师的论文要在 3 月 1 日前投 ACL"),
            ("reword", "ACL 的截稿日是 3 月 1 日，陈老师要赶这一篇"),
            ("xlang", "Chen's paper must be submitted to ACL by March 1")]),
        ("overleaf", "preference", 0.5, ["paper"], [
            ("orig", "陈老师用 Overleaf 写论文"), ("near", "陈老师用 Overleaf 来写论文"),
            ("xlang", "Chen writes papers in Overleaf")]),
        ("cite", "instruction", 0.7, ["paper"], [
            ("orig", "Chen wants every citation in ACL format"),
            ("near", "Chen wants all citations in ACL format"), ("xlang", "陈老师要求引用一律用 ACL 格式")]),
        ("groupmeet", "fact", 0.6, ["routine"], [
            ("orig", "组会在每周三下午两点"), ("near", "组会是每周三下午 2 点"),
            ("reword", "每周三下午两点开组会"), ("xlang", "The lab meeting is every Wednesday at 2 pm")]),
        ("pourover", "preference", 0.3, ["food"], [
            ("orig", "陈老师每天下午喝一杯手冲咖啡"),
            ("xlang", "Chen has a pour-over coffee every afternoon")]),
        ("locomo", "instruction", 0.8, ["data"], [
            ("orig", "LoCoMo 数据只能用于研究，不能商用"), ("reword", "LoCoMo 数据集仅限研究用途"),
            ("xlang", "The LoCoMo data is for research only, not for commercial use")]),
        ("seeds", "instruction", 0.7, ["method"], [
            ("orig", "每个实验都要用 3 个随机种子，报告均值和标准差"),
            ("xlang", "Run every experiment with 3 random seeds and report mean and std")]),
        ("ev-review", "event", 0.5, ["event"], [
            ("orig", "帮陈老师回复了审稿人关于消融实验的意见"),
            ("xlang", "Helped Chen answer the reviewer's comments on the ablation study")],
         {"layer": "episodic"}),
    ],
}

# (group it imitates, role, kind, importance, tags, text[, overrides]): one row each, a group of its own.
SINGLES: dict[str, list[tuple]] = {
    "user_87": [
        ("home", "near_miss", "fact", 0.5, ["family"], "用户的同事住在杭州滨江区"),
        ("home", "near_miss", "fact", 0.6, ["family"], "用户的表哥住在合肥滨湖区"),
        ("home", "near_miss", "fact", 0.6, ["family"], "用户的妈妈住在宁波"),
        ("coffee", "near_miss", "preference", 0.4, ["food"], "用户喜欢喝乌龙茶，不加糖"),
        ("coffee", "contradiction", "preference", 0.5, ["food"], "用户说他已经戒掉咖啡了，只喝茶"),
        ("peanut", "near_miss", "fact", 0.9, ["health"], "用户对青霉素过敏",
         {"access": "protected", "owner": "health"}),
        ("job", "near_miss", "fact", 0.4, ["family"], "用户的弟弟是前端工程师，主要写 TypeScript"),
        ("cat", "near_miss", "fact", 0.3, ["family"], "用户的邻居养了一只叫豆豆的柯基"),
        ("run", "near_miss", "fact", 0.4, ["sport"], "用户周末经常去西湖边骑车"),
        ("exam", "near_miss", "fact", 0.4, ["study"], "用户去年通过了软件设计师考试"),
        ("metro", "near_miss", "fact", 0.3, ["family"], "用户的妻子每天坐地铁 6 号线上班"),
        ("deploy", "near_miss", "instruction", 0.7, ["work"], "部署前必须先备份数据库"),
        ("laptop", "near_miss", "decision", 0.4, ["shopping"], "用户决定下个月给妈妈买一台 iPad"),
        (None, "distractor", "reference", 0.5, ["work"], "用户的团队使用 PostgreSQL 和 Kafka"),
        (None, "distractor", "preference", 0.4, ["music"], "用户喜欢听周杰伦的歌"),
        (None, "distractor", "fact", 0.4, ["study"], "用户在读《人类简史》"),
        (None, "distractor", "fact", 0.7, ["personal"], "用户的生日是 5 月 20 日",
         {"access": "protected", "owner": "profile"}),
        (None, "distractor", "event", 0.4, ["event"], "用户问了 Go 泛型的用法", {"layer": "episodic"}),
        (None, "distractor", "event", 0.5, ["event"], "帮用户写了数据库迁移的回滚脚本",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.3, ["event"], "用户抱怨灰度发布的流程太慢", {"layer": "episodic"}),
        (None, "distractor", "event", 0.4, ["event"], "和用户一起评审了日志平台的设计文档",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.3, ["event"], "用户说下周要去北京出差", {"layer": "episodic"}),
        (None, "distractor", "event", 0.2, ["note"], "用户让我十分钟后提醒他喝水", {"layer": "short_term"}),
        (None, "distractor", "event", 0.2, ["note"], "用户现在在开会", {"layer": "short_term"}),
    ],
    "alice": [
        ("home", "near_miss", "fact", 0.4, ["work"],
         "Alice's manager Jonas lives in Berlin, near Tempelhofer Feld"),
        ("home", "near_miss", "fact", 0.5, ["family"], "Alice's sister lives in Hamburg, near the harbour"),
        ("diet", "near_miss", "preference", 0.4, ["family"], "Alice's partner is vegan and avoids gluten"),
        ("diet", "contradiction", "preference", 0.6, ["food"],
         "Alice said she eats fish again since the summer"),
        ("penicillin", "near_miss", "fact", 0.9, ["health"], "Alice is allergic to peanuts",
         {"access": "protected", "owner": "health"}),
        ("penicillin", "near_miss", "fact", 0.6, ["health"], "Alice is allergic to birch pollen in spring",
         {"access": "protected", "owner": "health"}),
        ("marathon", "near_miss", "fact", 0.4, ["sport"], "Alice ran the Berlin half marathon last year"),
        ("editor", "near_miss", "preference", 0.4, ["tools"],
         "Alice's team prefers PyCharm with the light theme"),
        ("python", "near_miss", "preference", 0.6, ["style"],
         "Alice likes explanations with code examples in Rust"),
        ("flatwhite", "near_miss", "preference", 0.3, ["work"], "Alice's manager drinks his espresso black"),
        ("pixel", "near_miss", "fact", 0.3, ["family"], "Alice's neighbour has a cat called Mochi"),
        ("confirm", "near_miss", "instruction", 0.7, ["work"],
         "Always confirm before force-pushing to Alice's main branch"),
        ("rust", "near_miss", "decision", 0.4, ["study"], "Alice decided to learn Go this winter"),
        ("manager", "near_miss", "fact", 0.4, ["work"], "Alice's mentor is called Jana",
         {"access": "protected", "owner": "crm"}),
        (None, "distractor", "reference", 0.5, ["work"], "Alice's team uses Airflow and dbt for pipelines"),
        (None, "distractor", "fact", 0.4, ["study"],
         "Alice reads science fiction, currently The Three-Body Problem"),
        (None, "distractor", "instruction", 0.9, ["work"], "Alice's salary is confidential; never mention it",
         {"access": "private"}),
        (None, "distractor", "event", 0.4, ["event"], "Alice shared a blog post about feature drift",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.5, ["event"], "Discussed the A/B test results with Alice for an hour",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.4, ["event"],
         "Alice is frustrated with the demand forecast this week", {"layer": "episodic"}),
        (None, "distractor", "event", 0.3, ["event"], "Alice asked for marathon pacing advice",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.2, ["note"], "Alice is on a train right now",
         {"layer": "short_term"}),
        (None, "distractor", "event", 0.2, ["note"], "Alice has a call in ten minutes",
         {"layer": "short_term"}),
    ],
    "bob": [
        ("home", "near_miss", "fact", 0.5, ["family"], "Bob 的父母住在上海闵行区"),
        ("home", "near_miss", "fact", 0.4, ["work"], "Bob 的公司在上海徐汇区"),
        ("japanese", "near_miss", "fact", 0.4, ["study"], "Bob 正在学韩语，目标是 TOPIK 四级"),
        ("tea", "near_miss", "preference", 0.4, ["food"], "Bob prefers 绿茶 over 红茶"),
        ("tea", "contradiction", "preference", 0.5, ["food"], "Bob 最近每天早上都要喝一杯拿铁"),
        ("monday", "near_miss", "fact", 0.4, ["work"], "Bob 每周五下午四点开项目复盘会"),
        ("cathair", "near_miss", "fact", 0.8, ["health"], "Bob 对芒果过敏",
         {"access": "protected", "owner": "health"}),
        ("payment", "near_miss", "decision", 0.6, ["work"], "Bob decided to delay the refund feature to Q2"),
        ("roadmap", "near_miss", "instruction", 0.6, ["work"],
         "Share Bob's roadmap with the whole team every Friday"),
        ("daughter", "near_miss", "fact", 0.5, ["family"], "Bob 的侄子在读初中二年级", {"access": "private"}),
        ("cycling", "near_miss", "fact", 0.3, ["sport"], "Bob 周末喜欢去滨江跑步"),
        (None, "distractor", "reference", 0.5, ["tools"], "Bob uses Notion and Jira for roadmaps"),
        (None, "distractor", "preference", 0.6, ["style"], "回复 Bob 时中英文都可以"),
        (None, "distractor", "fact", 0.5, ["work"], "Bob's travel budget is 5000 元 per trip",
         {"access": "protected", "owner": "finance"}),
        (None, "distractor", "event", 0.4, ["event"], "Bob 问了风控规则的问题", {"layer": "episodic"}),
        (None, "distractor", "event", 0.5, ["event"], "Reviewed the PRD for the pricing page with Bob",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.4, ["event"], "Bob 这周在忙客户访谈", {"layer": "episodic"}),
        (None, "distractor", "event", 0.4, ["event"], "Bob asked for a summary of the churn dashboard",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.2, ["note"], "Bob is at the airport", {"layer": "short_term"}),
        (None, "distractor", "event", 0.2, ["note"], "Bob 说晚点再聊", {"layer": "short_term"}),
    ],
    "chen": [
        ("gpus", "near_miss", "fact", 0.4, ["compute"], "陈老师的学生的实验跑在 2 张 4090 上"),
        ("deadline", "near_miss", "fact", 0.7, ["paper"], "陈老师的综述要在 5 月 15 日前投 TACL"),
        ("overleaf", "near_miss", "preference", 0.3, ["paper"], "陈老师用 PowerPoint 做报告"),
        ("cite", "near_miss", "instruction", 0.5, ["paper"], "Chen wants every figure in PDF format"),
        ("groupmeet", "near_miss", "fact", 0.4, ["routine"], "读书会在每周五下午两点"),
        ("pourover", "near_miss", "preference", 0.2, ["food"], "陈老师的学生每天下午喝一杯奶茶"),
        ("locomo", "near_miss", "instruction", 0.6, ["data"], "LongMemEval 数据可以商用，但要注明出处"),
        ("seeds", "near_miss", "instruction", 0.5, ["method"], "每个实验都要记录 GPU 型号和运行时间"),
        (None, "distractor", "reference", 0.5, ["method"], "评测脚本在 eval/run.py，默认 k=5"),
        (None, "distractor", "fact", 0.5, ["paper"], "陈老师的课题是长期对话记忆的检索"),
        (None, "distractor", "event", 0.4, ["event"],
         "Chen asked why BM25 beats the dense retriever on LoCoMo", {"layer": "episodic"}),
        (None, "distractor", "event", 0.4, ["event"], "和陈老师讨论了融合检索的权重", {"layer": "episodic"}),
        (None, "distractor", "event", 0.3, ["event"], "陈老师让我把 recall@5 的表格重新画一遍",
         {"layer": "episodic"}),
        (None, "distractor", "event", 0.2, ["note"], "陈老师在上课，一小时后回来", {"layer": "short_term"}),
    ],
}

# key -> versions in time order, (day, kind, importance, tags, text): each version a group of its own.
UPDATES: dict[str, dict[str, list[tuple]]] = {
    "user_87": {
        "user.project": [
            (10, "fact", 0.6, ["work"], "用户目前负责订单系统重构"),
            (95, "fact", 0.6, ["work"], "用户现在负责风控平台的迁移"),
            (170, "fact", 0.7, ["work"], "用户升为技术组长，带风控平台的四个人"),
        ],
        "user.gym": [
            (40, "fact", 0.4, ["sport"], "用户办了公司楼下健身房的年卡"),
            (150, "fact", 0.4, ["sport"], "用户把健身房年卡转给了同事"),
        ],
    },
    "alice": {
        "user.job": [
            (5, "fact", 0.7, ["work"], "Alice works as a data scientist at a logistics startup"),
            (120, "fact", 0.7, ["work"], "Alice joined a climate-tech company as a senior data scientist"),
        ],
        "user.timezone": [
            (20, "fact", 0.6, ["routine"], "Alice is in the Europe/Berlin time zone"),
            (140, "fact", 0.6, ["routine"], "Alice works from Lisbon (Europe/Lisbon) until March"),
            (178, "fact", 0.6, ["routine"], "Alice is back in Berlin, Europe/Berlin time"),
        ],
    },
    "bob": {
        "user.job": [
            (8, "fact", 0.7, ["work"], "Bob is a product manager at a fintech company in Shanghai"),
            (130, "fact", 0.7, ["work"], "Bob 升为高级产品经理，负责整条支付线"),
        ],
        "user.budget": [
            (30, "fact", 0.5, ["work"], "Bob 的差旅预算是每次 5000 元"),
            (160, "fact", 0.5, ["work"], "Bob 的差旅预算提高到每次 8000 元"),
        ],
    },
    "chen": {
        "project.baseline": [
            (15, "fact", 0.7, ["method"], "当前的基线是 BM25"),
            (90, "fact", 0.7, ["method"], "基线换成了 BM25 加稠密向量的融合检索"),
            (175, "fact", 0.7, ["method"], "The baseline is now BM25 + dense fusion with a reranker"),
        ],
    },
}
# fmt: on


def _when(rng: random.Random, lo: float = 0.0, hi: float = DAYS) -> datetime:
    """A time in [START + lo days, START + hi days), to the second."""
    return (START + timedelta(days=rng.uniform(lo, hi))).replace(microsecond=0)


def records() -> list[tuple[dict, dict]]:
    """(memory, label) pairs, sorted by time. Paraphrases of a fact are restated days to weeks apart."""
    rng = random.Random(20)
    out: list[tuple[dict, dict]] = []

    def row(
        ns: str, text: str, kind: str, imp: float, tags: list[str], when: datetime, extra: dict, label: dict
    ) -> None:
        rec = {
            "namespace": ns,
            "content": text,
            "key": extra.get("key"),
            "kind": kind,
            "importance": imp,
            "layer": extra.get("layer", "long_term"),
            "tags": tags,
            "access": extra.get("access", "public"),
            "owner": extra.get("owner"),
            "created_at": when,
        }
        out.append(({k: v for k, v in rec.items() if v is not None}, {"namespace": ns, **label}))

    for ns, groups in PARAPHRASES.items():
        for group, kind, imp, tags, variants, *more in groups:
            extra = more[0] if more else {}
            when = _when(rng, 0, DAYS - 85)  # 4 restatements of <= 20.5 days fit
            for variant, text in variants:
                row(
                    ns,
                    text,
                    kind,
                    imp,
                    tags,
                    when,
                    extra,
                    {"group": f"{ns}/{group}", "role": "paraphrase", "variant": variant, "near_of": ""},
                )
                when += timedelta(days=rng.uniform(3, 20), hours=rng.uniform(0, 12))
    for ns, singles in SINGLES.items():
        for i, (of, role, kind, imp, tags, text, *more) in enumerate(singles):
            extra = more[0] if more else {}
            row(
                ns,
                text,
                kind,
                imp,
                tags,
                _when(rng),
                extra,
                {
                    "group": f"{ns}/{role}-{i}",
                    "role": role,
                    "variant": "orig",
                    "near_of": f"{ns}/{of}" if of else "",
                },
            )
    for ns, keys in UPDATES.items():
        for key, versions in keys.items():
            for v, (day, kind, imp, tags, text) in enumerate(versions, 1):
                when = START + timedelta(days=day, hours=rng.uniform(8, 20))
                row(
                    ns,
                    text,
                    kind,
                    imp,
                    tags,
                    when.replace(microsecond=0),
                    {"key": key},
                    {"group": f"{ns}/{key}@v{v}", "role": "update", "variant": "orig", "near_of": ""},
                )
    out.sort(key=lambda p: (p[0]["created_at"], p[0]["namespace"], p[0]["content"]))
    return out


def main() -> None:
    pairs = records()
    with OUT.open("w", encoding="utf-8") as f:
        for rec, _ in pairs:
            f.write(
                json.dumps({**rec, "created_at": rec["created_at"].isoformat()}, ensure_ascii=False) + "\n"
            )
    with LABELS.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["line", "namespace", "group", "role", "variant", "near_of"])
        for i, (_, lab) in enumerate(pairs, 1):
            w.writerow([i, lab["namespace"], lab["group"], lab["role"], lab["variant"], lab["near_of"]])
    print(f"wrote {OUT.name} and {LABELS.name}: {len(pairs)} memories")


if __name__ == "__main__":
    main()
