"""What a slot's value must look like (:mod:`memkit.commands.slots`): a wrong key *replaces* the
user's true fact, so a lead such as "I live in" or 我在…工作 names a slot only before a value of
that slot.

**English** (residence, employer, school, hometown): the value after the lead is

- a proper name: a capital letter right after the lowercase preposition ("I live in Boston", "I work
  at IBM", "I'm from the UK", "I work at eBay"), or a house number and a capitalized street ("I live
  at 221 Baker Street"); the preposition must be lowercase, so an all-caps or Title Case text ("I
  LIVE IN FEAR", "I Live In Fear") names no slot;
- or an article and up to two words before a noun of the slot's kind (:data:`PLACE_NOUNS`,
  :data:`EMPLOYER_NOUNS`, :data:`SCHOOL_NOUNS`): "I live in a small town", "I work at a hospital",
  "I study at a community college";

never a time word, a feeling or an object ("I work at night", "I live in fear", "I moved to a new
desk": lowercase, no noun of the kind). :data:`memkit.commands.slots.NOT_VALUE` turns away the
capitalized words that are no value of the slot: weekdays, months, holidays ("I was born in May",
"I work at Christmas"), tools the user "lives in" or "moved to" ("I moved to Python 3", "I live in
Slack": residence, hometown and school only, since "I work at Slack" is an employer), and a team
or department one is "from" or "moved to" ("I'm from the Marketing team", "I'm from HR", "I moved
to Marketing").

**Chinese** has no capitals; a value is anything but :data:`GENERIC_ZH`: a pronoun or deictic place
(这里, 那边, 外面, 附近), a home (家, 朋友家, 自己家里, 新家, 新房子), 公司 / 单位 / 宿舍 / 学校
alone (an English "at work", "at school"), or a time (晚上, 周末). For the employer and the school a
place is no value either (:data:`PLACES_ZH`: 我在北京工作 says where, not for whom; a name ending in
市 / 省 / 县 / 区 / 镇 / 村 / 州 / 国, a major city, 农村, 国外 …); 医院 or 银行 alone is one, as "a
hospital" is. A Chinese name that starts like a generic word (张家港 after 住在) stays unkeyed: the
rule errs on keeping a fact unkeyed.

**Relationship**: "got married / engaged / divorced" keys the slot only as a main clause (at the
start, after punctuation or and / but / so …): "I got married last month" states the current status,
"It's where I got married", "the day I got married" narrate an event; 我结婚的…, 我结婚那天, 我结婚以后
likewise. "I'm engaged in a discussion", "I'm single-handedly …", "I'm separated from the team", "I got
married to the idea" are not a status.
"""

from __future__ import annotations

__all__ = [
    "CAP",
    "DATE_EN",
    "DATE_ZH",
    "EMPLOYER_NOUNS",
    "GENERIC_ZH",
    "MAIN_CLAUSE",
    "NAME_EN",
    "NAME_ZH",
    "NOT_HOME_ZH",
    "NOT_NAME_ZH",
    "PLACE_NAMES",
    "NOT_SCHOOL",
    "NUMBERED",
    "PLACES_ZH",
    "PLACE_NOUNS",
    "SCHOOL_NOUNS",
    "SUFFIX_ZH",
    "TEAM",
    "TIMES",
    "TOOLS",
    "TOOL_SHAPE",
    "value_en",
]

# a capital letter, matched case-sensitively inside the case-insensitive patterns (Python re and
# polars both read the scoped flag)
CAP = r"(?-i:[A-Z])"
PLACE_NOUNS = (
    r"(?:city|town|village|hamlet|suburbs?|county|state|province|country|countryside|island|region"
    r"|capital|coast|borough|metropolis|valley|mountains|desert|farm)"
)
EMPLOYER_NOUNS = (
    r"(?:company|startup|start-up|bank|hospital|clinic|school|university|college|firm|agency|bakery"
    r"|restaurant|cafe|store|shop|factory|hotel|lab|laboratory|nonprofit|non-profit|charity|studio"
    r"|warehouse|supermarket|airline|consultancy|library|museum|newspaper|magazine|government|council"
    r"|ministry|corporation|enterprise|organi[sz]ation|ngo|pharmacy|bar|pub|gym|garage|plant|retailer"
    r"|publisher|insurer|daycare|kindergarten|church|embassy|army|navy|zoo|casino|theat(?:er|re)|salon"
    r"|dealership|call center|bookstore|brewery|winery|mine|hedge fund|fund|bureau|court|prison"
    r"|police department|fire department|newsroom)"
)
SCHOOL_NOUNS = r"(?:school|university|college|academy|institute|conservatory|polytechnic|uni|seminary)"


def value_en(nouns: str, number: bool = False) -> str:
    """The value of an English slot after its lead and a space: a proper name, or an article and up
    to two words before one of ``nouns`` (``number``: also a house number and a capitalized street).

    >>> import re
    >>> v = re.compile("live in " + value_en(PLACE_NOUNS), re.I | re.A)
    >>> [bool(v.search(t)) for t in ("I live in Boston", "I live in a small town", "I live in fear")]
    [True, True, False]
    """
    num = rf"|[0-9]{{1,5}}[a-z]{{0,2}} {CAP}" if number else ""
    return rf"(?:(?:the )?{CAP}|[a-z]{{1,2}}{CAP}|(?:a|an|the) (?:[a-z-]+ ){{0,2}}{nouns}s?\b{num})"


# capitalized words that are no value of a slot (after the lead): a time, a holiday
TIMES = (
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekends?|january|february|march"
    r"|april|may|june|july|august|september|october|november|december|christmas|xmas|easter"
    r"|thanksgiving|halloween|new year|ramadan|diwali|night|nights)\b"
)
# tools and platforms one "lives in" or "moves to" (not for the employer: "I work at Slack" is one)
TOOLS = (
    r"(?:python|java|rust|golang|go [0-9]|linux|windows|mac|macos|ubuntu|react|vue|angular|aws|azure|gcp"
    r"|kubernetes|docker|postgres|mysql|vim|neovim|emacs|vs ?code|slack|teams|zoom|notion|github|gitlab"
    r"|jira|excel|android|ios|iphone|chrome|firefox|typescript|javascript|node|django|rails|swift"
    r"|kotlin|postgresql|sqlite|mongodb|redis|obsidian|fedora|arch|debian|centos|chatgpt|claude|gemini"
    r"|copilot|cursor|figma|jupyter|discord|telegram|whatsapp|trello|asana|evernote|vercel|heroku"
    r"|terraform|svelte|flutter|next\.?js|nuxt|google (?:drive|docs|sheets|cloud)|dropbox|onedrive|icloud"
    r"|minecraft|roblox|fortnite)\b"
)
# what no place name looks like: a word with a capital after four lowercase letters (PostgreSQL,
# ChatGPT; McAllen and DeKalb stay places), a web name (Next.js, Vercel.app), or one or two
# capitalized words before a software noun ("I live in the Moment app", "Jupyter notebooks")
TOOL_SHAPE = (
    r"(?:(?-i:[A-Z][a-z]{3,}[A-Z])|[A-Za-z0-9-]+\.(?:js|io|ai|app|dev|com|net|org)\b"
    r"|(?:(?-i:[A-Z])[A-Za-z0-9.-]* ){1,2}(?:apps?|notebooks?|editor|ide|terminal|browser|docs|workspace"
    r"|repo|codebase|stack|database|db|distro|framework|plugin|extension|platform|tool|software|version)\b)"
)
# a numbered thing, no place: a plan, a level, a chapter before a number or a letter ("I moved to
# Plan B", "Level 5", "Chapter 3"; "Boston 3 days a week" is still Boston)
NUMBERED = (
    r"(?:plan|level|chapter|stage|phase|step|version|season|episode|part|page|section|act|scene|round|tier"
    r"|option|grade|class|unit|room|floor|row|seat|lane|slide|track|volume|book) (?:[0-9]|[a-z]\b)"
)
# where one studies that is no school ("I'm studying at Starbucks", "I study at Home")
NOT_SCHOOL = r"(?:home|work|starbucks|costa|(?:the )?(?:library|office|kitchen table|desk))\b"
# a name after "my name is" / "call me" / "I go by": a capitalized word ("I go by bike", "Call me an
# Uber", "My name is on the lease" are lowercase)
NAME_EN = r"(?-i:[A-Z])"
# a Chinese name after 叫: a common surname (or 小 / 老 / 阿) and one or two characters ending the
# clause (我叫妈妈来, 叫我起床, 我叫错了 are no name), or a Latin name (我叫Ann)
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
    "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
    "小老阿"
)
NAME_ZH = rf"(?:[{_SURNAMES}][^\s,。;:!?.、]{{1,2}}(?:$|[\s,。;:!?.、])|(?-i:[A-Z]))"
# common words that start like a name (a surname, or 小 / 老 / 阿): 叫我马上…, 我叫高铁, 我叫老师 name no one
# (followed by at most one character before the clause ends: 叫我小心点)
NOT_NAME_ZH = (
    r"(?:马上|马路|马桶|高铁|高兴|高速|高手|高中|高考|高端|老师|老板|老公|老婆|老家|老大|老人|老爸|老妈|老是|老实"
    r"|小心|小时|小孩|小姐|小朋友|小区|小声|小说|小费|小吃|小组|小伙|阿姨|白天|白班|白菜|金额|金钱|黄牛|方便|方案|方向"
    r"|方法|方式|万一|石头|龙虾|钱包|江湖|程序|任务|周末|周一|周二|周三|周四|周五|周六|周日|于是|余额|许多|夏天|何时"
    r"|何况|史上|熊猫|付款|付钱|韩国|范围|严格|陆地|向导|向前|向上|孔子|毛病|江边|林子|段落|雷雨|唐朝|宋体|朱红|吴语"
    r"|郭德纲|司机|快递|外卖|车|孙子|孙女)(?:[^\s,。;:!?.、])?(?:$|[\s,。;:!?.、])"
)
# a calendar date after "my birthday is" / "I was born on" / 我的生日是: a month name, or a day before a
# month name, a "/" or the end of the clause (May 3, the 3rd of May, 3/5, "on the 3rd"; "next week",
# "10 days away", "the 4th floor of the hospital", "a farm" are none)
_MONTH = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july"
    r"|august|september|october|november|december)\b"
)
DATE_EN = (
    rf"(?:(?:on |in )?(?:the )?{_MONTH}|(?:on )?(?:the )?[0-9]{{1,4}}(?:(?:st|nd|rd|th)?(?: of)? {_MONTH}"
    r"|[/.-][0-9]|(?:st|nd|rd|th)?(?:$|[,.;:!?)，。；！？])))"
)
DATE_ZH = r"(?:农历|阴历|公历|阳历)?[0-9一二三四五六七八九十两]{1,4}(?:年|月|日|号|[/.-])"
# Chinese values that are no home: a hotel or a hospital, a floor, a building, a room, a department
NOT_HOME_ZH = (
    r"(?:酒店|宾馆|旅馆|民宿|客栈|青旅|招待所|医院|病房|[^,。;]{0,6}(?:楼|层|栋|单元|室|工位|座位|位子|部|组|团队|部门)"
    r"(?:了|里|住|$|[,。;!]))"
)
# "I'm from X" names a hometown only when X is a known place (or "originally" is said: the slots): a
# country, a US state, a province, a large city, in English; "I'm from Google", "I'm from Mars", "I'm
# from Acme" name an employer, a joke, a team. Case-sensitive, as a proper name is written; not before
# another capitalized word or an apostrophe ("Boston University", "America's Test Kitchen": a name).
PLACE_NAMES = (
    r"(?-i:(?:(?:the )?(?:US|USA|U\.S\.|UK|U\.K\.|States|Netherlands|Philippines|UAE|Bay Area|Midwest"
    r"|South|North)|America|Canada|Mexico|Brazil|Argentina|Chile|Peru|Colombia|Venezuela|Cuba|Jamaica|England|Scotland|Wales"
    r"|Ireland|Britain|France|Germany|Spain|Portugal|Italy|Greece|Switzerland|Austria|Belgium|Holland|Denmark"
    r"|Sweden|Norway|Finland|Iceland|Poland|Czechia|Hungary|Romania|Bulgaria|Serbia|Croatia|Ukraine|Russia"
    r"|Belarus|Lithuania|Latvia|Estonia|Turkey|Israel|Lebanon|Syria|Iraq|Iran|Egypt|Morocco|Algeria|Tunisia"
    r"|Nigeria|Ghana|Kenya|Ethiopia|Uganda|Tanzania|South Africa|Zimbabwe|Saudi Arabia|Qatar|Pakistan|India"
    r"|Bangladesh|Nepal|Sri Lanka|China|Taiwan|Hong Kong|Macau|Japan|Korea|South Korea|Mongolia|Vietnam"
    r"|Thailand|Cambodia|Laos|Myanmar|Malaysia|Singapore|Indonesia|Australia|New Zealand|Europe|Asia|Africa"
    r"|Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|Idaho"
    r"|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota"
    r"|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York"
    r"|New York City|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island"
    r"|South Carolina|South Dakota"
    r"|Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming|Ontario|Quebec"
    r"|British Columbia|Alberta|Manitoba|Nova Scotia|Boston|Chicago|Los Angeles|LA|NYC|San Francisco|Seattle"
    r"|Portland|Denver|Austin|Dallas|Houston|Atlanta|Miami|Philadelphia|Pittsburgh|Detroit|Cleveland"
    r"|Baltimore|Minneapolis|St\. Louis|Nashville|New Orleans|Phoenix|Las Vegas|San Diego|San Jose|Brooklyn"
    r"|Toronto|Montreal|Vancouver|London|Manchester|Liverpool|Birmingham|Glasgow|Edinburgh|Dublin|Paris|Lyon"
    r"|Berlin|Munich|Hamburg|Frankfurt|Vienna|Zurich|Geneva|Amsterdam|Brussels|Madrid|Barcelona|Lisbon|Rome"
    r"|Milan|Naples|Athens|Prague|Warsaw|Budapest|Stockholm|Oslo|Copenhagen|Helsinki|Moscow|Kyiv|Istanbul"
    r"|Cairo|Lagos|Nairobi|Dubai|Mumbai|Delhi|Bangalore|Karachi|Beijing|Shanghai|Guangzhou|Shenzhen|Hangzhou"
    r"|Chengdu|Wuhan|Nanjing|Tianjin|Chongqing|Xi'an|Tokyo|Osaka|Kyoto|Seoul|Busan|Taipei|Manila|Bangkok"
    r"|Hanoi|Jakarta|Sydney|Melbourne|Brisbane|Perth|Auckland|Sao Paulo|Rio|Buenos Aires|Lima|Bogota"
    r"|Mexico City|Guangdong|Zhejiang|Jiangsu|Sichuan|Hunan|Hubei|Henan|Hebei|Shandong|Fujian|Yunnan|Guangxi"
    r"|Shanxi|Shaanxi|Anhui|Jiangxi|Liaoning|Jilin|Heilongjiang|Guizhou|Hainan|Gansu|Xinjiang|Tibet)"
    r"(?:$|[^A-Za-z '’]| (?-i:[a-z])))"
)
# "I'm from" a team or a department, not a place
TEAM = (
    r"(?:(?:[a-z&'-]+ ){0,3}(?:team|department|dept|office|group|division|squad|crew|org)\b"
    r"|(?:hr|it|qa|pr|r&d|ops|devops|sales|marketing|finance|legal|support|engineering|accounting)\b)"
)
# a clause the user states as their own now, not one inside a relative or time clause
MAIN_CLAUSE = (
    r"(?:^|[,.;:!?] ?|\b(?:and|but|so|well|oh|yes|yeah|ok|okay|also|btw|actually|finally|recently"
    r"|yesterday|today|now|guess what|last (?:week|month|year|weekend|summer|spring|fall|winter)) )"
)
# Chinese values that are none: deictic and generic places, a home, a time, a seat or a desk, the
# heart or a dream (我搬到了新的座位, 我住在心里)
GENERIC_ZH = (
    r"(?:[这那哪][^,。;]{0,6}|[^,。;]{0,4}家|外面|外边|附近|楼上|楼下|隔壁|对面|一起|旁边|身边|公司|单位|办公室|宿舍"
    r"|学校|线上|网上|远程|户外|室内|晚上|早上|白天|夜里|夜间|周末|平时|每天|今天|明天|昨天|下午|上午"
    r"|中午|假期|假日|同一|新的|新(?:房|公寓|地方|小区|宿舍|住处|城市|单位|公司|学校)"
    r"|座位|位子|位置|工位|心里|心中|梦里|梦中|脑海)"
)
# Chinese places: a value of residence or hometown, never of the employer or the school
PLACES_ZH = (
    r"(?:[^,。;]{1,6}(?:市|省|县|区|镇|村|州|国)|北京|上海|天津|重庆|深圳|南京|武汉|成都|西安|香港|澳门"
    r"|台湾|台北|厦门|青岛|长沙|大连|沈阳|昆明|合肥|济南|宁波|无锡|东京|纽约|伦敦|巴黎|新加坡|城里|乡下"
    r"|农村|市区|郊区|国外|海外|外地|本地|当地|老家|市中心|城市|大城市|小城市|小镇|南方|北方)"
)
# what may follow a Chinese place before the verb: 家里, 公司附近
SUFFIX_ZH = r"(?:里|中|上|下|附近|旁边|那里|这里|那边|这边|一带)?"
