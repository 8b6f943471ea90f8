"""Offline rule-based extractor: the :class:`~pipeline.ports.Extractor` used without an LLM.

Pure: no I/O, no clock, no environment. Only ``user`` turns are read, split into sentences
(``. ! ? ;`` ``。！？；``) and clauses ("… and I …", "…, we …", "…，我…"); each clause is
matched against :data:`RULES`, a table of compiled regexes (first usable match wins).

Coverage, predicate (kind): English / Chinese

* role, name, lives_in, works_at (profile): "I am a X", "I'm an X", "I work as X", "my name
  is X", "call me X", "I live in X", "I work at/for X" / 我是X (not 我是说), 我叫X,
  我住在X, 我在X工作
* cares_about, likes, prefers, dislikes (preference): "I care (a lot) about X", "I (really)
  like/love X", "I'm a fan of X", "I prefer X", "I don't like/dislike/hate X" /
  我关心X, 我很在意X, 我喜欢X, 我更喜欢X, 我不喜欢X, 我讨厌X
* uses, production_environment (fact): "we use X", "our team uses X", "I use X", "our
  production servers run X", "prod is now on X", "we moved production to X" /
  我们用X, 我们使用X, 我们的生产环境是X, 生产环境迁移到了X
* reply_language, answer_style, remembers (instruction): "please always answer in X", "always
  be concise", "remember/note that X" (rewritten in the third person), "always/never X" /
  以后请用中文回答, (请)记住X

* diet, takes_medication, has_condition, has_relative, has_pet, plans_trip_to, has_goal,
  speaks, age (fact/profile): "I'm vegan", "I take metformin", "I have celiac disease", "my wife,
  Grace, …", "my kids are A and B", "I have a dog named A and a cat named B", "next Friday I fly
  to Oslo", "I'm training for X", "I speak X and Y", "I'm 34" / 我吃素, 我每天吃二甲双胍,
  我乳糖不耐受, 我老公叫X，…, 我家有两只猫，一只叫A，一只叫B, 下个月我要去成都, 我在准备X,
  我会说X和Y, 我今年28岁

Clauses share the user as subject ("I live in Oslo and work at X", "我已经离职了，现在在X上班");
a fronted time moves behind the clause ("Next Friday I fly …"); a statement before a tag
question is kept ("Heading to Lisbon next month, any tips?"); a standing request phrased as a
question is an instruction ("Could you always keep replies short?").
Nothing from greetings, thanks, questions, hypotheticals ("if I were", 假如 …) or turns with a
joke ("haha", 哈哈, 😂 …). Hedged sentences ("maybe", "I think", 可能 …) get
:data:`HEDGED_CONFIDENCE`, under the downstream gate. English input gives "The user …."
sentences, Chinese input "用户…。". One (kind, predicate, object) said twice is one candidate
with every source turn id and the earliest ``valid_at`` (it holds from its first mention).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from ..schemas import CandidateMemory, Kind, Triple, Turn
from . import frames, rules_en, rules_zh, rules_zh_self, tools, when

HEDGED_CONFIDENCE = 0.5
MAX_OBJECT_CHARS = 80


@dataclass(frozen=True)
class Rule:
    """One pattern. Templates take ``{obj}``, ``{Obj}`` (capitalised), ``{a}`` (a/an) and
    the pattern's other named groups, lower-cased."""

    pattern: re.Pattern[str]
    kind: Kind
    predicate: str
    template: str
    confidence: float
    importance: float
    object_template: str = "{obj}"
    reject: re.Pattern[str] | None = None  # objects this rule must not take
    # a second fact in the same sentence: (predicate, object template, group it needs)
    also: tuple[tuple[str, str, str], ...] = ()


def _rule(pattern: str, kind: Kind, predicate: str, template: str, confidence: float,
          importance: float, object_template: str = "{obj}", reject: str | None = None,
          also: tuple[tuple[str, str, str], ...] = ()) -> Rule:
    return Rule(re.compile(pattern, re.I), kind, predicate, template, confidence, importance,
                object_template, re.compile(reject, re.I) if reject else None, also)


_P, _F, _I, _R = Kind.PROFILE, Kind.FACT, Kind.INSTRUCTION, Kind.PREFERENCE
_PROD = (r"(?:production|prod)(?: (?:servers?|environment|env|stack|cluster|machines|infra"
         r"|database|db|boxe?s?|nodes|hosts))?")
_MOVED = r"(?:moved|migrated|switched|upgraded|changed)"
_PERSIST = r"(?=.*\b(?:always|from now on|going forward|in (?:the )?future)\b)"
_LEADIN = r"(?:(?:please|from now on|going forward|in (?:the )?future|always),? )*"
_STYLES = r"short|brief|concise|terse|succinct|detailed|simple|formal|casual"
_LANGS = r"中文|汉语|英文|英语|日语|日文|韩语|法语|德语|西班牙语"
_NAME = r"(?-i:[A-Z])[a-z]+"  # one capitalised given name
_REL = (r"(?:(?:step|half-|twin |younger |older |little |big |baby )?(?:sister|brother|mother"
        r"|mom|mum|father|dad|daughter|son|wife|husband|partner|girlfriend|boyfriend"
        r"|fianc[eé]e?|cousin|aunt|uncle|niece|nephew|grandma|grandmother|grandpa|grandfather"
        r"|grandson|granddaughter)(?:-in-law)?)")
_RELS = r"kids|children|sons|daughters|twins|sisters|brothers|parents|grandkids"
_ANIMAL = (r"(?:dog|puppy|pup|cat|kitten|rabbit|bunny|hamster|parrot|bird|budgie|cockatiel"
           r"|horse|pony|turtle|tortoise|fish|goldfish|guinea pig|ferret|gecko|lizard|snake"
           r"|chicken|hen|rat|mouse|retriever|lab|labrador|poodle|terrier|spaniel|collie"
           r"|shepherd|husky|corgi|beagle|pug|dachshund|bulldog|chihuahua|greyhound|doodle"
           r"|schnauzer|tabby|siamese|ragdoll|sphynx|maine coon)")
_DRUG = (r"(?:[\w-]*(?:pril|sartan|statin|formin|azole|olol|dipine|xetine|pram|tidine|cillin"
         r"|cycline|thyroxine)|insulin|ibuprofen|paracetamol|aspirin|melatonin|lithium|adderall"
         r"|ritalin|prozac|zoloft|lexapro|wellbutrin|antidepressants|antihistamines|birth control"
         r"|the pill|blood thinners|vitamin [\w-]+|[\w -]*?(?:medication|medicine|meds|pills"
         r"|tablets|inhaler|supplements?))")
_DIET = (r"vegetarian|vegan|pescatarian|plant-based|gluten-free|dairy-free|keto|paleo|kosher"
         r"|halal")
_CONDITION = (r"[\w' -]*?(?:itis|osis|emia|disease|disorder|syndrome|deficiency|intolerance"
              r"|diabetes|cancer|apnea|apnoea)")
_TIME_ZH = (r"(?:下个?月|下(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]?"
            r"|明年|明天|后天|今年|去年|前年"
            r"|上个?月|上(?:个)?(?:周|星期)[一二三四五六日天末]?|这个?(?:周末|月底|月|暑假|寒假)"
            r"|(?:春节|国庆节?|五一|十一|元旦|中秋|暑假|寒假)(?:期间|的时候)?|月底|年底|过几天|周末"
            r"|(?:春天|夏天|秋天|冬天)|[一二三四五六七八九十\d]+月(?:份|底|初)?|最近|刚刚?)")
_FUT_ZH = (r"(?:下个?月|下(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]?"
           r"|明年|明天|后天|(?:这个?|今年)"
           r"(?:周末|月底|暑假|寒假|国庆|春节|五一|十一)|(?:春节|国庆节?|五一|十一|元旦|中秋|暑假"
           r"|寒假)(?:期间|的时候)?|月底|年底|过几天|[一二三四五六七八九十\d]+月(?:份|底|初)?)")
_PLACE_ZH = r"[^，,]{1,10}?"
_NOT_A_TRIP_ZH = (r"(?:看|吃|玩|买|打|逛|参加|上|做|找)|.*(?:超市"
                  r"|商场|公司|医院|学校|银行|健身房|单位"
                  r"|办公室|家|店|上班|买|吃|看病|见|了)")  # errands, not trips
_TRIP_TAIL_ZH = (r"(?:(?:旅行|旅游|出差|玩|度假|开会|参加|看|过"
                 r"|探亲|转转|逛逛|待|住|见|参观|上学|读书"
                 r"|办事|滑雪|徒步|爬)[^，,]*)?(?:[，,].*)?")
_REL_ZH = (r"(?:双胞胎)?(?:妹妹|姐姐|哥哥|弟弟|妈妈|母亲|爸爸"
           r"|父亲|女儿|闺女|儿子|妻子|老婆|媳妇|太太"
           r"|丈夫|老公|先生|爱人|对象|男朋友|女朋友|男友|女友|未婚妻|未婚夫|表妹|表姐|表哥|表弟|堂哥"
           r"|堂姐|堂弟|堂妹|外婆|外公|奶奶|爷爷|姥姥|姥爷|婆婆|公公|岳母|岳父|侄子|侄女|外甥女?|孩子)")
_ANIMAL_ZH = (r"(?:狗狗?|猫咪?|小狗|小猫|兔子|仓鼠|鹦鹉|乌龟|金鱼"
              r"|柯基|柴犬|金毛|泰迪|哈士奇|布偶猫|橘猫|英短)")
_DRUG_ZH = r"[\u4e00-\u9fffA-Za-z]+?(?:药|素|片|胶囊|双胍|他汀|沙坦|地平|洛尔|颗粒)"
_ACT_ZH = (r"(?:爬山|游泳|跑步|钓鱼|健身|骑车|骑行|滑雪|徒步|露营"
           r"|瑜伽|冲浪|潜水|攀岩|跳舞|唱歌|画画|下棋"
           r"|看书|读书|拍照|摄影|打(?:篮球|羽毛球|网球|乒乓球|高尔夫|游戏|台球)|踢(?:足球|球)"
           r"|弹(?:吉他|钢琴))")
_ROLE_ZH = (r"[^，,]{0,8}?(?:经理|师|员|开发|设计|运营|销售"
            r"|产品|顾问|医生|护士|老师|律师|会计|主管|总监"
            r"|助理|编辑|记者|实习生|测试|专员|分析)")
_LATIN = r"[A-Za-z0-9][A-Za-z0-9_.+#-]*(?: [A-Za-z0-9][A-Za-z0-9_.+#-]*)*"  # "GitLab CI"
_PLACE = r"(?-i:[A-Z][a-z]+)(?:[ -](?-i:[A-Z][a-z]+))*"  # "New York", not "MySQL"

RULES: tuple[Rule, ...] = (
    # English: names, statements of change, family, health and events first (specific)
    # "this is X" / "it's X" introduce the speaker only as "… again" / "… here": showing a
    # photo, "This is Susie." names the snake (LoCoMo: "Jolene's name is Susie.")
    _rule(r"(?:I'm|I am|my name is|(?:it's|this is)(?= (?-i:[A-Z])[a-z]+ (?:again|here)\b))"
          r" (?P<obj>(?-i:[A-Z])[a-z]+)(?: again| here)?",
          _P, "name", "The user's name is {Obj}.", 0.9, 0.8, "{Obj}",
          reject=r"(?:sorry|fine|good|back|done|here|ok|okay|not|so|just|still|also|really)$"),
    # English: diet, medication, conditions (before "I'm a/an X" takes them as a role)
    _rule(rf"I(?:'m| am|'ve been| have been| went| became| turned)(?: (?:now|strictly|mostly"
          rf"|fully|basically|also|been))* (?:an? )?(?P<obj>{_DIET})(?:[ ,].*)?",
          _F, "diet", "The user is {obj}.", 0.9, 0.7),
    _rule(r"I(?:'m| am) (?:on|doing|following) (?:a|the) (?P<obj>[\w-]+(?: [\w-]+)?) diet(?: .*)?",
          _F, "diet", "The user follows a {obj} diet.", 0.85, 0.7, "{obj} diet"),
    _rule(r"I (?:don't|do not|never|no longer) eat (?P<obj>(?:red )?meat|pork|beef|fish|seafood"
          r"|dairy|eggs|gluten|sugar)(?: .*)?", _F, "diet", "The user does not eat {obj}.",
          0.85, 0.7, "no {obj}"),
    _rule(rf"I(?:'m| am)(?: (?:currently|now|still|also))* on (?P<obj>{_DRUG}(?:,? [\w-]+)?)"
          r"(?: (?:for|since|every|daily|twice|now) .*)?", _F, "takes_medication",
          "The user takes {obj}.", 0.85, 0.8),
    _rule(rf"I(?: (?:also|still|now|have to|need to|must))* take (?P<obj>{_DRUG})(?: .*)?",
          _F, "takes_medication", "The user takes {obj}.", 0.85, 0.8),
    _rule(r"I(?:'m| am|'ve been| have been| was| got)(?: just| recently)? (?:prescribed|put on"
          r"|started on) (?P<obj>.+?)(?: (?:for|by|last|this|a few) .*)?", _F, "takes_medication",
          "The user takes {obj}.", 0.85, 0.8),
    _rule(rf"I(?:'ve| have)(?: got| had)?(?: (?:mild|severe|chronic|early))?"
          rf" (?:an? )?(?P<obj>(?!been |no |never |read |heard |seen ){_CONDITION})(?: .*)?",
          _F, "has_condition", "The user has {obj}.", 0.85, 0.8),
    # English: family and pets, named or not, one or two names
    _rule(rf"(?:my|our) (?:two |three |four )?(?P<rel>{_RELS})(?: are|,)? (?:called |named )?"
          rf"(?P<obj>{_NAME})(?:,? and (?P<obj2>{_NAME}))?(?:[ ,].*)?",
          _F, "has_relative", "The user's {rel} include {obj}.", 0.85, 0.7,
          also=(("has_relative", "{obj2}", "obj2"),)),
    _rule(rf"I(?:'ve| have)(?: got)? (?:a|an|one) (?P<rel>{_REL}) (?:named|called) (?P<obj>{_NAME})"
          r"(?:[ ,].*)?", _F, "has_relative", "The user's {rel} is {obj}.", 0.85, 0.7),
    _rule(rf"I(?:'ve| have)(?: got)? (?P<n>a|an|one|two|three|four|five|\d) (?P<obj>{_REL}s?"
          rf"|{_RELS})(?: (?:named|called|,) (?P<names>.+)| (?:who|and|in|at|living) .*)?",
          _F, "has_relative", "The user has {n} {obj}.", 0.85, 0.7),
    _rule(rf"(?:I|we)(?:'ve| have)?(?: (?:just|finally|also|recently|got))* (?:have|got|adopted"
          rf"|rescued|bought|own) (?:a|an|another|our first|two|three) (?:new )?(?:[\w-]+ )?"
          rf"(?P<animal>{_ANIMAL})(?:s|es)?(?: [\w ]+?)??(?:,? (?:named|called)|,? (?:and )?(?:his"
          rf"|her|its) name is|,) (?P<obj>{_NAME})(?: and (?:a"
          rf"|an) (?:[\w-]+ )?{_ANIMAL} (?:named|called)"
          rf"| and)?(?: (?P<obj2>{_NAME}))?(?:[ ,].*)?", _F, "has_pet",
          "The user has a {animal} named {obj}.", 0.9, 0.7, "{obj}",
          also=(("has_pet", "{obj2}", "obj2"),)),
    _rule(rf"(?:I|we)(?:'ve| have)?(?: (?:just|finally|also|recently|got))* (?:have|got|adopted"
          rf"|rescued|own) (?P<n>a|an|two|three|four|\d|a couple of) (?:new )?"
          rf"(?!(?:few|lot|bunch|couple|ton)\b)(?:[\w-]+ )?"  # "we got a few fish": a catch
          rf"(?P<obj>{_ANIMAL}(?:s|es)?)(?: .*)?", _F, "has_pet", "The user has {n} {obj}.",
          0.85, 0.7),
    _rule(rf"(?:I |we )?(?:named|called) (?:him|her|it) (?P<obj>{_NAME})(?: .*)?", _F, "has_pet",
          "The user has a pet named {obj}.", 0.85, 0.7),
    # English: work, home, trips, habits, goals, languages
    _rule(r"I(?:'ve| have)? accepted (?:a|an|the) (?:job )?offer (?:from|at) (?P<obj>.+?)"
          r"(?: (?:and|so|to|as) .*)?", _P, "works_at", "The user works at {obj}.", 0.85, 0.7),
    _rule(r"I(?:'ve| have| had)?(?: been)? (?:work|working|worked) (?:at|for) (?P<obj>.+?)"
          r" (?:for (?:the )?(?:past |last |about |almost |over |nearly )?\w+ (?:years?|months?)"
          r"|since) .*", _P, "works_at", "The user works at {obj}.", 0.85, 0.7),
    _rule(r"I(?:'ve| have)(?: been)? (?:lived|living) in (?P<obj>.+?)"
          r"(?: (?:for|since) .*)?", _P, "lives_in", "The user lives in {obj}.", 0.85, 0.7),
    _rule(r"I (?:work|live)(?: (?:remotely|mostly|mainly|now))? (?:from|out of) "
          r"(?P<obj>(?-i:[A-Z])[\w -]+?)(?:[ ,].*)?", _P, "lives_in", "The user lives in {obj}.",
          0.85, 0.7),
    _rule(rf"(?:we|I)(?:'ve| have)?(?: (?:just|recently|finally|now|officially))* (?:moved"
          rf"|relocated)(?: (?:back|down|up|out|over|away))? from (?P<old>{_PLACE}) to "
          rf"(?P<obj>{_PLACE})(?: .*)?", _P, "lives_in", "The user lives in {obj}.", 0.9, 0.7,
          reject=tools.product_pattern()),  # "we moved from Grafana to Datadog": a tool
    _rule(rf"(?:(?:I(?:'m| am|'ll| will)|we(?:'re| are|'ll| will)) |I |we )?(?:fly|flying|head"
          rf"|heading|travel|travell?ing|drive|driving|leave for|leaving for|fly out|flying out)"
          rf" (?:out |back |over |down |up )?"
          rf"to (?P<obj>{_PLACE})(?: (?:in|on|next|this|for|tomorrow|tonight|later|at|with|to)"
          r" .*)?", _F, "plans_trip_to", "The user plans a trip to {obj}.", 0.85, 0.6),
    _rule(rf"(?:I(?:'m| am)|we(?:'re| are)|I(?:'ll| will) be|we(?:'ll| will) be) (?:going to"
          rf"|visiting|in) (?P<obj>{_PLACE}) (?:{rules_en.FUTURE})\b.*", _F, "plans_trip_to",
          "The user plans a trip to {obj}.", 0.85, 0.6),
    _rule(r"I(?:'m| am) (?:training for|saving (?:up )?for|working towards) (?P<obj>.+?)"
          r"(?: (?:in|on|next|this|by) .*)?", _F, "has_goal", "The user is aiming for {obj}.",
          0.85, 0.6),
    _rule(r"my (?:main |big |biggest )?goal(?: this year| for \w+)? is to (?P<obj>.+)",
          _F, "has_goal", "The user's goal is to {obj}.", 0.85, 0.6),
    _rule(rf"I(?: also| still)? speak (?P<obj>{_NAME})(?:,? and (?P<obj2>{_NAME}))?(?: (?:fluently"
          r"|natively|well|fluent|a little|some))?", _F, "speaks", "The user speaks {obj}.",
          0.85, 0.6, also=(("speaks", "{obj2}", "obj2"),)),
    _rule(rf"I(?:'m| am) (?:fluent in|a native) (?P<obj>{_NAME})(?: speaker)?",
          _F, "speaks", "The user speaks {obj}.", 0.85, 0.6),
    _rule(r"I(?: (?:usually|often|regularly|also|still))* (?:play|do|practi[cs]e) (?P<obj>(?:the )?"
          r"[\w ]+?) (?:every|each|on|most|twice|once|three times|a few times|regularly"
          r"|whenever|at weekends|after work|before work)\b.*", _R, "likes",
          "The user likes {obj}.", 0.85, 0.6),
    _rule(r"I(?: (?:usually|often|regularly|also|still))* go (?P<obj>[a-z]+ing)(?: .*)?",
          _R, "likes", "The user likes {obj}.", 0.85, 0.6),
    _rule(r"(?P<obj>[\w' -]+?) (?:is|are) my go-to(?: .*)?", _R, "prefers",
          "The user prefers {obj}.", 0.85, 0.6, reject=r"(?:it|this|that|which|what)$"),
    _rule(r"I(?:'m| am| just turned| turned) (?P<obj>\d{1,2})(?: years? old)?(?: (?:now|today|this"
          r" year|last \w+))?(?:(?:,| and| so| but) .*)?", _P, "age",
          "The user is {obj} years old.", 0.85, 0.6),
    _rule(r"(?:please )?keep (?:it|things|them) (?P<obj>short|brief|concise|simple)(?: .*)?",
          _I, "answer_style", "The user wants {obj} answers.", 0.85, 0.9),
    _rule(r"(?:I'm|I am) (?:an?|the) (?P<role>[a-z][\w -]*?) (?:at|for|with) "
          r"(?P<obj>(?-i:[A-Z])[\w&.' -]+)", _P, "works_at",
          "The user works at {obj} as {role}.", 0.9, 0.7, also=(("role", "{role}", "role"),)),
    _rule(r"(?:I'm|I am) (?:an?|the) (?P<role>[a-z][\w -]*?) based in "
          r"(?P<obj>(?-i:[A-Z])[\w -]+)", _P, "role", "The user is {role} based in {obj}.",
          0.9, 0.7, "{role}", also=(("lives_in", "{obj}", "obj"),)),
    _rule(r"(?:(?:so )?I got the job!* )?I(?:'m| am) (?:now |officially )*(?:an?|the) "
          r"(?P<role>[\w -]+?) at (?P<obj>(?-i:[A-Z])[\w&.' -]+)", _P, "works_at",
          "The user works at {obj} as {role}.", 0.9, 0.7, also=(("role", "{role}", "role"),)),
    _rule(r"(?:I(?:'ve| have) |I )?(?:just )?start(?:ed|ing) at (?P<obj>(?-i:[A-Z])[\w&.' -]+?)"
          r"(?: as (?:an? |the )?(?P<role>[\w -]+?))?(?: (?:on|next|this|in) \w+)?",
          _P, "works_at", "The user works at {obj}.", 0.9, 0.7,
          also=(("role", "{role}", "role"),)),
    _rule(r"I(?:'ve| have) been (?:at|with) (?P<obj>(?-i:[A-Z])[\w&.' -]+?) for (?:about |almost "
          r"|over |nearly |around )?\w+ (?:years?|months?)(?: now)?",
          _P, "works_at", "The user works at {obj}.", 0.85, 0.7),
    _rule(r"I left (?P<old>.+?) and (?:joined|moved to"
          r"|started at) (?P<obj>(?:(?:a|an) (?:[\w-]+ ){1,3}?"
          r"(?:called|named) )?(?-i:[A-Z]).+)",
          _P, "works_at", "The user works at {obj}.", 0.9, 0.7),
    _rule(r"(?:so )?I quit (?P<old>.+?)(?:\. | and )now I(?:'m| am) at (?P<obj>(?-i:[A-Z]).+)",
          _P, "works_at", "The user works at {obj}.", 0.85, 0.7),
    _rule(r"now I(?:'m| am) at (?P<obj>(?-i:[A-Z])[\w&.' -]+?)(?: and .*)?",
          _P, "works_at", "The user works at {obj}.", 0.85, 0.7),
    _rule(r"I(?: really)? (?:love|like|enjoy|adore) (?:all|every|most|pretty much all)(?: kinds"
          r" of| types of| sorts of)? (?P<cats>[^,]+?),? but my (?:absolute |all-time )?"
          r"favou?rite (?:is|has to be) (?P<obj>.+)",
          _R, "favourite", "The user's favourite among {cats} is {obj}.", 0.9, 0.7),
    _rule(r"I(?: really)? (?:love|like|enjoy|adore) (?:all|every|most|pretty much all)(?: kinds"
          r" of| types of| sorts of)? (?P<cats>[^,]+?),? but (?P<obj>.+?) (?:is|are) (?:my|the)"
          r" (?:absolute |all-time )?favou?rites?",
          _R, "favourite", "The user's favourite among {cats} is {obj}.", 0.9, 0.7),
    _rule(r"(?:my )?favou?rite (?P<cat>[\w ]+?) (?:is|are) (?P<obj>.+)",
          _R, "favourite", "The user's favourite {cat} is {obj}.", 0.9, 0.7,
          reject=r"(?:not|probably|maybe)\b"),
    _rule(r"(?P<obj>[\w' -]+?) (?:is|are) my (?:absolute )?favou?rite(?: (?P<cat>[\w ]+?))?"
          r"(?:,? (?:in the world|of all time|ever|hands down))*",
          _R, "favourite", "The user's favourite {cat} is {obj}.", 0.85, 0.7,
          reject=r"(?:it|this|that|which|what|who|he|she|they|you)$"),
    # "One of my favorite yoga routines is a gentle flow", "Roasted Chicken is one of my
    # favorites": one favourite among several
    _rule(r"one of my (?:absolute |all-time )?favou?rite (?P<cat>[\w ]+?) (?:is|are) (?P<obj>.+)",
          _R, "favourite", "One of the user's favourite {cat} is {obj}.", 0.85, 0.7,
          reject=r"(?:not|probably|maybe|it|this|that)\b"),
    _rule(r"(?P<obj>[\w' -]+?) (?:is|are) (?:one of|among) my (?:absolute |all-time )?"
          r"favou?rites?(?: (?P<cat>[\w ]+?))?",
          _R, "favourite", "{Obj} is one of the user's favourite {cat}.", 0.85, 0.7,
          reject=r"(?:it|this|that|which|what|who|he|she|they|you)$"),
    _rule(r"(?P<obj>[\w' -]+?) is something I(?: really| truly| genuinely)* care(?: deeply| a lot)?"
          r" about", _R, "cares_about", "The user cares about {obj}.", 0.85, 0.6),
    _rule(r"(?P<obj>[\w' -]+?) matters? (?:a lot |so much |deeply )?to me(?: .*)?",
          _R, "cares_about", "The user cares about {obj}.", 0.85, 0.6,
          reject=r"(?:it|this|that|nothing|everything)$"),
    _rule(r"(?:we|I)(?:'ve| have)?(?: (?:just|recently|finally|now|already|officially))*"
          r" (?:moved|relocated)(?: in)?(?: (?:in)?to (?:a|an|our|my) (?:new )?(?:place|flat"
          r"|apartment|house|home|condo)) in (?P<obj>(?-i:[A-Z]).+)",
          _P, "lives_in", "The user lives in {obj}.", 0.9, 0.7),
    _rule(r"(?:we|I)(?:'ve| have)?(?: (?:just|recently|finally|now|already|officially))*"
          r" (?:moved|relocated)(?: (?:back|over|out|down|up|away))? (?:to|into) (?P<obj>.+)",
          _P, "lives_in", "The user lives in {obj}.", 0.9, 0.7,
          reject=r"(?:a |an |the |my |our )?(?:new )?(?:place|flat|apartment|house|home|office"
          r"|room|desk)\b"),
    _rule(r"I (?:finally |just )?(?:got|bought|found|rented) (?:my own|a|our|a new) (?:place"
          r"|flat|apartment|house|home|condo) in (?P<obj>(?-i:[A-Z]).+)",
          _P, "lives_in", "The user lives in {obj}.", 0.85, 0.7),
    _rule(r"(?:.*\b)?we closed on (?:the|a|our) (?:new )?(?:house|home|place|flat|condo) in "
          r"(?P<obj>(?-i:[A-Z])[\w -]+?)(?:,.*| so .*)?", _P, "lives_in",
          "The user lives in {obj}.", 0.85, 0.7),
    _rule(r"(?:.*\b)?we(?:'re| are) (?:now )?in (?P<obj>(?-i:[A-Z])[\w -]+?)(?: now)?"
          r"(?:,? moved .*)?", _P, "lives_in", "The user lives in {obj}.", 0.85, 0.7),
    _rule(r"I(?:'ve| have)?(?: (?:just|recently|finally|now|officially))* (?:started|began|got)"
          r" (?:a |my )?(?:new )?(?:job|position|role|working) (?:at|with|for) (?P<obj>.+)",
          _P, "works_at", "The user works at {obj}.", 0.9, 0.7),
    _rule(r"I(?:'ve| have)?(?: (?:just|recently|finally|officially))* joined (?P<obj>.+)",
          _P, "works_at", "The user works at {obj}.", 0.85, 0.7,
          reject=r"(?:a |the |my )?(?:gym|club|team|class|course|group|call|meeting|chat)\b"),
    _rule(r"I(?:'m| am)?(?: currently| now)? (?:work|working) (?:at|for) (?P<obj>.+?) as"
          r" (?:an? |the )?(?P<role>.+)",
          _P, "works_at", "The user works at {obj} as {role}.", 0.9, 0.7,
          also=(("role", "{role}", "role"),)),
    _rule(r"(?:it )?(?:turns out |apparently )?I(?:'m| am)(?: (?:very|severely|slightly|also"
          r"|seriously))* allergic to (?P<obj>.+)", _F, "allergic_to",
          "The user is allergic to {obj}.", 0.9, 0.8),
    _rule(r"I (?:was|(?:'ve|have) been|got) diagnosed with (?P<obj>.+?)(?: as a (?:kid|child"
          r"|teen(?:ager)?)| \w+ years? ago| last \w+| in \d{4})?", _F, "has_condition",
          "The user has {obj}.", 0.9, 0.8),
    _rule(r"I(?:'ve| have)?(?: got| have)? (?P<obj>(?:type [12] )?diabetes|asthma|adhd|add"
          r"|celiac disease|coeliac disease|crohn's disease|migraines|epilepsy|arthritis|eczema"
          r"|psoriasis|depression|anxiety|ibs|high blood pressure|hypertension|autism|dyslexia"
          r"|tinnitus|insomnia|sleep apnea|a heart condition)(?:\b.*)?", _F, "has_condition",
          "The user has {obj}.", 0.9, 0.8),
    _rule(r"I suffer from (?P<obj>.+)", _F, "has_condition", "The user has {obj}.", 0.85, 0.8),
    _rule(r"I(?:'m| am) (?P<obj>lactose intolerant|gluten intolerant|diabetic|asthmatic"
          r"|colou?r ?blind)", _F, "has_condition", "The user is {obj}.", 0.9, 0.8),
    _rule(r"(?:I|we) (?:just |finally )?(?:adopted|got|rescued|bought) (?:a|an|another|two|our"
          r" first) (?:new )?(?:[\w-]+ )?(?P<animal>dog|puppy|cat|kitten|rabbit|hamster|parrot"
          r"|bird|horse|turtle|fish)s? (?:named|called) (?P<obj>[^\s,.!]+)(?: .*)?",
          _F, "has_pet", "The user has a {animal} named {obj}.", 0.9, 0.7, "{obj}"),
    _rule(rf"(?:.*\b)?(?:my|our) (?:[\w-]+ )?(?P<animal>{_ANIMAL})(?:'s name is| is (?:called"
          rf"|named)|,)? (?P<obj>{_NAME})(?:[ ,].*)?",
          _F, "has_pet", "The user has a {animal} named {obj}.", 0.85, 0.7, "{obj}"),
    _rule(rf"my (?P<rel>{_REL})(?:'s name is| is (?:called|named)|,)? (?P<obj>{_NAME})"
          r"(?:[ ,].*)?",
          _F, "has_relative", "The user's {rel} is {obj}.", 0.85, 0.7, "{obj}"),
    _rule(r"I(?:'ve| have|'m| am)? ?(?:been |started |just started )?learning(?: to play| how to"
          r" play| to speak| to)? (?:the )?(?P<obj>.+?)(?: for (?:a few|several|two|three|some"
          r"|many) \w+| this year| slowly but surely)?", _F, "learns",
          "The user is learning {obj}.", 0.85, 0.5),
    _rule(r"I(?:'m| am) taking (?:an? |some |the )?(?P<obj>[\w ]+?) (?:classes|lessons|courses?)"
          r"(?: .*)?",
          _F, "learns", "The user is learning {obj}.", 0.85, 0.5),
    _rule(r"(?:I(?:'m| am)|we(?:'re| are)) (?:planning|going|hoping) (?:a trip |to travel |to go "
          r"|on a trip )?to (?P<obj>(?-i:[A-Z])[\w ]*?) (?:in|on|next|this) (?P<when>[\w ]+)",
          _F, "plans_trip_to", "The user plans a trip to {obj} in {when}.", 0.85, 0.6,
          "{obj}"),
    _rule(r"(?:I(?:'m| am)|we(?:'re| are)) planning a trip to (?P<obj>(?-i:[A-Z])[\w ]*?)"
          r"(?: (?:this|next|in) .*| to .*)?", _F, "plans_trip_to",
          "The user plans a trip to {obj}.", 0.85, 0.6),
    _rule(r"(?:(?:I(?:'m| am)|we(?:'re| are)) )?(?:flying|heading|travell?ing|off) to "
          r"(?P<obj>(?-i:[A-Z])[\w ]*?)(?: (?:in|on|next|this|for|tomorrow) .*)?",
          _F, "plans_trip_to", "The user plans a trip to {obj}.", 0.85, 0.6),
    _rule(r"(?:I |we )?(?:just )?booked (?:flights?|tickets?|a trip|a flight) to "
          r"(?P<obj>(?-i:[A-Z])[\w ]*?)(?: (?:for|in|on|next) .*)?",
          _F, "plans_trip_to", "The user plans a trip to {obj}.", 0.85, 0.6),
    _rule(r"(?:we|I|our (?:whole )?team|my team)(?:'ve| have)?(?: (?:just|recently|finally|now"
          r"|all))* (?:switched|migrated|moved)(?: over)? from (?P<old>.+?) to (?P<obj>.+?)"
          r"(?: for (?P<what>.+))?", _F, "uses", "The user uses {obj} (switched from {old}).",
          0.9, 0.6, "{obj}"),
    _rule(r"(?:we|I|our (?:whole )?team|my team)(?:'ve| have)?(?: (?:just|recently|finally|now"
          r"|all))* (?:switched|migrated|moved)(?: over)? to (?P<obj>.+?)(?: from (?P<old>.+))?",
          _F, "uses", "The user uses {obj}.", 0.9, 0.6, "{obj}"),
    _rule(r"(?:we|I)(?: (?:just|finally|recently))* (?:ditched|dropped|replaced) (?P<old>.+?)"
          r" (?:for|with) (?P<obj>.+)", _F, "uses", "The user uses {obj} (instead of {old}).",
          0.9, 0.6, "{obj}"),
    _rule(r"I(?:'ve| have) moved on from (?P<old>.+?), it's all (?P<obj>.+?) for me(?: now)?",
          _F, "uses", "The user uses {obj} (instead of {old}).", 0.85, 0.6, "{obj}"),
    _rule(r"(?:we|I)(?:'ve| have) been using (?P<obj>.+?)(?: for .*| since .*)?",
          _F, "uses", "The user uses {obj}.", 0.85, 0.5),
    _rule(r"I sold my (?P<old>.+?) and bought (?:a|an) (?:new )?(?P<obj>.+)",
          _F, "drives", "The user drives {a} {obj}.", 0.85, 0.5),
    _rule(r"(?:just )?traded in (?:the |my )?(?:old )?(?P<old>.+?) for (?:a|an) (?:new )?"
          r"(?P<obj>.+)", _F, "drives", "The user drives {a} {obj}.", 0.85, 0.5),
    _rule(r"I drive (?:a|an) (?:old |new |used )?(?P<obj>.+?)(?: that .*| so .*)?",
          _F, "drives", "The user drives {a} {obj}.", 0.85, 0.5),
    _rule(r"my car(?:'s| is) (?:a|an) (?:\d{4} )?(?P<obj>.+)",
          _F, "drives", "The user drives {a} {obj}.", 0.85, 0.5),
    _rule(r"(?:please )?(?:answer|reply|respond|write) in (?P<obj>bullet points|short"
          r" paragraphs|plain english|one sentence)", _I, "answer_style",
          "The user wants answers in {obj}.", 0.85, 0.9),
    _rule(r"(?:please )?keep (?:your )?(?:answers|replies|responses) (?P<obj>short|brief|concise"
          r"|simple)(?:,? please)?", _I, "answer_style", "The user wants {obj} answers.",
          0.85, 0.9),
    _rule(r"(?:please )?(?:answer|reply|respond|write)(?: to me)? in (?P<obj>English|Spanish|French"
          r"|German|Italian|Portuguese|Dutch|Chinese|Japanese|Korean|Russian|Arabic|Hindi)"
          r"(?: (?:please|from now on|going forward))*", _I, "reply_language",
          "The user wants replies in {Obj}.", 0.9, 0.9, "{Obj}"),
    _rule(r"I(?:'m| am)(?: really| so| very| totally)* into (?P<obj>.+)",
          _R, "likes", "The user likes {obj}.", 0.85, 0.6, reject=r"(?:it|that|this)$"),
    # English: general
    _rule(r"I(?:'m| am) not (?:(?:a )?(?:big |huge )?fan of|into) (?P<obj>.+)",
          _R, "dislikes", "The user dislikes {obj}.", 0.85, 0.6),
    _rule(r"I(?:'m| am) (?:a )?(?:big |huge |great )?fan of (?P<obj>.+)",
          _R, "likes", "The user likes {obj}.", 0.85, 0.6),
    _rule(r"(?:I(?:'m| am| (?:might|may|could) be) (?:an?|the)|I(?: currently)? work as"
          r"(?: an?| the)?) (?P<obj>.+)", _P, "role", "The user is {a} {obj}.", 0.9, 0.8,
          reject=r"(?:bit|little|lot|(?:big |huge )?fan|(?:big |firm )?believer)\b"),
    _rule(r"(?:my name is|my name's|(?:you can |please )?call me|I(?:'m| am) called|I go by)"
          r" (?P<obj>.+)", _P, "name", "The user's name is {Obj}.", 0.95, 0.8, "{Obj}",
          reject=r"(?:\S+\s+){4}"),
    _rule(r"I(?:'m| am)?(?: currently| now)? (?:live|living|based) in (?P<obj>.+)",
          _P, "lives_in", "The user lives in {obj}.", 0.9, 0.7),
    _rule(r"I(?:'m| am)?(?: currently| now)? (?:work|working) (?:at|for) (?P<obj>.+)",
          _P, "works_at", "The user works at {obj}.", 0.9, 0.7),
    _rule(r"I(?: really| also| truly| genuinely| do)* care(?: a lot| deeply| so much| very much"
          r"| a great deal| a ton| most)? about (?P<obj>.+)",
          _R, "cares_about", "The user cares about {obj}.", 0.9, 0.6),
    _rule(r"I(?: really| just| also| truly)* (?:(?:don't|do not)(?: really)? (?:like|love|enjoy)"
          r"|dislike|hate|can't stand|cannot stand) (?P<obj>.+)",
          _R, "dislikes", "The user dislikes {obj}.", 0.9, 0.6),
    _rule(r"I(?: really| also| generally| usually| just| strongly| do)* prefer (?P<obj>.+)",
          _R, "prefers", "The user prefers {obj}.", 0.9, 0.6),
    _rule(r"I(?: really| also| just| absolutely| truly| do)* (?:like|love|enjoy|adore) (?P<obj>.+)",
          _R, "likes", "The user likes {obj}.", 0.9, 0.6,
          reject=r"(?:this|that|the) time of (?:the )?(?:year|day|week)|it (?:when|here|there)"
          r"|(?:this|that|it)$|(?:you|your)\b|(?:this|that) (?:idea|plan|one)"),
    _rule(rf"(?:(?:our|my|the) )?{_PROD} (?:(?:is|are) (?:now |currently |still )?(?:running"
          rf"(?: on)?|on|using)|(?:now |currently |still )?runs?(?: on)?|(?:now |currently )?"
          rf"uses?|(?:has|have)(?: now)?(?: been)? {_MOVED} to|(?:was|were|got) {_MOVED} to"
          rf"|{_MOVED} to|(?:is|are)(?: now)?) (?P<obj>.+)",
          _F, "production_environment", "The user's production environment is {obj}.",
          0.9, 0.8, reject=r"(?:down|up|broken|slow|fine|ok(?:ay)?|stable|unstable|dead"
          r"|offline|online|on fire|a mess|not|being|very|so|too|still|really|quite|failing"
          r"|crashing|working|having|getting|going)\b"),
    _rule(rf"(?:we|I)(?:'ve| have)?(?: (?:just|recently|finally|now|already))* {_MOVED}"
          rf"(?: (?:our|the|my))? {_PROD}(?: over)? (?:to|onto) (?P<obj>.+)",
          _F, "production_environment", "The user's production environment is {obj}.",
          0.9, 0.8),
    _rule(r"(?:we|our (?:team|company)|my team)(?: (?:mainly|mostly|currently|now|also|primarily"
          r"|heavily|all|still))*(?:'re| are)? (?:use|uses|using|rely on|relies on) (?P<obj>.+)",
          _F, "uses", "The user's team uses {obj}.", 0.85, 0.5),
    _rule(r"I(?: (?:mainly|mostly|currently|now|also|primarily|heavily|still))*(?:'m| am)?"
          r" (?:use|using|rely on) (?P<obj>.+)", _F, "uses", "The user uses {obj}.", 0.85, 0.5),
    _rule(rf"{_PERSIST}{_LEADIN}(?:be|keep (?:it|(?:your )?(?:answers|replies|responses))|answer"
          rf"|reply|respond|write)(?: always)? (?P<obj>{_STYLES})(?:ly)?"
          rf"(?: (?:please|from now on|going forward))*",
          _I, "answer_style", "The user wants {obj} answers.", 0.9, 0.9),
    _rule(rf"{_PERSIST}{_LEADIN}(?:answer|reply|respond|talk|write|speak)(?: to me)?(?: only)?"
          r" in (?P<obj>[^\W\d_]+)(?: (?:please|from now on|going forward|only))*",
          _I, "reply_language", "The user wants replies in {Obj}.", 0.95, 0.9, "{Obj}"),
    _rule(r"(?:please )?(?:(?:remember|keep in mind|don't forget|do not forget)(?: that)?"
          r"|note(?: that|:))[:,]? (?P<obj>.+)", _I, "remembers", "{Obj}.", 0.95, 0.9, "{Obj}"),
    _rule(r"(?:please )?(?P<adv>always|never) (?P<obj>.+)", _I, "remembers",
          "The user wants the assistant to {adv} {obj}.", 0.85, 0.9, "{adv} {obj}",
          reject=r"mind\b"),
    # Chinese: names, statements of change, family, health and events first
    _rule(r"我是(?P<obj>[\u4e00-\u9fff]{2,3})[，,](?:叫我|你可以叫我).*", _P, "name",
          "用户叫{obj}。", 0.9, 0.8),
    # Chinese: diet, medication, conditions (before 我是X takes them as a role)
    _rule(r"我(?:已经|一直|从小|现在|目前|平时|基本)*(?P<obj>吃素|吃全素|不吃肉|不吃猪肉|不吃牛肉|不吃辣"
          r"|不吃海鲜|戒糖|控糖|生酮饮食)(?:[^，,]*)(?:[，,].*)?",
          _F, "diet", "用户{obj}。", 0.9, 0.7),
    _rule(r"我是(?:一[个名位])?(?P<obj>素食主义者|素食者|纯素食者)", _F, "diet", "用户是{obj}。",
          0.9, 0.7),
    _rule(rf"我(?:每天|每晚|每周|早上|晚上|早晚|睡前|饭后|一直|长期|都|要|在|得|需要|还|也|定期|按时)*"
          rf"(?:吃|服用|服|打)(?P<obj>{_DRUG_ZH})[^，,]*(?:[，,].*)?", _F, "takes_medication",
          "用户服用{obj}。", 0.85, 0.8, reject=r"了|一|两|三|几|药$"),
    _rule(rf"我(?:{_TIME_ZH}|从小就?|一直|也)*被?(?:查出了?|检查出(?:了|来)?|确诊了?|诊断出|有|患有"
          r"|得了|得过)(?:有|患有)?(?P<obj>[\u4e00-\u9fff]{1,8}?(?:病|症|炎|综合征|结节|囊肿|结石|癌"
          r"|哮喘|不耐受))(?:[，,].*)?", _F, "has_condition", "用户患有{obj}。", 0.85, 0.8,
          reject=r"毛病|.*问题"),
    _rule(r"我(?:有点|有些|是)?(?P<obj>[\u4e00-\u9fff]{1,4}不耐受)(?:[，,].*)?",
          _F, "has_condition",
          "用户{obj}。", 0.9, 0.8),
    # Chinese: family and pets
    _rule(rf"我的?(?P<rel>{_REL_ZH})(?:的名字)?叫(?P<obj>[\u4e00-\u9fff]{{1,4}})(?:[，,].*)?",
          _F, "has_relative", "用户的{rel}叫{obj}。", 0.9, 0.7),
    _rule(rf"我的?(?P<rel>{_REL_ZH})[^，,]*[，,](?:他|她)?(?:叫|名叫|名字叫)"
          r"(?P<obj>[\u4e00-\u9fff]{1,4})(?:[，,].*)?", _F, "has_relative", "用户的{rel}叫{obj}。",
          0.85, 0.7),
    _rule(rf"我有(?:一个|一位|个|两个|三个|一对)(?P<obj>{_REL_ZH})(?:[，,].*)?", _F, "has_relative",
          "用户有{obj}。", 0.85, 0.7),
    _rule(rf"我(?:的|家的?|们家的?)(?P<animal>{_ANIMAL_ZH})(?:的名字)?叫(?P<obj>[^，,]+)(?:[，,].*)?",
          _F, "has_pet", "用户有一只{animal}，叫{obj}。", 0.9, 0.7),
    _rule(r"(?:我们家|我家|我)(?:有|养了)(?:两|三|几)只(?P<animal>[^，,]+?)[，,](?:一只|一个|大的|老大)叫"
          r"(?P<obj>[^，,]+)[，,](?:一只|另一只|一个|小的|老二)叫(?P<obj2>[^，,]+)", _F, "has_pet",
          "用户有一只{animal}，叫{obj}。", 0.9, 0.7, also=(("has_pet", "{obj2}", "obj2"),)),
    # Chinese: work, home, trips, tools, habits, goals, languages, age
    _rule(rf"我(?:现在|目前)?在[^，,]*一(?:家|个|所)[^，,]*?(?:做|当|担任)(?P<obj>{_ROLE_ZH})",
          _P, "role", "用户是{obj}。", 0.85, 0.8),
    _rule(rf"我(?:现在|目前|一直)?在(?P<obj>[^，,]+?)(?:做|当|担任)(?P<role>{_ROLE_ZH})",
          _P, "works_at", "用户在{obj}工作，是{role}。", 0.85, 0.7, reject=r"家|这|那",
          also=(("role", "{role}", "role"),)),
    _rule(rf"我(?:现在|目前|一直|主要)?(?:做|当|担任)(?P<obj>{_ROLE_ZH})(?:[，,].*)?",
          _P, "role", "用户是{obj}。", 0.85, 0.8),
    _rule(r"我(?:现在|目前|已经)?在(?P<obj>[^，,]+?)(?:定居|安家|落户|生活)了?(?:[，,].*)?",
          _P, "lives_in", "用户住在{obj}。", 0.85, 0.7, reject=r"这|那"),
    _rule(rf"我们?(?:{_TIME_ZH}|已经|终于)*搬(?:进|到)了?新(?:家|房子?)[，,]?(?:在|位于)(?P<obj>[^，,]+)",
          _P, "lives_in", "用户住在{obj}。", 0.85, 0.7),
    _rule(r"我(?:家|们家)(?:现在)?在(?P<obj>[^，,]+?)(?:[，,].*)?",
          _P, "lives_in", "用户住在{obj}。",
          0.85, 0.7, reject=r".*(?:楼|层|号|附近|旁边|对面)|这|那"),
    _rule(rf"我们?(?:组|团队|公司)?(?:最近|现在|已经|都|也|开始)*(?:改用|换用|转用|开始用|开始使用"
          rf"|用上了)(?P<obj>{_LATIN}|[^，,]+)[^，,]*", _F, "uses", "用户改用{obj}。", 0.85, 0.5),
    _rule(rf"我(?:平时|一般|主要|都|一直|现在|目前|习惯)*(?:用|使用)(?P<obj>{_LATIN})来?(?:写|做|记|管理"
          r"|开发|处理|画|剪|办公|编程|听|看|打|玩|上网|编辑|学习|工作)[^，,]*", _F, "uses",
          "用户用{obj}。", 0.85, 0.5),
    _rule(rf"我(?:平时|一般|主要|都|一直|现在|目前)*写(?P<obj>{_LATIN})(?:代码|程序)?", _F, "uses",
          "用户写{obj}。", 0.85, 0.5),
    _rule(rf"(?:[^，,]*的话[，,]?)?我(?:比较|更|还是|一般)*(?:喜欢|偏好|习惯)用(?P<obj>{_LATIN})",
          _R, "prefers", "用户更喜欢用{obj}。", 0.85, 0.6),
    _rule(rf"我(?:平时|平常|周末|每天|每周|每个周末|经常|常常|一有空就|有空就|业余时间|没事就?|下班后"
          rf"|早上|晚上)+(?:都|会|就|喜欢|爱)*去?(?P<obj>{_ACT_ZH})[^，,]*(?:[，,].*)?",
          _R, "likes",
          "用户喜欢{obj}。", 0.85, 0.6),
    _rule(r"我(?:的)?(?:母语是|会说|会讲|能说|能讲)(?:一口|一点|一些|点)?(?:流利的)?(?P<obj>[\u4e00-\u9fff]{1,4}?"
          r"(?:语|话|文))(?:(?:和|、|还有)(?P<obj2>[\u4e00-\u9fff]{1,4}?(?:语|话|文)))?[^，,]*",
          _F, "speaks", "用户会说{obj}。", 0.85, 0.6, also=(("speaks", "{obj2}", "obj2"),)),
    _rule(r"我(?:在|正在)?(?:准备|备考|备战)(?P<obj>[^，,]*?(?:考试|考研|考|试|赛|马拉松|雅思|托福|GRE"
          r"|GMAT|CPA|证))(?:[，,].*)?", _F, "has_goal", "用户在准备{obj}。", 0.85, 0.6),
    _rule(r"我的(?:目标|梦想)是(?P<obj>[^，,]+)(?:[，,].*)?", _F, "has_goal", "用户的目标是{obj}。",
          0.85, 0.6),
    _rule(r"我(?:今年|已经|都|刚满|满)*(?P<obj>[\d一二三四五六七八九十]{1,3})岁了?(?:[，,].*)?",
          _P, "age", "用户{obj}岁。", 0.85, 0.6),
    _rule(r"(?P<obj>[^，,]+?)(?:是|才是)我的?最爱(?:的[^，,]*)?",
          _R, "favourite", "用户最喜欢{obj}。",
          0.85, 0.7, reject=r"(?:这|那|它|你)"),
    _rule(r"我(?:很|也|都)?(?:爱|喜欢)所有的?(?P<cats>[^，,]+?)[，,]?(?:但|不过|但是)(?P<obj>[^，,]+?)"
          r"(?:是|才是)我的?最(?:爱|喜欢的)",
          _R, "favourite", "用户最喜欢的{cats}是{obj}。", 0.9, 0.7),
    _rule(r"我(?:开的是|开着)(?:一辆)?(?P<obj>[^，,]+)", _F, "drives", "用户开{obj}。", 0.85, 0.5),
    _rule(r"所有的?(?P<cats>.+?)我都(?:喜欢|爱)[，,]?(?:但|不过)(?P<obj>.+?)是我(?:的)?最(?:爱|喜欢的)",
          _R, "favourite", "用户最喜欢的{cats}是{obj}。", 0.9, 0.7),
    _rule(r"(?P<cats>[^，,]+?)我都(?:爱吃|喜欢|爱)[，,]?(?:但|不过)?(?:我)?最(?:喜欢|爱)的(?:还是|是|就是)"
          r"(?P<obj>.+)",
          _R, "favourite", "用户最喜欢的{cats}是{obj}。", 0.9, 0.7),
    _rule(r"我最喜欢的(?P<cat>.+?)是(?P<obj>.+)", _R, "favourite", "用户最喜欢的{cat}是{obj}。",
          0.9, 0.7),
    _rule(r"我们?(?:上周末?|上个月|最近|刚刚?|终于|已经|去年)*(?:从(?P<old>[^，,]+?))?(?:搬到|搬去"
          r"|搬家到)了?(?P<obj>[^，,]+)(?:[，,].*)?",
          _P, "lives_in", "用户住在{obj}。", 0.9, 0.7, reject=r"新家|新房子|公司"),
    _rule(r"我在(?P<obj>[^，,]+?)住了.*", _P, "lives_in", "用户住在{obj}。", 0.85, 0.7),
    _rule(rf"我(?:刚刚?|最近|已经|正式)*(?:入职了?|加入了|跳槽到了?)(?P<obj>(?:一[家个所][^，,]*?"
          r"[，,]?(?:叫|名叫|叫做))?[^，,]+?)了?"
          rf"(?:[，,](?:做|当|担任)(?P<role>{_ROLE_ZH}))?(?:[，,].*)?",
          _P, "works_at", "用户在{obj}工作。", 0.9, 0.7, also=(("role", "{role}", "role"),)),
    _rule(r"我离开了(?P<old>.+?)[，,](?:加入了|入职了|去了)(?P<obj>.+)",
          _P, "works_at", "用户在{obj}工作。", 0.9, 0.7),
    _rule(r"我在(?P<obj>[^，,]+?)(?:上班|工作)[，,](?:是(?:一名|一个|一位)?|做)(?P<role>.+)",
          _P, "works_at", "用户在{obj}工作，是{role}。", 0.9, 0.7,
          also=(("role", "{role}", "role"),)),
    _rule(r".*?我(?:就|一直|现在|目前)*在(?P<obj>[^，,]+?)(?:上班|工作|任职|实习)(?:了[^，,]*)?(?:[，,].*)?",
          _P, "works_at", "用户在{obj}工作。", 0.85, 0.7, reject=r".*(?:想|考虑|找|换|要不要)|家$"),
    _rule(r"(?:原来)?我对(?P<obj>[^，,]+?)过敏(?:[，,].*)?", _F, "allergic_to", "用户对{obj}过敏。",
          0.9, 0.8),
    _rule(r".*?我(?:被)?(?:诊断出|确诊了?)(?:有|患有|得了)?(?P<obj>[^，,]+)(?:[，,].*)?",
          _F, "has_condition", "用户患有{obj}。", 0.9, 0.8),
    _rule(r"我(?:从小就?|一直)?(?:有|患有|得了)(?P<obj>(?:轻度|重度|慢性)?(?:哮喘|糖尿病|高血压|抑郁症|焦虑症"
          r"|鼻炎|偏头痛|胃病|湿疹|失眠|心脏病|乳糖不耐受))(?:[，,].*)?", _F, "has_condition",
          "用户患有{obj}。", 0.9, 0.8),
    _rule(r"我.{0,4}(?:领养|收养|养|买)了一[只条头匹](?P<animal>.+?)[，,]?(?:叫|名叫|名字叫)(?P<obj>[^，,]+)"
          r"(?:[，,].*)?", _F, "has_pet", "用户有一只{animal}，叫{obj}。", 0.9, 0.7),
    _rule(r"(?:我们家|我家|我)(?:有|养了)(?:一|两|三)?[只条](?P<animal>.+?)(?:叫|名叫)"
          r"(?P<obj>[^，,]+)(?:[，,].*)?", _F, "has_pet", "用户有一只{animal}，叫{obj}。",
          0.9, 0.7),
    _rule(r"我养了(?:一|两|三|几)[只条](?P<obj>[^，,]+)(?:[，,].*)?", _F, "has_pet",
          "用户养了{obj}。", 0.85, 0.7),
    _rule(r"我的?(?P<rel>妹妹|姐姐|哥哥|弟弟|妈妈|爸爸|女儿|儿子|妻子|老婆|丈夫|老公|表妹|表哥)叫"
          r"(?P<obj>[\u4e00-\u9fff]{1,4})", _F, "has_relative", "用户的{rel}叫{obj}。", 0.9, 0.7),
    _rule(r"我的?(?P<rel>妹妹|姐姐|哥哥|弟弟|妈妈|爸爸|女儿|儿子|妻子|老婆|丈夫|老公|表妹|表哥)"
          r"(?P<obj>[\u4e00-\u9fff]{2,3}?)(?=这|下|明|最|要|会|来|在|是|今|上|过|每|也|都|刚|已).*",
          _F, "has_relative", "用户的{rel}叫{obj}。", 0.85, 0.7,
          reject=r"昨|今天|明天|前天|后天|去年|上周|上个|下周|下个|周末|每"),
    _rule(r"(?:今年|最近|这几个月|这学期)?我(?:这几个月|最近|一直|正在|开始)*(?:在)?学(?:习)?"
          r"(?P<obj>[^，,]+)(?:[，,].*)?", _F, "learns", "用户在学{obj}。", 0.85, 0.5,
          reject=r"校|生|会|到|了"),
    _rule(r"我(?:计划|打算|准备)(?P<when>[^，,]+?)去(?P<obj>[^，,]+?)(?:旅行|旅游|玩|出差)?",
          _F, "plans_trip_to", "用户计划{when}去{obj}。", 0.85, 0.6, reject=_NOT_A_TRIP_ZH),
    _rule(r"我(?P<when>下个?月|下周|明年|[一二三四五六七八九十]+月份?|[0-9]+月份?)要?去(?P<obj>[^，,]+?)"
          r"(?:旅行|旅游|出差|玩.*)?", _F, "plans_trip_to", "用户{when}去{obj}。", 0.85, 0.6),
    _rule(rf"(?=.*?(?:{_FUT_ZH}|计划|打算|准备))(?P<w1>(?:{_TIME_ZH})*)(?:我们?)?"
          rf"(?P<w2>(?:{_TIME_ZH})*)(?:要|会|将|就|准备|计划|打算|想)*(?P<w3>(?:{_TIME_ZH})*)"
          rf"(?:带[^，,]{{1,6}}?)?(?:飞|飞去|去(?!年)|到|回)(?!了)(?P<obj>{_PLACE_ZH}){_TRIP_TAIL_ZH}",
          _F, "plans_trip_to", "用户计划{w1}{w2}{w3}去{obj}。", 0.85, 0.6,
          reject=_NOT_A_TRIP_ZH),
    _rule(r"我(?:们)?(?P<what>.*?)从(?P<old>.+?)(?:换成|换到|切换到|迁移到)了?(?P<obj>.+)",
          _F, "uses", "用户{what}改用{obj}（之前用{old}）。", 0.9, 0.6, "{obj}"),
    _rule(r"我把(?P<old>.+?)卖了[，,]买了一辆(?P<obj>.+)", _F, "drives", "用户开{obj}。",
          0.85, 0.5),
    _rule(r"我(?:开的是|开着|刚换了|换了|刚买了|买了)一辆(?P<obj>[^，,]+)", _F, "drives",
          "用户开{obj}。", 0.85, 0.5),
    _rule(r"(?:请)?(?:回答|回复)(?:的时候)?(?:请)?(?:尽量)?(?P<obj>简洁|简短|详细|简单)(?:一[点些])?.*",
          _I, "answer_style", "用户希望回答{obj}。", 0.85, 0.9),
    _rule(r"(?:线上|生产)(?:服务器|环境|机器)(?:现在|目前|都)*(?:跑在|运行在|部署在|用的是)(?P<obj>.+?)上?",
          _F, "production_environment", "用户的生产环境是{obj}。", 0.9, 0.8),
    _rule(r"我们(?:组|团队|公司)(?:最近|现在|已经)*(?:开始)?(?:用|使用)(?P<obj>[^，,了]+)了?",
          _F, "uses", "用户的团队使用{obj}。", 0.85, 0.5),
    _rule(r"帮我记住[:：,，\s]*(?P<obj>.+)", _I, "remembers", "{obj}。", 0.95, 0.9),
    # Chinese: general
    _rule(r"我(?:其实|现在|目前)?是(?:一[个名位]|个|名)?(?P<obj>.+)", _P, "role", "用户是{obj}。",
          0.9, 0.8, reject=r"说|不|在|从|想|觉得|问|指|因为|为了|来|去|真的|刚|要|会|有|被|对"
          r"|怎么|什么|否"),
    _rule(r"(?:我叫|我的名字(?:是|叫))(?!了|你|他|她)(?P<obj>.+)", _P, "name", "用户叫{obj}。",
          0.95, 0.8),
    _rule(r"我(?:现在|目前)?住在(?P<obj>.+)", _P, "lives_in", "用户住在{obj}。", 0.9, 0.7),
    _rule(r"我(?:很|非常|特别|最|比较|一直|真的|也)*(?:关心|在意|在乎|重视|看重)(?P<obj>.+)",
          _R, "cares_about", "用户关心{obj}。", 0.9, 0.6),
    _rule(r"我(?:现在|目前)?在(?P<obj>.+?)(?:上班|工作|任职)", _P, "works_at", "用户在{obj}工作。",
          0.9, 0.7, reject=r".*(?:想|考虑|找|换|要不要)|家$"),
    _rule(r"我(?:很|非常|特别|真的|最|也)*(?:不喜欢|不爱|讨厌|受不了)(?P<obj>.+)",
          _R, "dislikes", "用户不喜欢{obj}。", 0.9, 0.6),
    _rule(r"我(?:还是|一般|通常)?(?:更喜欢|更偏好|偏好|偏爱|更倾向于|倾向于)(?P<obj>.+)",
          _R, "prefers", "用户更喜欢{obj}。", 0.9, 0.6),
    _rule(r"我(?:很|非常|特别|真的|也|还|比较|最|挺|超级|超|好|蛮|贼|巨|可)*(?:喜欢|热爱|爱)"
          r"(?P<obj>.+)",
          _R, "likes", "用户喜欢{obj}。", 0.9, 0.6, reject=r"这个季节|这个时候|你|这|那"),
    _rule(r"(?:我们)?(?:已经|刚刚?)?把?(?:我们)?的?生产(?:环境|服务器|机器)(?:现在|目前|已经|都)*"
          r"(?:用的是|跑在|运行在|部署在|(?:迁移|迁|换|切换|升级|搬)(?:到|成)了?|是|用|在)(?P<obj>.+?)上?",
          _F, "production_environment", "用户的生产环境是{obj}。", 0.9, 0.8,
          reject=r"不|没|挂|出问题"),
    _rule(r"我们(?:团队|公司)?(?:现在|目前|主要|一直|都|也|还)*(?:在用|使用|用的是|用)(?!了)(?P<obj>.+)",
          _F, "uses", "用户的团队使用{obj}。", 0.85, 0.5),
    _rule(rf"(?=.*(?:请|以后|今后|总是|始终|一直|都))(?:以后|今后|之后|请|都|总是|始终|一直)*"
          rf"(?:用|使用)(?P<obj>{_LANGS})来?(?:回答|回复|回我|交流|跟我说话?|和我说话?)我?",
          _I, "reply_language", "用户希望用{obj}回答。", 0.95, 0.9),
    _rule(r"(?:请|你)?(?:要|一定要|务必)?记住[:：,，\s]*(?P<obj>.+)", _I, "remembers", "{obj}。",
          0.95, 0.9),
)

_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
_JOKE = re.compile(r"\b(?:ha(?:ha)+|he(?:he)+|lol|lmao|rofl|jk|kidding)\b|开玩笑|😂|🤣", re.I)
_LAUGH = re.compile(r"^哈哈")  # a sentence that opens laughing is not meant ("哈哈，我是猫")
_LAUGH_AFTER = re.compile(r"[，,]?\s*哈{2,}[。！!~]*$")
_HYPOTHETICAL = re.compile(r"\b(?:if I (?:were|was)|imagine|what if|suppos(?:e|ing)|pretend"
                           r"|hypothetically|let's say)\b|假如|如果我|要是我|假设"
                           r"|(?<!比)想象(?!中)", re.I)
_HEDGE = re.compile(r"\b(?:maybe|might|perhaps|probably|possibly|I think|I guess|I believe"
                    r"|not (?:\w+ )?sure|kind of|sort of|may be)\b"
                    r"|(?<![你您])可能(?!不信)|也许|大概(?![\s\d一二三四五六七八九十两几半百千万])|或许"
                    r"|好像|我觉得|我猜|不确定", re.I)
_HEDGE_WORDS = re.compile(r"\b(?:I think|I guess|I believe|maybe|perhaps|probably|possibly"
                          r"|(?:I'm |I am )?not (?:\w+ )?sure(?: if| whether| but| that)?"
                          r"|kind of|sort of)\b,?\s*|\bmight (?!be\b)|我觉得|我猜|可能|也许"
                          r"|大概|或许|好像", re.I)
_QUESTION = re.compile(r"(?:what|how|why|when|where|who|which|do you|does|did you|can you"
                       r"|could you|would you|will you|are you|is there|is it|should I|can I)\b"
                       r"|什么|怎么|为什么|为何|你能|你可以|能不能|可不可以|请问|是不是", re.I)
_PREFIX_WORDS = (r"^(?:(?:hi|hello|hey|ok(?:ay)?|so|well|oh|also|and|but|actually|btw"
                 r"|by the way|fyi|anyway|honestly|basically|yeah|yes|quick update|update"
                 r"|yep|yup|yea|wow|cool|nice|awesome|haha|lol|omg"
                 r"|since (?:we (?:last )?(?:spoke|talked|chatted)|speaking|talking)(?: last)?"
                 # the one spoken to, named first: "Andrew, since we last spoke I got …"
                 r"|(?!(?:lately|recently|yesterday|today|tonight|now|then|later|earlier"
                 r"|tomorrow|sometimes|usually|finally|luckily|sadly|unfortunately)\b)"
                 r"(?-i:[A-Z][a-z]+)(?=,\s*(?:I|my|since|last|yesterday|we)\b)"
                 r"|just so you know|for the record|for context|ps|guess what"
                 r"|(?:big |good |great |some )?news)\b[\s,:!.\-—]*"
                 r"|(?:另外|而且|并且|还有|对了|顺便说一下|顺便|其实|嗯|哦|但是|不过|所以|同时{now}"
                 r"|告诉你个好消息|好消息|跟你说|说实话|老实说|讲真|说真的)"
                 r"[\s,，:：]*)+")
_PREFIX = re.compile(_PREFIX_WORDS.format(now="|现在|目前"), re.I)
# a sentence keeps its 现在 (a clause does not): "现在所有笔记都放X里了" states a change
_SENTENCE_PREFIX = re.compile(_PREFIX_WORDS.format(now=""), re.I)
# a title's or a Latin abbreviation's full stop ends no sentence ("from Dr. Patel", "e.g. yoga"):
# it cut a memory to "… prescribed antibiotics by their primary care physician, Dr."
_ABBREVIATIONS = "".join(rf"(?<!\b{a}\.)" for a in (
    "Dr", "Mr", "Mrs", "Ms", "Mx", "St", "Mt", "Prof", "Sr", "Jr", "vs", "e\\.g", "i\\.e",
    "approx"))
_SENTENCES = re.compile(rf"(?<=[!?;。！？；\n…])|(?<=\.){_ABBREVIATIONS}(?=\s)")
_CLAUSES = re.compile(r",?\s+(?:and|but|plus)\s+(?=(?:I|we)\b)|,?\s+and\s+(?=(?:work|live|use"
                      r"|speak|drive|have|own|teach|study)\b)|[，,](?=现在|目前|如今|平时|平常|每天"
                      r"|每周|经常|(?:还|又|也)?(?:昨天|前天|今天|上周|上个?月|上个?星期|去年|前年"
                      r"|明天|后天|下周|下个?月|下个?星期|明年"
                      r"|周末|上周末|[一二两三四五六七八九十\d]+(?:天|个月|年)前)(?!的))|(?<!remember)(?<!note),\s*"
                      r"(?=(?:I|we)\b|my (?:\w+ )?(?:son|daughter|kids?|husband|wife|partner|mom"
                      r"|dad|mother|father|parents|brother|sister|family)\b)"
                      r"|(?<!记住)[，,](?=\s*(?:(?:而且|并且|另外|但是|不过|同时"
                      r"|还有|所以)\s*)?(?:我|请|记住|以后|生产环境))", re.I)
_REQUEST = re.compile(r"^(?:can|could|would|will) you (?:please )?(?=.*\b(?:from now on|always"
                      r"|going forward|in (?:the )?future)\b)(.*?)\?*$", re.I)
_TAG_QUESTION = re.compile(r"[,，][^,，]*[?？]$|\s[-–—]\s.*[?？]$")  # "…, any tips?", "… - you?"
# a Chinese sentence's last clause that asks the listener, after its question mark went
_ZH_ASKING = re.compile(r"[,，][^,，]*(?:吗|呢|啥|什么|怎么|哪|如何|是不是|要不要|能不能|有没有"
                        r"|值不值"
                        r"|推荐|求|你觉得|你说|帮我|请问|咋)[^,，]*$")
_EMOJI = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]+")
_SUBJECTLESS = re.compile(r"^((?:just |finally |recently )?(?:moved|relocated|started|joined"
                          r"|switched|learning|adopted|booked|got|bought|quit|left)\b)", re.I)
# a diary's sentence without "I" that no slot rule reads (the verbs above are the slots'; read
# by the self-statement reader too, "Got hired at …" would be told twice)
_DIARY_VERB = re.compile(r"^((?:just |finally |recently |also )?(?:met with|checked out|visited"
                         r"|attended|finished|used to|went|tried|took|spent|played|watched"
                         r"|had an?)\b)", re.I)
_GERUND_SUBJECT = re.compile(r"^\w+ing\b[^,.!?]*\b(?:is|are|was|were|can|helps?|makes?|keeps?"
                             r"|sounds?|seems?|looks?|feels?)\b")
_SHARED_SUBJECT = re.compile(r"(?:work|live|use|love|like|prefer|speak|drive|play|have|own|teach"
                             r"|study)\b|(?:现在|目前|如今|平时|平常|每天|每周|经常)")
_OTHER_SUBJECT = re.compile(rf"我的?(?:朋友|同事|同学|室友|邻居|老板|领导|{_REL_ZH})")
_CALLED = {False: re.compile(r"^(?:a|an|the) (?:[\w-]+ ){1,3}?(?:called|named) ", re.I),
           True: re.compile(r"^一(?:家|个|所)[^，,]*?[，,]?(?:叫|名叫|叫做)")}
_ZH_PARTICLES = re.compile(r"[了啦呢吧哦啊呀嘛]+$")
_CUT = {False: re.compile(r",?\s+(?:because|since|so that|but|although|though|which"
                          r"|instead of|rather than|after)\b.*", re.I),
        True: re.compile(r"(?:因为|所以|但是|不过|，但).*")}
_TAIL = {False: re.compile(r"(?:\s*,)?\s+(?:(?:right )?now|these days|nowadays|currently|at the"
                           r" moment|lately|recently|(?:last|this) (?:week|month|year)|yesterday"
                           r"|today|as well|too|also|a lot|(?:very|so) much|please|from now on"
                           r"|(?:last|this|next) weekend|on (?:monday|tuesday|wednesday|thursday"
                           r"|friday|saturday|sunday)|a few (?:days|weeks|months) ago"
                           r"|going forward|anymore|for now)$", re.I),
         True: re.compile(r"(?:了|现在|目前|啦|呢|吧|哦|啊|呀|嘛)$")}
_LEAD = {False: re.compile(r"^(?:now|currently|also|still)\s+", re.I),
         True: re.compile(r"^(?:了|现在|目前|已经|都)")}
_JUNK = re.compile(r"it|that|this|them|these|those|one|so|too|much|me|him|her|here|there"
                   r"|(?:you|your)\b.*|它|这个|那个|这|那|(?:你|您).*", re.I)
# an object that only points at something said before ("I love them for that", "I love this
# genre"): without the turns around it, no memory (LoCoMo: "Audrey likes them for that.")
_POINTING = re.compile(r"(?:it|that|this|these|those|them|they|one|ones|him|her)\b", re.I)
# ... or holds a word that does, or is about the one spoken to ("likes how you find
# inspiration", "likes making him happy", "likes their design" said of cars), or ends on one
# ("likes the way the sunlight hits this", of a photo)
_POINTS_BACK = re.compile(r"\b(?:you|your|yours|it|its|they|them|their|these|those|him|her|he"
                          r"|she)\b|\b(?:this|that)\W*$", re.I)
_STRIP = " \t\n.,!?;:。！？；，、~…\"'“”‘’"
_EXPAND = (("I'm ", "I am "), ("I've ", "I have "), ("I'll ", "I will "), ("I'd ", "I would "),
           ("don't ", "do not "), ("can't ", "cannot "))
_LEAD_I = re.compile(r"I((?: (?:always|never|usually|often|also|really|just|still))*) ([a-z]+)"
                     r"\b(.*)", re.S)
def _third_person(text: str, *, zh: bool, lead: bool) -> str:
    """First person to third: "I'm allergic to my cat" → "The user is allergic to their cat"."""
    if zh:
        return re.sub(r"(?<!自)我", "用户", text.replace("我们", "用户团队"))
    if lead:
        for short, long in _EXPAND:
            text = text.replace(short, long) if text.startswith("I") else text
        if m := _LEAD_I.match(text):
            text = f"The user{m[1]} {rules_en.conjugate(m[2])}{m[3]}"
        elif text[:3].lower() == "my ":
            text = "The user's " + text[3:]
    return rules_en.third_person(text)


def _article(word: str) -> str:
    return "an" if re.match(r"[aeio]|u(?!s|ni|x|r[aeiou])", word, re.I) else "a"


def _clean(obj: str, zh: bool, *, whole: bool = False) -> str:
    """The object without its tail ("…, because …", "…了"); ``whole`` keeps "，…" (Chinese)."""
    obj = _CALLED[zh].sub("", _CUT[zh].sub("", obj))
    if zh and not whole:
        obj = obj.split("，")[0].split(",")[0]
    previous = None
    while previous != obj:
        previous = obj
        obj = _LEAD[zh].sub("", _TAIL[zh].sub("", obj.strip(_STRIP)))
    return obj


def _is_question(sentence: str) -> bool:
    return (sentence.endswith(("?", "？")) or bool(_QUESTION.match(sentence))
            or sentence.rstrip(_STRIP).endswith("吗"))


def _statements(text: str) -> Iterator[tuple[str, bool, str]]:
    """(clause, hedged, sentence) of one turn's text that may state something about the user,
    with the whole sentence it is part of (a Chinese change may span its clauses:
    "以前X，现在Y")."""
    text = re.sub(r"[ \t\u3000]+", " ", text.replace("’", "'").replace("‘", "'"))
    if "🙃" in text:  # said the other way round ("我最喜欢加班了🙃")
        return
    if _CJK.search(text):  # in Chinese chat an emoji is tone, where a sentence ends
        text = _EMOJI.sub("。", text)
    if _JOKE.search(text):
        return
    for raw in _SENTENCES.split(text):
        sentence = _REQUEST.sub(r"\1", _SENTENCE_PREFIX.sub("", raw.strip(), count=1), count=1)
        if _is_question(sentence):  # "I'm off to Oslo next week, any tips?": keep the statement
            # a Chinese question may go without its mark: "…用的Memcached，有啥坑要注意吗"
            sentence = (_TAG_QUESTION.sub("", sentence) if _TAG_QUESTION.search(sentence)
                        else sentence if _CJK.search(sentence) else "")
            while _CJK.search(sentence) and _ZH_ASKING.search(sentence):
                sentence = _ZH_ASKING.sub("", sentence)  # "…，你觉得呢，有啥建议"
        sentence = _LAUGH_AFTER.sub("", sentence)  # "…，加班更多了哈哈": said, then laughed
        if (not sentence or _is_question(sentence) or _HYPOTHETICAL.search(sentence)
                or _LAUGH.search(sentence)):
            continue
        hedged = bool(_HEDGE.search(sentence))
        if not _GERUND_SUBJECT.search(sentence):  # "Learning from X is important": no diary
            sentence = _SUBJECTLESS.sub(r"I \1", sentence, count=1)  # "Moved to Oslo."
            sentence = _DIARY_VERB.sub(  # "Met with the team": the self-statement reader's
                lambda m: f"I {m[1].lower()}", sentence, count=1)
        subject = ""
        for part in _glued(_CLAUSES.split(sentence.rstrip(_STRIP))):
            shared = subject and _SHARED_SUBJECT.match(part.strip())
            clause = _PREFIX.sub("", _HEDGE_WORDS.sub("", part).strip(), count=1)
            clause = _ZH_PARTICLES.sub("", clause.rstrip(_STRIP)).strip()
            if shared:  # "I live in Oslo and work at X", "我已经离职了，现在在X上班"
                clause = subject + clause
            elif not subject:  # the first clause's subject, if it is the user
                subject = "" if _OTHER_SUBJECT.match(clause) else (
                    "I " if re.match(r"I\b", clause) else "我" if clause.startswith("我") else "")
            if clause := rules_en.time_last(clause):
                yield clause, hedged, sentence


_ONLY_TIME = re.compile(rf"(?:and |but |so )?{rules_en.TIME}", re.I)


def _glued(parts: Sequence[str]) -> list[str]:
    """A clause that is only a time ("Last Friday, I finished …" cut at the comma) goes with
    the next one."""
    out: list[str] = []
    carry = ""
    for part in parts:
        if _ONLY_TIME.fullmatch(part.strip()):
            carry = f"{carry}{part.strip()} "
            continue
        out.append(f"{carry}{part.strip()}" if carry else part)
        carry = ""
    return out + ([carry.strip()] if carry else [])


_LOWER = {"adv", "animal", "rel", "cat", "cats"}  # groups used as common nouns


def _apply(rule: Rule, clause: str, turn: Turn, hedged: bool) -> CandidateMemory | None:
    match = rule.pattern.fullmatch(clause)
    if not match:
        return None
    zh = bool(_CJK.search(rule.template))
    obj = _clean(match["obj"], zh, whole=rule.predicate == "remembers")
    if (not obj or len(obj) > MAX_OBJECT_CHARS or _JUNK.fullmatch(obj)
            or (rule.reject is not None and rule.reject.match(obj))
            or (not zh and (_POINTING.match(obj) or (
                rule.kind is not Kind.INSTRUCTION
                and _POINTS_BACK.search(obj.split(",")[0]))))):
        return None
    obj = _third_person(obj, zh=zh, lead=rule.template.startswith("{Obj}"))
    values = {k: (v.lower() if k in _LOWER else v) if v else ""  # unmatched optional: ""
              for k, v in match.groupdict().items() if k != "obj"}
    values.update(obj=obj, Obj=obj[:1].upper() + obj[1:], a=_article(obj))
    target, content = rule.object_template.format(**values), rule.template.format(**values)
    content = re.sub(r" +(?=[ .])", "", content)  # an optional group left empty: no gap
    if len(content) < 3:
        return None
    triples = [(rule.predicate, target)] + [
        (predicate, template.format(**values).strip(_STRIP)) for predicate, template, needs
        in rule.also if values.get(needs)]
    if turn.speaker and rule.kind == Kind.INSTRUCTION:
        return None  # how the assistant behaves is for its own user to say
    return _candidate(turn, rule.kind, triples, content, rule.confidence, rule.importance,
                      hedged=hedged, zh=zh, old=_clean(match.groupdict().get("old") or "", zh))


def _candidate(turn: Turn, kind: Kind, triples: Sequence[tuple[str, str]], content: str,
               confidence: float, importance: float, *, hedged: bool, zh: bool,
               old: str | None) -> CandidateMemory:
    """The memory a rule proposes: about the user, or about the named speaker in their name;
    ``old``, the value a change ends ("switched from {old}"), is what it replaces."""
    subject = "user"
    if zh:  # "用户计划下个月去日本" said in March 2026: "…2026年4月…"
        content = rules_zh_self.resolve_dates(content, turn.timestamp)
    if turn.speaker:  # a named person: the memory is about them, in their name
        subject, content = turn.speaker, _about(content, turn.speaker, zh=zh)
    predicate, target = triples[0]
    replaces = [Triple(subject=subject, predicate=predicate, object=old)] if (
        old and len(old) <= MAX_OBJECT_CHARS and old.casefold() != target.casefold()
        and not _JUNK.fullmatch(old)) else []
    return CandidateMemory(
        content=content, kind=kind, importance=importance,
        confidence=min(confidence, HEDGED_CONFIDENCE) if hedged else confidence,
        entities=[o for _, o in triples],
        triples=[Triple(subject=subject, predicate=p, object=o) for p, o in triples],
        replaces=replaces, source_turn_ids=[turn.turn_id], valid_at=turn.timestamp)


def _read_self(clause: str, turn: Turn, hedged: bool, sentence: str = ""
               ) -> list[CandidateMemory]:
    """What a person says they did, do, own, love or plan (:mod:`memq.pipeline.rules_en`,
    :mod:`memq.pipeline.rules_zh_self`), when no fixed rule took the clause. A Chinese
    clause gets back the 了 that ended it in the sentence ("我上周辞职了": done, not a plan)."""
    zh = bool(_CJK.search(clause))
    if zh and not clause.endswith("了") and re.search(f"{re.escape(clause)}[了啦]", sentence):
        clause = f"{clause}了"
    st = (rules_zh_self if zh else rules_en).read(clause, turn.timestamp)
    if st is None:
        return []
    return [_candidate(turn, st.kind, [(st.predicate, st.object)], st.content, 0.75, 0.5,
                       hedged=hedged, zh=zh, old=None)]


def _read_zh(clause: str, turn: Turn, hedged: bool, *, changes: bool,
             plain_only: bool = False, sentence: str | None = None) -> list[CandidateMemory]:
    """The slot statements :func:`memq.pipeline.rules_zh.read` finds in a Chinese clause: its
    changes only (``changes``: of a whole sentence, before the fixed rules, which take many
    a change for a plain use), or its plain statements too (after the rules found nothing);
    ``plain_only``: no change at all (a clause of a sentence that only plans one)."""
    if not _CJK.search(clause):
        return []
    return [_candidate(turn, st.kind, [(st.predicate, st.value)],
                       st.template.format(obj=st.value).rstrip("。")
                       + (f"（之前是{st.old}）。" if st.old else "。"), 0.9, 0.7,
                       hedged=hedged and (not changes or _hedged_at(clause, st.value)),
                       zh=True, old=st.old)
            for st in rules_zh.read(clause, sentence)
            if (st.change or not changes) and not (st.change and plain_only)]


def _hedged_at(sentence: str, value: str) -> bool:
    """Whether the clause that states the value is hedged ("线下可能约不了了，我上个月…去了武汉":
    the doubt is about meeting, not about the move)."""
    clause = next((c for c in re.split(r"[，,；;]", sentence) if value in c), sentence)
    return bool(_HEDGE.search(clause))


def _about(content: str, name: str, *, zh: bool) -> str:
    """"The user's team uses X." -> "Maria's team uses X."; "用户住在X。" -> "李娜住在X。"."""
    if zh:
        return content.replace("用户团队", f"{name}的团队").replace("用户", name)
    return re.sub(r"\b[Tt]he user\b", name, content)


# a tool used beside another, not instead of it: "也用", "还在用", "同时用"
_ALSO = re.compile(r"也(?:在|开始)?用|还(?:在)?用|同时|另外|以及|两个都|都在用|搭配|配合")


def _with_job(c: CandidateMemory, clause: str, sentence: str, *, change: bool
              ) -> CandidateMemory:
    """A used tool's job as a second, single-valued triple (``uses_<job>``,
    :mod:`memq.pipeline.tools`), so the next tool for the same job ends it; a change also
    ends the other tools for that job its sentence names ("Jira 太贵了，改用飞书项目"), and takes
    the job of the tool it replaces when its own is unknown. Where production runs carries its
    cloud's, OS's or platform's job (a move of the game servers to another cloud ends it).
    Chinese only; not for a tool used beside others ("MySQL 和 MongoDB都用", "也用X")."""
    t = c.triples[0]
    if t.predicate not in ("uses", "production_environment") or not _CJK.search(sentence):
        return c
    job = tools.job_of(t.object, clause, sentence) if t.predicate == "uses" else (
        tools.product_job(t.object))  # where production runs: its cloud, OS, platform
    if job is None and change:  # the job of the tool it replaces ("把 Presto 换成 Trino")
        job = next((j for r in c.replaces if (j := tools.product_job(r.object))), None)
    if job is None or (t.predicate != "uses" and job not in tools.INFRA):
        return c
    same = [name for _, name, j in tools.mentioned(sentence) if j == job]
    new = t.object.casefold().replace(" ", "")
    others = [n for n in same if not (n.casefold().replace(" ", "") in new
                                      or new in n.casefold().replace(" ", ""))]
    retired = [n for n in others if rules_zh.put_away(n, sentence)]
    if retired and not change and not _ALSO.search(clause):
        change, others = True, retired  # "我现在写代码都用VS Code了，Sublime基本吃灰"
    if not change and (others or _ALSO.search(clause)):
        return c
    triples = [*c.triples, Triple(subject=t.subject, predicate=tools.predicate(job),
                                  object=t.object)]
    gone = {r.object.casefold() for r in c.replaces}
    replaces = [*c.replaces, *(Triple(subject=t.subject, predicate="uses", object=n)
                               for n in dict.fromkeys(others) if n.casefold() not in gone)]
    return c.model_copy(update={"triples": triples, "replaces": replaces if change else
                                c.replaces})


def _merge(old: CandidateMemory, new: CandidateMemory) -> CandidateMemory:
    ids = old.source_turn_ids + [i for i in new.source_turn_ids if i not in old.source_turn_ids]
    first = old if old.valid_at <= new.valid_at else new  # a fact holds from its first mention
    # and was said again up to its last (CandidateMemory.said_at)
    last = max(c.said_at or c.valid_at for c in (old, new))
    return first.model_copy(update={"source_turn_ids": ids,
                                     "confidence": max(old.confidence, new.confidence),
                                     "said_at": last if last > first.valid_at else None})


def _framed(turn: Turn, others: Sequence[CandidateMemory] = ()) -> list[CandidateMemory]:
    """What the frames read in a turn (:mod:`memq.pipeline.frames`), one memory per slot: the
    last new value said, ending the old values named beside it; an end alone ("I quit
    Initech") when no new value is said. Its time sets when it holds from. In Chinese, a tool
    the clause reader already read is its (``others``: it reads what a change replaced)."""
    lang = "zh" if _CJK.search(turn.content) else "en"
    data = frames.load(lang)
    text = re.sub(r"[’‘]", "'", turn.content)
    if _KIDDING.search(text):
        return []
    readings = frames.read(text, turn.timestamp, lang)
    if lang == "zh":
        tools_read = {t.object.casefold() for c in others for t in c.triples
                      if t.predicate == "uses" or t.predicate.startswith("uses_")
                      or t.predicate == "production_environment"}
        readings = [r for r in readings if not (
            (r.slot.startswith("uses_") or r.slot == "production_environment")
            and (r.new or r.old or "").casefold() in tools_read)]
    subject = turn.speaker or "user"
    out = []
    for slot in dict.fromkeys(r.slot for r in readings):
        mine = [r for r in readings if r.slot == slot]
        news = [r for r in mine if r.new]
        lead = news[-1] if news else mine[-1]
        olds = [o for o in dict.fromkeys(r.old for r in mine if r.old) if not lead.new
                or o.casefold() != lead.new.casefold()]
        tool = slot.startswith("uses_")
        beside = tool and not olds and len({r.new.casefold() for r in news if r.new}) > 1
        if beside:  # "our stack is C# and we use C++ too": tools used side by side
            out += [_framed_tool(turn, data, r) for r in news if r.new]
            continue
        # a tool: "uses" and its job's slot (as the Chinese reader's, :func:`_with_job`)
        triples = (([("uses", lead.new)] if tool else []) + [(slot, lead.new)]
                   if lead.new else [("left", lead.old or "")])
        ends = [("uses", o) for o in olds if tool] + [(slot, o) for o in olds]
        span = lead.span or next((r.span for r in mine if r.span), None)
        valid_at = when.valid_from(span, turn.timestamp)
        said = [(lead, triples, ends)]
        if lead.role and lead.new:  # a job is two slots: the role ends on its own too
            said.append((frames.Reading("role", lead.role, None, None, lead.change),
                         [("role", lead.role)], []))
        for told, facts, gone in said:
            reading = replace(told, old=olds[0]) if (  # "(switched from …)"
                told is lead and olds and not told.old) else told
            content = frames.said(data, reading, at=lead.new if reading.slot != lead.slot
                                  else None)
            if turn.speaker:
                content = _about(content, turn.speaker, zh=lang == "zh")
            kind_name, importance = frames.kind_of(data, reading.slot)
            kind = Kind.EVENT if not reading.new else Kind(kind_name)
            out.append(CandidateMemory(
                content=content, kind=kind,
                confidence=HEDGED_CONFIDENCE if _hedged_about(text, reading) else 0.9,
                importance=importance,
                entities=list(dict.fromkeys(o for _, o in facts)),
                triples=[Triple(subject=subject, predicate=p, object=o) for p, o in facts],
                replaces=[Triple(subject=subject, predicate=p, object=o) for p, o in gone],
                source_turn_ids=[turn.turn_id], valid_at=valid_at,
                said_at=turn.timestamp if valid_at < turn.timestamp else None))
    return out


def _in_order(text: str, found: Sequence[CandidateMemory], framed: int
              ) -> list[CandidateMemory]:
    """A turn's memories in the order the turn says them, whichever reader read them: the
    frames' (the first ``framed``) by where their value is said, the others' in their own
    order (one whose value is not said as written goes where the one before it is)."""
    def at(c: CandidateMemory) -> int:
        return text.find(c.triples[0].object) if c.triples else -1

    keys: list[int] = [max(0, at(c)) for c in found[:framed]]
    last = 0
    for c in found[framed:]:
        last = max(last, at(c))
        keys.append(last)
    order = sorted(range(len(found)), key=lambda i: (keys[i], i >= framed, i))
    return [found[i] for i in order]


# laughter is tone in chat ("total carnivore these days haha"); these say it was not meant
_KIDDING = re.compile(r"\b(?:jk|j/k|kidding|just joking|joking)\b|🙃", re.I)


_CLAUSE_CUT = re.compile(r"[,;:]\s|\s(?:and|but|so|because)\s")


def _hedged_about(text: str, reading: frames.Reading) -> bool:
    """Whether the clause that names the value is hedged, or opens its sentence hedged ("I'm
    not sure but I live in Oslo"; not "we use Asana, it's fine I guess", nor "traded my
    Civic for a Model 3 and I'm kind of obsessed")."""
    value = reading.new or reading.old or ""
    for sentence in _SENTENCES.split(text):
        if value not in sentence:
            continue
        clauses = _CLAUSE_CUT.split(sentence)
        mine = next((c for c in clauses if value in c), sentence)
        opening = sentence[:sentence.find(value)]
        if _HEDGE.search(mine) or (_HEDGE.search(opening) and not _CLAUSE_CUT.search(
                opening.rstrip() + " ")):
            return True
        if re.search(r"\b(?:not sure|no idea|don't know)\b", opening, re.I):
            return True
    return False


def _framed_tool(turn: Turn, data: frames.Frames, r: frames.Reading) -> CandidateMemory:
    """A tool said beside another of its job: used, without ending the other."""
    subject = turn.speaker or "user"
    content = frames.said(data, replace(r, slot="uses"))
    if turn.speaker:
        content = _about(content, turn.speaker, zh=bool(_CJK.search(content)))
    return CandidateMemory(
        content=content, kind=Kind.FACT, confidence=0.9, importance=0.5,
        entities=[r.new or ""], triples=[Triple(subject=subject, predicate="uses",
                                                object=r.new or "")],
        source_turn_ids=[turn.turn_id], valid_at=turn.timestamp)


def _ends_joined(framed: Sequence[CandidateMemory], legacy: Sequence[CandidateMemory]
                 ) -> tuple[list[CandidateMemory], list[CandidateMemory]]:
    """A frame that read only an end ("钉钉已经卸了", "Jira is history") and another reader's
    new value of the same slot in the same turn ("公司改用飞书了") are one change: the new
    value, ending the old one."""
    kept, legacy = [], list(legacy)
    for f in framed:
        ends = [r for r in f.replaces if r.predicate != "uses"]
        slots = {r.predicate for r in ends}
        if f.triples[0].predicate != "left" or not slots:
            kept.append(f)
            continue
        new = next((i for i, c in enumerate(legacy) if any(
            t.predicate in slots and all(t.object.casefold() != r.object.casefold()
                                         for r in ends) for t in c.triples)), None)
        if new is None:
            kept.append(f)
            continue
        c = legacy[new]
        have = {(r.predicate, r.object.casefold()) for r in c.replaces}
        legacy[new] = c.model_copy(update={"replaces": [*c.replaces, *(
            r for r in f.replaces if (r.predicate, r.object.casefold()) not in have)]})
    return kept, legacy


def _job_named(c: CandidateMemory) -> CandidateMemory:
    """A tool's memory names the job it does ("The user uses VS Code as their editor.",
    "用户使用编辑器VS Code。"), so a question that asks for the job by its name meets it
    by its words, as a question about a home meets "lives in"."""
    job = next((t for t in c.triples if t.predicate.startswith("uses_")), None)
    if job is None or job.object not in c.content or any(
            t.predicate == "production_environment" for t in c.triples):  # it says so
        return c
    zh = bool(_CJK.search(c.content))
    name = tools.noun(job.predicate.removeprefix("uses_"), zh)
    if name is None or name.casefold() in c.content.casefold():
        return c
    named = f"{name}{job.object}" if zh else f"{job.object} as their {name}"
    return c.model_copy(update={"content": c.content.replace(job.object, named, 1)})


def _covered(c: CandidateMemory, framed: Sequence[CandidateMemory]) -> bool:
    """Whether another reader's memory says what a frame read in the same turn: a fact of one
    of its slots, or one naming one of its values ("The user left Deloitte last month...")."""
    slots = {t.predicate for f in framed for t in [*f.triples, *f.replaces]}
    slots |= {covered for lang in ("en", "zh") for slot in list(slots)
              for covered in frames.load(lang).slots.get(slot, {}).get("covers", [])}
    values = {t.object.casefold() for f in framed for t in [*f.triples, *f.replaces]}
    return any(t.predicate in slots or any(v in t.object.casefold() for v in values)
               for t in c.triples) or any(v in c.content.casefold() for v in values)


class RuleExtractor:
    """Regex rules over user turns; deterministic, offline, for when no LLM is configured."""

    name: str = "rules-1"
    prompt_version: str | None = None
    rules: tuple[Rule, ...] = RULES

    def extract(self, turns: Sequence[Turn]) -> list[CandidateMemory]:
        found: dict[tuple[str, str, str, str], CandidateMemory] = {}
        for turn in sorted(turns, key=lambda t: t.timestamp):  # ties: the given order
            if turn.role != "user":
                continue
            legacy: list[CandidateMemory] = []
            whole: dict[str, list[CandidateMemory]] = {}  # a sentence's change, read once
            for clause, hedged, sentence in _statements(turn.content):
                first = sentence not in whole
                if first:
                    whole[sentence] = _read_zh(sentence, turn, hedged, changes=True)
                if whole[sentence]:  # taken whole, with its first clause
                    candidates = whole[sentence] if first else []
                else:
                    candidates = self._from_clause(clause, turn, hedged, sentence)
                legacy += [_with_job(said, clause if not first else sentence, sentence,
                                     change=bool(whole[sentence])) for said in candidates]
            framed, legacy = _ends_joined(_framed(turn, legacy), legacy)
            # the frames read these slots in this turn: the other readers' take on them goes
            mine = framed + [c for c in legacy if not (framed and _covered(c, framed))]
            for candidate in _in_order(turn.content, mine, len(framed)):
                t = candidate.triples[0]
                key = (t.subject, candidate.kind.value, t.predicate, t.object.casefold())
                found[key] = _merge(found[key], candidate) if key in found else candidate
        # a workplace read twice is no team ("我在协和医院消化内科工作": works_at, not team too)
        workplaces = {(s, o) for s, _, p, o in found if p == "works_at"}
        return [_job_named(c) for (s, _, p, o), c in found.items()
                if not (p == "team" and (s, o) in workplaces)]

    def _from_clause(self, clause: str, turn: Turn, hedged: bool, sentence: str = ""
                     ) -> list[CandidateMemory]:
        """The first fixed rule's memory and any other slot the Chinese reader finds beside it;
        else the Chinese reader's plain statements; else what the speaker says of themselves."""
        candidate = next((c for rule in self.rules
                          if (c := _apply(rule, clause, turn, hedged)) is not None), None)
        # a clause of a planned change, read alone, states no change
        plain = _read_zh(clause, turn, hedged, changes=False,
                         plain_only=rules_zh.planned(sentence), sentence=sentence or None)
        if candidate is None and not plain and sentence not in ("", clause):
            # the clause names the value, another clause of its sentence the slot ("手机摔坏了，
            # 现在用的华为Pura 70"): the sentence's plain statements of values in this clause
            plain = [c for c in _read_zh(sentence, turn, hedged, changes=False,
                                         plain_only=rules_zh.planned(sentence))
                     if c.triples[0].object in clause]
        if candidate is None:
            return plain or _read_self(clause, turn, hedged, sentence)
        said = {t.predicate for t in candidate.triples}
        return [candidate] + [c for c in plain if c.triples[0].predicate not in said | {"uses"}]
