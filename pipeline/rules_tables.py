"""The offline extractor's tables (:mod:`memq.pipeline.rules`), as data: :data:`RULES`, the fixed
rules (a pattern, the memory it makes, its confidence and importance) with the words they are
written from (relatives, animals, drugs, diets, Chinese time words …), and the patterns that
cut a turn into sentences and clauses and clean what a rule took (jokes, hedges, questions,
prefixes, tails, pronouns that point back). The code that reads them is in ``rules`` and
``rules_clauses``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..schemas import Kind
from . import rules_en, tools

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

# a turn cut into sentences and clauses, and what a rule takes from one
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


_ONLY_TIME = re.compile(rf"(?:and |but |so )?{rules_en.TIME}", re.I)


_LOWER = {"adv", "animal", "rel", "cat", "cats"}  # groups used as common nouns


# a tool used beside another, not instead of it: "也用", "还在用", "同时用"
_ALSO = re.compile(r"也(?:在|开始)?用|还(?:在)?用|同时|另外|以及|两个都|都在用|搭配|配合")


# laughter is tone in chat ("total carnivore these days haha"); these say it was not meant
_KIDDING = re.compile(r"\b(?:jk|j/k|kidding|just joking|joking)\b|🙃", re.I)


_CLAUSE_CUT = re.compile(r"[,;:]\s|\s(?:and|but|so|because)\s")
