"""The phrases of the course's corpus: number words, question templates, canned replies.

`framework.corpus` draws dialogues from these tables. Everything a user might type comes
in English and Chinese, with symbols and with words ("3+4=?", "three plus four",
"三加四是多少"); every reply is one fixed, canonical sentence per meaning and language, so
that the model's job is to map many phrasings to one answer.

Deliberately not here: randomness of its own (every function takes the caller's seeded
`numpy.random.Generator`), and any reply that depends on more than the question.

Example:
    >>> number_en(21), number_zh(21), number_zh(10), number_zh(0)
    ('twenty-one', '二十一', '十', '零')
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "FACTS",
    "GREETINGS",
    "SYSTEM",
    "ask_sum",
    "heldout_facts",
    "heldout_greetings",
    "number_en",
    "number_zh",
    "sum_template",
    "vary",
]

_ONES_EN = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
_TENS_EN = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_DIGITS_ZH = "零一二三四五六七八九"


def number_en(n: int) -> str:
    """English words for 0 <= n <= 99 ("forty-two")."""
    if not 0 <= n <= 99:
        raise ValueError(f"n must be in 0..99, got {n}")
    if n < 20:
        return _ONES_EN[n]
    tens, ones = divmod(n, 10)
    return _TENS_EN[tens] + ("" if ones == 0 else "-" + _ONES_EN[ones])


def number_zh(n: int) -> str:
    """Chinese numerals for 0 <= n <= 99 ("十二", "二十", "九十九")."""
    if not 0 <= n <= 99:
        raise ValueError(f"n must be in 0..99, got {n}")
    if n < 10:
        return _DIGITS_ZH[n]
    tens, ones = divmod(n, 10)
    head = "十" if tens == 1 else _DIGITS_ZH[tens] + "十"
    return head + ("" if ones == 0 else _DIGITS_ZH[ones])


# Templates: {x} and {y} are the operands. "sym" templates take digits; "word" templates
# take digits or number words.
_SUMS: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("en", "+", "sym"): (
        "{x}+{y}=?", "{x} + {y} = ?", "{x}+{y}", "{x} + {y}", "{x}+{y}=", "{x} + {y} =",
        "what is {x}+{y}", "what is {x} + {y}", "calculate {x}+{y}", "compute {x} + {y}",
        "{x}+{y} equals?", "solve {x} + {y}",
    ),
    ("en", "+", "word"): (
        "what is {x} plus {y}", "what's {x} plus {y}", "how much is {x} plus {y}",
        "{x} plus {y}", "{x} plus {y} equals what", "add {x} and {y}",
        "what do you get if you add {x} and {y}", "what is the sum of {x} and {y}",
        "sum of {x} and {y}", "please calculate {x} plus {y}", "can you tell me {x} plus {y}",
        "{x} and {y} make how many",
    ),
    ("en", "-", "sym"): (
        "{x}-{y}=?", "{x} - {y} = ?", "{x}-{y}", "{x} - {y}", "{x}-{y}=", "{x} - {y} =",
        "what is {x}-{y}", "what is {x} - {y}", "calculate {x}-{y}", "compute {x} - {y}",
    ),
    ("en", "-", "word"): (
        "what is {x} minus {y}", "what's {x} minus {y}", "how much is {x} minus {y}",
        "{x} minus {y}", "subtract {y} from {x}", "take {y} away from {x}", "{x} take away {y}",
        "what do you get if you subtract {y} from {x}", "what is {x} less {y}",
        "what is the difference between {x} and {y}",
    ),
    ("zh", "+", "sym"): (
        "{x}+{y}=?", "{x}+{y}=？", "{x}+{y}等于几", "{x}+{y}等于多少", "{x} + {y} 等于多少",
        "计算{x}+{y}", "算一下 {x}+{y}", "{x}+{y}是多少",
    ),
    ("zh", "+", "word"): (
        "{x}加{y}等于几", "{x}加{y}等于多少", "{x}加{y}是多少", "{x} 加 {y} 等于几",
        "{x}加上{y}等于多少", "{x}和{y}的和是多少", "{x}和{y}加起来是多少", "算一下{x}加{y}",
        "请问{x}加{y}等于几", "{x}加{y}得几", "把{x}和{y}加起来是多少",
    ),
    ("zh", "-", "sym"): (
        "{x}-{y}=?", "{x}-{y}=？", "{x}-{y}等于几", "{x}-{y}等于多少", "{x} - {y} 等于多少",
        "计算{x}-{y}", "{x}-{y}是多少",
    ),
    ("zh", "-", "word"): (
        "{x}减{y}等于几", "{x}减{y}等于多少", "{x}减{y}是多少", "{x} 减 {y} 等于几",
        "{x}减去{y}等于多少", "{x}减去{y}得几", "{x}和{y}的差是多少", "从{x}里减去{y}还剩几",
        "算一下{x}减{y}", "请问{x}减{y}等于几",
    ),
}  # fmt: skip


def _word(rng: np.random.Generator, n: int, lang: str) -> str:
    if lang == "en":
        return number_en(n)
    return "两" if n == 2 and rng.random() < 0.3 else number_zh(n)


def sum_template(rng: np.random.Generator, op: str, lang: str) -> str:
    """A random question template for `op` in `lang`: symbols 45% of the time, else words.

    Example:
        >>> "{x}" in sum_template(np.random.default_rng(0), "+", "zh")
        True
    """
    style = "sym" if rng.random() < 0.45 else "word"
    templates = _SUMS[(lang, op, style)]
    return templates[int(rng.integers(len(templates)))]


def ask_sum(
    rng: np.random.Generator, a: int, op: str, b: int, lang: str, template: str | None = None
) -> str:
    """One way a person could ask for ``a op b``, in `lang` ("en" or "zh").

    Args:
        rng: the caller's generator (every choice is drawn from it).
        a, op, b: the sum.
        lang: "en" or "zh".
        template: one of `sum_template`'s templates (default: a random one).

    Example:
        >>> q = ask_sum(np.random.default_rng(0), 3, "+", 4, "en", "what is {x} plus {y}")
        >>> q.lower().startswith("what is")
        True
    """
    template = template or sum_template(rng, op, lang)
    form = rng.random()  # word templates: digits, words, or one of each
    if any(ch in template for ch in "+-") or form < 0.5:
        x, y = str(a), str(b)
    elif form < 0.85:
        x, y = _word(rng, a, lang), _word(rng, b, lang)
    elif rng.random() < 0.5:
        x, y = str(a), _word(rng, b, lang)
    else:
        x, y = _word(rng, a, lang), str(b)
    return vary(rng, template.format(x=x, y=y), lang)


def vary(rng: np.random.Generator, text: str, lang: str) -> str:
    """Typing habits: a capital first letter or not, and the closing punctuation."""
    if lang == "en" and rng.random() < 0.5:
        text = text[:1].upper() + text[1:]
    if text.endswith(("?", "？", "=", "!", "！", "。", ".")):
        return text
    ends = ("", "?", "?", " ?", "!") if lang == "en" else ("", "？", "？", "?", "。")
    return text + ends[int(rng.integers(len(ends)))]


def _asks(templates: tuple[str, ...], names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t.format(t=n) for t in templates for n in names)


_FACT_EN = ("what is {t}", "what does {t} do", "explain {t}", "tell me about {t}", "{t}",
            "describe {t}", "please explain {t}", "how does {t} work",
            "what is {t} for")  # fmt: skip
_FACT_ZH = ("什么是{t}", "{t}是什么", "{t}有什么用", "解释一下{t}", "讲讲{t}", "说一下{t}",
            "介绍一下{t}", "{t}是啥", "{t}是什么意思", "跟我讲讲{t}", "请问什么是{t}")  # fmt: skip

Entry = dict[str, tuple[tuple[str, ...], str]]


_FACT_NAMES: list[dict[str, tuple[str, ...]]] = []  # each fact's names, for heldout_facts


def _fact(en: tuple[str, ...], en_reply: str, zh: tuple[str, ...], zh_reply: str) -> Entry:
    _FACT_NAMES.append({"en": en, "zh": zh})
    return {"en": (_asks(_FACT_EN, en), en_reply), "zh": (_asks(_FACT_ZH, zh), zh_reply)}


GREETINGS: list[Entry] = [
    {"en": (("hi", "hello", "hey", "hello there", "good morning", "hi there", "yo",
             "yo, what's up", "what's up", "sup", "hiya", "hey hey", "good evening", "heyy",
             "hey there", "hi hi", "greetings"),
            "Hello! How can I help you?"),
     "zh": (("你好", "您好", "嗨", "哈喽", "早上好", "你好呀", "在吗", "晚上好", "嗨嗨",
             "你好啊", "下午好", "您好啊", "你好你好", "嗨，在吗"), "你好！有什么可以帮你？")},
    {"en": (("how are you", "how are you doing", "how is it going", "how's it going",
             "how are things", "how's everything", "how's life"), "I am fine, thank you."),
     "zh": (("你好吗", "最近怎么样", "你还好吗", "过得好吗", "你怎么样"), "我很好，谢谢。")},
    {"en": (("who are you", "what are you", "what is your name", "what's your name"),
            "I am a tiny GPT from miniLLM lab."),
     "zh": (("你是谁", "你叫什么名字", "介绍一下你自己", "你是什么"),
            "我是 miniLLM lab 的小型 GPT。")},
    {"en": (("thanks", "thank you", "thank you very much", "thank u", "thank u so much",
             "thanks a lot", "thx", "ty", "many thanks", "thank you so much", "thanks so much",
             "thanks a bunch", "thanks a ton", "thx a lot"),
            "You are welcome."),
     "zh": (("谢谢", "谢谢你", "多谢", "谢啦", "感谢", "太感谢了", "非常感谢", "谢了",
             "谢谢谢谢", "谢谢哈", "感谢感谢"), "不客气。")},
    {"en": (("bye", "goodbye", "see you", "see ya", "bye bye", "good night", "later",
             "bye now", "catch you later"), "Goodbye!"),
     "zh": (("再见", "拜拜", "回头见", "晚安", "下次见", "拜", "改天见", "后天见"), "再见！")},
]  # fmt: skip

FACTS: list[Entry] = [
    _fact(("a token",), "A token is one unit of text the model reads; here, one byte.",
          ("token",), "token 是模型读入的最小文本单位，这里是一个字节。"),
    _fact(("a tokenizer",), "A tokenizer turns text into token ids and back.",
          ("分词器", "tokenizer"), "分词器把文本变成 token id，也能变回来。"),
    _fact(("an embedding", "the embedding"), "An embedding turns each token id into a vector.",
          ("词嵌入", "embedding"), "词嵌入把每个 token id 变成一个向量。"),
    _fact(("positional encoding",), "Positional encoding tells the model where each token is.",
          ("位置编码",), "位置编码告诉模型每个 token 在第几位。"),
    _fact(("attention", "self-attention"),
          "Attention lets each position mix in information from earlier positions.",
          ("注意力", "自注意力", "注意力机制"), "注意力让每个位置从前面的位置取信息。"),
    _fact(("the causal mask",), "The causal mask stops a position from seeing the future.",
          ("因果掩码",), "因果掩码让每个位置看不到后面的内容。"),
    _fact(("softmax",), "Softmax turns scores into probabilities that sum to 1.",
          ("softmax",), "softmax 把分数变成和为 1 的概率。"),
    _fact(("layernorm", "layer normalization"),
          "LayerNorm rescales each vector to mean 0 and variance 1.",
          ("层归一化", "LayerNorm"), "层归一化把每个向量调整到均值 0、方差 1。"),
    _fact(("the feed-forward network", "the FFN"),
          "The feed-forward network transforms each position on its own.",
          ("前馈网络", "FFN"), "前馈网络对每个位置单独做变换。"),
    _fact(("a residual connection",), "A residual connection adds a layer's input to its output.",
          ("残差连接",), "残差连接把一层的输入加到它的输出上。"),
    _fact(("the lm head",), "The LM head turns the last hidden state into logits.",
          ("输出层", "lm_head"), "输出层把最后的隐藏状态变成 logits。"),
    _fact(("cross-entropy loss", "the loss"),
          "Cross-entropy loss is the negative log probability of the right next token.",
          ("交叉熵损失", "损失函数"), "交叉熵损失是正确的下一个 token 的负对数概率。"),
    _fact(("AdamW", "the optimizer"), "AdamW gives every weight its own step size and decays it.",
          ("AdamW", "优化器"), "AdamW 给每个参数自己的步长，并让权重衰减。"),
    _fact(("the KV cache",), "The KV cache keeps past keys and values to make generation fast.",
          ("KV 缓存", "KV cache"), "KV 缓存保存之前的 key 和 value，让生成更快。"),
    _fact(("temperature",), "Temperature controls how random sampling is.",
          ("温度",), "温度控制采样有多随机。"),
    _fact(("GPT", "a GPT"), "GPT is a Transformer that predicts the next token.",
          ("GPT",), "GPT 是一个预测下一个 token 的 Transformer。"),
]  # fmt: skip

# Held out of training: phrasings the course-question and greeting figures ask with.
_HELDOUT_FACT = {"en": ("what's {t}", "define {t}", "could you explain {t}"),
                 "zh": ("{t}是干什么的", "说说{t}", "请解释一下{t}")}  # fmt: skip
_HELDOUT_GREETINGS = {
    "en": (("howdy", 0), ("heyyy", 0), ("thanks a million", 3), ("thx so much!!", 3),
           ("bye for now", 4), ("how have you been", 1)),
    "zh": (("嗨，你好", 0), ("您好呀", 0), ("谢谢啦！", 3), ("多谢多谢", 3), ("明天见", 4),
           ("最近好吗", 1)),
}  # fmt: skip


def heldout_facts() -> list[tuple[str, str, str]]:
    """(prompt, reply, lang) for every course fact asked with a template training never uses.

    Example:
        >>> ("define softmax", "Softmax turns scores into probabilities that sum to 1.",
        ...  "en") in heldout_facts()
        True
    """
    out = []
    for entry, names in zip(FACTS, _FACT_NAMES, strict=True):
        for lang in ("en", "zh"):
            for t in _HELDOUT_FACT[lang]:
                out += [(t.format(t=n), entry[lang][1], lang) for n in names[lang]]
    return out


def heldout_greetings() -> list[tuple[str, str, str]]:
    """(prompt, reply, lang) for greetings and thanks phrased as no training dialogue is."""
    return [(ask, GREETINGS[k][lang][1], lang)
            for lang in ("en", "zh") for ask, k in _HELDOUT_GREETINGS[lang]]  # fmt: skip


SYSTEM: dict[str, tuple[str, ...]] = {
    "en": ("You are a helpful assistant.", "Answer briefly."),
    "zh": ("你是一个乐于助人的助手。", "请简短回答。"),
}
