"""The words and patterns of :mod:`memq.pipeline.rules_en`, as data: the verbs of things done,
made, owned, loved or planned (:data:`_CLASSES`), the words that point back or say nothing,
the time words (:data:`FUTURE`, :data:`TIME`, the relative times and the dates a question
names) and the shapes of a statement about oneself. The reader's code is in ``rules_en``.
"""

from __future__ import annotations

import re

from ..schemas import Kind

_ADV = (r"(?: (?:just|recently|finally|also|really|actually|always|usually|often|still|already"
        r"|even|now|totally|definitely|officially|slowly|lately|first|both|all|currently|mostly"
        r"|sometimes|generally|normally|regularly|constantly|seriously|personally))*")
_SELF = re.compile(rf"^I(?P<aux>'ve been|'ve| have been| have|'m| am| was| had){{0,1}}{_ADV}"
                   r" (?P<verb>[a-z]+)\b(?!')(?P<rest>.*)$")  # "I won't" is no win
# verb -> (predicate, kind); base, past and -ing forms
_CLASSES = {
    "did": (Kind.EVENT, """started joined got bought adopted moved went visited finished
        graduated took made built created worked lived played learned learnt volunteered
        attended won lost found signed ran read wrote painted cooked baked traveled travelled
        hiked camped practiced practised trained taught studied decided tried met became
        received completed launched opened organized organised participated competed
        celebrated raised donated spent collected grew picked gave sold left quit entered
        performed recorded released published designed planted rescued fostered hosted
        helped passed earned booked explored discovered posted shared saw noticed restored
        fixed repaired rehearsed experimented joined used held threw arranged scored landed
        accepted switched upgraded renovated redecorated remodeled adopted reached reconnected
        struggled bonded streamed replaced installed purchased ordered renewed enrolled
        registered subscribed"""),
    "does": (Kind.FACT, """experimenting focusing looking restoring fixing rehearsing
        start join get buy adopt work live play learn volunteer attend
        run read write paint cook bake travel hike camp practice train teach study try
        make build create collect grow own do perform record design plant foster host help
        explore watch listen go did watching listening going starting joining getting
        working living playing learning volunteering
        running reading writing painting cooking baking traveling travelling hiking camping
        practicing practising training teaching studying trying making building creating
        collecting growing doing performing recording designing planting fostering hosting
        helping exploring taking attending saving preparing organizing organising donate
        use using take find"""),
    "likes": (Kind.PREFERENCE, "love loved enjoy enjoyed adore appreciate value cherish"),
    "plans": (Kind.EVENT, "plan planned planning want wanted hope gonna"),
    "has": (Kind.FACT, "have had"),
}
_VERBS = {v: (p, k) for p, (k, words) in _CLASSES.items() for v in words.split()}
_NOT_ABOUT_SELF = re.compile(r"\b(?:you|your|yours|yourself|u|ur)\b", re.I)
# (a relative "that" or "those who" points at nothing: "an organization that provides items to
# those who need them")
_DANGLING = re.compile(r"\b(?:it|^that|that(?! (?:\w+s|\w+ed|was|were|is|are|has|had|have|led"
                       r"|made|got|took|gave|brought|kept|helped|taught|changed)\b)"
                       r"|this(?! (?:morning|evening|afternoon|week|weekend|month"
                       r"|year|summer|winter|spring|fall|season)\b)|these|those(?! who\b)|they|them"
                       r"|he|she"
                       r"|him|her|one(?! of| (?:day|summer|winter|spring|fall|autumn|weekend|night"
                       r"|morning|evening|afternoon|time)\b)|ones|there|here|(?-i:so)"
                       r"|too(?! much| many))\b", re.I)
_CUT = re.compile(r",? (?:but|because|since|(?-i:so)|which|though|although|and then|and it|and that"
                  r"|and something|and someone|and everything"
                  r"|and they|and I'm|and I am|and I feel|and wow|and oh)\b.*$|[;!?].*$|:\s.*$"
                  r"|\s-\s.*$|\s*[–—].*$|\s*\[.*$"
                  r"|,\s+(?:it|that|this|they|he|she)(?:'s|'re|\s+[a-z]+)\b.*$"
                  r"|,\s+(?:especially|particularly|and now)\b.*$|\s+as well$"
                  # "and found that turbinado adds …", "25 rare coins that I need to store …"
                  r"|,? and (?:found|realized|realised|noticed|learned|discovered) that\b.*$"
                  r"|\s+that I(?:'ll| will| need| want| have to| plan| hope| am going| was going)"
                  r"\b.*$",
                  re.I)
# a demonstrative before a noun points at a photo or a thing just named: "bought this candle"
# is "bought a candle" ("that" is left: "learned that patience matters" is no demonstrative)
_DEMONSTRATIVE = re.compile(r"\bthis\b(?= (?!(?:i|you|he|she|it|we|they|the|a|an|my|now|one|way"
                            r"|time|morning|evening|afternoon|week|weekend|month|year|summer"
                            r"|winter|spring|fall|autumn|season|semester|term"
                            r"|is|was|are|were|has|had|will|would|can|could|for|from|with|to|at"
                            r"|in|on|of|and|or|but|so|because|when|while|yesterday|today|last"
                            r"|too|again|now|as|like|right)\b)[a-z]+\b)", re.I)


_DEMONSTRATIVES = re.compile(r"\bthese\b(?= (?!(?:are|were|have|had)\b)[a-z]+\b)",
                             re.I)
# first person to third, in any text ("my" -> "their", "I was" -> "they were")
PRONOUNS = tuple((re.compile(p), r) for p, r in (
    (r"\bI'm\b", "they're"), (r"\bI am\b", "they are"), (r"\bI've\b", "they've"),
    (r"\bI'll\b", "they'll"), (r"\bI'd\b", "they'd"), (r"\bI was\b", "they were"),
    (r"\bI\b", "they"), (r"\b[Mm]yself\b", "themselves"), (r"\b[Mm]ine\b", "theirs"),
    (r"\b[Mm]y\b", "their"), (r"\b[Mm]e\b", "them"), (r"\b[Oo]urs\b", "theirs"),
    (r"\b[Oo]ur\b", "their"), (r"\b[Oo]urselves\b", "themselves")))
_AUX = {"'ve been": "has been", " have been": "has been", "'ve": "has", " have": "has",
        "'m": "is", " am": "is", " was": "was", " had": "had"}
_PLAN = re.compile(r"^(?:to|on) (?!(?:keep(?! (?:learning|working on|practi[cs]ing|improving"
                   r"|exploring|building|studying)\b)|stay|bring|make sure|try|give|look|see"
                   r"|find|think"
                   r"|get|have|let|say|tell|ask|share|show|send|take a look|hang|chill|rest|relax"
                   r"|check(?! out)"
                   r"|solidify|figure|work on|be(?! in| at| on| back))\b)\w+"
                   r"|^an? (?:\w+ ){0,2}(?:trip|visit|party|vacation|holiday|wedding|move|hike"
                   r"|getaway|tour|retreat|reunion|celebration|fundraiser|ceremony|concert"
                   r"|festival|camping|picnic)\b")
# "want to …", "plan on …" something to remember; not "going to bring some snacks", "want to
# make sure …"
MAX_OBJECT = 80
_VAGUE = frozenset({
    "news", "challenge", "challenges", "milestone", "adventure", "setback", "time", "times",
    "blast", "day", "days", "week", "feeling", "idea", "ideas", "question", "questions", "work",
    "fun", "chance", "thing", "things", "stuff", "experience", "moment", "incident", "plan",
    "plans", "update", "updates", "recommendations", "tips", "success", "progress", "do",
    "recently", "lately", "today", "well", "going", "break", "rough", "patch", "skill",
    "skills", "something", "someone", "anything", "everything", "lesson", "lessons", "call",
    "decision", "choice"})
# words of when, not of what
_WHEN = frozenset({
    "last", "next", "this", "week", "weeks", "weekend", "month", "months", "year", "years",
    "yesterday", "today", "tonight", "ago", "night", "morning", "evening", "afternoon",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "earlier",
    "couple", "few", "two", "three", "other"})
_SOME = frozenset({
    "some", "awesome", "great", "big", "good", "personal", "bit", "major", "huge", "new",
    "unexpected", "little", "amazing", "few", "similar", "exciting", "cool", "nice", "crazy",
    "wild", "hard", "tough", "busy", "fantastic", "incredible", "wonderful", "real", "an", "of",
    "super", "rad", "fun", "blast", "accomplishment", "eventful", "interesting", "hectic",
    "productive", "lovely", "memorable"})
_FUNCTION = frozenset({
    "to", "the", "a", "an", "of", "in", "on", "at", "for", "with", "and", "or", "some", "all",
    "my", "their", "from", "by", "into", "out", "up", "about", "over", "just", "really", "so",
    "very", "more", "much", "lot", "lots"})


_PAST = set(_CLASSES["did"][1].split()) | {"had", "loved", "enjoyed", "wanted", "planned",
                                            "did"}

_UNCHANGED = {"can", "cannot", "could", "should", "must", "might", "may", "will", "would",
              "shall", "had", "did", "was"}
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes"}


_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_N = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
      "a few": 3, "a couple of": 2, "couple of": 2, "few": 3, "several": 4}
_RELATIVE = re.compile(
    r"\b(?P<rel>yesterday|today|tonight|this morning|last night|this (?:month|year)"
    r"|(?:last|next) (?:week(?:end)?|month"
    r"|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?P<n>a few|a couple of"
    r"|couple of|several|an?|one|two|three|four|five|six|\d+) (?P<unit>days?|weeks?|months?"
    r"|years?) ago)\b(?!')", re.I)


FUTURE = (r"(?:next|this coming|this) (?:week|weekend|month|year|summer|winter|spring|fall"
          r"|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|tonight"
          r"|in (?:a|an|one|two|three|four|five|six|a few|a couple of|\d+) (?:days?|weeks?"
          r"|months?)|later this (?:week|month|year)|(?:in|on) (?-i:[A-Z])\w+")
TIME = (rf"(?:{FUTURE}|(?:last|this) (?:week|weekend|month|year|summer|winter|spring|fall"
        r"|autumn|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|last night"
        r"|this morning|yesterday|today|recently|lately|these days|earlier this (?:week|month"
        r"|year)|(?:a few|a couple of|couple of|several|\w+) (?:days?|weeks?|months?|years?)"
        r" ago)")
_FRONT_TIME = re.compile(rf"^(?:and |but |so )?(?P<time>{TIME}),?\s+"
                         r"(?P<rest>(?:I|[Mm]y|[Ww]e|[Mm]e and)\b.+)$", re.I)


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r")"
_MONTH2 = _MONTH.replace("month", "month2")
_ON_DAY = re.compile(rf"\b(?:{_MONTH} (?P<day>\d{{1,2}})(?:st|nd|rd|th)?,? (?P<year>\d{{4}})"
                     rf"|(?P<day2>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH2}"
                     r",? (?P<year2>\d{4}))\b", re.I)
_IN_MONTH = re.compile(rf"\b(?:in|during|early|late|mid|of) {_MONTH}(?: (?P<year>\d{{4}}))?\b",
                       re.I)
_AGO = re.compile(r"\b(?P<n>a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple"
                  r" of|couple of|several|\d+) (?P<unit>days?|weeks?|months?|years?) ago\b", re.I)
_LAST = re.compile(r"\b(?P<rel>yesterday|today|tonight|last night|this morning|(?:last|this|past)"
                   r" (?:week(?:end)?|month|year|monday|tuesday|wednesday|thursday|friday"
                   r"|saturday|sunday))\b", re.I)
_N_WORDS = _N | {"seven": 7, "eight": 8, "nine": 9, "ten": 10}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


# "I'm passionate about X", "I'm super into X", "I'm a big fan of X": what the speaker loves
# "I'm currently on the hunt for a new job": what one is in the middle of
_DOING = re.compile(rf"^I(?:'m| am){_ADV}(?: currently)?(?: (?:so|really|very|super|truly|pretty))?"
                    r" (?P<rest>(?:on the hunt|looking"
                    r"|searching|in the middle of|in the process of"
                    r"|on a (?:trip|road trip|mission|diet|break)"
                    # how one stands to something named: "I'm grateful for the connection I
                    # have with my siblings", "I'm busy taking care of my pets"
                    r"|busy \w+ing|grateful for|thankful for|proud of|all about"
                    r"|excited (?:about|for)|determined to|committed to|dedicated to|devoted to"
                    r"|considering \w+ing|thinking of \w+ing)"
                    r"\b.+)$")
_FOND = re.compile(rf"^I(?:'m| am|'ve been| have been){_ADV}"
                   r"(?: (?:super|so|really|totally|very|pretty))?"
                   r" (?:passionate about|into|a (?:big |huge )?fan of|obsessed with|crazy about"
                   r"|loving|(?P<how>interested in|keen on|hooked on|fascinated by|addicted to"
                   r"|drawn to))"
                   r" (?P<rest>.+)$")
# "My GF and I just had …": the speaker with someone, in their name
_WITH = re.compile(r"^(?:my|our) (?P<who>(?:\w+ ){0,2}?\w+),? and I\b(?P<rest>.*)$", re.I)
# "Me and my neighbor ran a free gardening class": the same, said the other way round
_ME_WITH = re.compile(r"^(?:me|I) and (?:my|our) (?P<who>(?:\w+ ){0,2}?\w+)(?P<rest> (?:just |also "
                      r"|finally |recently |both )*(?:[a-z]+ed|got|had|made|took|went|came|began"
                      r"|became|gave|grew|ran|won|saw|met|did|spent|built|threw|held|found|have"
                      r"|'ve)\b.*)$", re.I)


# after a dash the subject is often left out, as in a diary: "- went to a community meetup"
_DIARY = re.compile(r"(?:just |finally |recently |also )*(?:went|got|took|made|finished|tried"
                    r"|visited|started|joined|bought|met|saw|found|signed|adopted|won|had a)\b")


# what goes on inside, not a doing: "I've been thinking about …"
_INNER = frozenset({"thinking", "feeling", "hoping", "wondering", "meaning", "wishing",
                    "missing", "worrying", "dreaming", "struggling", "having", "getting",
                    "going", "doing", "being", "saying", "telling", "asking", "waiting",
                    # states of the moment, not doings: "I'm starving", "I'm still figuring …"
                    "figuring", "starving", "dying", "freaking", "loving", "hating", "craving",
                    "kidding", "joking", "sitting", "lying", "standing", "sleeping", "resting",
                    "relaxing", "chilling", "stressing", "panicking", "trying", "looking",
                    "hanging", "coming", "leaving", "heading", "running", "rooting", "counting",
                    "longing"})


# "We found an awesome cafe": the speaker among others, said as the speaker's own
_WE = re.compile(r"^[Ww]e(?: all| both)?(?P<aux>'ve been|'ve| have been| have|'re| are| were"
                 rf"| had)?(?P<rest>{_ADV} [a-z]+\b.*)$")
_WE_AUX = {"'re": "'m", " are": " am", " were": " was"}
_TOGETHER = re.compile(r"\b(?:we|us|our|ours|each other|one another|together|team|both"
                       r"|got each)\b|\b(?:had|have) (?:a|an|the|such a|so much) (?:\w+ )?"
                       r"(?:time|blast|fun|turnout)\b", re.I)
# "My mother also passed away last year": someone of the speaker's, in the speaker's name
_MINE = re.compile(r"^[Mm]y (?P<who>(?:\w+ ){0,2}?(?:mom|mother|dad|father|parents|brother|sister"
                   r"|son|daughter|kids?|children|husband|wife|partner|boyfriend|girlfriend|bf|gf"
                   r"|family|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|dogs?|cats?"
                   r"|puppy|pups?|pets?|team|band|book|project|business|shop|store|car|house|garden"
                   r"|painting|game|website|app|channel|blog|novel|album|song|apartment|flat|place"
                   r"|home|room|baby))"  # not friends, the boss: their lives are not the speaker's
                   r"(?P<rest> (?:just |also |finally |recently |all |both )*(?:[a-z]+ed|got|had"
                   r"|has|won|made|took|went|came|began|became|gave|grew|ran|left|lost|sold|found"
                   r"|passed|is|are|was|were|loves?|enjoys?|started|joined)\b.*)$")


_THEIR_PLAN = re.compile(r"(?:is|are|was|were) (?:thinking|planning|considering|hoping|going to"
                         r"|about to|trying to)\b|(?:wants?|hopes?|plans?) to\b")


# "My plan for now is to expand my brand worldwide", "my dream is to open a bakery": an aim
_AIM = re.compile(r"^[Mm]y (?P<what>(?:(?:main|biggest|big|next|current|ultimate|long-term|new)"
                  r" )?(?:plan|goal|dream|aim|hope|mission))(?: (?:for now|right now|now|for"
                  r" (?:the|this|next) (?:year|month|summer))| these days)? (?:is|was) to"
                  r" (?P<rest>.+)$")


# "Finding that balance has been tough": what the speaker found hard (not "Losing someone is
# hard", said to console)
_HARD = re.compile(r"^(?P<what>[A-Za-z]\w+ing\b[^,]+?) (?:has been|was"
                   r"|has been really|has been so|was so|was really) (?P<how>tough|hard|challenging"
                   r"|difficult|stressful|overwhelming|rewarding|fulfilling|therapeutic|calming"
                   r"|relaxing)\b")


# "meet Toby, my puppy", "That one is Max, my childhood dog", "Max is my mother's cat": a pet
# shown by its name
_MEET = re.compile(r"^(?:(?:meet|this is|that's|that is|that one is|here's|here is) (?P<name>"
                   r"(?-i:[A-Z])\w+)\s*[,–—-]+\s*|(?!(?:it|this|that|he|she|they|there|here|what|who|which"
                   r"|one|mine)\b)(?P<named>(?-i:[A-Z])\w+) is )"
                   r"my (?P<what>(?:\w+(?:'s)? )?(?:puppy|pup|dog|cat|kitten|kitty|snake"
                   r"|bird|parrot|hamster|horse|pony|rabbit|bunny|fish|turtle|tortoise|lizard"
                   r"|gecko))\b", re.I)


# a state that is news: "my partner is pregnant", "my sister got engaged"
_NEWS_STATE = re.compile(r"(?:is|are|was|were|got|just got)(?: (?:finally|now|officially))?"
                         r" (?:pregnant|engaged|married|divorced|retired|sick|ill|injured"
                         r"|hospitali[sz]ed|expecting|graduating|graduated)")


# how one is, not what one did: "doing better", "getting anxious", "working on something"
_NO_NEWS = re.compile(r"(?:doing|feeling|getting|going) (?:so |really |pretty |much |a lot )*"
                      r"(?:well|better|okay|ok|fine|good|great|alright|their best|my best|closer"
                      r"|anxious"
                      r"|motivated|nervous|excited|worried|through)\b"
                      r"|(?:working on|making|doing|trying) (?:something|some stuff|things"
                      r"|strides)\b"
                      r"|\w+ (?:something|someone|anything)\b(?! (?:called|named|like))", re.I)
