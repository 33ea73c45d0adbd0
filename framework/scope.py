"""What the course's model cannot do, and how it says so: the honest reply and its prompts.

The model does three things: sums and differences of 0..99, greetings (hello, thanks,
goodbye, slang such as "yo, what's up?" included) and questions about this course. To
everything else it gives one canonical honest sentence per language (`HONEST`), in Chinese
when the prompt holds a Chinese character, else in English (`honest_reply`).

`offscope_prompt` draws an out-of-scope prompt from a wide, varied set of topics
(weather, names, capitals, cooking, jokes, dates and times, code requests, emoji,
translation, products and division, numbers past 99, mixed Chinese and English). Every
topic has two disjoint sets of templates: ``train`` ones, which the corpus uses, and
``heldout`` ones, which only `heldout_offscope` uses, so the held-out figure measures
phrasings the model never saw. `introduction` and `name_question` make the two turns of a
conversation in which the user gives a name and then asks it back: the model greets the
first and gives the honest reply to the second (it does not remember names).

Deliberately not here: randomness of its own (every function takes the caller's seeded
`numpy.random.Generator`), the corpus's mix (`framework.corpus`).

Example:
    >>> honest_reply("今天天气怎么样？") == HONEST["zh"]
    True
    >>> honest_reply("what is the capital of France?").startswith("I can only do addition")
    True
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "HONEST",
    "NAMES",
    "OFFSCOPE_TOPICS",
    "heldout_names",
    "heldout_offscope",
    "honest_reply",
    "introduction",
    "is_chinese",
    "name_question",
    "offscope_prompt",
]

HONEST: dict[str, str] = {
    "zh": "我只会做 0–99 的加减法、打招呼和回答本课程的问题。",
    "en": "I can only do addition and subtraction with 0–99, say hello and answer questions "
    "about this course.",
}


def is_chinese(text: str) -> bool:
    """True if `text` holds a CJK ideograph (U+4E00..U+9FFF) or CJK punctuation."""
    return any("\u4e00" <= ch <= "\u9fff" or "\u3000" <= ch <= "\u303f" for ch in text)


def honest_reply(prompt: str) -> str:
    """The honest reply to `prompt`: Chinese if it holds a Chinese character, else English."""
    return HONEST["zh" if is_chinese(prompt) else "en"]


# Fillers: {p} place, {c} country, {d} dish, {w} when, {f} a code task, {e} emoji, {n} name,
# {k} a number past 99, {s} a small number. zh fillers are Chinese, en fillers English.
_FILL: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "p": ("Beijing", "London", "Paris", "Tokyo", "New York", "Shanghai", "Berlin", "here"),
        "c": ("France", "Japan", "China", "Germany", "Italy", "Brazil", "Canada", "Egypt"),
        "d": ("rice", "pasta", "dumplings", "an omelette", "fried noodles", "a cake", "soup"),
        "w": ("today", "tomorrow", "this weekend", "tonight", "right now"),
        "f": ("sorts a list", "reverses a string", "reads a file", "adds two numbers",
              "finds the max"),
        "n": ("Tom", "Alice", "Bob", "Lily", "Jack", "Emma", "Leo", "Mia", "Ben", "Kate", "Max",
              "Zoe", "Ryan", "Anna"),
    },
    "zh": {
        "p": ("北京", "上海", "广州", "深圳", "杭州", "成都", "南京", "这里"),
        "c": ("法国", "日本", "中国", "德国", "意大利", "巴西", "加拿大", "埃及"),
        "d": ("红烧肉", "饺子", "米饭", "番茄炒蛋", "面条", "蛋糕", "汤"),
        "w": ("今天", "明天", "周末", "今晚", "现在"),
        "f": ("排序", "反转字符串", "读文件", "求最大值", "冒泡排序"),
        "n": ("小明", "小红", "李雷", "韩梅梅", "张伟", "王芳", "小刚", "丽丽", "小李", "小王",
              "阿明", "晓东", "美美", "大卫"),
    },
}  # fmt: skip
_EMOJI = ("😀", "😂", "👍", "❤️", "🤔", "🙏", "🎉", "😭", "🔥", "🐱")

# (topic, lang) -> {"train": templates, "heldout": templates}
OFFSCOPE_TOPICS: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {
    ("weather", "en"): {
        "train": ("what's the weather like {w}", "will it rain {w}", "how is the weather in {p}",
                  "is it cold in {p} {w}", "weather forecast for {p}", "is it sunny {w}",
                  "what is the temperature in {p}", "how warm is it {w}",
                  "is it going to snow {w}"),
        "heldout": ("do I need an umbrella {w}", "how hot is it in {p}",
                    "what's the temperature {w}"),
    },
    ("weather", "zh"): {
        "train": ("今天天气怎么样", "{w}会下雨吗", "{p}天气怎么样", "{p}{w}冷不冷",
                  "{w}{p}的天气", "{w}出太阳吗", "{p}气温多少", "{w}热不热", "{w}会下雪吗"),
        "heldout": ("{w}要带伞吗", "{p}现在多少度", "{w}天气好不好"),
    },
    ("name", "en"): {
        "train": ("what is my name", "do you know my name", "who am I", "guess my name",
                  "what's my dog's name", "remember my name", "tell me who I am", "say my name"),
        "heldout": ("can you tell me my name", "do you remember who I am"),
    },
    ("name", "zh"): {
        "train": ("我叫什么名字", "你知道我叫什么吗", "我是谁", "猜猜我的名字",
                  "我的狗叫什么", "记住我的名字", "说出我的名字", "你记得我吗"),
        "heldout": ("你还记得我的名字吗", "告诉我我叫什么"),
    },
    ("capital", "en"): {
        "train": ("what is the capital of {c}", "capital of {c}", "where is {p}",
                  "how many people live in {c}", "what language do they speak in {c}",
                  "how large is {c}", "what is the area of {c}", "what is {c} famous for"),
        "heldout": ("which city is the capital of {c}", "how big is {c}"),
    },
    ("capital", "zh"): {
        "train": ("{c}的首都是哪里", "{c}首都", "{p}在哪里", "{c}有多少人",
                  "{c}说什么语言", "{c}面积多大", "{c}大不大",
                  "{c}有什么好吃的"),
        "heldout": ("{c}的首都叫什么", "{c}有多大"),
    },
    ("cooking", "en"): {
        "train": ("how do I cook {d}", "give me a recipe for {d}", "how to make {d}",
                  "what should I eat {w}", "how long do I boil {d}"),
        "heldout": ("teach me to make {d}", "what goes well with {d}"),
    },
    ("cooking", "zh"): {
        "train": ("怎么做{d}", "{d}怎么做", "给我一个{d}的菜谱", "{w}吃什么", "{d}要煮多久"),
        "heldout": ("教我做{d}", "{d}好吃吗"),
    },
    ("joke", "en"): {
        "train": ("tell me a joke", "say something funny", "tell me a story", "sing me a song",
                  "write a poem", "recommend a movie",
                  "cheer me up", "make me smile", "entertain me", "tell me something fun"),
        "heldout": ("do you know any jokes", "make me laugh", "write me a short poem"),
    },
    ("joke", "zh"): {
        "train": ("讲个笑话", "说点好笑的", "讲个故事", "唱首歌", "写一首诗", "推荐一部电影",
                  "逗我开心", "让我开心一下", "来个段子"),
        "heldout": ("你会讲笑话吗", "逗我笑一下", "给我写首短诗"),
    },
    ("date", "en"): {
        "train": ("what day is it {w}", "what time is it", "what is the date today",
                  "what year is it", "when is the next holiday", "how many days until Friday",
                  "what month is it", "what date is it"),
        "heldout": ("what's today's date", "is it Monday {w}"),
    },
    ("date", "zh"): {
        "train": ("今天几号", "现在几点", "今天星期几", "今年是哪一年", "下一个假期是什么时候",
                  "离周五还有几天", "现在是几月"),
        "heldout": ("今天是几月几号", "现在几点了"),
    },
    ("code", "en"): {
        "train": ("write a python function that {f}", "write code that {f}", "fix my code",
                  "how do I install numpy", "write a program that {f}", "debug this for me",
                  "help me with my homework", "write html for a web page"),
        "heldout": ("can you code a script that {f}", "give me javascript that {f}"),
    },
    ("code", "zh"): {
        "train": ("用python写一个{f}", "写代码实现{f}", "帮我改代码", "怎么安装numpy",
                  "写个程序{f}", "帮我调试", "帮我写作业", "写个网页"),
        "heldout": ("帮我写一段{f}的代码", "用Java实现{f}"),
    },
    ("emoji", "en"): {
        "train": ("{e}", "{e}{e}", "{e} {e} {e}", "{e}?", "lol {e}", "{e} ok"),
        "heldout": ("{e}{e}{e}", "haha {e}", "omg {e}"),
    },
    ("emoji", "zh"): {
        "train": ("{e}哈哈", "哈哈哈{e}", "{e}是什么意思", "发个{e}"),
        "heldout": ("呜呜{e}", "{e}{e}嘿嘿"),
    },
    ("mixed", "en"): {
        "train": ("translate hello into French", "what does bonjour mean",
                  "who won the game {w}", "what is the news {w}", "give me some advice",
                  "what is love", "who is the president of {c}", "buy me a ticket to {p}",
                  "what is the best phone", "play some music", "what is the meaning of life"),
        "heldout": ("how do you say thank you in Japanese", "who is the best football player",
                    "book a hotel in {p}"),
    },
    ("mixed", "zh"): {
        "train": ("今天 weather 怎么样", "帮我写 code", "{p} 有什么好玩的",
                  "what is 北京 famous for", "翻译一下 hello", "我想听 music",
                  "把这句话翻译成英文", "最近有什么新闻"),
        "heldout": ("{w} 要 take 伞吗", "你会说 English 吗", "推荐一个 app"),
    },
    ("beyond", "en"): {
        "train": ("{s}*{s}=?", "what is {s} times {s}", "{s}/{s}=?", "what is {s} divided by {s}",
                  "{k}+{s}=?", "what is {k} plus {k}", "{k}-{s}", "square root of {s}",
                  "what is {s} to the power of {s}",
                  "{s}x{s}=?", "what is {s} x {s}", "{s} × {s}", "{s} times {s} = ?"),
        "heldout": ("multiply {s} by {s}", "{s} x {s} = ?", "what is {k} minus {s}"),
    },
    ("beyond", "zh"): {
        "train": ("{s}乘{s}等于几", "{s}*{s}等于多少", "{s}除以{s}等于几", "{k}+{s}等于多少",
                  "{k}加{k}等于几", "{k}-{s}是多少", "{s}的平方根是多少", "{s}的{s}次方",
                  "{s}×{s}等于几", "{s}x{s}是多少", "{s}乘{s}是多少"),
        "heldout": ("{s}乘以{s}是多少", "{s}×{s}=？", "{k}减{s}等于几"),
    },
}  # fmt: skip


def _fill(rng: np.random.Generator, template: str, lang: str) -> str:
    """`template` with each placeholder replaced by a random filler of its kind."""
    out, fill = [], _FILL[lang]
    for k, part in enumerate(template.split("{")):
        if k == 0:
            out.append(part)
            continue
        key, rest = part[0], part[2:]
        if key == "e":
            word = _EMOJI[int(rng.integers(len(_EMOJI)))]
        elif key == "k":
            word = str(int(rng.integers(100, 1000)))
        elif key == "s":
            word = str(int(rng.integers(2, 13)))
        else:
            word = fill[key][int(rng.integers(len(fill[key])))]
        out.append(word + rest)
    return "".join(out)


def offscope_prompt(rng: np.random.Generator, lang: str, split: str = "train") -> str:
    """A random out-of-scope prompt in `lang` from the `split` templates of a random topic.

    Example:
        >>> p = offscope_prompt(np.random.default_rng(0), "zh")
        >>> honest_reply(p) == HONEST["zh"] or p[0] in _EMOJI
        True
    """
    topics = [t for t, lg in OFFSCOPE_TOPICS if lg == lang]
    topic = topics[int(rng.integers(len(topics)))]
    templates = OFFSCOPE_TOPICS[(topic, lang)][split]
    return _fill(rng, templates[int(rng.integers(len(templates)))], lang)


def heldout_offscope() -> list[tuple[str, str]]:
    """The held-out out-of-scope prompts: each held-out template filled twice (seed 7).

    Returns:
        (prompt, lang) pairs, distinct, in a fixed order.
    """
    rng = np.random.default_rng(7)
    seen: dict[str, str] = {}
    for (_, lang), sets in OFFSCOPE_TOPICS.items():
        for template in sets["heldout"]:
            for _ in range(2):
                seen.setdefault(_fill(rng, template, lang), lang)
    return list(seen.items())


NAMES: dict[str, tuple[str, ...]] = {"en": _FILL["en"]["n"], "zh": _FILL["zh"]["n"]}
_HELDOUT_NAMES: dict[str, tuple[str, ...]] = {"en": ("Sam", "Nora"), "zh": ("小华", "阿强")}
_INTRO = {"en": ("my name is {n}", "I am {n}", "I'm {n}", "call me {n}", "hi, I'm {n}"),
          "zh": ("我叫{n}", "我是{n}", "我的名字是{n}", "叫我{n}", "你好，我叫{n}")}  # fmt: skip
_ASK_NAME = {"en": ("what is my name", "what's my name", "do you know my name", "who am I"),
             "zh": ("我叫什么名字", "我叫什么", "你知道我叫什么吗", "我是谁")}  # fmt: skip


def heldout_names() -> dict[str, tuple[str, ...]]:
    """Names no training dialogue uses, for the multi-turn check."""
    return _HELDOUT_NAMES


def introduction(rng: np.random.Generator, lang: str, name: str | None = None) -> str:
    """The user gives a name: "我叫小明", "my name is Tom" (a random name by default)."""
    names = NAMES[lang]
    name = name or names[int(rng.integers(len(names)))]
    templates = _INTRO[lang]
    return templates[int(rng.integers(len(templates)))].format(n=name)


def name_question(rng: np.random.Generator, lang: str) -> str:
    """The user asks the name back: "我叫什么名字", "what's my name"."""
    return _ASK_NAME[lang][int(rng.integers(len(_ASK_NAME[lang])))]
