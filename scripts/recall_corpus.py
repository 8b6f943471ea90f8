"""A generated long-conversation benchmark for recall (scripts/bench recall): ours, no
third-party data. Each conversation is two people talking over many sessions (months apart),
English or Chinese, with facts about each that change over time, buried in small talk that
shares their words; each question names the turns that hold its answer (gold evidence).
Deterministic for a seed."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta


@dataclass
class Conversation:
    user_id: str
    lang: str
    turns: list[dict[str, str]] = field(default_factory=list)  # memq enqueue lines
    questions: list[tuple[str, list[str]]] = field(default_factory=list)  # (q, gold refs)


# A fact: (key, statement templates, questions). Statements may change the fact later
# ("change" entries replace the current value and its gold turn).
EN = {
    "names": [("Maria", "Tom"), ("Aisha", "Ben")],
    "cities": ["Lisbon", "Porto", "Berlin", "Munich", "Oslo", "Vienna", "Dublin", "Madrid"],
    "companies": ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Stark Works", "Hooli"],
    "jobs": ["nurse", "data analyst", "architect", "teacher", "chef", "pilot"],
    "animals": [("dog", "Rex"), ("cat", "Mochi"), ("dog", "Biscuit"), ("cat", "Luna")],
    "foods": ["peanuts", "shellfish", "gluten", "strawberries"],
    "relatives": [("sister", "Elena"), ("brother", "Lucas"), ("sister", "Nora"),
                  ("brother", "Omar")],
    "instruments": ["cello", "piano", "violin", "drums"],
    "favs": [("cheese", "cheeses", "gouda"), ("pasta", "pastas", "gnocchi"),
             ("fruit", "fruits", "mango"), ("tea", "teas", "oolong")],
    "trips": [("Japan", "April"), ("Peru", "June"), ("Iceland", "March"), ("Kenya", "May")],
    "apps": [("Evernote", "Obsidian"), ("Notion", "Logseq")],
    "cars": [("Golf", "Tesla"), ("Civic", "Prius")],
    "statements": {
        "live": "I live in {city} these days.",
        "move": "Big news: we finally moved to {city} last weekend!",
        "work": "I work at {company} as a {job}.",
        "newjob": "I just started a new job at {company}.",
        "pet": "I adopted a {animal} named {pet} on Saturday.",
        "allergy": "Turns out I'm allergic to {food}.",
        "relative": "My {rel} {rname} is coming to visit next week.",
        "hobby": "I've been learning to play the {instrument} for a few months.",
        "fav": "I love all {cats}, but {fav} is my favourite.",
        "trip": "I'm planning a trip to {place} in {month}.",
        "app": "I switched from {old} to {new} for my notes.",
        "car": "I sold my {old} and bought a {new}.",
    },
    "questions": {
        "move": ["Where does {X} live now?", "Which city did {X} move to?"],
        "live": ["Where did {X} live before moving?", "Which city was {X} living in at first?"],
        "newjob": ["Where does {X} work now?", "What company did {X} join recently?"],
        "work": ["What is {X}'s profession?", "Which company did {X} work for before?"],
        "pet": ["What is the name of {X}'s {animal}?", "When did {X} adopt {pet}?"],
        "allergy": ["What is {X} allergic to?", "Which food should {X} avoid?"],
        "relative": ["What is the name of {X}'s {rel}?", "Who is visiting {X} soon?"],
        "hobby": ["What instrument is {X} learning?", "What does {X} practise to play?"],
        "fav": ["What is {X}'s favourite {cat}?", "Which {cat} does {X} like best?"],
        "trip": ["Where is {X} travelling in {month}?", "When is {X}'s trip to {place}?"],
        "app": ["Which app does {X} use for notes now?", "What note-taking tool did {X} "
                                                        "switch to?"],
        "car": ["What car does {X} drive now?", "Which car did {X} buy?"],
    },
    "filler": [
        "How was your weekend?", "Haha, that's hilarious.", "I'm so tired today, work was "
        "busy.", "Did you watch the game last night?", "The weather has been awful lately.",
        "I need a vacation, honestly.", "My commute to work took forever this morning.",
        "Have you tried that new café near your place?", "We should grab dinner sometime.",
        "I can't believe it's already {month}.", "My neighbours are so loud at night.",
        "I finally finished that book you recommended.", "Lol, same here.",
        "Work has been crazy, so many meetings.", "What are you doing this weekend?",
        "I might just stay home and relax.", "That sounds like a great plan!",
        "Did you see the news about the new train line?", "I love this time of year.",
        "My phone died again, I need a new one.", "Ugh, Mondays.", "Good luck with that!",
        "I went for a long walk in the park.", "We watched a movie at home last night.",
        "Traffic near the office was terrible.", "Let me know how it goes.",
        "I've been cooking more at home lately.", "Coffee first, then we talk.",
        "My friend wants to move to a new city too.", "The new season of that show is out.",
        "I had a dream about my old school.", "Do you still play tennis?",
        "Sounds good, talk soon!", "Thanks for asking, all good here.",
    ],
}

ZH = {
    "names": [("李娜", "王伟"), ("张敏", "刘洋")],
    "cities": ["上海", "杭州", "成都", "深圳", "南京", "西安"],
    "companies": ["华信科技", "远航集团", "星辰软件", "蓝海物流"],
    "jobs": ["护士", "数据分析师", "建筑师", "老师"],
    "animals": [("狗", "旺财"), ("猫", "咪咪")],
    "foods": ["花生", "海鲜"],
    "relatives": [("妹妹", "小雨"), ("哥哥", "大明")],
    "instruments": ["大提琴", "钢琴"],
    "favs": [("茶", "茶", "龙井"), ("水果", "水果", "荔枝")],
    "trips": [("日本", "四月"), ("云南", "六月")],
    "apps": [("印象笔记", "飞书"), ("有道云", "语雀")],
    "cars": [("速腾", "比亚迪"), ("卡罗拉", "蔚来")],
    "statements": {
        "live": "我现在住在{city}。",
        "move": "告诉你个好消息，我们上周末终于搬到{city}了！",
        "work": "我在{company}工作，是一名{job}。",
        "newjob": "我刚刚入职了{company}。",
        "pet": "我周六领养了一只{animal}，叫{pet}。",
        "allergy": "原来我对{food}过敏。",
        "relative": "我{rel}{rname}下周要来看我。",
        "hobby": "我这几个月一直在学{instrument}。",
        "fav": "所有的{cats}我都喜欢，但{fav}是我的最爱。",
        "trip": "我计划{month}去{place}旅行。",
        "app": "我记笔记从{old}换成了{new}。",
        "car": "我把{old}卖了，买了一辆{new}。",
    },
    "questions": {
        "move": ["{X}现在住在哪里？", "{X}搬到了哪个城市？"],
        "live": ["{X}搬家之前住在哪里？", "{X}最开始住在哪个城市？"],
        "newjob": ["{X}现在在哪里工作？", "{X}最近入职了哪家公司？"],
        "work": ["{X}的职业是什么？", "{X}以前在哪家公司工作？"],
        "pet": ["{X}的{animal}叫什么名字？", "{X}什么时候领养了{pet}？"],
        "allergy": ["{X}对什么过敏？", "{X}应该避免吃什么？"],
        "relative": ["{X}的{rel}叫什么？", "谁要来看{X}？"],
        "hobby": ["{X}在学什么乐器？", "{X}最近在练什么？"],
        "fav": ["{X}最喜欢的{cat}是什么？", "{X}最爱哪种{cat}？"],
        "trip": ["{X}{month}要去哪里旅行？", "{X}什么时候去{place}？"],
        "app": ["{X}现在用什么记笔记？", "{X}的笔记软件换成了什么？"],
        "car": ["{X}现在开什么车？", "{X}买了什么车？"],
    },
    "filler": [
        "周末过得怎么样？", "哈哈，太好笑了。", "今天好累，工作太忙了。", "昨晚的比赛你看了吗？",
        "最近天气真糟糕。", "我真需要放个假。", "今天早上上班路上堵死了。",
        "你家附近那家新咖啡店去过吗？", "改天一起吃饭吧。", "没想到已经{month}了。",
        "我邻居晚上太吵了。", "你推荐的那本书我终于看完了。", "我也是。",
        "工作最近忙疯了，会好多。", "这个周末你打算干什么？", "我可能就在家休息。",
        "听起来不错！", "你看到新地铁线的新闻了吗？", "我很喜欢这个季节。",
        "我手机又没电了，得换个新的。", "唉，又是周一。", "祝你好运！", "我在公园散了很久的步。",
        "我们昨晚在家看了部电影。", "公司附近的交通太差了。", "有消息告诉我。",
        "我最近在家做饭比较多。", "先喝杯咖啡再说。", "我朋友也想搬到新城市。",
        "那部剧的新一季出了。", "我梦到了以前的学校。", "你还打网球吗？", "好的，回头聊！",
    ],
}


def _life(pool: dict, rng: random.Random, slot: int) -> dict[str, str]:
    pick = lambda key: pool[key][slot % len(pool[key])]  # noqa: E731
    cities = rng.sample(pool["cities"], 2)
    companies = rng.sample(pool["companies"], 2)
    animal, pet = pick("animals")
    rel, rname = pick("relatives")
    cat, cats, fav = pick("favs")
    place, month = pick("trips")
    app_old, app_new = pick("apps")
    car_old, car_new = pick("cars")
    return {"city": cities[0], "city2": cities[1], "company": companies[0],
            "company2": companies[1], "job": pick("jobs"), "animal": animal, "pet": pet,
            "food": pick("foods"), "rel": rel, "rname": rname,
            "instrument": pick("instruments"), "cat": cat, "cats": cats, "fav": fav,
            "place": place, "month": month, "app_old": app_old, "app_new": app_new,
            "car_old": car_old, "car_new": car_new}


def _statement(pool: dict, key: str, life: dict[str, str]) -> str:
    values = dict(life)
    if key == "move":
        values["city"] = life["city2"]
    if key == "newjob":
        values["company"] = life["company2"]
    if key in ("app", "car"):
        values["old"], values["new"] = life[f"{key}_old"], life[f"{key}_new"]
    return str(pool["statements"][key]).format(**values)


ORDER_EARLY = ["live", "work", "allergy", "hobby", "fav", "relative"]
ORDER_LATE = ["pet", "trip", "app", "car", "move", "newjob"]


def conversation(user_id: str, lang: str, pair: int, seed: int, *, sessions: int = 16,
                 per_session: int = 20) -> Conversation:
    pool = EN if lang == "en" else ZH
    rng = random.Random(seed)
    names = pool["names"][pair % len(pool["names"])]
    lives = {name: _life(pool, rng, pair * 2 + i) for i, name in enumerate(names)}
    # when each fact is stated: early facts in the first half, changes in the second
    plan: dict[int, list[tuple[str, str]]] = {}
    for name in names:
        for key in ORDER_EARLY:
            plan.setdefault(rng.randrange(0, sessions // 2), []).append((name, key))
        for key in ORDER_LATE:
            plan.setdefault(rng.randrange(sessions // 2, sessions), []).append((name, key))
    conv = Conversation(user_id=user_id, lang=lang)
    gold: dict[tuple[str, str], str] = {}
    start = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)
    for s in range(sessions):
        at = start + timedelta(days=9 * s)
        statements = plan.get(s, [])
        slots = sorted(rng.sample(range(per_session), min(len(statements), per_session)))
        by_slot = dict(zip(slots, statements, strict=False))
        for t in range(per_session):
            ref_turn = f"t{t + 1}"
            if t in by_slot:
                speaker, key = by_slot[t]
                content = _statement(pool, key, lives[speaker])
                gold[(speaker, key)] = f"s{s + 1}/{ref_turn}"
            else:
                speaker = names[t % 2]
                content = rng.choice(pool["filler"]).format(
                    month=rng.choice([m for _, m in pool["trips"]]))
            conv.turns.append({
                "user_id": user_id, "session_id": f"s{s + 1}", "turn_id": ref_turn,
                "role": "user", "speaker": speaker, "content": content,
                "timestamp": (at + timedelta(minutes=t)).isoformat()})
    for (speaker, key), ref in sorted(gold.items()):
        values = {**lives[speaker], "X": speaker}
        for q in pool["questions"][key]:
            conv.questions.append((q.format(**values), [ref]))
    return conv


def corpus(seed: int = 7) -> list[Conversation]:
    """Four conversations of 320 turns (two English, two Chinese), 48 questions each."""
    return [conversation(f"recall-en-0-{seed}", "en", 0, seed),
            conversation(f"recall-zh-0-{seed}", "zh", 0, seed + 1),
            conversation(f"recall-en-1-{seed}", "en", 1, seed + 2),
            conversation(f"recall-zh-1-{seed}", "zh", 1, seed + 3)]
