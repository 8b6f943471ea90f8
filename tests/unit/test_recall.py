"""Hybrid recall's pure parts: the Lucene query a user's text becomes, what a turn is indexed
and embedded as, and the score-aware fusion."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from memq.pipeline.ports import Hit
from memq.pipeline.recall import (
    Candidate,
    Weights,
    asks_about_past,
    episode_text,
    fuse,
    lucene_query,
    named_speakers,
    neighbors,
    passage_text,
    passages,
    query_terms,
    replied_to,
    search_text,
    turn_vectors,
    user_key,
)

AT = datetime(2026, 11, 1, tzinfo=UTC)


def _hit(hit_id: str, kind: str = "episode", ref: str = "s/t", status: str | None = None,
         role: str = "user") -> Hit:
    return Hit(id=hit_id, type=kind, content=hit_id, score=0.0, event_at=AT,  # type: ignore[arg-type]
               created_at=AT, source_turn_ids=[ref], status=status, role=role)


def _ep(hit_id: str, lexical: float | None = None, dense: float | None = None,
        **kw: str) -> Candidate:
    return Candidate(_hit(hit_id, ref=f"s/{hit_id}", **kw), lexical=lexical, dense=dense)


def _mem(hit_id: str, lexical: float | None = None, dense: float | None = None,
         ref: str = "s/m", status: str = "current", weight: float = 1.0) -> Candidate:
    return Candidate(_hit(hit_id, "memory", ref=ref, status=status), lexical=lexical,
                     dense=dense, weight=weight)


def _ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


def test_user_text_cannot_change_the_query() -> None:
    q = lucene_query("u1", 'where: "Maria" AND (works*) OR NOT user_key:u0 ~2 \\ -x')
    words = "maria and works or not user_key u0 2 x"  # "where" asks, it says nothing
    assert q == f"+user_key:{user_key('u1')} +search_text:({words})"
    assert lucene_query("u1", "Where's Jon?", field="text+speaker") == (
        f"+user_key:{user_key('u1')} +(text:(s jon) speaker:(s jon))")
    assert lucene_query("u1", "?? !! --") is None
    assert lucene_query("u1", "What do I have?") is None  # questions words only: no BM25
    assert "上海工作" in (lucene_query("u1", "李娜在上海工作吗？") or "")
    assert lucene_query("u1", "李娜住在哪里", field="content") == (  # 哪里 asks
        f"+user_key:{user_key('u1')} +content:(李娜住在)")


def test_a_title_is_asked_with_its_abbreviation() -> None:
    assert query_terms("How many doctors did I visit?") == ["many", "doctors", "visit", "dr"]
    assert query_terms("When did I see Dr. Patel?") == ["see", "dr", "patel", "doctor"]
    assert query_terms("Which prof taught me?") == ["prof", "taught", "professor"]


def test_user_keys_are_one_token_and_differ() -> None:
    assert user_key("a").isalnum() and user_key("a") != user_key("b")


def test_a_turn_is_embedded_with_who_and_when_and_indexed_with_the_turn_before() -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert episode_text("I ran a charity race.", "Melanie", when) == (
        "Melanie on 8 May 2023: I ran a charity race.")
    assert episode_text("hi", None, when) == "On 8 May 2023: hi"
    assert passage_text("I ran a charity race.", "Melanie", when) == (
        "Melanie: I ran a charity race.")  # the date said once, by the first passage
    assert passage_text("hi", None, when) == "On 8 May 2023: hi"  # who or when
    assert search_text("Yes, last Sunday.", "Melanie", "Did you run?", when) == (
        "Melanie Yes, last Sunday. Did you run? 8 May 2023")
    assert search_text("Hello", None, None, when) == "Hello 8 May 2023"
    assert search_text("Thanks!", None, "x" * 500 + " Any questions?", when).endswith(
        "x" * 185 + " Any questions? 8 May 2023")
    assert len(search_text("Thanks!", None, "x" * 500, when)) == len("Thanks!  8 May 2023") + 200


def test_a_strong_signal_keeps_its_lead() -> None:
    """Rank fusion let two weak lists outvote one strong one; scores do not: the turn BM25
    puts far ahead stays first though the dense list ranks two others above it."""
    filler = [_ep(f"f{i}", dense=0.1) for i in range(5)]
    hits = fuse([_ep("strong", lexical=12.0, dense=0.50),
                 _ep("weak1", lexical=1.0, dense=0.60), _ep("weak2", lexical=1.5, dense=0.58),
                 *filler], [], k=3)
    assert _ids(hits)[0] == "strong"
    assert hits[0].score > hits[1].score >= hits[2].score


def test_either_signal_alone_ranks_as_it_would() -> None:
    dense_only = [_ep(f"e{i}", dense=0.9 - i / 10) for i in range(5)]
    assert _ids(fuse(dense_only, [], k=5)) == ["e0", "e1", "e2", "e3", "e4"]
    lexical_only = [_ep(f"e{i}", lexical=10.0 - i) for i in range(5)]
    assert _ids(fuse(lexical_only, [], k=5)) == ["e0", "e1", "e2", "e3", "e4"]


def test_found_twice_is_one_candidate_with_both_signals() -> None:
    both = [_ep("a", lexical=5.0), _ep("a", dense=0.6), _ep("b", dense=0.6), _ep("c", lexical=5.0)]
    hits = fuse(both, [], k=5)
    assert _ids(hits)[0] == "a" and sorted(_ids(hits)) == ["a", "b", "c"]


def test_the_list_for_k_is_the_head_of_the_list_for_more() -> None:
    eps = [_ep(f"e{i}", lexical=float(i % 7), dense=0.2 + (i * 37 % 11) / 20) for i in range(40)]
    mems = [_mem(f"m{i}", dense=0.3 + i / 20, ref=f"s/e{i}") for i in range(8)]
    full = _ids(fuse(eps, mems, k=30))
    for k in (1, 3, 5, 10, 20):
        assert _ids(fuse(eps, mems, k=k)) == full[:k]


def test_memories_take_at_most_one_place_in_three() -> None:
    mems = [_mem(f"m{i}", dense=0.9, lexical=9.0) for i in range(6)]
    eps = [_ep(f"e{i}", dense=0.5, lexical=1.0) for i in range(6)]
    kinds = [h.type for h in fuse(eps, mems, k=9)]
    assert kinds == ["memory", "episode", "episode"] * 3
    assert [h.type for h in fuse([], mems, k=3)] == ["memory"] * 3  # nothing else: all of them


def test_a_turn_rises_with_the_meaning_of_a_memory_drawn_from_it() -> None:
    # equal as turns; the memory restates the second one in the question's terms
    eps = [_ep("plain", lexical=3.0, dense=0.3), _ep("restated", lexical=3.0, dense=0.3),
           _ep("other", lexical=2.0, dense=0.2)]
    mem = _mem("m", dense=0.7, ref="s/restated")
    assert _ids(fuse(eps, [mem], k=4)).index("restated") < _ids(fuse(eps, [mem], k=4)).index(
        "plain")
    assert _ids(fuse(eps, [mem], k=4, weights=Weights(source=0.0)))[:2] == ["plain", "restated"]
    # a memory found by its words only lends nothing
    lexical_only = _mem("m", lexical=9.0, ref="s/restated")
    assert _ids(fuse(eps, [lexical_only], k=4))[:2] == ["plain", "restated"]


def test_the_one_person_the_question_names_comes_before_the_other_speaker() -> None:
    evan = Candidate(replace(_hit("evan", ref="s/evan"), speaker="Evan"), lexical=4.0,
                     dense=0.5)
    sam = Candidate(replace(_hit("sam", ref="s/sam"), speaker="Sam"), lexical=4.2, dense=0.5)
    assert _ids(fuse([evan, sam], [], k=2)) == ["sam", "evan"]  # no question given
    assert _ids(fuse([evan, sam], [], k=2, query="What car does Evan drive?")) == ["evan", "sam"]
    # two named: neither is the other speaker
    assert _ids(fuse([evan, sam], [], k=2, query="Did Evan drive Sam home?")) == ["sam", "evan"]
    assert named_speakers("what does evan drive", {"Evan", "Sam", None}) == {"Evan"}


def test_superseded_comes_after_current_unless_the_past_is_asked_for() -> None:
    eps = [_ep("said-old", lexical=5.0, dense=0.6), _ep("said-new", lexical=4.8, dense=0.6)]
    old = _mem("m-old", lexical=6.0, dense=0.6, ref="s/said-old", status="superseded")
    new = _mem("m-new", lexical=5.5, dense=0.6, ref="s/said-new")
    superseded = {"s/said-old"}
    assert set(_ids(fuse(eps, [old, new], k=4, superseded=superseded))[:2]) == {"m-new",
                                                                                "said-new"}
    past = _ids(fuse(eps, [old, new], k=4, superseded=superseded, past=True))
    assert set(past[:2]) == {"m-old", "said-old"} and past.index("said-old") < past.index(
        "said-new")


def test_what_the_assistant_said_weighs_less() -> None:
    eps = [_ep("assistant", lexical=5.0, dense=0.6, role="assistant"),
           _ep("person", lexical=4.8, dense=0.6)]
    assert _ids(fuse(eps, [], k=2)) == ["person", "assistant"]


def test_a_decayed_unsure_memory_and_a_far_one_weigh_less() -> None:
    sure, unsure = _mem("sure", dense=0.6, weight=1.0), _mem("unsure", dense=0.6, weight=0.2)
    eps = [_ep(f"e{i}", dense=0.1 + i / 10) for i in range(5)]
    ranked = _ids(fuse(eps, [unsure, sure], k=7, weights=Weights(memory_every=1)))
    assert ranked[0] == "sure" and ranked.index("unsure") > ranked.index("e4")
    far = _mem("far", dense=0.1)
    # under the memory floor and no word of the question: not listed (a short list is short)
    assert _ids(fuse([_ep("e", dense=0.5)], [far], k=2)) == ["e"]


def test_nothing_in_nothing_out() -> None:
    assert fuse([], [], k=5) == []
    assert fuse([_ep("e", dense=0.5)], [], k=0) == []


def test_questions_about_the_past_are_told_apart() -> None:
    for q in ("Where did Maria live before moving?", "Which city was Tom living in at first?",
              "Which company did Tom work for previously?", "What car did Tom drive originally?",
              "李娜以前在哪家公司工作？", "王伟搬家之前住在哪里？", "李娜最开始住在哪个城市？"):
        assert asks_about_past(q), q
    for q in ("Where does Maria live now?", "What is Tom's profession?", "Which car did Tom buy?",
              "What app does Maria use to take notes?",
              "李娜现在住在哪里？", "王伟最喜欢的茶是什么？", "Who is visiting Maria soon?"):
        assert not asks_about_past(q), q


def test_a_turn_next_to_strong_evidence_gains_a_share_of_it() -> None:
    assert neighbors(["a", "b", "c"]) == [["b"], ["a", "c"], ["b"]]
    assert neighbors([]) == []

    def ep(hit_id: str, dense: float, near: tuple[str, ...]) -> Candidate:
        return Candidate(replace(_hit(hit_id, ref=f"s/{hit_id}"), neighbors=near), dense=dense)

    far = [ep(f"f{i}", 0.1, ()) for i in range(4)]
    pool = [ep("answer", 0.8, ("reply",)), ep("reply", 0.5, ("answer",)),
            ep("alone", 0.52, ()), *far]
    ranked = _ids(fuse(pool, [], k=3))
    assert ranked == ["answer", "reply", "alone"]
    assert _ids(fuse(pool, [], k=3, weights=Weights(neighbor=0.0))) == ["answer", "alone", "reply"]


def test_the_assistant_neither_lends_nor_borrows_neighbour_evidence() -> None:
    def ep(hit_id: str, dense: float, near: tuple[str, ...], role: str = "user") -> Candidate:
        return Candidate(replace(_hit(hit_id, ref=f"s/{hit_id}", role=role), neighbors=near),
                         dense=dense)

    far = [ep(f"f{i}", 0.1, ()) for i in range(4)]
    pool = [ep("echo", 0.8, ("asked",), role="assistant"), ep("asked", 0.5, ("echo",)),
            ep("said", 0.51, ()), *far]
    ranked = fuse(pool, [], k=7)
    assert _ids(ranked)[:3] == ["echo", "said", "asked"]  # no lift from the assistant's echo
    assert ranked[0].score == round(0.5 * 0.7, 6)  # and none to it


def test_in_a_small_pool_near_equals_stay_near() -> None:
    """Two turns of a new user, both on topic: the superseded one is a little nearer the
    question. Stretched over their own tiny range, the current one would count as no dense
    match at all and lose; over the minimum spread, the demotion decides."""
    old = _ep("centos", lexical=3.0, dense=0.42)
    new = _ep("ubuntu", lexical=3.0, dense=0.38)
    assert _ids(fuse([old, new], [], k=2, superseded={"s/centos"})) == ["ubuntu", "centos"]
    stretched = Weights(min_spread=0.0)
    assert _ids(fuse([old, new], [], k=2, superseded={"s/centos"}, weights=stretched)) == [
        "centos", "ubuntu"]


def test_a_turn_replies_to_someone_elses_turn_before_it() -> None:
    from memq.schemas import Turn

    def turn(content: str, speaker: str | None = None, role: str = "user") -> Turn:
        return Turn(turn_id="t", role=role,  # type: ignore[arg-type]
                    content=content, speaker=speaker, timestamp=AT)

    chat = [turn("Did you run?", "Ana"), turn("Yes, last Sunday.", "Rui"),
            turn("I like jazz."), turn("I like hiking."), turn("Nice!", role="assistant")]
    assert [replied_to(chat, i) for i in range(len(chat))] == [
        None, "Did you run?", "Yes, last Sunday.", None, "I like hiking."]


def test_what_was_said_when_the_question_says_comes_first() -> None:
    from datetime import timedelta

    from memq.pipeline.rules_en import question_window

    asked = datetime(2023, 7, 1, 13, 38, tzinfo=UTC)  # a Saturday
    then = asked - timedelta(days=14)
    near = Candidate(replace(_hit("then"), event_at=then), lexical=8.0)
    other = Candidate(replace(_hit("other"), event_at=asked - timedelta(days=60)), lexical=9.0)
    window = question_window("I mentioned a sports event two weeks ago. What was it?", asked)
    assert window is not None and window[0] <= then < window[1]
    assert _ids(fuse([near, other], [], 2, window=window)) == ["then", "other"]
    assert _ids(fuse([near, other], [], 2)) == ["other", "then"]  # no time named: BM25's order


def test_the_times_a_question_names() -> None:
    from memq.pipeline.rules_en import question_window

    asked = datetime(2023, 7, 1, 13, 38, tzinfo=UTC)  # a Saturday

    def days(q: str) -> tuple[str, str] | None:
        w = question_window(q, asked)
        return None if w is None else (w[0].date().isoformat(), w[1].date().isoformat())

    assert days("What did Audrey eat on October 24, 2023?") == ("2023-10-23", "2023-10-26")
    assert days("What did she do on 3 July, 2023?") == ("2023-07-02", "2023-07-05")
    assert days("the Monday before July 24, 2023") == ("2023-07-17", "2023-07-26")
    assert days("the workshop she signed up for in May 2023") == ("2023-05-01", "2023-06-01")
    assert days("what did I do last month?") == ("2023-06-01", "2023-07-01")
    assert days("last week?") == ("2023-06-19", "2023-06-26")
    assert days("last weekend") == ("2023-06-24", "2023-06-26")  # said on a weekend
    assert days("what did I buy last Friday?") == ("2023-06-30", "2023-07-01")
    assert days("three days ago") == ("2023-06-27", "2023-06-29")
    assert days("February 30, 2023") is None  # no such day
    assert days("What is my job?") is None


LONG = ("I still remember the happy high school experiences of the debate team. Speaking of the "
        "future, what are the average salaries for data scientists in industry?")


def test_a_long_turn_has_passages_a_short_one_none() -> None:
    assert passages(LONG) == [
        "I still remember the happy high school experiences of the debate team.",
        "Speaking of the future, what are the average salaries for data scientists in industry?"]
    assert passages("I keep bees. They are fine.") == []  # short
    assert passages("x" * 200) == []  # one sentence
    zh = ["我们组线上跑的是CentOS 7的物理机，内核还是老古董。", "这个月起全量切到Rocky Linux 9了！",
          "最后一台老机器昨天下线了，大家都松了一口气，终于不用再维护那些老古董了。"]
    assert len("".join(zh)) >= 60 and passages("".join(zh) * 2) == [*zh, *zh]


def test_turn_vectors_embed_each_text_once_in_one_call() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [[float(len(t)), 1.0] for t in texts]

    when = datetime(2024, 5, 1, tzinfo=UTC)
    vectors, parts = turn_vectors(embed, [("I keep bees.", "Ann", when), (LONG, "Ann", when)])
    pieces = passages(LONG)
    assert calls == [[episode_text("I keep bees.", "Ann", when)]
                     + [episode_text(pieces[0], "Ann", when)]  # LONG is not embedded whole
                     + [passage_text(p, "Ann", when) for p in pieces[1:]]]  # its date said once
    assert vectors[0] == [float(len(calls[0][0])), 1.0]
    assert parts[0] == [] and parts[1] == [[float(len(t)), 1.0] for t in calls[0][1:]]
    summed = [sum(xs) for xs in zip(*parts[1], strict=True)]
    norm = sum(x * x for x in summed) ** 0.5
    assert vectors[1] == [x / norm for x in summed]  # the mean of its passages, unit length


def test_a_superseded_turn_yields_its_place_to_the_current_memory() -> None:
    """"Where do I live now?" meets "I live in Lyon." by its words; the memory that holds the
    place of what that turn said ("The user lives in Cork.") comes first, at its score, and
    the turn says what replaced it. Asked about the past, the turn keeps its place."""
    lyon = _ep("lyon", lexical=9.0, dense=0.7)
    cork_turn = _ep("cork-turn", lexical=1.0, dense=0.3)
    filler = _ep("filler", lexical=2.0, dense=0.4)
    cork = _hit("cork", "memory", ref="s/cork-turn", status="current")
    now = fuse([lyon, cork_turn, filler], [], k=3, superseded={"s/lyon"},
               successors={"s/lyon": cork})
    assert _ids(now) == ["cork", "lyon", "filler"]
    assert now[0].score == now[1].score
    assert (now[1].superseded_by, now[1].current) == ("cork", "cork")
    before = fuse([lyon, cork_turn, filler], [], k=3, superseded={"s/lyon"}, past=True,
                  successors={"s/lyon": cork})
    assert _ids(before)[0] == "lyon" and before[0].current == "cork"
    # the list for k is the head of the list for a larger k
    longer = fuse([lyon, cork_turn, filler], [], k=4, superseded={"s/lyon"},
                  successors={"s/lyon": cork})
    assert _ids(longer)[:3] == _ids(now) and _ids(longer)[3] == "cork-turn"


def test_a_current_memory_found_later_in_the_pool_moves_up_not_twice() -> None:
    old = _mem("m-old", lexical=8.0, dense=0.7, ref="s/old", status="superseded")
    new = _mem("m-new", lexical=1.0, dense=0.25, ref="s/new")
    others = [_ep(f"e{i}", lexical=5.0 - i, dense=0.5) for i in range(4)]
    ranked = _ids(fuse(others, [old, new], k=6,
                       successors={"m-old": _hit("m-new", "memory", ref="s/new")}))
    assert ranked.index("m-new") == ranked.index("m-old") - 1
    assert ranked.count("m-new") == 1


def test_changed_follows_each_chain_to_its_current_end() -> None:
    from memq.pipeline.ports import Changed
    from memq.schemas import Kind, StoredMemory

    def memory(mid: str, status: str = "current") -> StoredMemory:
        return StoredMemory(id=mid, user_id="u", content=mid, kind=Kind.FACT, confidence=1.0,
                            importance=0.5, source_turn_ids=[f"s/{mid}"], valid_at=AT,
                            created_at=AT, updated_at=AT, embedding_model="m",
                            status=status)  # type: ignore[arg-type]

    changed = Changed.of([("lyon", ["s/lyon"], "paris"), ("paris", ["s/paris"], "cork"),
                          ("gone", ["s/gone"], "forgotten"), ("loop", ["s/loop"], "loop")],
                         [memory("cork")])
    assert changed.memories == {"lyon": "cork", "paris": "cork", "gone": None, "loop": None}
    assert changed.refs == {"s/lyon": "cork", "s/paris": "cork", "s/gone": None,
                            "s/loop": None}
    assert set(changed.current) == {"cork"}


def test_a_chinese_question_loses_the_words_that_ask() -> None:
    """Chinese has no spaces: the words that ask or point cut the question's run, so it meets
    turns by what it is about, not by 我, 的, 是."""
    assert query_terms("我现在用的是什么编辑器？") == ["现在用", "编辑器"]
    assert query_terms("我们的服务器现在在哪个云上？") == ["服务器现在在", "云上"]
    assert query_terms("What editor do I use now?") == ["editor", "use", "now"]
