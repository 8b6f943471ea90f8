"""Chinese statements of a single fact's value and of its change, for the rules extractor.

Chinese states a change in many shapes that a list of fixed sentences cannot cover: the time
anywhere ("上个月我们已经把…", "生产环境上周终于…"), the topic first ("缓存这块我们不用X了"), a
把-construction whose object is the old value ("把X换成了Y") or only the topic ("把生产环境全部
迁到Y"), the old value before or after ("从X迁移到Y", "以前X，现在Y", "X去年就出手了，现在开Y").
So a sentence is read in three steps instead:

1. **what it is about** (:data:`_SLOTS`): the first slot whose cue it holds (moving home before
   work: "因为工作调动去了武汉，现在住在…" is about where one lives);
2. **the new value**: what follows a verb of change (迁到, 换成, 升级到, 跳槽去, 搬到, …) or, in a
   plain statement, the slot's own verb (跑在, 用的是, 在…上班, 住在, 开的是, …);
3. **the old value**: 从X…, 把X换成…, 不再用X, X不用了, 卖掉X, 以前X, 离开X.

It reads only sentences whose subject is the speaker (or their team): a colleague's move,
plans, questions and conditions are not changes (:data:`_NOT_DONE`). Pure: text in, values
out; :mod:`memq.pipeline.rules` makes the memories.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..schemas import Kind
from . import places, tools


@dataclass(frozen=True)
class Statement:
    """One fact's value ("uses", "PostgreSQL 16") and, for a change, the value it ends."""

    predicate: str
    value: str
    old: str | None
    kind: Kind
    template: str  # the memory's sentence; {obj} is the value
    change: bool = False  # a statement of change, not of a value only


_TIME = (r"(?:已经|上个?月|上(?:个)?(?:周|星期|礼拜)[一二三四五六日天末]?|去年底?|前年|年初|年底"
         r"|今年初?"
         r"|前几天|前阵子|前段时间|最近|刚刚?|终于|总算|正式|早就|就|都|也|全部|全都|整体|全|统一"
         r"|基本"
         r"|[一二三四五六七八九十\d]+月份?(?:初|底)?|上半年|下半年|这周|本周|昨天|前天|之前|年前"
         r"|月初"
         r"|顺利|彻底|直接|已|还|又|一起|陆续)")
_TIMES = rf"(?:{_TIME}[，,]?\s*)*"
# the speaker (or their team) as the subject; a colleague's, a friend's change is theirs
_OTHER = re.compile(rf"^{_TIMES}(?:我的?|我们的?)?(?:组|部门|团队|公司|家)?(?:里|新来的|的)*"
                    r"(?:前|老|新|一个|有个|好几个)?"
                    r"(?:同事|朋友|同学|室友"
                    r"|邻居|老板|领导|老婆|老公|闺蜜|兄弟|哥们|发小|舍友|师兄|师姐|学长|学姐|亲戚|表哥"
                    r"|表姐|堂哥|堂姐|隔壁|客户(?!管理|端|关系)|对象(?!存储)|家里人|公司其他|其他(?:组|部门|团队)"
                    r"|儿子|女儿|闺女|孩子|娃|老伴|爸妈|父母|公公|婆婆|岳父|岳母"
                    r"|(?:组|部门|团队|公司)?的?(?:小|老)(?:王|李|张|刘|陈|杨|赵|黄|周|吴|徐|孙|胡|朱|高|林"
                    r"|何|郭|马|罗|梁|宋|郑|谢|韩|唐|冯|于|董|程|曹|袁|邓|许|傅|沈|曾|彭|吕|苏|卢|蒋|蔡"
                    r"|贾|丁|魏|薛|叶|余|潘|杜|戴|夏|钟|汪|田|任|姜|范|方|石|姚|谭|廖|邹|熊|金|陆|郝"
                    r"|孔|白|崔|康|毛|邱|秦|江|史|顾|侯|邵|孟|龙|万|段|雷|钱|汤|尹|黎|易|常|武|乔|贺"
                    r"|赖|龚|文)(?=[^家板婆公师])"
                    rf"|媳妇"
                    r"|女朋友|男朋友|爸|妈|哥|姐|弟|妹|他|她|他们|她们|人家|别人)")
_NOT_DONE = re.compile(r"考虑|打算|准备|计划|试驾|(?<![调测])试用|试了试"
                       r"|(?<![理思感梦幻联])想(?!起|到|了)"
                       r"|要不要"
                       r"|要是|如果|假如|万一|也许|或许|是否|提议|反对|被否"
                       r"|不知道|能不能|会不会|开玩笑|说要|劝我|建议"
                       r"|希望"
                       r"|等.{0,6}(?:再|就)|将来|回头|下(?:个)?(?:月|周|星期)|明年|吗|[?？]"
                       r"|(?<![开社机聚学])会(?!议|员|计|儿)|要(?:换|搬|迁|升|转|去|把)")
_NOT_DONE_IF = re.compile(r"(?<!主)要是")
# not done, said of the change's own clause ("电池最后没换，…直接入了台小米14": the battery)
_NOT_YET = re.compile(r"还没|没有?(?:换|搬|迁|升|转)")
_CUT = re.compile(r"[，,。；;！!？?、]|(?:之后|以后|后)(?=[，,]|$)|已经|一个多|好几"
                  r"|(?<=[A-Za-z0-9])\s*(?:加|和|跟|以及|配合|搭配)"
                  r"|快[一二三四五六七八九十两\d]")
_LEAD = re.compile(rf"^(?:{_TIME}|了|在|的是|是|用|全部|整个|一辆|辆|一台|台|一部|部(?=[A-Za-z\d])"
                   rf"|个|一个|块|一块|二手的?|新的|一名|名|干|\d{{4}}年(?:款|产)?的?)+")
_TAIL = re.compile(r"(?:了|上|(?<=[^\s]{2})里|(?<=[A-Za-z0-9])\s+里|那边|这边|那里|这里|之后|以后"
                   r"|后|去|(?<![未蔚])来"
                   r"|啦|呢|吧|的|哈|哦|呀|嘛|咯|(?<=[上里\s])跑着?"
                   r"|工作|上班|住|通勤"
                   r"|生活|了呢|机器|里面|上面|租房|定居|安家|上下班|远程办公|办公|打工|安顿下来"
                   r"|安顿|(?<=[\u4e00-\u9fff]{2})(?:老家|发展)|(?<=[A-Za-z0-9\u4e00-\u9fff]{2})一[台辆部])+$")
# "Python 3.8 写的"
_TOOL_TAIL = re.compile(r"(?:(?<=[\sA-Za-z0-9])|来)(?:写|记|编排|管理|跑|搭)的?$"
                       r"|(?<=银行|工行|建行|农行|中行|交行|招行)(?:办|办理|开)的?$")
_TOOL_USE = re.compile(r"(?<=[A-Za-z0-9+#.])\s*(?:来|统一|一起)?重?(?:写|记|存|编排|管理|跑|搭|做"
                       r"|开|画|托管|部署"
                       r"|开发)[\u4e00-\u9fff]{0,4}$")
_LEAD_PLACE = re.compile(r"^(?:老家|家乡|回)")
_CHANGE = (r"(?:迁移到|迁移至|迁到|迁去|搬到|搬去|搬回(?:到)?|换成|换到|换为|换了(?:辆|台|个|部)?"
           r"|切换到|切换成|切到|切成|全切到|改成|改为|改用|换用|转用|升级到|升级成|升级为|升级至"
           r"|升到|升至"
           r"|导到|导入到|转到|转去|转入|调到|调去|划到|划入|并入|入职|加入|跳槽到|跳槽去|跳到|去了"
           r"|来了|来到了?|(?<=现在)回(?:到)?"
           r"|升职为|升为|晋升为|升职成|当上|转岗做|转岗为|转岗到|转岗成|转成|转为|转做|投靠|投奔"
           r"|入坑|统一改(?![成为])|全部改(?![成为])|都改(?![成为])"
           r"|全面转向|转向|全面转|转(?=\s*[A-Za-z])|换(?=\s*[A-Za-z])|调回(?:到)?(?!总部|原|本部)|提了辆|整了(?:辆|台)|换了台|正式做|正式当|开始担任|刚到"
           r"|搬来了?|保研(?:到|去|进)|跨考到|跨到"
           r"|迁回(?:到)?|搬回|切回(?:到)?|换回(?:到)?|cut ?over ?到|全上|全面上|全员上|全员用"
           r"|上了(?=\s*[A-Za-z])"
           r"|全面拥抱|拥抱|替换成|替换为|换上|(?<![不甭])用上|挖到|挖去|归到|划归|升成|升任|改叫|现在叫"
           r"|搬家到|搬家去|回(?:到)?老家|搬回老家|回(?:到)?(?=[\u4e00-\u9fff]{2,4}(?:老家|发展|定居))|全搬上|搬上|调去|派到|轮转到|提拔为|提为|现任"
           r"|任命为|入手了?(?:一台|一辆|一部|一块|台|辆|部|块)?|配了(?:台|个|部)?"
           r"|买了(?:个|台|部|块|辆)|换了(?:块|个|部)|租房在|转正成|转正为|干上|干起|被调成|调成|调为"
           r"|常驻|派我去|派我到|入了(?:一)?(?:台|部|个|块|辆)|人(?:已经)?到|挪到|挪去|跳到|进了|进入"
           r"|统一改成|都改成|全部改成|迁居至|迁居到|重装成|装成|重做成|现就职于|就职于|转到"
           r"|落户(?:到|在)?|润到|润去|转投|喜提|被提成|熬成|熬到|落到|全部落到|重写成|重写为|外派到|外派去|全面切(?:到|成)?(?!换)|全切(?:到|成)?(?!换)|开始读(?![研博本大高初书])"
           r"|拿(?:到|了)了?(?=[^，,。]{2,16}?的\s*offer[^。]*?(?:报到|入职|上班))|\s*(?:→|->|=>)\s*"
           r"|导进|迁进|搬进|转进|重构到|重构成|全量(?:上|切到|迁到|切)|调我(?:去|到)|合并到|并到)了?")
_OLD = [  # where a change names the value it ends; the first that matches
    re.compile(r"从(?P<old>[^，,。]+?)(?<!出)(?:整体|全部|全|统一|陆续|彻底|正式|顺利|直接|一起)*(?:离职|"
               + _CHANGE[3:]),
    re.compile(r"把(?P<old>[^，,。]+?)(?:全部|都|整体|统一)?(?:换成|换为|换到|替换成|改成|改为"
               r"|置换成)"),
    re.compile(r"(?:不再用|不用|弃用|停用|放弃|不再是|不在|卖掉了?|卖了|出手了?|置换掉了?|告别了?"
               r"|辞(?:了|掉了?)|离开了?)(?P<old>[^，,。了]+)"),
    re.compile(r"(?P<old>[^，,。]+?)(?:那套|那个|这套)?(?:我们|我)?(?:已经|上个月|上周|去年|早就|就"
               r"|都|正式|彻底)*"
               r"(?:不用了|弃用了|停用了|下线了?(?=[，,。！!]|$)|卖掉了|卖了|出手了|置换掉了|淘汰了|离职了|上交了|退役了?"
               r"|(?:走了)?报废(?:流程)?了?|销户了|注销了|退租了)"),
    re.compile(r"(?:以前|原来|之前|以往)(?:是|用|用的是|住|住在|在|开|开的是)?(?P<old>[^，,。]+?)[，,]"),
    re.compile(r"(?P<old>[^，,。]+?)(?:已经|都|也)?被(?:[^，,。]{1,20}?)?(?:替换|替掉|换掉|换|切换|迁移|升级|取代|干掉|下掉)"),
    re.compile(r"(?:自|从)(?P<old>[^，,。]+?)(?:离职|辞职|出来)"),
    re.compile(r"不(?:当|做|干)(?P<old>[^，,。了]+)了"),
    re.compile(r"(?P<old>[^，,。→>]+?)\s*(?:→|->|=>)"),  # "武汉→长沙"
]
# an old value named as given up, anywhere in the sentence ("新项目改用 UE5 了，不再用 Unity")
_GIVEN_UP = (_OLD[2], _OLD[3], _OLD[5])


# the new value said before its verb: "小米SU7到手了"
_GOT = re.compile(rf"(?:^|[，,])(?:[^，,]{{0,6}}?[，,])?(?P<obj>[^，,。]{{2,20}}?){_TIMES}"
                  r"(?:(?:到手|提回来|开回家|到家)了|提车成功|提车了)"
                  r"|入了\s*(?P<pit>[^，,。]{1,20}?)\s*的坑"
                  r"|被(?P<by>[^，,。]{2,12}?)挖(?:了)?(?:过去|走)")  # "被腾讯挖过去了"
_TEST_ENV = re.compile(r"测试环境|测试机|测试服|预发|staging|开发环境|本地环境|灰度", re.I)
# a state reached ("现在统一是 X 了", "现在都用 X 了"): the 了 of a change
_NOW_DONE = re.compile(r"(?:现在[\u4e00-\u9fff]{0,4}?(?:已经|都|统一|全部|全|基本|主要)*"
                       r"|已经(?:基本|都|统一|全部|全)*)"
                       r"(?:是|用|在用|用的是|改用|跑在|在|放在|放|存在|存)"
                       r"[^，,。；;]{1,30}了")
# a change said without a verb that names the new value: "换工作了，现在在X"
_CHANGED = re.compile(r"换工作|换了工作|跳槽|挖(?:了)?(?:过去|走)|搬家|搬了家|换车|换了车|换了新"
                      r"|换手机|离职|转岗|调岗"
                      r"|入职|出来了|不在[^，,]{1,10}了|搬过去|升级装备|到手了|容器化|上云|下云"
                      r"|迁移完|切换完|升完级|换完|不续了|不续费了|下掉了|下线了|停用了|弃用了|卸了|退掉了?"
                      r"|淘汰了|干掉了|完成迁移|迁移完成|迁完|切换完成|完成切换|就职于|任职于"
                      r"|提车|辞职|裸辞|回老家|回国|搬离|离开|到家了|转专业|入了[^，,。]{1,20}的坑"
                      r"|以旧换新|车(?:子)?(?:也)?换了|换机")


@dataclass(frozen=True)
class _Slot:
    predicate: str
    kind: Kind
    template: str
    cue: re.Pattern[str]  # the sentence is about this slot
    states: tuple[re.Pattern[str], ...]  # plain statements of its value, tried in order


_V = r"(?P<obj>[^，,。；;！!？?]+)"
# a stay of some years said of the past is no home now ("去年在大理住了半年")
_NOT_PAST = r"^(?!.*(?:去年|前年|以前|之前|那时|当年|小时候|那几年))[^。]*?"
_SPAN = r"[一二三四五六七八九十两几半\d]+(?:年|个月)(?:多)?了?"  # how long: "住上海五年了"
# what one studies for, not what: 读研, 读大二 (读书 is no school's: "读书笔记")
_STUDY_LEVEL = r"研|博|本科|大[一二三四]|高[一二三]|初[一二三]|硕士|博士|研究生"
_ROLE_WORD = (r"(?:工程师|经理|负责人|总监|主管|研究员|设计师|分析师|架构师|SRE|开发|测试|运营|产品"
              r"|策划"
              r"|算法|老师|医生|律师|会计|顾问|专员|助理|组长|主任|CTO|CEO|PM|[Ll]ead|TL|Engineer"
              r"|Manager|Director|Designer|Analyst|Architect|Developer|Scientist|医师|护士|教师"
              r"|讲师|教授|代表|经纪人|编辑|记者|厨师|客服|HR|运维|DBA|实习生|班主任|店长|合伙人"
              r"|创始人|VP|总裁|总经理|主编|督导|主播|销售|科员|职员|文员|公务员|收银员|店员|导购"
              r"|骑手|司机|保安|业务员|销售员|营业员|质检员|操作员|技术员|[科处局部]长|主治|住院医"
              r"|辅导员|班长|队长|领班)")
_BRANDS = (r"(?:宝马|奔驰|奥迪|大众|丰田|本田|日产|特斯拉|比亚迪|蔚来|理想(?= ?[A-Z])|小鹏|问界"
           r"|极氪|五菱|吉利"
           r"|长安|马自达|福特|雷克萨斯|保时捷|沃尔沃|别克|雪佛兰|现代|起亚|领克|小米 ?SU7|卡罗拉"
           r"|凯美瑞|雅阁|思域|朗逸|帕萨特|速腾|迈腾|轩逸"
           r"|零跑|哈弗|帝豪|埃安|深蓝|腾势|坦克\s?\d|红旗|奇瑞|传祺|宝骏|岚图|智己|阿维塔|仰望|方程豹"
           r"|星途|捷途|长城|荣威|名爵|领克|睿蓝|几何|飞凡|昂科威|汉兰达|途观|探岳|CR-?V|RAV4"
           r"|Model [3SXY])")


_JOB_CUES = "|".join(j.cue.pattern for j in tools.jobs())
_JOB_USES = (rf"(?:{_JOB_CUES})(?:这块|那块|这边)?"
             r"[^，,。]{0,6}?(?:用的是|用的|用|是)(?P<obj>[^，,。；;！!？?]+)")


_CJK_PRODUCTS = "|".join(sorted({re.escape(p.strip()) for j in tools.jobs() for p in j.products
                                  if re.match(r"[\u4e00-\u9fff]", p)}, key=len, reverse=True))


_UNIT = r"(?:小组|组(?![长员])|团队|部门|部(?!长)|中心|中台|事业群|事业部|科室|科(?!长))"
# a workplace that is a team ("在支付组当组长"; not "在网易游戏部门干策划": the company's)
_A_TEAM = re.compile(r"(?:小组|组|团队|中台)$")


def _slot(predicate: str, kind: Kind, template: str, cue: str, *states: str) -> _Slot:
    return _Slot(predicate, kind, template, re.compile(cue, re.I),
                 tuple(re.compile(s.replace("{V}", _V), re.I) for s in states))


# "考上了医院行政专员的岗位": a post passed into is a role, not a school
_EXAM_PASSED = r"(?:考上|考进)(?![^，,。]*(?:岗位|职位|编制|公务员|事业单位|选调))"
_SLOTS = (  # the first whose cue a sentence holds; a plain statement may hold two (work, role)
    _slot("production_environment", Kind.FACT, "用户的生产环境是{obj}。",
          r"生产|(?<!水)线上(?!下)|服务器|机房|prod|正式服|游戏服|正式环境|线上环境",
          r"(?:跑在|运行在|部署在|迁到|迁移到){V}", r"(?:用的是|用的|用|是){V}", r"(?<!现)在{V}"),
    _slot("lives_in", Kind.PROFILE, "用户住在{obj}。",
          r"(?<!把)搬(?!砖|了?工位|了?座位)|住(?=在|进|到|着|的地方)|(?<=[我人])住|定居|落户|安家|老家|生活"
          r"|(?<![个几多些本])人在|(?:全家|一家人?|举家)[^，,。]{0,6}?(?:迁|搬|移)|外派"
          r"|坐标|base|租房|合租|调回(?!总部|原|本部)|租了(?!一?[辆台])|租好|买了房|买房|常驻|落地|落脚|润到|润去|迁居|移居|漂了"
          r"|(?<!等)(?<!团队)(?<!中台)(?<!部门)(?<![组司])(?:待|呆)(?:了[一二三四五六七八九十两几半\d]+(?:年|个多?月)|够|腻|不下去)|来到了?|房租到期|退租|^在[\u4e00-\u9fff]{2,4}的第[一二三四五六七八九十\d]+年"
          r"|(?<=[在])[^，,。]{2,8}?过得"
          rf"|{_NOT_PAST}住[^，,。在进到着的]{{2,8}}?{_SPAN}|{_NOT_PAST}在[^，,。]{{2,8}}?住了{_SPAN}|人(?:已经)?到|(?<=[我的])家在|(?<![不得])住(?=[，,。！!]|$)|(?<=现在)住|^住(?=[\u4e00-\u9fffA-Za-z])|安顿|新家",
          r"在{V}(?:定居|安家|落户|落脚|安顿|生活|住|租房|合租|租了|买了房)",
          r"(?:租房|租|住)在{V}", r"落脚(?:在|到)?{V}", r"来到了?{V}",
          r"^在(?P<obj>[\u4e00-\u9fff]{2,4})的第[一二三四五六七八九十\d]+年",
          r"在(?P<obj>[^，,。]{2,8}?)过得",
          r"新家(?:在|是){V}", r"在{V}漂了",
          rf"住(?P<obj>[^，,。在进到着的]{{2,8}}?){_SPAN}",
          r"(?<=[我的])家在{V}", r"家(?:也|就|还|已经)?在{V}",
          r"(?:住在|定居在|落户在|安家在|生活在|人在|住|坐标|定居"
                                    r"|base){V}",
          r"(?:一直在|现在在){V}", r"^在{V}"),
    _slot("team", Kind.PROFILE, "用户在{obj}。",
          r"[组部](?:[了，,。]|$|负责|做|维护|工作|管)|(?<!们)[组部](?:写|搞|带|待|呆|干|值班|的一员)"
          r"|(?:团队|中台)(?:[了，,。]|$|负责|做)|(?<!们)(?:团队|中台)(?:写|搞|待|呆|干|值班|的一员)"
          r"|调到|划到|划入|并入|并到|新(?:部门|组|团队)(?=是|叫)"
          r"|汇报线|归[^，,。]{2,12}?管|是[^，,。]{2,12}?(?:组|团队|中台)的$"
          r"|内部转|调去|调入|派到|轮转到|转到[^，,。]{1,10}(?:组|部|团队)|(?<=[\u4e00-\u9fff])科(?=[了，,。]|$|上班|工作)",
          # a team inside a larger unit is named down to it: "搜索部门下面的排序组"
          rf"(?:所在的是|(?<!现)在|属于)(?P<obj>[^，,。]*?{_UNIT}"
          rf"(?:(?:下面|下属|旗下|里)?的[^，,。]*?{_UNIT})+)",
          r"(?:所在的是|(?<!现)在|属于)(?P<obj>[^，,。]*?(?:小组|组|团队|部门|部|中心|中台|事业群|科室|科))",
          r"归(?P<obj>[^，,。]*?(?:小组|组|团队|部门|部|中心|中台|事业群|科室|科))管",
          r"(?P<obj>[^，,。]{2,12}?(?:小组|组|团队|部门|中台))的一员",
          r"是(?P<obj>[^，,。]{2,12}?(?:组|团队|中台))的$",
          r"(?:组|团队|部门)(?:是|叫)(?P<obj>[^，,。]*?(?:小组|组|团队|部门|部|中心|中台|科))",
          r"(?:所在的是|在|属于){V}"),
    _slot("studies_at", Kind.PROFILE, "用户在{obj}读书。",
          rf"读(?:{_STUDY_LEVEL})|就读|念书|(?<![娃子他她])上学|求学|转学|{_EXAM_PASSED}|上岸|在[^，,]{{2,10}}?(?:读|念)",
          r"在{V}(?:读|念|上学|求学)",
          r"(?:就读于|考上了?|考进了?|转学到了?|转学去了?|上岸了?){V}"),
    _slot("major", Kind.PROFILE, "用户的专业是{obj}。",
          rf"专业|主修|读的是|学的是|在[^，,]{{2,10}}?读(?!{_STUDY_LEVEL}|书)",
          r"(?:(?<=[是读学的人])|^)(?P<obj>[\u4e00-\u9fff]{2,8}?)专业(?![是为就])",
          r"(?<!转)专业(?:是|为|就是)?{V}", r"(?:读的是|学的是|主修){V}",
          rf"在[^，,。]{{2,10}}?读(?!{_STUDY_LEVEL}|书){{V}}"),
    _slot("works_at", Kind.PROFILE, "用户在{obj}工作。",
          r"跳槽|入职|离职|辞职|辞了|裸辞|离开|换工作|换了工作|被裁|加入(?![^，,]*(?:组|团队|部))"
          r"|(?<![现正还实])在[^，,]{2,16}?(?:干了|干(?=[^，,。了嘛啥]{2})|做(?!的)|当|上班|工作|任职|实习|教|干活|打工|跑业务|执业|出诊|开车"
          r"|开货车|送快递|送外卖|跑单)|跳到|进了|(?:到|去)[^，,]{2,16}?(?:上班|报到|入职)"
          r"|就职于|任职于|供职于"
          r"|在[^，,]{2,16}?(?:公司|集团|银行|中心|研究院|研究所|医院|学校|大学|局|外企|国企|央企"
          r"|私企)(?=[，,。]|$)"
          r"|不在[^，,]{1,10}?(?:干|上班|工作)?了"
          r"|出来了|挖到|挖去|挖(?:了)?(?:过去|走)|猎头|offer|拿到[^，,]{0,10}的录用|的(?:正式)?员工",
          r"公司(?:叫|名叫|叫做){V}", r"在{V}(?:办完|办了|办理)?入职",
          r"(?:到|去)(?P<obj>[^，,。]{2,16}?)(?:上班|报到|入职)",
          r"是(?P<obj>[^，,。的]{2,16})的(?:正式)?员工",
          r"(?:就职于|任职于|供职于){V}",
          rf"在{{V}}干了{_SPAN}",
          r"在{V}(?:上班|工作|任职|实习|做(?!的)|干(?=[^，,。了嘛啥]{2})|当|教|干活|打工|跑业务|执业|出诊|开车|开货车|送快递"
          r"|送外卖|跑单)", r"^在{V}",
          r"在(?P<obj>[^，,。]{2,16}?(?:公司|集团|银行|中心|研究院|研究所|医院|学校|大学|局|外企|国企"
          r"|央企|私企))(?=[，,。]|$)"),
    _slot("role", Kind.PROFILE, "用户是{obj}。",
          rf"升职|晋升|转岗|当上|升成|升任|升为|提拔|提为|现任|任命|职位|头衔|title|"
          rf"(?:转成|转为|转做|(?<![但可还就要于总老真只倒算像该不])是|我就是|当|做|担任|考上|考进"
          rf"|作为|^干)[^，,。]*{_ROLE_WORD}|{_ROLE_WORD}[A-Za-z]*一枚",
          r"(?:职位|头衔|title)(?:是|叫|变成了?){V}",
          r"(?:现任|提拔为|提为|升为|任命为|升任|当上了?|升成了?)\s*{V}",
          rf"作为一?[个名位]?(?P<obj>[^，,。的]*{_ROLE_WORD}[A-Za-z]*)",
          rf"(?:本人|我是?)?(?P<obj>[^，,。的]*{_ROLE_WORD}[A-Za-z]*)一枚",
          rf"^干(?P<obj>[^，,。的]*{_ROLE_WORD}[A-Za-z]*){_SPAN}",
          rf"(?:担任|是|当|做|干|考上了?|考进了?)(?:[^，,。]*?的)?"
          rf"(?P<obj>[^，,。的]*{_ROLE_WORD}[A-Za-z]*)"),
    _slot("drives", Kind.FACT, "用户开{obj}。",
          rf"车(?!险|贷)|开的是|开着|开(?:一辆|辆|一台)|(?:提|整|买|换|添|入|租|搞)了辆|[那这]辆|{_BRANDS}"
          r"|开着?[^，,。]{2,8}?(?:上下班|上班|送娃|接娃|送孩子|接孩子|跑滴滴|跑网约车|通勤)",
          r"(?:开的是|开的|开着|开上了?|车是|提了|换了辆|买了辆|添了辆|开){V}",
          r"是(?:一台|一辆|台|辆)(?P<obj>[^，,。]{2,16})",
          r"(?:买了|入手了?|喜提|订了|提了|租了|搞了|新座驾(?:是)?)(?:一[台辆]|[台辆])?(?P<obj>[^，,。]{2,16})",
          r"(?:那台|这台|一台|那辆|这辆|一辆)(?P<obj>[^，,。]{2,12}?)(?:已经)?开了"),
    _slot("uses", Kind.FACT, "用户使用{obj}。",
          r"用(?!户)|换成|迁移|迁到|切到|升级|升到|导到|云上|数据库|主库|框架|编辑器|IDE|手机|电脑|云服务|主力机"
          r"|戴的是|戴着"
          r"|CI\b|系统|技术栈|基于|(?:主要|日常|平时|一直|都|天天)写\s*[A-Za-z]"
          r"|工具",
          r"用的[\u4e00-\u9fff]{1,4}是{V}", r"(?:跑在|运行在|部署在|放在|托管在|停在|停留在){V}",
          r"(?:用的是|一直用的|一直在用|一直用|在用|使用|用的|戴的是|戴着|跑的是){V}",
          # "我用华为P40": a well-known product said after 用
          rf"(?<![不没])(?:我|我们|平时|一直|现在)用(?P<obj>(?:{_CJK_PRODUCTS})[^，,。]{{0,12}})",
          r"(?:统一|都|全部|开始|主要|基本)用{V}", r"(?:统一|都|全部|全|改)走{V}",
          r"(?:都|全|全部|统一|一直)(?:放|存)(?:在|到)?{V}",
          r"(?:都|全|全部|一直)在(?P<obj>[^，,。]+?)(?:上|里)",
          r"(?:库|数据库|框架|系统|版本|编辑器|IDE|语言|电脑|手机|笔记本|工具|主力机|技术栈|栈)"
          r"(?:统一|还|一直|都)*是{V}",
          # "服务都是 Python 3.8 写的", "基于 Spring Cloud", "主要写 Java": a tool by its name
          r"是(?P<obj>\s*[A-Za-z.][^，,。]*?)\s*(?:写|开发|搭建?|做)的",
          r"基于(?P<obj>\s*[A-Za-z][^，,。]*)",
          r"(?:主要|日常|平时|一直|都|天天)写(?P<obj>\s*[A-Za-z][^，,。]*)",
          r"(?<=[记写存画剪聊跑做通公享])[\u4e00-\u9fff]{0,3}用{V}",
          r"用(?P<obj>\s*[A-Za-z][^，,。]*)",
          r"一直在{V}", rf"^(?P<obj>(?:[A-Za-z]|{_CJK_PRODUCTS})[^，,。]{{1,20}}?)用了{_SPAN}",
          _JOB_USES),
)
_WORK, _ROLE, _SCHOOL, _MAJOR, _TEAM, _DRIVES, _LIVES = (
    next(s for s in _SLOTS if s.predicate == p)
    for p in ("works_at", "role", "studies_at", "major", "team", "drives", "lives_in"))
_PAIRS = ((_WORK, _ROLE), (_SCHOOL, _MAJOR))  # a plain statement may name both


_HELD_FOR = re.compile(r"^[一二三四五六七八九十两几多半\d]+(?:年|个月|个多月)(?:多)?的")
# "入职快手一周": how long since, after the value; "叫钱迹的app": the name the thing goes by
_SINCE = re.compile(r"(?<=\S)[一二三四五六七八九十两几半\d]+(?:年|个月|个多月|周|个星期|天)"
                    r"(?:多)?$")
_NAMED = re.compile(r"^(?:一个|个|一款|款)?叫(?:做)?(?P<name>[^，,。的]{1,20})的"
                    r"(?:app|APP|App|软件|应用|工具|平台|系统|框架|库)$")


def _clean(value: str, predicate: str) -> str:
    value = _CUT.split(value, maxsplit=1)[0].strip()
    previous = None
    while previous != value:
        previous = value
        value = _TAIL.sub("", _LEAD.sub("", value.strip())).strip()
        value = _HELD_FOR.sub("", value)  # "开了五年的卡罗拉": how long, then the car
        value = _SINCE.sub("", value)
        value = _NAMED.sub(r"\g<name>", value)
        if predicate == "lives_in":  # "老家南昌", "南京的房子", "上海分部": the place
            value = re.sub(r"(?:(?:的|那边的|这边的)(?:房子|家|住处|出租屋)|分部|分公司|总部"
                           r"|办事处)$", "", _LEAD_PLACE.sub("", value))
    if predicate == "major":
        value = re.sub(r"(?:专业|系|方向)$", "", re.sub(r"^(?:本人|我)", "", value)).strip()
        # "郑大会计学": the school's short name before the field
        value = re.sub(r"^[\u4e00-\u9fff]{1,6}(?:大学|学院|大)(?=[\u4e00-\u9fff]{2})", "", value)
    if predicate in ("uses", "production_environment"):  # "Go写后端" -> "Go"
        value = _TOOL_TAIL.sub("", _TOOL_USE.sub("", value)).strip()
    if predicate == "uses":
        value = _tool(value)
    if predicate == "works_at":
        value = _employer(value)
    if predicate == "drives":  # "我的卡罗拉", "哈弗H6跑滴滴", "途观送娃上学": the car
        value = re.sub(r"^(?:我的|我那[辆台]|我家的?|家里的?|[那这][辆台])", "", value)
        value = re.split(r"(?<=\S{2})(?:去|跑|送|接|上下班|上班|通勤|回)(?=[\u4e00-\u9fff])", value,
                         maxsplit=1)[0]
    if predicate == "team" and (unit := re.match(
            r".{2,}?(?:小组|组|团队|部门|中台|事业群|事业部|中心)(?=之后|以后|后|只|主要|负责|做)",
            value)):
        value = unit.group()  # "SRE平台组之后只负责工具开发"
    if named := re.match(r"^一[家个所](?:叫|名叫|叫做)(?P<name>[^的]+)的", value):
        value = named["name"]  # "一家叫星云科技的小创业公司"
    if named := re.fullmatch(r"(?:某|一家|一个)[^（(]{0,8}[（(](?P<name>[^）)]{2,20})[）)]", value):
        value = named["name"].strip()  # "某新能源大厂（宁德时代）": the name it hides
    return value


def _tool(value: str) -> str:
    """A used tool's name, without its job, its kind or what it is used for."""
    if (known := tools.mentioned(value)) and _JOB_LEAD.fullmatch(value[:known[0][0]]):
        value = value[known[0][0]:]  # "前端Vue", "框架是Django": the tool, not its job
    if known:
        value = _STACK_TAIL.sub("", value).strip()  # "Laravel框架", "Django那一套"
    if cut := re.match(
            r"(?P<tool>.{2,}?)(?:来|拿来)?(?:做|写|记|画|剪|处理|管理)[\u4e00-\u9fff]{1,4}$",
            value):
        value = cut["tool"]  # "希沃白板做课件"
    if (known := tools.mentioned(value)) and known[0][0] == 0 and (
            _USED_FOR.fullmatch(value[len(known[0][1]):].strip())):
        value = known[0][1]  # "百度地图导航": the app, not what it is used for
    if (used := re.match(r"(?P<tool>.*[A-Za-z0-9])\s+(?P<for>[\u4e00-\u9fff]{2,4})$", value)) and (
            _USED_FOR.fullmatch(used["for"])):
        value = used["tool"]  # "Kindle Paperwhite 看书"
    return value


def _employer(value: str) -> str:
    """Where one works, not the work, the offer or the kind of company."""
    if offer := re.match(r"(.{2,16}?)的\s*offer", value, re.I):
        value = offer.group(1)  # "比亚迪的offer并且已经去深圳报到了"
    # "Shopee写Go", "字节做推荐": the employer, not the work
    value = re.split(r"(?<=[^\s])(?:写|做|搞|负责|当|带|干|上班|工作|办完|办了|办理|教|读"
                     r"|报到|驻场)", value, maxsplit=1)[0].strip()
    if named := re.match(
            r"^一[家个所][\u4e00-\u9fff]{0,4}?(?:外企|公司|国企|私企|央企|企业)(?:叫)?(?P<name>[A-Za-z]"
            r"[^，,。]*|[\u4e00-\u9fff]{2,8})$", value):
        value = named["name"]  # "一家外企SAP"
    return value


_JOB_LEAD = re.compile(rf"(?:(?:{_JOB_CUES}|框架|语言|技术栈)(?:这块|那块|这边)?"
                       r"(?:统一|还|一直|都)*(?:用的是|用的|用|是)?\s*)+", re.I)
_STACK_TAIL = re.compile(r"\s*(?:的?框架|那一?套|这一?套|全家桶|为主|技术栈)$")
_USED_FOR = re.compile(r"(?:来|拿来|用来)?(?:写|记|存|看|用|跑|管|办公|导航|开会|聊天|听歌"
                       r"|打字|记账"
                       r"|剪辑"
                       r"|画图|做图|看盘|追剧)[\u4e00-\u9fff]{0,2}")


def _state(slot: _Slot, text: str) -> str | None:
    for pattern in slot.states:
        if m := pattern.search(text):
            value = _clean(m["obj"], slot.predicate)
            if _valid(value):
                return value
    return None


def _valid(value: str | None) -> bool:
    return bool(value) and len(value or "") <= 40 and not _VAGUE.fullmatch(value or "") and (
        not re.search(r"一[家个所间]|[那这]儿|[那这]里|[那这]边|^不|[那这](?:套|个|块|摊)"
                      r"|^(?:成功|失败|完成|顺利)$|我(?:也|就|还)"
                      r"|^[一二三四五六七八九十百\d]+(?:楼|层|号|室|单元)$|^[家个所间](?:公司|单位|企业|学校|医院)$"
                      r"|^(?:凌晨|半夜|深夜|早上|晚上|中午|下午)?[一二三四五六七八九十两\d]+点"
                      r"|^第[一二三四五六七八九十\d]+(?:天|次|个|周)|^搬|学生$"
                      r"|^[一二三四五六七八九十两几半\d]+(?:年|个月|月|天|周|小时|公里)$"
                      r"|^[一二三四五六七八九十两几百千\d.]+(?:万|千|块|元|[wW])多?$"  # a price
                      # "在家自己做了顿饭": no workplace; "都用它": no tool
                      r"|^(?:家|家里|屋里|宿舍|床上)(?:自己)?$|它$",
                      value or ""))
    # "上海一家医院": no name; "不在那儿": no place


_VAGUE = re.compile(r"[\u4e00-\u9fff]|这|那|它|新(?!加坡|疆|西兰|乡|竹|北|泽西)\w{0,2}"
                    r"|一[家个所]\w*|一个多月|那边|这边|老家|公司"
                    r"|房子|新房|手机|电脑|工作|电车|油车"
                    r"|单位"
                    r"|这里|那里|家里")


def _slot_of(text: str, *, known: bool = True) -> _Slot | None:
    """The first slot whose cue the sentence holds; a thing moved is not a home moved
    ("把所有静态资源搬到…"); else, when it names a well-known product ("前两天终于换了华为
    Mate 60"), what the user uses."""
    if re.search(r"升职|晋升|升成|升任|升为|提拔|提为|被提成|现任|任命|当上|职位|头衔|title"
                 r"|转正(?=成|为)"
                 rf"|熬(?:成|到)[^，,。]*{_ROLE_WORD}"
                 rf"|转岗(?:[^，,。]*[，,])?[^，,。]*(?:干|当|做|成)[^，,。]*{_ROLE_WORD}"
                 rf"|调成[^，,。]*{_ROLE_WORD}",
                 text, re.I):
        return _ROLE
    if _STUDYING.search(text):  # "转学去了多伦多大学": a school, not a workplace
        return _SCHOOL
    if _TO_PLACE_OF_WORK.search(text):  # "调到育才中学教初一了": a workplace, not a team
        return _WORK
    found = next((s for s in _SLOTS if s.cue.search(text) and not (
        s.predicate == "lives_in" and re.search(r"把(?!家)[^，,]{1,12}?搬", text))), None)
    if found is not None and found.predicate == "lives_in" and (
            left := _LEFT_JOB.search(text)) and (where := re.search(
                r"base|坐标|人在|常驻|落地", text, re.I)) and left.start() < where.start():
        found = _WORK  # "已经不在腾讯了，去了米哈游，base 上海": the job changed first
    named = {job for _, _, job in tools.mentioned(text)} if known else set()
    if found is None and named:
        return _SLOTS[-1]
    if found is _SLOTS[0] and named and named <= tools.NOT_INFRA:  # "代码托管切到 GitHub"
        return _SLOTS[-1]
    if found is not None and found.predicate == "drives" and named and not re.search(
            rf"开的是|开着|开(?:一辆|辆|一台)|(?:提|整|买|换)了辆|{_BRANDS}", text):
        return _SLOTS[-1]  # "开车导航我习惯用高德地图"
    return found


# a job left or taken, said before where one lives now
_LEFT_JOB = re.compile(r"跳槽|入职|离职|辞职|裸辞|不在[^，,]{1,10}?(?:干|上班|工作)?了"
                       r"|拿到[^，,]{0,10}offer")
_STUDYING = re.compile(rf"转学|就读|读(?:研|博|本科|大[一二三四])|{_EXAM_PASSED}|上岸|保研")
_TO_PLACE_OF_WORK = re.compile(r"(?:调到|调去|调入|去|到|进了?)[^，,。]{1,10}?(?:中学|小学|大学"
                               r"|学校"
                               r"|幼儿园"
                               r"|医院|卫生院|局|银行|集团|公司|厂|研究院|研究所|街道|政府|法院"
                               r"|检察院|报社|电视台|券商|事务所|律所|基金|外企|国企|央企|大厂)"
                               r"(?:报到|上班|工作|教|当|做|了|[，,。]|$)")


def _not_meant(text: str, verb: re.Match[str] | None, is_change: bool) -> bool:
    """Someone else's change, or a change only planned, asked or supposed. What follows the
    clause of the new value ("…，主要是想用它的数据结构") is a reason, not a condition."""
    said, clause, own = text, text, text
    if verb is not None:
        stop = re.search(r"[，,。；;]", text[verb.end():])
        said = text[: verb.end() + (stop.start() if stop else len(text))]
        clause = re.split(r"[，,]", text[: verb.start()])[-1]
        own = re.split(r"[，,]", said)[-1]
    if is_change and (_NOT_DONE.search(said) or _NOT_DONE_IF.search(said)
                      or _NOT_YET.search(own)):
        return True
    if is_change and _TEST_ENV.search(clause if verb is not None else text):
        return True  # "测试环境上周刚升到 Debian 12，生产先不动"
    first = verb is None or not re.search(r"[，,]", text[: verb.start()])
    return bool(_OTHER.match(clause)) or bool(  # the sentence's subject, when the verb is in
        first and _OTHER.match(text) and not re.match(rf"^{_TIMES}被", text))  # its clause


_PLANNED = re.compile(r"(?<!主)要是|如果|假如|万一|等.{0,6}(?:再|就)|打算|准备|计划|考虑")


def planned(sentence: str) -> bool:
    """Whether a sentence holds a change only as a plan or a condition ("要是油价再涨，我就把哈弗
    换成电车算了"): a clause of it read alone states no change."""
    return bool(_PLANNED.search(sentence))


def _plain(slot: _Slot, text: str, *, beside_change: bool = False) -> list[Statement]:
    """Plain statements of values, one per slot, each clause read for its own slot (two for
    work and role: "我在X做Y"); a clause that plans, asks or hears about someone else states
    nothing, nor does one without a subject after it ("我同事在腾讯，做后端"). Beside a change
    not meant, a clause that only restates ("生产还是在 ACK 上不动") is not read."""
    found: list[Statement] = []
    other = False
    pending: _Slot | None = None  # a slot its clause named with no value: "我在一家外企，SAP"
    previous = ""  # that clause
    for part in _joined([p.strip() for p in re.split(r"[，,]", text)]):
        if pending is not None and not other and (name := _appositive(
                part, pending, after_one=_ONE.search(previous) is not None)):
            if not any(f.predicate == pending.predicate for f in found):
                found.append(Statement(pending.predicate, name, None, pending.kind,
                                       pending.template))
            pending = None
            continue
        pending = None
        if _OTHER.match(part):
            other = True
            continue
        if re.match(rf"^{_TIMES}(?:我|我们|咱)", part):
            other = False
        if other or _NOT_DONE.search(part) or _NOT_DONE_IF.search(part) or _TEST_ENV.search(
                part) or (beside_change and _STILL.search(part)):
            continue
        own = _slot_of(part, known=False) or slot
        if own is _SLOTS[0] and slot is _SLOTS[-1]:
            own = slot  # "线上数据库用的是 MySQL": a tool production uses, not runs on
        if own is _DRIVES and slot is _SLOTS[-1] and tools.mentioned(part):
            own = slot  # "开车导航我习惯用高德地图": the app, not the car
        for s in next((pair for pair in _PAIRS if own in pair), (own,)):
            if s is not _SLOTS[-1] and any(f.predicate == s.predicate for f in found):
                continue  # one value a slot; tools are many ("后端Java，前端Vue")
            about = s.cue.search(part) or (s is _SLOTS[-1] and (
                tools.mentioned(part) or re.search(_JOB_CUES, part))) or (
                s is _WORK and _TO_PLACE_OF_WORK.search(part)) or (
                s is _LIVES and places.mentioned(part))  # "我现在在北京，海淀这边租房"
            values = _values(s, part, about=bool(about), beside_change=beside_change)
            found.extend(Statement(t.predicate, v, None, t.kind, t.template) for v in values
                         if v not in {f.value for f in found}
                         for t in [_TEAM if s is _WORK and _A_TEAM.search(v) else s])
            if about and not values and s.predicate in _NAMED_NEXT:
                pending, previous = s, part
    return found


def _values(slot: _Slot, part: str, *, about: bool, beside_change: bool) -> list[str]:
    """What a clause about the slot states as its value; for tools, else the tools it names
    (not beside a change, whose clauses name old and new)."""
    if about and (value := _state(slot, part)):
        return [value]
    return _stack(part) if slot is _SLOTS[-1] and not beside_change else []


# a stack said by its names alone: "后端Java + Spring Boot", "我们这边Python + Django为主",
# "目前项目是Flask + Python 3.9"; not a wish, a question, a doubt or a tool given up
_STACK_SAID = re.compile(rf"{_JOB_CUES}|技术栈|框架|语言|项目|服务|后台|是|为主|主要|主力|写的"
                         r"|一直|平时|日常|库|(?:跑|撑|扛|用)(?:了|着)|目前|我们(?=\s*[A-Za-z])",
                         re.I)
_STACK_NOT = re.compile(r"不|没|别|吗|呢|吧|？|\?|怎么|哪|是否|想|希望|羡慕|推荐|安利|听说|好用"
                        r"|心动|试|如果|要是|打算|准备|计划|考虑|以前|之前|曾经|当年|那时")


def _stack(part: str) -> list[str]:
    """The well-known tools a plain clause names as what is used, each once (a tool's own
    statement: "Python + Django" is a language and a framework, each ended by its own
    successor)."""
    named = tools.mentioned(part)
    if not named or not _STACK_SAID.search(part) or _STACK_NOT.search(part):
        return []
    values = dict.fromkeys(_clean(name, "uses") for _, name, _ in named)
    return [v for v in values if _valid(v) and not put_away(v, part)]


# slots whose value a clause may leave to the next, which names it ("我在一家外企，SAP，做实施
# 顾问"; "我在一所双非读本科，江西理工大学"; "我用安卓手机，小米13"; "公司叫傲基")
_NAMED_NEXT = frozenset({"works_at", "studies_at", "uses", "team"})
_APPOSITIVE = re.compile(r"^(?:(?:公司|学校|单位|名字)?(?:叫|名叫|叫做)(?P<called>[^，,。的]{2,16})"
                         r"|(?P<parent>[^，,。的]{2,8})(?:下面|旗下|下属)的[^，,。]{1,8}"
                         r"|(?P<name>[^，,。]{2,16}?))$")
_ONE = re.compile(r"一[家所个]|某")  # a thing not yet named: "在一家外企"
_INSTITUTION = re.compile(r"(?:大学|学院|公司|集团|银行|医院|研究院|研究所|中学|小学)$")


def _appositive(part: str, slot: _Slot, *, after_one: bool = False) -> str | None:
    """The name a clause gives, alone, to what the clause before it left unnamed: said with
    叫, a parent ("中石化下面的一个研究院": 中石化), or a name by its look (Latin letters or
    digits, an institution's ending, a well-known product), or any short name after "一家…"
    (``after_one``: "去了一家私立医院，和睦家"). A clause that says more is not one
    ("做工业自动化的", "大四了")."""
    m = _APPOSITIVE.match(part)
    if m is None:
        return None
    value = (m["called"] or m["parent"] or m["name"]).strip()
    if not m["called"] and not m["parent"] and not (
            (after_one and len(value) <= 8)
            or re.search(r"[A-Za-z0-9]", value) or _INSTITUTION.search(value)
            or (slot.predicate == "uses" and tools.mentioned(value))
            or (slot.predicate == "drives" and re.match(_BRANDS, value))):
        return None
    if m["name"] and (re.search(r"[了吗呢吧啊的]$|^(?:做|当|干|在|是|有|去|来|用|跑|搞|写|带|教|住"
                                r"|开(?!瑞)|租|买|提|入|换|主要|平时|目前|现在|天天|每天|一直|还"
                                r"|也|都|就)", value)
                      # "这两天在用iPhone 15", "vivo X100的长焦是真的顶" say more
                      or re.search(r"用(?!友)|的[\u4e00-\u9fff]{2}", value)
                      or _slot_of(value, known=False) not in (None, slot)):
        return None
    value = _clean(value, slot.predicate)
    return value if _valid(value) else None


def _joined(parts: list[str]) -> list[str]:
    """Clauses with "在X，做Y" read as one ("本人目前在华为终端BG，做测试的": where one works and
    what one does there)."""
    out: list[str] = []
    for part in parts:
        if out and re.search(r"在[^，,。在]{2,16}(?<![部组队门心科室])$", out[-1]) and (
                not re.search(r"(?:上班|工作|做|当|干|读|住)", out[-1])) and re.match(
                r"(?:做|当|干(?!了)|负责|教)", part):
            out[-1] += part
        else:
            out.append(part)
    return out


_STILL = re.compile(r"还是|仍然|依然|照旧|继续|不动|没动|没变")
# a tool named as put away ("Sublime基本吃灰", "PHP只剩维护老系统", "告别了印象笔记")
_RETIRED = (r"吃灰|只剩|只用来|下掉|下线|不用了|不怎么用|很少用|基本不用|淘汰|退役|弃用|停用|卸了"
            r"|卸载|闲置|不碰了|不再用|退坑|凉了|被替换|被干掉|被取代|被\S{1,12}?替掉|给[^，,。]{1,4}了"
            r"|送人|挂闲鱼|卖了|卖掉|出掉|过户|换下来|停掉")
_RETIRING = r"告别了?|卸载了?|删了|弃用了?|停用了?|不再用|不用|退掉了?"


def put_away(name: str, sentence: str) -> bool:
    """Whether the sentence names the tool as put away, beside the one used now ("都用VS Code
    了，Sublime基本吃灰": Sublime): then the one used now replaces it."""
    n = re.escape(name)
    return re.search(rf"(?:{_RETIRING}){n}|{n}[^，,。；;]{{0,10}}?(?:{_RETIRED})",
                     sentence, re.I) is not None


def _work_and_role(rest: str) -> list[Statement]:
    """After a verb of joining ("去了", "跳槽到"), the employer and the role it names: "网易，
    title是高级产品经理", "网易当产品经理"; nothing when what follows is the role itself."""
    first, _, after = re.split(r"[，,]", rest, maxsplit=1)[0], None, rest
    split = re.match(r"(?P<work>[^，,。]{2,16}?)(?:当|做|任|担任)(?P<role>[^，,。]+)$", first)
    work = _clean(split["work"] if split else first, _WORK.predicate)
    role = (_clean(split["role"], _ROLE.predicate) if split else next(
        (v for c in re.split(r"[，,]", after) if (v := _state(_ROLE, c))), None))
    if not _valid(work) or re.search(_ROLE_WORD, work) or not role or not _valid(role):
        return []
    return [Statement(_WORK.predicate, work, None, _WORK.kind, _WORK.template, change=True),
            Statement(_ROLE.predicate, role, None, _ROLE.kind, _ROLE.template, change=True)]


# where one went: a change of place or job, never of a car or a tool ("开着我的卡罗拉去了趟千岛湖")
_GONE_TO = re.compile(r"(?:去了|来了|来到|刚到|进了|到了)了?")
_TO_WORK = re.compile(r"(?:去了|入职|加入|跳槽到|跳槽去|跳到|投靠|投奔|挖到|挖去)了?")


def _new_value(slot: _Slot, text: str, verb: re.Match[str] | None) -> tuple[str | None, int]:
    """The value a change ends on and where its statement starts: after the verb of change,
    else after "现在…" ("以前X，现在Y")."""
    new, end = (None, len(text)) if verb is None else (
        _clean(text[verb.end():], slot.predicate), verb.end())
    now = re.search(r"现在(?:全部|都|已经|改|还是|天天|每天)*(?:手上|手里|手头)?|^已经(?=是|用)",
                    text)
    if not _valid(new) and now is not None:  # clause by clause: "现在人在成都了，房子租在高新区"
        new = next((v for c in re.split(r"[，,]", text[now.end():]) if (v := _state(slot, c))),
                   None) or _clean(text[now.end():], slot.predicate)
        end = now.start()
    elif slot is _WORK and verb is not None and (here := re.search(
            r"(?:现在|目前|如今)(?:已经)?在(?P<obj>[^，,。]{2,16}?)(?:上班|工作|干|做|当)",
            text[:verb.start()])) and _valid(v := _clean(here["obj"], slot.predicate)):
        # "…离职了，现在在美团上班，上周又调到了到店事业部": where one works now, said first
        new, end = v, here.start()
    return new, end


def _old_value(slot: _Slot, text: str, old: str | None, new: str,
               verb: re.Match[str] | None) -> str | None:
    value = _clean(old, slot.predicate) if old else None
    if value is not None and (not _valid(value) or (
            slot is _ROLE and not re.search(_ROLE_WORD, value))):
        value = None  # "不在那儿了": no value; "不用值大夜了": no title
    if value is not None and (not value or value.casefold() == new.casefold() or re.search(
            r"生产环境|数据库|服务器|线上|公司|这块|那套|云服务|^(?:旧|老)(?:的|$)", value)):
        value = None  # the 把-object was the topic, not the old value
    if value is not None and any(j.cue.fullmatch(value) for j in tools.jobs()):
        value = None  # "把输入法换成微信输入法": the job named
    if value is None and slot.predicate == "uses" and verb is not None and re.match(
            r"升", verb.group()) and (product := re.match(r"(.+?)\s*v?\d[\d.]*$", new)):
        value = product.group(1)  # an upgrade ends the older version: "PostgreSQL" 12
    return value


_EMOJI = re.compile(r"\s*[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]+\s*")
_PLAIN = {"俺们": "我们", "俺": "我", "咱们": "我们", "咱": "我"}
_DIALECT = re.compile("|".join(_PLAIN))
_GIVEN = re.compile(r"^[\u4e00-\u9fff]{1,4}给我(?=(?:买|置换|换|配|送|提)了)")


def _new_elsewhere(slot: _Slot, text: str, old: str | None) -> str | None:
    """A change's new value when its verb names none: got ("小米SU7到手了"), named after
    "一家…" ("去了一家券商做投行，中信证券"), stated plainly beside the old one ("新车是理想
    L7，雅阁已经置换掉了"), the subject of a later clause ("不在快手了，拼多多这边节奏太快"),
    or the last tool named that is not the old one ("换机了，vivo X100的长焦是真的顶")."""
    new = None
    if by := re.search(r"被(?!我)(?P<obj>[^，,。]{2,20}?)(?:替掉|替换掉?|换掉|取代|干掉)", text):
        new = _clean(by["obj"], slot.predicate)
    if not _valid(new) and (got := _GOT.search(text)):
        new = _clean(got["obj"] or got["pit"] or got["by"], slot.predicate)
    if not _valid(new) and (after := re.search(
            r"(?:去了|到了|进了|提车了|到手了|换了|换车了|换机了|[^，,。]{0,12}?(?:一家|一所|一个|一台|一辆))"
            r"[^，,。]*[，,](?P<next>[^，,。]+)", text)):
        new = _appositive(after["next"], slot, after_one=_ONE.search(after.group()) is not None
                          ) or new
    first, *later = re.split(r"[，,]", text)
    clauses = [c for c in [first, *later] if not (old and old in c)]
    if not _valid(new):
        new = next((v for c in clauses if (v := _state(slot, c))), None)
    if not _valid(new) and slot in (_WORK, _TEAM):
        new = next((v for c in later if not (old and old in c) and (
            here := re.match(r"^(?:现在)?(?:在)?(?P<obj>[^，,。]{2,8}?)(?:这边|那边)", c))
            and _valid(v := _clean(here["obj"], slot.predicate))), None)
    if not _valid(new) and slot is _SLOTS[-1]:
        new = next((n for _, n, _ in reversed(tools.mentioned(text))
                    if not (old and (n in old or old in n)) and not put_away(n, text)), None)
    return new


def read(sentence: str, context: str | None = None) -> list[Statement]:
    """The slot values a Chinese sentence (or a clause of ``context``, its sentence) states, or
    the change it states; empty when it states neither, states it of someone else, or only
    plans, asks or supposes it."""
    return _in_city(_read(sentence), context or sentence)


# a district, a zone, a neighbourhood: a place inside a city
_DISTRICT = re.compile(r"(?:区|县|镇|街道|园区|新城|片区)$")
# a move whose words name no place ("搬过来一个月"), and a city left, not reached
_MOVED_HERE = re.compile(r"搬过来|搬来了?|(?<!回)过来(?:了|[一两几半\d]+(?:年|个多?月|周))")
_LEFT_CITY = re.compile(r"(?:从|离开了?|告别了?|不在|退了|卖了)$")


def _in_city(found: list[Statement], sentence: str) -> list[Statement]:
    """Where one lives, named down to its city: a district said beside the city ("成都这边挺好，
    住在高新区": 成都高新区), or a move to the city the sentence talks about ("成都的冬天好阴啊，
    搬过来一个月没见过太阳"). A city the sentence says was left ("从北京…") is not it."""
    named = [c for at, c in places.mentioned(sentence) if not _LEFT_CITY.search(sentence[:at])]
    if not named:
        return found
    if not found and _MOVED_HERE.search(sentence) and len(set(named)) == 1 and not (
            _OTHER.match(sentence) or planned(sentence)):
        return [Statement(_LIVES.predicate, named[0], None, _LIVES.kind, _LIVES.template,
                          change=True)]
    return [replace(st, value=f"{named[0]}{st.value}") if (
        st.predicate == "lives_in" and _DISTRICT.search(st.value)
        and not places.mentioned(st.value) and (not st.old or named[0] not in st.old))
        else st for st in found]


def _read(sentence: str) -> list[Statement]:
    text = _DIALECT.sub(lambda m: _PLAIN[m.group()], sentence.strip())
    text = _EMOJI.sub("，", text).strip("，")  # an emoji ends a clause: "…提车成功🎉 H6置换掉了"
    text = _GIVEN.sub("我", text)  # "儿子给我置换了一辆丰田卡罗拉": the car is the user's
    slot = _slot_of(text) if text else None
    if slot is None:
        return []
    # the verb of change: the first one followed by a value ("升级到 Vue 3 了，…也换成了 X";
    # "被调到了增长团队，风控那摊已经交接出去了")
    verbs = [m for m in re.finditer(_CHANGE, text)
             if _valid(_clean(text[m.end():], slot.predicate)) and not (
                 slot.predicate in ("drives", "uses") and _GONE_TO.fullmatch(m.group()))]
    # where production runs changes in the clause that names production ("把 .NET Framework
    # 升到 .NET 8，顺势把生产服务器全迁到 Debian 12 上了")
    verb = next((m for m in verbs if slot is _SLOTS[0] and slot.cue.search(
        re.split(r"[，,]", text[:m.start()])[-1])), verbs[0] if verbs else None)
    is_change = verb is not None or bool(_CHANGED.search(text)) or any(
        p.search(text) for p in _OLD) or bool(_NOW_DONE.search(text))
    if not is_change:
        return _plain(slot, text)
    # without a verb of change, the words that say one changed anchor what was meant
    # ("Memcached已经被Redis替掉了，主要是想要持久化": the reason after it is no wish)
    anchor = verb or next((m for m in (*(p.search(text) for p in _OLD), _CHANGED.search(text))
                           if m is not None), None)
    if _not_meant(text, anchor, is_change):
        # a change only planned leaves what is said plainly beside it ("…还在 IDC 机房，想上云")
        return [] if _OTHER.match(text) or _TEST_ENV.search(text) else _plain(
            slot, text, beside_change=True)
    new, end = _new_value(slot, text, verb)
    old = next((m["old"] for p in _OLD if (m := p.search(text[:end])) and _valid(
        _clean(m["old"], slot.predicate))), None) or next(
        (m["old"] for p in _GIVEN_UP if (m := p.search(text[end:]))), None)
    if not _valid(new):
        new = _new_elsewhere(slot, text, old)
    if new is None or not _valid(new):
        return []
    if slot is _ROLE and verb is not None and _TO_WORK.fullmatch(verb.group()) and (
            both := _work_and_role(text[verb.end():])):
        return both  # "去了网易，title是高级产品经理": the employer, then the role
    found = [Statement(slot.predicate, new, _old_value(slot, text, old, new, verb), slot.kind,
                       slot.template, change=True)]
    if slot is _WORK and (role := re.search(r"[，,](?:还是)?(?:做|当|担任)(?P<obj>[^，,。]+)",
                                            text[end:])):
        value = _clean(role["obj"], _ROLE.predicate)  # "我跳槽到腾讯了，做后端开发"
        if _valid(value) and _ROLE.cue.search("做" + value):
            found.append(Statement(_ROLE.predicate, value, None, _ROLE.kind, _ROLE.template,
                                   change=True))
    elif slot is _WORK and verb is not None and _TO_WORK.fullmatch(verb.group()) and (
            both := _work_and_role(text[verb.end():])) and re.search(_ROLE_WORD, both[1].value):
        found.append(both[1])  # "加入了字节做后端开发"
    return found
