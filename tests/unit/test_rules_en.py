"""What a person tells about themselves in English chat (pipeline/rules_en.py): the events,
projects and pastimes the fixed rules have no slot for, in their name, with absolute dates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memq.pipeline.rules import RuleExtractor
from memq.pipeline.rules_en import read, resolve_dates
from memq.schemas import Kind, Turn

FRIDAY = datetime(2023, 6, 9, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize(("clause", "content", "kind"), [
    ("I bought a metal detector", "The user bought a metal detector.", Kind.EVENT),
    ("I've worked with Python and C++", "The user has worked with Python and C++.", Kind.EVENT),
    ("I'm taking a dog training course", "The user is taking a dog training course.", Kind.FACT),
    ("I just got a new cutting-edge gaming system",
     "The user just got a new cutting-edge gaming system.", Kind.EVENT),
    ("I love going for walks by the lake", "The user loves going for walks by the lake.",
     Kind.PREFERENCE),
    ("I want to open my own bakery", "The user wants to open their own bakery.", Kind.EVENT),
    ("I have two cats named Luna and Max", "The user has two cats named Luna and Max.",
     Kind.FACT),
    ("I'm super into RPGs", "The user loves RPGs.", Kind.PREFERENCE),
    ("My GF and I just had a great time volunteering at a pet shelter",
     "The user and their GF just had a great time volunteering at a pet shelter.", Kind.FACT),
    ("It's been a rough week - I gave in and bought some unhealthy snacks",
     "The user gave in and bought some unhealthy snacks.", Kind.EVENT),
    ("I'm gonna be in Japan for a few months", "The user is going to be in Japan for a few "
     "months.", Kind.EVENT),
    ("My mother also passed away last year", "The user's mother also passed away last year.",
     Kind.EVENT),  # someone of the speaker's
    ("My dog learned to open the fridge", "The user's dog learned to open the fridge.",
     Kind.EVENT),
    ("We found an awesome cafe with amazing pastries",  # the speaker among others
     "The user found an awesome cafe with amazing pastries.", Kind.EVENT),
    ("I also bought this candle for my yoga practice",  # a photo's thing, not a pronoun
     "The user also bought a candle for their yoga practice.", Kind.EVENT),
    ("I lost my keys again, it's become a weekly ritual", "The user lost their keys again.",
     Kind.EVENT),
    ("I was busy too - went to a community meetup",  # no subject after the dash
     "The user went to a community meetup.", Kind.EVENT),
    ("I used to play a guitar when I was younger",
     "The user used to play a guitar when they were younger.", Kind.EVENT),
    ("I'm currently on the hunt for a new job", "The user is on the hunt for a new job.",
     Kind.FACT),
    ("We all hiked the trails last week", "The user hiked the trails last week.", Kind.EVENT),
    ("I also read some books about our ecological systems",  # "our" is theirs too
     "The user also read some books about their ecological systems.", Kind.FACT),
    ("I went for a run this morning", "The user went for a run this morning.", Kind.EVENT),
    ("My partner and I plan a camping trip",  # a plan of two
     "The user and their partner plan a camping trip.", Kind.EVENT),
    ("I played my favorite CS:GO game in a tournament",  # a colon inside a name stays
     "The user played their favorite CS:GO game in a tournament.", Kind.EVENT),
    ("I went on a trip to Canada and something unreal happened",  # the vague part cut
     "The user went on a trip to Canada.", Kind.EVENT),
    ("I've been slogging away at my thesis",  # any doing of some time
     "The user has been slogging away at their thesis.", Kind.FACT),
])
def test_what_the_speaker_did_does_loves_or_plans(clause: str, content: str,
                                                  kind: Kind) -> None:
    st = read(clause)
    assert st is not None and (st.content, st.kind) == (content, kind)


@pytest.mark.parametrize("clause", [
    "I love it", "I think so", "I'm glad you liked the trip", "I hope you have fun",
    "I want one so bad", "I had fun", "I have to go now", "I'm trying to practice",
    "I made it to the top and they cheered", "I can't wait to see your photos",
    "I know what you mean", "I bought some for you", "I won't quit",
    "I've had some personal challenges", "I have some awesome news",
    "I'm so into you", "My friend and I love you",
    "I'm doing better now", "I'm getting closer to a solution",  # how one is, no news
    "I'm working on something complicated", "We make a good team",
    "We push each other during our runs", "We had a great time",  # the two of them
    "We play every Thursday",  # too little said for someone among others
    "My sister is so annoying", "My parents are thinking about retiring to Portugal",
    "I had a setback last week", "I learned a new skill",  # nothing named beyond when
    "I learned that patience matters",  # "that" of a clause
    "I'm going to bring some snacks", "I want to make sure he is okay",  # no plan to keep
    "I had a super fun weekend", "I really want to eat this now",  # "this" of a photo
    "I've been thinking about what truly makes me happy",  # inside, not a doing
])
def test_no_memory_of_small_talk_pronouns_or_the_other_person(clause: str) -> None:
    assert read(clause) is None


def test_relative_times_become_the_dates_they_meant() -> None:
    assert resolve_dates("went last week", FRIDAY) == "went the week before 9 June 2023"
    assert resolve_dates("ran yesterday", FRIDAY) == "ran on 8 June 2023"
    assert resolve_dates("last Friday", FRIDAY) == "on 2 June 2023"  # a week back, not today
    assert resolve_dates("last Sunday", FRIDAY) == "on 4 June 2023"
    assert resolve_dates("next Monday", FRIDAY) == "on 12 June 2023"
    assert resolve_dates("last month", datetime(2023, 1, 5, tzinfo=UTC)) == "in December 2022"
    assert resolve_dates("two months ago", FRIDAY) == "two months before 9 June 2023"


def test_a_named_speakers_statement_is_theirs_with_its_date() -> None:
    turn = Turn(turn_id="D1:3", role="user", speaker="Calvin", timestamp=FRIDAY,
                content="Wow, Dave, that's awesome! I booked a flight ticket to Boston last week.")
    (c,) = RuleExtractor().extract([turn])
    assert c.content == "Calvin booked a flight ticket to Boston the week before 9 June 2023."
    assert (c.kind, c.triples[0].subject, c.triples[0].predicate) == (Kind.EVENT, "Calvin", "did")
    assert c.confidence >= 0.7


def test_a_fixed_rule_keeps_its_slot() -> None:
    turn = Turn(turn_id="t1", role="user", content="I work at Acme Corp.", timestamp=FRIDAY)
    assert [t.predicate for c in RuleExtractor().extract([turn]) for t in c.triples] == [
        "works_at"]


@pytest.mark.parametrize(("said", "content"), [
    # a time said first goes last, where its date is resolved; before what a dash adds
    ("Three days ago my apartment lost power - so annoying because I forgot to save!",
     "Calvin's apartment lost power three days before 9 June 2023."),
    ("Last Friday, I finally finished restoring the Mustang.",
     "Calvin finally finished restoring the Mustang on 2 June 2023."),
    ("A lot's happened since we talked - last week I got to go to a yoga retreat.",
     "Calvin got to go to a yoga retreat the week before 9 June 2023."),
    # news after a dash; a state that is news; a plan of the family; this month
    ("I've some amazing news - I held a gaming tourney with my buddies last night.",
     "Calvin held a gaming tourney with their buddies on the night of 8 June 2023."),
    ("Wanted to share some amazing news - my partner is pregnant!", "Calvin's partner is "
     "pregnant."),
    ("Thanks, Sam! Yeah, we're planning a big family reunion next summer.",
     "Calvin is planning a big family reunion next summer."),
    ("I bought a new vintage camera this month.", "Calvin bought a new vintage camera in June "
     "2023."),
    # family news after a comma, what is said of it after cut; a deal scored
    ("It's not easy for us right now, my son had an accident last Tuesday, he fell off his bike.",
     "Calvin's son had an accident on 6 June 2023."),
    ("Guess what? I scored a deal to continue collaboration with Frank Ocean!",
     "Calvin scored a deal to continue collaboration with Frank Ocean."),
    ("I just got back from a rad vacay with my new SO in Canada.",  # SO is no "so"
     "Calvin just got back from a rad vacay with their new SO in Canada."),
    # a doing now, however it is named; a diary's "met with"; plans one has; donating
    ("I'm contacting landlords to find a pet-friendly place.",
     "Calvin is contacting landlords to find a pet-friendly place."),
    ("Met with the creative team for my album yesterday.",
     "Calvin met with the creative team for their album on 8 June 2023."),
    ("I have plans for a hike next month.", "Calvin has plans for a hike in July 2023."),
    ("Any hobby can have an impact - I donate to an animal shelter.",
     "Calvin donates to an animal shelter."),
    ("I volunteered with an organization that provides meals to those who are less fortunate.",
     "Calvin volunteered with an organization that provides meals to those who are less "
     "fortunate."),  # a relative "that" points at nothing
    ("I've just started a pottery class.", "Calvin has just started a pottery class."),
    # a favourite among several; interested in; using; doing now; how one stands to something
    ("One of my favorite yoga routines is a gentle flow.",
     "One of Calvin's favourite yoga routines is a gentle flow."),
    ("Roasted Chicken is one of my favorite dishes.",
     "Roasted Chicken is one of Calvin's favourite dishes."),
    ("I'm interested in sustainable initiatives.", "Calvin is interested in sustainable "
     "initiatives."),
    ("I usually use voice chat to communicate with my team.",
     "Calvin usually uses voice chat to communicate with their team."),
    ("I'm currently playing AC Valhalla, it's cool.", "Calvin is currently playing AC Valhalla."),
    ("I'm busy taking care of my pets and spending time with them.",
     "Calvin is busy taking care of their pets."),  # the part pointing back is left
    ("I'm grateful for the connection I have with my siblings.",
     "Calvin is grateful for the connection they have with their siblings."),
    ("I've been loving getting to know Japanese culture.",
     "Calvin loves getting to know Japanese culture."),
    # an aim; a chance had; an invitation accepted; the speaker with someone, said either way
    ("My plan for now is to expand my brand worldwide.",
     "Calvin's plan is to expand their brand worldwide."),
    ("I had the opportunity to meet Frank Ocean at a music festival in Tokyo and we clicked.",
     "Calvin had the opportunity to meet Frank Ocean at a music festival in Tokyo."),
    ("I've accepted an invitation to perform at an upcoming show in Boston!",
     "Calvin has accepted an invitation to perform at an upcoming show in Boston."),
    ("Me and my neighbor ran a free gardening class for the community.",
     "Calvin and their neighbor ran a free gardening class for the community."),
    # a statement before a dash, a question after it
    ("Hey Evan, long time no see! I've started eating healthier - what's new with you?",
     "Calvin has started eating healthier."),
    ("A few weeks ago I had this crazy dream that led to some creative ideas.",  # relative
     "Calvin had a crazy dream that led to some creative ideas a few weeks before 9 June 2023."),
    # what the speaker found hard; a diary's sentence; a dash without spaces; a doing of some
    # time names its one thing
    ("Work's been stressful. Finding balance has been challenging.",
     "Calvin finds finding balance challenging."),
    ("Went to the beach yesterday with my sister.",
     "Calvin went to the beach on 8 June 2023 with their sister."),
    ("I love the rush and connection with the crowd—it's an absolute high!",
     "Calvin loves the rush and connection with the crowd."),
    ("BTW, I've been focusing on fitness and it's been really beneficial.",
     "Calvin has been focusing on fitness."),
    ("I had a health scare last week – a sudden heart palpitation that really shook me up.",
     "Calvin had a health scare the week before 9 June 2023."),
    # a pet shown by its name; a name spoken to and "since we last spoke" before the statement;
    # a time said first, before what is cut off
    ("So much has changed since last time we talked - meet Toby, my puppy.",
     "Calvin's puppy is named Toby."),
    ("Max is my mother's cat, I took him when my mother passed away.",
     "Calvin's mother's cat is named Max."),
    ("Hey Andrew, since we last spoke I got another tattoo of my four dogs on my arm!",
     "Calvin got another tattoo of their four dogs on their arm."),
    ("Yep, last month I visited my mom's house which holds a special place in my heart.",
     "Calvin visited their mom's house in May 2023."),
    ("Yeah, Dave, I had an amazing drive one summer day.",
     "Calvin had an amazing drive one summer day."),
    # what follows and is not the statement: a finding, a relative clause of intent
    ("I've been experimenting with different types of sugar and found that turbinado adds a "
     "richer flavor.", "Calvin has been experimenting with different types of sugar."),
    ("I actually have 25 rare coins that I need to store safely.",
     "Calvin actually has 25 rare coins."),
    ("I replaced the chain on my bike last week.",
     "Calvin replaced the chain on their bike the week before 9 June 2023."),
])
def test_times_said_first_news_and_plans(said: str, content: str) -> None:
    turn = Turn(turn_id="D1:3", role="user", speaker="Calvin", timestamp=FRIDAY, content=said)
    assert [c.content for c in RuleExtractor().extract([turn])] == [content]


@pytest.mark.parametrize("said", ["My dog is cute.", "My boss is allergic to peanuts.",
                                  "My friend moved to Berlin.",
                                  "I've been working on this for the past few months.",
                                  "I did get this yesterday.",  # "this" is no article
                                  "I'm starving right now.", "I'm still figuring it out.",
                                  "I got this as a reminder to slow down.",
                                  "I really want to do something like this right now.",
                                  "My goal is to do it.", "I'm so proud of them.",
                                  "I'm loving it.", "It is one of my favorites.",
                                  "I'm going to check it out.",
                                  "Losing someone is hard.",  # said to console
                                  "Saw your message.", "It is my dog."])
def test_no_news_and_not_the_speakers(said: str) -> None:
    turn = Turn(turn_id="D1:3", role="user", speaker="Calvin", timestamp=FRIDAY, content=said)
    assert RuleExtractor().extract([turn]) == []
