"""The offline rule extractor: plain turns in, exact candidates out."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from importlib import resources

import pytest

from memq.pipeline.ports import Extractor
from memq.pipeline.rules import HEDGED_CONFIDENCE, RULES, RuleExtractor
from memq.schemas import CandidateMemory, Kind, Triple, Turn
from memq.schemas.messages import Role

DAY1 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
DAY2 = datetime(2024, 5, 2, 9, 0, tzinfo=UTC)


def turn(text: str, turn_id: str = "t1", at: datetime = DAY1, role: Role = "user") -> Turn:
    return Turn(turn_id=turn_id, role=role, content=text, timestamp=at)


def extract(*texts: str) -> list[CandidateMemory]:
    turns = [turn(t, f"t{i}", DAY1 + timedelta(minutes=i)) for i, t in enumerate(texts, 1)]
    return RuleExtractor().extract(turns)


def summary(c: CandidateMemory) -> tuple[str, Kind, str, str]:
    triple, *job = c.triples  # and the job of a used tool (uses_<job>), the same object
    assert all(j.predicate.startswith("uses_") and j.object == triple.object for j in job)
    assert triple.subject == "user"
    assert c.entities == [triple.object]
    return (c.content, c.kind, triple.predicate, triple.object)


def only(text: str) -> CandidateMemory:
    found = extract(text)
    assert len(found) == 1, [c.content for c in found]
    return found[0]


def test_identity_and_protocol() -> None:
    extractor: Extractor = RuleExtractor()
    assert extractor.name == "rules-1"
    assert extractor.prompt_version is None
    assert extractor.extract([]) == []


def test_demo_conversation() -> None:
    turns = [
        turn("Hi there! I'm a product manager and I care a lot about user experience.", "d1a",
             DAY1),
        turn("Our production servers run CentOS 7.", "d1b", DAY1 + timedelta(minutes=1)),
        turn("我喜欢简洁的回答。", "d1c", DAY1 + timedelta(minutes=2)),
        turn("Sure, here's a short answer.", "d1d", DAY1 + timedelta(minutes=3), "assistant"),
        turn("Quick update: we moved production to Ubuntu 22.04 last week.", "d2a", DAY2),
        turn("Haha, if I were a cat I'd run production on a cardboard box.", "d2b",
             DAY2 + timedelta(minutes=1)),
    ]
    found = RuleExtractor().extract(turns)
    assert [(summary(c), c.source_turn_ids, c.valid_at) for c in found] == [
        (("The user is a product manager.", Kind.PROFILE, "role", "product manager"),
         ["d1a"], DAY1),
        (("The user cares about user experience.", Kind.PREFERENCE, "cares_about",
          "user experience"), ["d1a"], DAY1),
        (("The user's production environment is CentOS 7.", Kind.FACT,
          "production_environment", "CentOS 7"), ["d1b"], DAY1 + timedelta(minutes=1)),
        (("用户喜欢简洁的回答。", Kind.PREFERENCE, "likes", "简洁的回答"), ["d1c"],
         DAY1 + timedelta(minutes=2)),
        (("The user's production environment is Ubuntu 22.04.", Kind.FACT,
          "production_environment", "Ubuntu 22.04"), ["d2a"],
         datetime(2024, 4, 29, tzinfo=UTC)),  # "last week": it holds from then, by the latest
    ]
    assert all(c.confidence >= 0.85 for c in found)
    assert found[0].triples == [Triple(subject="user", predicate="role", object="product manager")]


EN_CASES = [
    ("I am a product manager.", "The user is a product manager.", Kind.PROFILE, "role",
     "product manager"),
    ("I'm an engineer", "The user is an engineer.", Kind.PROFILE, "role", "engineer"),
    ("I work as a data scientist.", "The user is a data scientist.", Kind.PROFILE, "role",
     "data scientist"),
    ("My name is alice.", "The user's name is Alice.", Kind.PROFILE, "name", "Alice"),
    ("Call me Bob, please.", "The user's name is Bob.", Kind.PROFILE, "name", "Bob"),
    ("I live in Berlin now.", "The user lives in Berlin.", Kind.PROFILE, "lives_in", "Berlin"),
    ("I work at Acme Corp.", "The user works at Acme Corp.", Kind.PROFILE, "works_at",
     "Acme Corp"),
    ("I work for Globex these days.", "The user works at Globex.", Kind.PROFILE, "works_at",
     "Globex"),
    ("I care about performance.", "The user cares about performance.", Kind.PREFERENCE,
     "cares_about", "performance"),
    ("I really care a lot about my team.", "The user cares about their team.",
     Kind.PREFERENCE, "cares_about", "their team"),
    ("I really like hiking in the mountains!", "The user likes hiking in the mountains.",
     Kind.PREFERENCE, "likes", "hiking in the mountains"),
    ("I love jazz.", "The user likes jazz.", Kind.PREFERENCE, "likes", "jazz"),
    ("I'm a big fan of Rust.", "The user likes Rust.", Kind.PREFERENCE, "likes", "Rust"),
    ("I prefer concise answers.", "The user prefers concise answers.", Kind.PREFERENCE,
     "prefers", "concise answers"),
    ("I don't like long meetings.", "The user dislikes long meetings.", Kind.PREFERENCE,
     "dislikes", "long meetings"),
    ("I dislike YAML.", "The user dislikes YAML.", Kind.PREFERENCE, "dislikes", "YAML"),
    ("I hate spam!", "The user dislikes spam.", Kind.PREFERENCE, "dislikes", "spam"),
    ("I'm not a fan of Java.", "The user dislikes Java.", Kind.PREFERENCE, "dislikes", "Java"),
    ("We use Postgres.", "The user's team uses Postgres as their database.", Kind.FACT, "uses",
     "Postgres"),
    ("Our team uses Jira.", "The user's team uses Jira as their issue tracker.", Kind.FACT,
     "uses", "Jira"),
    ("I use vim.", "The user uses vim.", Kind.FACT, "uses", "vim"),
    ("Our production environment is Debian 12.", "The user's production environment is "
     "Debian 12.", Kind.FACT, "production_environment", "Debian 12"),
    ("Our production servers run on RHEL 9.", "The user's production environment is RHEL 9.",
     Kind.FACT, "production_environment", "RHEL 9"),
    ("Production runs Kubernetes.", "The user's production environment is Kubernetes.",
     Kind.FACT, "production_environment", "Kubernetes"),
    ("Prod is now on AWS.", "The user's production environment is AWS.", Kind.FACT,
     "production_environment", "AWS"),
    ("Production has moved to GCP.", "The user's production environment is GCP.", Kind.FACT,
     "production_environment", "GCP"),
    ("We migrated our production environment to Ubuntu 24.04 yesterday.",
     "The user's production environment is Ubuntu 24.04.", Kind.FACT,
     "production_environment", "Ubuntu 24.04"),
    ("We switched prod to Nomad.", "The user's production environment is Nomad.", Kind.FACT,
     "production_environment", "Nomad"),
    ("Remember that I'm allergic to peanuts.", "The user is allergic to peanuts.",
     Kind.INSTRUCTION, "remembers", "The user is allergic to peanuts"),
    ("Please remember my daughter's birthday is May 3.",
     "The user's daughter's birthday is May 3.", Kind.INSTRUCTION, "remembers",
     "The user's daughter's birthday is May 3"),
    ("Note that I deploy on Fridays.", "The user deploys on Fridays.", Kind.INSTRUCTION,
     "remembers", "The user deploys on Fridays"),
    ("Please always answer in english.", "The user wants replies in English.",
     Kind.INSTRUCTION, "reply_language", "English"),
    ("Always be concise.", "The user wants concise answers.", Kind.INSTRUCTION,
     "answer_style", "concise"),
    ("Never use emojis with me.", "The user wants the assistant to never use emojis with "
     "them.", Kind.INSTRUCTION, "remembers", "never use emojis with them"),
]


@pytest.mark.parametrize(("text", "content", "kind", "predicate", "obj"), EN_CASES)
def test_english_rules(text: str, content: str, kind: Kind, predicate: str, obj: str) -> None:
    assert summary(only(text)) == (content, kind, predicate, obj)


ZH_CASES = [
    ("我是产品经理。", "用户是产品经理。", Kind.PROFILE, "role", "产品经理"),
    ("我是一名程序员", "用户是程序员。", Kind.PROFILE, "role", "程序员"),
    ("我叫张伟。", "用户叫张伟。", Kind.PROFILE, "name", "张伟"),
    ("现在我住在上海了。", "用户住在上海。", Kind.PROFILE, "lives_in", "上海"),
    ("我在腾讯工作。", "用户在腾讯工作。", Kind.PROFILE, "works_at", "腾讯"),
    ("我喜欢简洁的回答。", "用户喜欢简洁的回答。", Kind.PREFERENCE, "likes", "简洁的回答"),
    ("我更喜欢Python", "用户更喜欢Python。", Kind.PREFERENCE, "prefers", "Python"),
    ("我不喜欢冗长的解释！", "用户不喜欢冗长的解释。", Kind.PREFERENCE, "dislikes", "冗长的解释"),
    ("我关心用户体验", "用户关心用户体验。", Kind.PREFERENCE, "cares_about", "用户体验"),
    ("我很在意代码质量。", "用户关心代码质量。", Kind.PREFERENCE, "cares_about", "代码质量"),
    ("我们用Kubernetes。", "用户的团队使用容器平台Kubernetes。", Kind.FACT, "uses", "Kubernetes"),
    ("我们使用PostgreSQL", "用户的团队使用数据库PostgreSQL。", Kind.FACT, "uses", "PostgreSQL"),
    ("我们的生产环境是CentOS 7。", "用户的生产环境是CentOS 7。", Kind.FACT,
     "production_environment", "CentOS 7"),
    ("我们的生产环境跑在阿里云上", "用户的生产环境是阿里云。", Kind.FACT,
     "production_environment", "阿里云"),
    ("生产环境迁移到了Ubuntu 22.04", "用户的生产环境是Ubuntu 22.04。", Kind.FACT,
     "production_environment", "Ubuntu 22.04"),
    ("生产环境换到Debian了。", "用户的生产环境是Debian。", Kind.FACT,
     "production_environment", "Debian"),
    ("记住我对花生过敏。", "用户对花生过敏。", Kind.INSTRUCTION, "remembers", "用户对花生过敏"),
    ("请记住，我的生日是五月三日。", "用户的生日是五月三日。", Kind.INSTRUCTION, "remembers",
     "用户的生日是五月三日"),
    ("以后请用中文回答我", "用户希望用中文回答。", Kind.INSTRUCTION, "reply_language", "中文"),
]


@pytest.mark.parametrize(("text", "content", "kind", "predicate", "obj"), ZH_CASES)
def test_chinese_rules(text: str, content: str, kind: Kind, predicate: str, obj: str) -> None:
    assert summary(only(text)) == (content, kind, predicate, obj)


@pytest.mark.parametrize(
    "text",
    [
        # greetings and thanks
        "Hi there!", "Hello, how are you?", "Thanks a lot!", "你好！", "谢谢",
        # questions
        "Do you like jazz?", "What is a product manager?", "Can you remember that I like tea",
        "How do I migrate production to Ubuntu", "我是不是产品经理？", "你能记住我喜欢茶吗",
        # jokes
        "Haha, I'm a cat.", "I live in a submarine lol", "I'm a wizard, just kidding.",
        "I love bugs jk", "哈哈，我是猫", "开玩笑的，我住在月球", "I'm a genius 😂",
        # hypotheticals
        "If I were a cat I'd run production on a cardboard box.", "Imagine I live in Paris.",
        "What if we moved production to Windows?", "Suppose I work at NASA.",
        "Pretend I'm a pirate.", "假如我是总统，我会住在白宫", "如果我是你，我喜欢猫",
        "要是我住在北京就好了",
        # statements without a usable object
        "I'm tired.", "I'm a bit tired.", "Our production is down.", "I like it.",
        "我是说我们换个方案", "我爱你", "I love your answer.",
        "I love the way the sunlight hits this.",  # of a photo: points at what was shown
    ],
)
def test_nothing_extracted(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(
    ("text", "predicate", "obj"),
    [
        ("Maybe I like tea.", "likes", "tea"),
        ("I think I'm a designer.", "role", "designer"),
        ("I might be a teacher.", "role", "teacher"),
        ("We probably use Redis.", "uses", "Redis"),
        ("I'm not sure but I live in Oslo.", "lives_in", "Oslo"),
        ("Production might run CentOS 8.", "production_environment", "CentOS 8"),
        ("我可能喜欢咖啡", "likes", "咖啡"),
        ("我大概是产品经理", "role", "产品经理"),
        ("我们也许用MySQL", "uses", "MySQL"),
    ],
)
def test_hedges_get_low_confidence(text: str, predicate: str, obj: str) -> None:
    candidate = only(text)
    assert candidate.triples[0].predicate == predicate
    assert candidate.triples[0].object == obj
    assert candidate.confidence == HEDGED_CONFIDENCE < 0.7


@pytest.mark.parametrize(("text", "importance"), [
    ("I'm a product manager.", 0.8), ("Our production runs CentOS 7.", 0.8),
    ("I like tea.", 0.6), ("We use Go.", 0.5), ("Remember that I'm vegan.", 0.9),
])
def test_direct_confidence_and_importance(text: str, importance: float) -> None:
    candidate = only(text)
    assert 0.85 <= candidate.confidence <= 0.95
    assert candidate.importance == importance


def test_assistant_and_other_roles_are_ignored() -> None:
    roles: list[Role] = ["assistant", "system", "tool"]
    turns = [turn("I'm a product manager.", f"t{i}", role=role) for i, role in enumerate(roles)]
    assert RuleExtractor().extract(turns) == []


def test_duplicate_statement_merges_turn_ids_and_keeps_earliest_valid_at() -> None:
    later = DAY1 + timedelta(hours=1)
    turns = [turn("I like tea.", "b", later), turn("I really like tea!", "a", DAY1),
             turn("I like tea. I like tea.", "c", DAY2)]
    (candidate,) = RuleExtractor().extract(turns)
    assert candidate.source_turn_ids == ["a", "b", "c"]
    assert candidate.valid_at == DAY1  # a fact holds from its first mention
    assert candidate.content == "The user likes tea."


def test_hedged_then_direct_keeps_the_direct_confidence() -> None:
    (candidate,) = extract("Maybe I use Go.", "I use Go.")
    assert candidate.source_turn_ids == ["t1", "t2"]
    assert candidate.confidence == 0.9


def test_single_valued_changes_are_separate_candidates() -> None:
    found = extract("I live in Berlin.", "I live in Paris.")
    assert [c.triples[0].object for c in found] == ["Berlin", "Paris"]


def test_compound_sentences_are_split() -> None:
    found = extract("I'm a teacher and I live in Lyon, but we use Linux.",
                    "我是产品经理，我喜欢简洁的回答，另外我们用Go")
    assert [c.content for c in found] == [
        "The user is a teacher.", "The user lives in Lyon.", "The user's team uses Linux.",
        "用户是产品经理。", "用户喜欢简洁的回答。", "用户的团队使用编程语言Go。",
    ]


def test_sentences_of_one_turn_keep_their_turn() -> None:
    found = RuleExtractor().extract(
        [turn("Thanks! I live in Rome. Do you know Rome? I love pasta.", "x", DAY2)])
    assert [(c.content, c.source_turn_ids, c.valid_at) for c in found] == [
        ("The user lives in Rome.", ["x"], DAY2), ("The user likes pasta.", ["x"], DAY2)]


def test_a_title_or_latin_abbreviation_ends_no_sentence() -> None:
    found = extract("I just got back from a follow-up appointment with my dermatologist, Dr. Lee, "
                    "to get a biopsy. I love jazz, e.g. Miles Davis. I went to St. Louis.")
    assert [c.content for c in found] == [
        "The user just got back from a follow-up appointment with their dermatologist, Dr. Lee, "
        "to get a biopsy.", "The user likes jazz, e.g. Miles Davis.",
        "The user went to St. Louis."]


def test_joke_anywhere_in_the_turn_drops_the_whole_turn() -> None:
    assert extract("I live in Rome. I'm a dragon, jk.") == []
    assert extract("I live in Rome. I'm a dragon 🙃") == []


def test_laughter_is_tone_for_what_changed() -> None:
    """"haha" and "lol" end half of all chat lines: a change said with them still stands."""
    assert [c.content for c in extract("total carnivore these days haha")] == [
        "The user's diet is carnivore."]


def test_objects_are_cleaned() -> None:
    assert summary(only("I like tea too."))[3] == "tea"
    assert summary(only("I like tea because it is warm."))[3] == "tea"
    assert summary(only("Our production servers now run Alpine, these days."))[3] == "Alpine"
    assert summary(only("I’m a doctor."))[0] == "The user is a doctor."  # curly apostrophe


def test_overlong_or_too_short_results_are_rejected() -> None:
    assert extract("I like " + "very " * 20 + "long things.") == []
    assert extract("记住I!") == []


def test_rule_table_is_data() -> None:
    assert isinstance(RULES, tuple) and len(RULES) >= 20
    predicates = {"role", "name", "lives_in", "works_at", "production_environment",
                  "reply_language", "answer_style", "likes", "dislikes", "cares_about", "uses",
                  "prefers", "remembers", "favourite", "allergic_to", "has_condition", "has_pet",
                  "has_relative", "learns", "plans_trip_to", "drives", "takes_medication", "diet",
                  "has_goal", "speaks", "age"}
    assert {rule.predicate for rule in RULES} == predicates
    vocabulary = json.loads(resources.files("memq.pipeline").joinpath("predicates.json")
                            .read_text())
    assert predicates <= {*vocabulary["single"], *vocabulary["multi"]}  # the pipeline knows them
    assert all(0.85 <= rule.confidence <= 0.95 for rule in RULES)


def _said(content: str, speaker: str | None, role: str = "user") -> Turn:
    return Turn(turn_id="t1", role=role, content=content, timestamp="2026-11-20T10:00:00Z",
                speaker=speaker)


def test_a_named_speaker_is_the_subject_not_the_user() -> None:
    (maria,) = RuleExtractor().extract([_said("I live in Lisbon.", "Maria")])
    assert maria.content == "Maria lives in Lisbon."
    assert [(t.subject, t.predicate, t.object) for t in maria.triples] == [
        ("Maria", "lives_in", "Lisbon")]
    (li,) = RuleExtractor().extract([_said("我住在上海。", "李娜")])
    assert li.content == "李娜住在上海。" and li.triples[0].subject == "李娜"
    (team,) = RuleExtractor().extract([_said("We use Terraform.", "Tom")])
    assert team.content == "Tom's team uses Terraform."


def test_two_speakers_same_words_are_two_memories() -> None:
    found = RuleExtractor().extract([_said("I work at Acme.", "Maria"),
                                     _said("I work at Acme.", "Tom")])
    assert sorted(c.content for c in found) == ["Maria works at Acme.", "Tom works at Acme."]


def test_instructions_come_only_from_the_agents_own_user() -> None:
    assert RuleExtractor().extract([_said("Please always answer in French.", "Tom")]) == []
    assert RuleExtractor().extract([_said("Please always answer in French.", None)])


def test_what_the_assistant_says_is_nobodys_fact() -> None:
    assert RuleExtractor().extract([_said("You live in Lisbon. I live in Porto.", None,
                                          role="assistant")]) == []


@pytest.mark.parametrize(("said", "memory", "triple"), [
    ("Big news: we finally moved to Porto last weekend!", "The user lives in Porto.",
     "lives_in:Porto"),
    ("I just started a new job at Globex.", "The user works at Globex.", "works_at:Globex"),
    # a job is two slots, each its own memory: a promotion ends the role, not the employer
    ("I work at Acme Corp as a nurse.", "The user works at Acme Corp. // The user is a nurse "
     "at Acme Corp.", "works_at:Acme Corp // role:nurse"),
    ("Turns out I'm allergic to peanuts.", "The user is allergic to peanuts.",
     "allergic_to:peanuts"),
    ("I adopted a dog named Rex on Saturday.", "The user has a dog named Rex.", "has_pet:Rex"),
    ("My sister Elena is coming to visit next week.", "The user's sister is Elena.",
     "has_relative:Elena"),
    ("I love all cheeses, but gouda is my favourite.",
     "The user's favourite among cheeses is gouda.", "favourite:gouda"),
    ("I switched from Evernote to Obsidian for my notes.",
     "The user uses Obsidian as their notes app (switched from Evernote).",
     "uses:Obsidian|uses_notes:Obsidian"),
    ("I sold my Golf and bought a Tesla.", "The user drives a Tesla.", "drives:Tesla"),
    ("告诉你个好消息，我们上周末终于搬到杭州了！", "用户住在杭州。", "lives_in:杭州"),
    ("我刚刚入职了星辰软件。", "用户在星辰软件工作。", "works_at:星辰软件"),
    ("原来我对花生过敏。", "用户对花生过敏。", "allergic_to:花生"),
    ("所有的茶我都喜欢，但龙井是我的最爱。", "用户最喜欢的茶是龙井。", "favourite:龙井"),
    ("我计划四月去日本旅行。", "用户计划四月去日本。", "plans_trip_to:日本"),
    ("我在腾讯工作，做后端开发。", "用户在腾讯工作，是后端开发。", "works_at:腾讯|role:后端开发"),
    ("I'm a pediatric nurse at Mercy General.", "The user is a pediatric nurse at Mercy "
     "General. // The user works at Mercy General.",
     "role:pediatric nurse // works_at:Mercy General"),
])
def test_changes_family_health_events_and_favourites(said: str, memory: str,
                                                     triple: str) -> None:
    found = RuleExtractor().extract([_said(said, None)])
    assert [c.content for c in found] == memory.split(" // ")
    assert [[f"{t.predicate}:{t.object}" for t in c.triples] for c in found] == [
        group.split("|") for group in triple.split(" // ")]


@pytest.mark.parametrize("chat", [
    "My friend wants to move to a new city too.", "My commute to work took forever.",
    "I finally finished that book you recommended.", "我朋友也想搬到新城市。",
    "We moved into a new flat.", "I joined the gym.", "My sister is so annoying.",
    "Learning from experienced players is important.",  # a gerund subject, no diary entry
])
def test_small_talk_near_those_patterns_yields_nothing(chat: str) -> None:
    assert RuleExtractor().extract([_said(chat, None)]) == []


def _triples(text: str) -> list[str]:
    return [f"{t.predicate}:{t.object}" for c in RuleExtractor().extract([_said(text, None)])
            if c.confidence >= 0.85 for t in c.triples]


@pytest.mark.parametrize(("said", "triples"), [
    # statements of change
    ("We moved from Seattle to Austin last year.", "lives_in:Austin"),
    ("I moved back to Dublin after ten years abroad.", "lives_in:Dublin"),
    ("I left Deloitte and joined a startup called Ramp.", "works_at:Ramp"),
    ("I've been working at Atlassian since 2019.", "works_at:Atlassian"),
    ("I live in Oslo and work at Equinor.", "lives_in:Oslo|works_at:Equinor"),
    ("I work remotely from Lisbon.", "lives_in:Lisbon"),
    ("我已经从百度离职了，现在在美团上班。", "works_at:美团"),
    ("我跳槽到腾讯了，做后端开发。", "works_at:腾讯|role:后端开发"),
    ("我入职了一家新公司，叫米哈游。", "works_at:米哈游"),
    ("我在字节跳动做产品经理。", "works_at:字节跳动|role:产品经理"),
    ("我在上海一家医院当护士。", "role:护士"),
    ("我老家是东北的，现在在上海定居。", "lives_in:上海"),
    ("我们上周刚搬进新家，在浦东。", "lives_in:浦东"),
    ("我们组最近改用Go写后端了。", "uses:Go|uses_language:Go"),
    ("我用Mac写代码。", "uses:Mac|uses_computer:Mac"),
    # family and pets, named or not, one or two names
    ("My wife, Grace, is a pediatrician.", "has_relative:Grace"),
    ("My mother-in-law, Patricia, is staying with us.", "has_relative:Patricia"),
    ("My kids are Emma and Noah.", "has_relative:Emma|has_relative:Noah"),
    ("I have a twin brother.", "has_relative:twin brother"),
    ("I have a dog named Rufus and a cat named Pixel.", "has_pet:Rufus|has_pet:Pixel"),
    ("We got a golden retriever puppy last week, his name is Biscuit.", "has_pet:Biscuit"),
    ("Our cat, Miso, is 14 and still going strong.", "has_pet:Miso"),
    ("I've got two guinea pigs.", "has_pet:guinea pigs"),
    ("我老公叫陈磊，是个医生。", "partner:陈磊"),
    ("我女儿今年六岁，叫乐乐。", "has_relative:乐乐"),
    ("我有一个双胞胎妹妹。", "has_relative:双胞胎妹妹"),
    ("我家有两只猫，一只叫咪咪，一只叫花花。", "has_pet:咪咪|has_pet:花花"),
    ("我的狗叫旺旺，是只金毛。", "has_pet:旺旺"),
    # health: medication, diet, conditions
    ("I take metformin twice a day.", "takes_medication:metformin"),
    ("I'm on insulin for my type 1 diabetes.", "takes_medication:insulin"),
    # what one eats is one slot (a new diet ends the old); gluten-free and the like are "diet"
    ("I'm vegan, so no dairy or eggs please.", "eats:vegan"),
    ("I've been vegetarian for about ten years.", "eats:vegetarian"),
    ("I have celiac disease.", "has_condition:celiac disease"),
    ("我每天早上吃二甲双胍。", "takes_medication:二甲双胍"),
    ("我是素食主义者。", "eats:素食"),
    ("我吃素已经五年了。", "eats:吃素"),
    ("我去年查出了甲状腺结节。", "has_condition:甲状腺结节"),
    ("我乳糖不耐受，喝不了牛奶。", "has_condition:乳糖不耐受"),
    # plans and events with dates, a fronted time, a tag question
    ("Next Friday I fly to Oslo for a work thing.", "plans_trip_to:Oslo"),
    ("In two weeks I'm heading to Nairobi for a conference.", "plans_trip_to:Nairobi"),
    ("Heading to Lisbon next month for a conference, any tips?", "plans_trip_to:Lisbon"),
    ("下个月我要去成都。", "plans_trip_to:成都"),
    ("下周五我飞奥斯陆。", "plans_trip_to:奥斯陆"),
    ("我们打算明年春天去日本看樱花。", "plans_trip_to:日本"),
    ("I'm training for the Chicago marathon in October.", "has_goal:the Chicago marathon"),
    ("我在准备马拉松，十一月比赛。", "has_goal:马拉松"),
    # preferences, habits, languages, age, standing requests
    ("I love all kinds of cheese, but Comté is my favourite.", "favourite:Comté"),
    ("水果我都喜欢，不过最爱的是榴莲。", "favourite:榴莲"),
    ("我爱所有的甜点，但提拉米苏是我的最爱。", "favourite:提拉米苏"),
    ("Tea is my go-to.", "prefers:Tea"),
    ("I play tennis every Sunday morning.", "likes:tennis"),
    ("I go running every morning before work.", "likes:running"),
    ("我周末经常去爬山。", "likes:爬山"),
    ("I speak French and German fluently.", "speaks:French|speaks:German"),
    ("我会说粤语和普通话。", "speaks:粤语|speaks:普通话"),
    ("I'm 34.", "age:34"),
    ("我今年28岁。", "age:28"),
    ("Could you always keep replies short?", "answer_style:short"),
    ("Can you reply in German from now on?", "reply_language:German"),
])
def test_general_phenomena(said: str, triples: str) -> None:
    assert _triples(said) == triples.split("|")


@pytest.mark.parametrize("chat", [
    "Never mind, I figured it out.", "I take the bus to work every day.",
    "I went to Paris last year.", "My friend's son Max is so funny.", "I'm going to bed.",
    "I have a question about taxes.", "Could you make the second paragraph shorter?",
    "My coworker is allergic to peanuts, what snacks are safe?", "I don't have any pets.",
    "Should I move to Berlin, or stay in Paris?", "Next week is going to be busy.",
    "我在家工作。", "我在想要不要换工作。", "我打算周末去看电影。", "我明天去超市买菜。",
    "我上周去了上海。", "我朋友下个月去日本。", "我同事对海鲜过敏，聚餐点什么好？", "我生病了。",
    "我家在三楼。", "我表哥的女儿叫甜甜。", "能不能再详细解释一下？", "帮我写一封请假邮件。",
])
def test_chit_chat_near_the_new_patterns_yields_nothing(chat: str) -> None:
    assert _triples(chat) == []


@pytest.mark.parametrize(("said", "age"), [
    ("I'm 32, so I'm in my 30s.", "32"), ("I am 45 years old and looking to retire.", "45"),
    ("I'm 28 and just started a new job.", "28"), ("I just turned 40!", "40")])
def test_an_age_said_with_more_after_it(said: str, age: str) -> None:
    ages = [m for m in extract(said) if m.triples and m.triples[0].predicate == "age"]
    assert [m.triples[0].object for m in ages] == [age]


@pytest.mark.parametrize("said", ["I'm 5 minutes away, see you soon.", "I'm 2 for 2 today."])
def test_a_number_that_is_no_age(said: str) -> None:
    assert not [m for m in extract(said) if m.triples and m.triples[0].predicate == "age"]


def test_this_is_a_name_only_when_the_speaker_introduces_themselves() -> None:
    assert [c.content for c in extract("This is Susie.")] == []  # showing a photo: the snake
    assert [c.content for c in extract("Hey, it's Marisol again.")] == [
        "The user's name is Marisol."]
    assert [c.content for c in extract("It's Maria here.")] == ["The user's name is Maria."]


def test_a_gerund_that_sounds_like_something_is_no_statement_of_the_speaker() -> None:
    assert extract("Wow, learning and gaming sounds like a fantastic combination!") == []
    assert [c.content for c in extract("Learning Spanish now.")] == [
        "The user is learning Spanish."]


def test_a_vague_event_is_no_memory() -> None:
    assert extract("I made a huge call.") == []
    assert extract("Had an eventful week since our last chat.") == []
    assert extract("I learned some interesting new things.") == []


def test_a_catch_is_no_pet() -> None:
    assert extract("We got a few fish and had a blast.") == []
    assert [c.content for c in extract("We just adopted a rescue dog.")] == [
        "The user has a dog."]


def test_last_year_is_no_trip() -> None:
    """"去年底离婚手续办完了": 去年 is last year, not a trip to "年底…"."""
    turn = Turn(turn_id="t1", role="user", content="去年底离婚手续办完了",
                timestamp=datetime(2026, 3, 2, tzinfo=UTC))
    assert [c.triples[0].predicate for c in RuleExtractor().extract([turn])] == []
