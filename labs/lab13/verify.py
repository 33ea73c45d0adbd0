"""Lab13 checks: the chat prompt's ids, decoding, one reply with the KV cache, the REPL.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, with the course's own chat model (`framework.shipped.load_shipped()`) loaded
there; every value is compared here, in the grader, with the framework's answer computed
from the same model: replies must be equal strings, logits agree within 1e-4 (float32).
Some checks use a model made for the check (weights changed so that it says one thing
whatever it reads); the check says so.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace
from functools import cache
from typing import Any

import numpy as np

from framework.bpe_tokenizer import BPETokenizer
from framework.chat import END_TAG, format_prompt
from framework.generate import GenerateConfig, generate
from framework.model import GPTModel
from framework.shipped import load_shipped
from grader.dsl import Lab, TestContext
from grader.i18n import tr

lab = Lab("lab13", "BPE 对话整合", "End-to-end BPE chat")

_GENERATE = (
    "framework.generate:generate",
    "framework.generate:generate_stream",
    "framework.generate:Decoder.logits",
    "framework.evaluate:greedy_replies",
    "framework.shipped_train:chat_reply",
)
lab.forbid(
    "chat_tokenize",
    "framework.chat:encode_messages",
    "framework.chat:Conversation.prompt_ids",
    why=("这一课要你自己把提示词编码成 id", "this lab is about encoding the prompt yourself"),
)
for _fn in ("chat_one_turn", "chat_loop"):
    lab.forbid(
        _fn,
        *_GENERATE,
        why=("这一课要你自己写生成循环", "this lab is about writing the loop yourself"),
    )

SHIPPED = "framework.shipped:load_shipped"
LOGGED = "framework.probes:logged"
TEXT_FILE = "framework.probes:text_file"
ECHOING = "framework.probes:echoing_input"
GPT, CONFIG = "framework.model:GPTModel", "framework.config:ModelConfig"
LOGITS_TOL = 1e-4  # cached vs uncached float32 logits of order 10: a few hundred ulps
CHAT_REPLY_TOKENS = 32  # chat_loop's reply limit (MAX_NEW_TOKENS in student.py)
TIMEOUT = 30.0  # loading the model and a few dozen forward passes, on a busy machine


# -- the hints of single checks: what this failure means, where to look -------------------
Hint = tuple[str, str]
H_BOS = (
    "提示词的 id 以 BOS（id 2）开头：分词器在你要求时会把它放在最前面",
    "the prompt's ids start with BOS (id 2): the tokenizer puts it first when asked to",
)
H_NO_EOS = (
    "EOS（id 3）是一段写完的文字的结尾；提示词停在回复要开始的地方，所以哪里都不该有 EOS",
    "EOS (id 3) closes a finished text; the prompt stops where the reply is to begin, so no EOS "
    "anywhere",
)
H_PROMPT_IDS = (
    "对照报告里期望和实际的 piece：期望的那串在用户文字两边有对话标签、最前面有 BOS；"
    "少了或多了哪些？",
    "compare the pieces in the report: the expected ones have the chat tags around the user's "
    "text and BOS in front; which pieces are missing or extra?",
)
H_NOT_STR = (
    "user_input 不是 str 时抛 TypeError：在任何东西把它变成文字之前，自己先检查类型",
    "a user_input that is not a str raises TypeError: check its type yourself, before anything "
    "turns it into text",
)
H_ROUND_TRIP = (
    "文字要原样回来：看报告里实际的文字从哪里开始不同，是结尾少了，还是某个字变成了 �",
    "the text must come back exactly: see where the text you got first differs, a missing end "
    "or a character shown as �",
)
H_SPECIALS = (
    "特殊 id（BOS、EOS、PAD，和 <|user|>、<|assistant|> 这些对话标签）不是文字：解码后它们消失，"
    "它们之间的换行留着",
    "special ids (BOS, EOS, PAD and the chat tags <|user|>, <|assistant|>) are not text: they "
    "vanish from the decoded string, the newlines between them stay",
)
H_IDS_INPUT = (
    "chat_decode 只读 token_ids：调用者的列表在调用后必须和之前一样",
    "chat_decode only reads token_ids: the caller's list must be as it was before the call",
)
H_BAD_ID = (
    "每个 id 都要看到，最后一个也是：≥ 词表大小的 id 要报 ValueError，不能悄悄跳过",
    "every id is looked at, the last one too: an id ≥ the vocabulary size raises ValueError, "
    "never skipped silently",
)
H_REPLY = (
    "回复和框架对同一提示词的贪心回复不同：看它从哪里开始走样。第一个字就错，多半是提示词或屏蔽；"
    "开头对、后面乱，多半是缓存里的位置（下一个测试指出是哪一步）",
    "the reply differs from the framework's greedy reply to the same prompt: see where it goes "
    "wrong. A wrong first token points at the prompt or the mask; a good start and garbage "
    "after it, at positions in the cache (the next test names the step)",
)
H_CACHE_CALLS = (
    "报告写出了第几次 forward 不合规矩：第 1 次是整段提示词、start_pos 0；之后每次 1 个 id，"
    "位置紧接上一个，始终是同一个 KVCache",
    "the report names the forward call that broke the pattern: call 1 is the whole prompt at "
    "start_pos 0, then each call one id at the position right after the last, always the same "
    "KVCache",
)
H_CACHE_LOGITS = (
    "这一步的 logits 和对同一序列整段 forward 的不同：这一步的 start_pos 或缓存里的行，和模型"
    "应当看到的序列对不上",
    "this step's logits differ from a full forward over the same sequence: the start_pos of "
    "the step, or the rows in the cache, do not match the sequence the model should see",
)
H_LIMIT = (
    "max_new_tokens=n 时回复最多 n 个 id：遇到停止的 id 可以更早结束，但不能更长；n=0 一步也不走",
    "max_new_tokens=n allows at most n ids in the reply: a stop id may end it sooner, never "
    "later; n=0 takes no step at all",
)
H_STOP_END = (
    "回复在模型写出的第一个停止 id 处结束：这个 id 和它后面的都不属于回复",
    "the reply ends at the first stop id the model writes: that id and anything after it are "
    "not part of the reply",
)
H_STOP_EOS = (
    "这个模型在课程模型写 <|end|> 的地方写的是 EOS：两个 id 都结束回复",
    "this model writes EOS where the course model writes <|end|>: both ids end the reply",
)
H_KNOWN_GREEDY = (
    "这个模型最大的 logits 属于 PAD、UNK 和词表以外的 id：就算贪心，它们也一个都不能选",
    "this model's largest logits belong to PAD, UNK and ids past the tokenizer's vocabulary: "
    "none of them may be chosen, even greedily",
)
H_KNOWN_SAMPLE = (
    "采样只在分词器认识的 id 里抽：不认识的 id 在抽之前概率就要是 0",
    "sampling draws only among the ids the tokenizer knows: the unknown ones must have "
    "probability 0 before the draw",
)
H_KNOWN_TOP_K = (
    "top_k=2 留下的是最可能的 2 个“认识的” id：不认识的 id 要在 top-k 选之前就去掉",
    "top_k=2 keeps the 2 most likely ids that the tokenizer knows: the unknown ids are removed "
    "before top-k chooses",
)
H_RNG = (
    "每一次随机抽取都来自参数 rng：同一个 seed 必须给出同一个回复；不要用 np.random 或 random",
    "every random draw comes from the rng argument: the same seed must give the same reply; no "
    "np.random, no random",
)
H_TRUNC_REPLY = (
    "提示词比剩下的位置（max_seq_len - max_new_tokens）长时，丢掉最前面的 id："
    "回复要等于框架对留下的那一段的回复",
    "a prompt longer than the room left (max_seq_len - max_new_tokens) loses its oldest ids: "
    "the reply must equal the framework's for the tail that is kept",
)
H_TRUNC_PREFILL = (
    "prefill 恰好拿到提示词最后的 max_seq_len - max_new_tokens 个 id：报告写出了它实际拿到几个",
    "the prefill gets exactly the last max_seq_len - max_new_tokens ids of the prompt: the "
    "report says how many it got",
)
H_TURNS = (
    "返回值数的是回答过的轮数，也就是得到一行 Bot: 的行；空行和 /quit 不算一轮",
    "the return value counts the turns answered, the lines that got a Bot: line; empty lines "
    "and /quit are no turns",
)
H_ASKED = (
    "每一行被回答的输入，都以它去掉首尾空白后的文字的对话提示词交给模型：报告列出了哪些提示词"
    "没有一次 forward 收到",
    "each answered line reaches the model as the chat prompt of its text without surrounding "
    "whitespace: the report lists the prompts no forward call got",
)
H_BOT_LINES = (
    '每行被回答的输入在 stdout 里得到一行 "Bot: <回复>"，回复是 chat_one_turn 对去掉空白的行'
    "（MAX_NEW_TOKENS、贪心）给出的",
    'each answered line gets one line "Bot: <reply>" in stdout, the reply being chat_one_turn\'s '
    "for the stripped line (MAX_NEW_TOKENS, greedy)",
)
H_TRANSCRIPT = (
    'stdout 要和终端上的一次对话一模一样：每次读之前一个 "> "（最后那次也要），回显的输入，'
    "每次回答一行 Bot:，别的都不写；从头对照期望和实际",
    'stdout must read like the terminal session: "> " before every read (the last one too), '
    "the echoed input and one Bot: line per answer, nothing else; compare expected and got "
    "from the start",
)
H_NO_PRINT = (
    "所有输出都写进参数 stdout：print() 和 input() 写到的是真正的终端，检查读不到",
    "everything goes to the stdout argument: print() and input() write to the real terminal, "
    "which the checks do not read",
)
H_EMPTY_STDIN = (
    '空的 stdin 在那次读到 EOF 的读取之前也要先得到 "> "；然后循环结束，返回 0',
    'an empty stdin still gets its "> " before the read that finds EOF; then the loop ends '
    "and returns 0",
)


@cache
def shipped() -> tuple[GPTModel, BPETokenizer]:
    """The course's model, loaded once in the grader (the sandbox loads its own)."""
    return load_shipped()


def prompt_ids(text: str) -> list[int]:
    return shipped()[1].encode(format_prompt([("user", text)]), add_bos=True)


def reference_ids(model: GPTModel, text: str, max_new: int) -> list[int]:
    """The framework's greedy reply ids: prompt cut to leave room, stop at EOS or <|end|>."""
    tok = shipped()[1]
    ids = prompt_ids(text)[-(model.config.max_seq_len - max_new) :]
    cfg = GenerateConfig(
        max_new_tokens=max_new,
        temperature=0.0,
        top_k=0,
        top_p=1.0,
        stop_ids=(tok.token_id(END_TAG),),
    )
    return generate(model, tok, ids, cfg).token_ids


def reference(text: str, max_new: int = CHAT_REPLY_TOKENS, model: GPTModel | None = None) -> str:
    """The reply chat_one_turn must give (greedy) for `text`."""
    if model is None:  # the shipped model's replies: the same prompt recurs across tests
        return _shipped_reference(text, max_new)
    return shipped()[1].decode(reference_ids(model, text, max_new)).strip()


@cache
def _shipped_reference(text: str, max_new: int) -> str:
    return shipped()[1].decode(reference_ids(shipped()[0], text, max_new)).strip()


def greedy_rng() -> np.random.Generator:
    """The rng argument of a greedy call (greedy draws nothing from it)."""
    return np.random.default_rng(0)


def show(x: Any, n: int = 120) -> str:
    text = repr(x)
    return text if len(text) <= n else text[:n] + "…"


def as_ids(value: Any) -> list[int] | None:
    """A list of plain ints from a list, tuple or 1-D integer array; None otherwise."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        return [int(x) for x in value]
    if isinstance(value, list | tuple) and all(
        isinstance(x, int | np.integer) and not isinstance(x, bool) for x in value
    ):
        return [int(x) for x in value]
    return None


def sandbox_pair(t: TestContext) -> tuple[Any, Any]:
    """(model, tokenizer) handles: the shipped model, loaded in the sandbox."""
    model, tok = t.build(SHIPPED)
    return model, tok


def same_reply(t: TestContext, name: tuple[str, str], got: Any, want: str, hint: Hint) -> bool:
    return t.check(
        name,
        got == want,
        tr(f"期望 {show(want)}\n实际 {show(got)}", f"expected {show(want)}\ngot      {show(got)}"),
        hint=hint,
    )


# -- chat_tokenize -------------------------------------------------------------------------
@lab.test(
    "chat_tokenize：BOS + 提示词的 BPE id",
    "chat_tokenize: BOS + the BPE ids of the prompt",
    timeout=TIMEOUT,
    hint=[
        (
            '先用 format_prompt([("user", user_input)]) 拼出提示词，再交给 tok.encode。',
            'Build the prompt with format_prompt([("user", user_input)]), then tok.encode it.',
        ),
        (
            "tok.encode(text, add_bos=True) 会在最前面放 BOS；不要 add_eos：回复还没写。",
            "tok.encode(text, add_bos=True) puts BOS first; no add_eos: the reply is not "
            "written yet.",
        ),
    ],
)
def tokenize_prompt(t: TestContext) -> None:
    _, tok_h = sandbox_pair(t)
    tok = shipped()[1]
    ids = as_ids(t.call("chat_tokenize", tok_h, "hi").value)
    t.check(
        ("第一个 id 是 BOS (2)", "the first id is BOS (2)"),
        ids is not None and ids[:1] == [2],
        tr(f"实际 {show(ids)}", f"got {show(ids)}"),
        hint=H_BOS,
    )
    t.check(
        ("没有 EOS (3)", "no EOS (3)"),
        ids is not None and tok.eos_id not in ids,
        tr(f"实际 {show(ids)}", f"got {show(ids)}"),
        hint=H_NO_EOS,
    )
    for text in ("hi", "你好", "3+4=?", "what is attention?"):
        ids = as_ids(t.call("chat_tokenize", tok_h, text).value)
        want = prompt_ids(text)
        got = (
            tok.pieces(ids)
            if ids is not None and all(0 <= i < tok.vocab_size for i in ids)
            else ids
        )
        t.check(
            (f"{text!r} → {len(want)} 个 id", f"{text!r} → {len(want)} ids"),
            ids == want,
            tr(
                f"期望 {tok.pieces(want)}\n实际 {show(got, 300)}",
                f"expected {tok.pieces(want)}\ngot      {show(got, 300)}",
            ),
            hint=H_PROMPT_IDS,
        )
    t.raises(
        ("输入不是 str → TypeError", "input not a str → TypeError"),
        TypeError,
        "chat_tokenize",
        tok_h,
        42,
        hint=H_NOT_STR,
    )


# -- chat_decode -----------------------------------------------------------------------------
@lab.test(
    "chat_decode：文本原样回来，特殊 id 丢掉",
    "chat_decode: the text comes back, special ids dropped",
    timeout=TIMEOUT,
    hint=[
        (
            "tok.decode(ids) 就是答案：它把所有 id 的字节连起来，最后一次性按 UTF-8 解码。",
            "tok.decode(ids) is the answer: it joins the bytes of all ids, then decodes UTF-8 "
            "once.",
        ),
        (
            "不要一个 id 一个 id 地解码再拼接：一个汉字的 3 个字节可能落在不同的 id 里。",
            "Do not decode id by id and join: the 3 bytes of a Chinese character may sit in "
            "different ids.",
        ),
    ],
)
def decode_text(t: TestContext) -> None:
    _, tok_h = sandbox_pair(t)
    tok = shipped()[1]
    changed = []
    for text in ("hello, world", "你好，世界！", "3 + 4 = 7", "龘龘 🙂 ünïcödé"):
        ids = tok.encode(text)
        call = t.call("chat_decode", tok_h, ids)
        name = (f"{text!r}（{len(ids)} 个 id）往返不变", f"{text!r} ({len(ids)} ids) round-trips")
        same_reply(t, name, call.value, text, H_ROUND_TRIP)
        if call.args[1] != ids:
            changed.append(text)
    t.check(
        ("输入的 id 列表没有被修改", "the lists of ids were not modified"),
        not changed,
        tr(f"这些文本的 id 被改了：{changed}", f"the ids of these texts changed: {changed}"),
        hint=H_IDS_INPUT,
    )
    specials = (2, *tok.encode("<|user|>\nhi\n<|assistant|>\nyo"), 3, 0)
    call = t.call("chat_decode", tok_h, specials)
    same_reply(
        t,
        ("BOS、标签、EOS、PAD 都丢掉（元组输入）", "BOS, tags, EOS, PAD dropped (a tuple of ids)"),
        call.value,
        "\nhi\n\nyo",
        H_SPECIALS,
    )
    t.raises(
        ("超出词表的 id → ValueError", "an id outside the vocabulary → ValueError"),
        ValueError,
        "chat_decode",
        tok_h,
        [2, tok.vocab_size + 5],
        hint=H_BAD_ID,
    )


# -- chat_one_turn ---------------------------------------------------------------------------
ONE_TURN = [
    (
        "先 chat_tokenize，再建一个 KVCache(层数, max_seq_len, hidden_dim)，"
        "model.forward(ids, kv_cache=cache, start_pos=0) 一次喂进整段提示词（prefill）。",
        "chat_tokenize first, then make a KVCache(layers, max_seq_len, hidden_dim) and feed "
        "the whole prompt once: model.forward(ids, kv_cache=cache, start_pos=0) (prefill).",
    ),
    (
        "之后每一步只喂新的那一个 id，start_pos 是它在序列里的真实位置"
        "（提示词长度 + 已经生成的个数），用同一个 cache。",
        "After that feed only the one new id per step, at its true position (prompt length "
        "+ ids generated so far), into the same cache.",
    ),
    (
        "取 logits 的最后一行，先把词表不认识的 id（PAD、UNK、超出 tok.vocab_size 的）设成 -inf，"
        "再用 framework.sampling.sample_top_k(logits, top_k, temperature, rng) 采样；"
        "遇到 EOS 或 <|end|> 就停，最后 chat_decode(...).strip()。",
        "Take the last row of logits, set the ids the tokenizer does not know (PAD, UNK, "
        "anything ≥ tok.vocab_size) to -inf, then sample with "
        "framework.sampling.sample_top_k(logits, top_k, temperature, rng); stop at EOS or "
        "<|end|>; return chat_decode(...).strip().",
    ),
]
GREETINGS = ("你好", "hello", "1+2=?", "三加四等于几", "what is 5 plus 3", "谢谢")


@lab.test(
    "chat_one_turn：贪心回复与框架一致",
    "chat_one_turn: greedy replies equal the framework's",
    requires=[tokenize_prompt, decode_text],
    timeout=TIMEOUT,
    hint=ONE_TURN,
)
def one_turn_replies(t: TestContext) -> None:
    model_h, tok_h = sandbox_pair(t)
    for text in GREETINGS:
        want = reference(text)
        call = t.call("chat_one_turn", model_h, tok_h, text, CHAT_REPLY_TOKENS, greedy_rng())
        same_reply(t, (f"{text!r} → {want!r}", f"{text!r} → {want!r}"), call.value, want, H_REPLY)


def fed_ids(record: dict[str, Any]) -> list[int]:
    """The ids one logged forward call was given (the last row of a batch)."""
    ids = record["ids"]
    return list(ids[-1]) if record["batch"] else list(ids)


def decode_problems(calls: list[dict[str, Any]], prompt: list[int]) -> tuple[str, str] | None:
    """What is wrong with the cache use of a logged reply, or None (zh, en)."""
    if not calls:
        return ("模型一次也没有被调用", "the model was never called")
    first = calls[0]
    if first["cache"] is None or first["start_pos"] != 0 or fed_ids(first) != prompt:
        return (
            f"第 1 次调用应是 prefill：整段提示词（{len(prompt)} 个 id）、start_pos=0、带 KVCache；"
            f"实际 {len(fed_ids(first))} 个 id、start_pos={first['start_pos']}、"
            f"cache={first['cache']}",
            f"call 1 must be the prefill: the whole prompt ({len(prompt)} ids), start_pos=0, a "
            f"KVCache; got {len(fed_ids(first))} id(s), start_pos={first['start_pos']}, "
            f"cache={first['cache']}",
        )
    for k, c in enumerate(calls[1:], start=1):
        pos = len(prompt) + k - 1
        if c["cache"] != first["cache"] or len(fed_ids(c)) != 1 or c["start_pos"] != pos:
            what = "同一个" if c["cache"] == first["cache"] else "另一个/没有"
            return (
                f"第 {k + 1} 次调用应是 1 个 id、start_pos={pos}、同一个 cache；实际 "
                f"{len(fed_ids(c))} 个 id、start_pos={c['start_pos']}、{what} cache",
                f"call {k + 1} must be 1 id at start_pos={pos} in the same cache; got "
                f"{len(fed_ids(c))} id(s) at start_pos={c['start_pos']}, "
                f"{'the same' if c['cache'] == first['cache'] else 'another or no'} cache",
            )
    return None


def logits_problem(calls: list[dict[str, Any]], prompt: list[int]) -> tuple[str, str] | None:
    """Where the logits of a logged reply differ from the uncached forward, or None."""
    model = shipped()[0]
    seq = list(prompt)
    for k, c in enumerate(calls):
        if k:
            seq.append(fed_ids(c)[-1])
        want = model.forward(seq).numpy()[-1]  # (V,)
        got = np.asarray(c["last_logits"], dtype=np.float64)
        err = float(np.max(np.abs(got - want))) if got.shape == want.shape else np.inf
        if not err <= LOGITS_TOL:
            return (
                f"第 {k + 1} 步（序列长 {len(seq)}）：与不用缓存的整段前向最多差 {err:.3g}",
                f"step {k + 1} (sequence of {len(seq)}): differs from the uncached forward of "
                f"the whole sequence by up to {err:.3g}",
            )
    return None if len(calls) > 1 else ("只调用了 1 次模型", "the model was called only once")


@lab.test(
    "chat_one_turn：prefill 一次，之后每步一个 id，用 KV cache",
    "chat_one_turn: prefill once, then one id per step with the KV cache",
    requires=[tokenize_prompt, decode_text],
    timeout=TIMEOUT,
    hint=[ONE_TURN[1], ONE_TURN[0]],
)
def one_turn_cache(t: TestContext) -> None:
    model_h, tok_h = sandbox_pair(t)
    for text in ("what is attention?", "什么是注意力"):
        logged = t.build(LOGGED, model_h)
        t.call("chat_one_turn", logged, tok_h, text, 12, greedy_rng())
        calls = t.getattr(logged, "calls")
        prompt = prompt_ids(text)
        problem = decode_problems(calls, prompt)
        t.check(
            (
                f"{text!r}：prefill 一次，之后每步 1 个 id、位置递增、同一个 cache",
                f"{text!r}: one prefill, then 1 id per step at the next position, one cache",
            ),
            problem is None,
            problem and tr(*problem),
            hint=H_CACHE_CALLS,
        )
        problem = logits_problem(calls, prompt)
        t.check(
            (
                f"{text!r}：每一步的 logits = 不用 cache 重算整段的 logits",
                f"{text!r}: every step's logits = those of the whole sequence, uncached",
            ),
            problem is None,
            problem and tr(*problem),
            hint=H_CACHE_LOGITS,
        )


LONG = "what is attention?"  # a reply longer than 7 tokens


@lab.test(
    "chat_one_turn：max_new_tokens 是回复长度的上限",
    "chat_one_turn: max_new_tokens bounds the reply",
    requires=[tokenize_prompt, decode_text],
    timeout=TIMEOUT,
    hint=[
        (
            "循环 range(max_new_tokens) 次，每次最多加 1 个 id；max_new_tokens=0 时回复是空串。",
            "Loop range(max_new_tokens) times, adding at most 1 id each time; "
            "max_new_tokens=0 gives an empty reply.",
        ),
        (
            "max_new_tokens 为负或 ≥ model.config.max_seq_len 时 raise ValueError。"
            "注意 ids[-0:] 是整个列表，不是空列表。",
            "Raise ValueError when max_new_tokens is negative or ≥ model.config.max_seq_len. "
            "Note that ids[-0:] is the whole list, not an empty one.",
        ),
    ],
)
def one_turn_limit(t: TestContext) -> None:
    model_h, tok_h = sandbox_pair(t)
    for n in (0, 1, 3, 7):
        want = reference(LONG, n)
        call = t.call("chat_one_turn", model_h, tok_h, LONG, n, greedy_rng())
        same_reply(
            t,
            (f"max_new_tokens={n} → {want!r}", f"max_new_tokens={n} → {want!r}"),
            call.value,
            want,
            H_LIMIT,
        )
    size = shipped()[0].config.max_seq_len
    for n in (-1, size):
        t.raises(
            (f"max_new_tokens={n} → ValueError", f"max_new_tokens={n} → ValueError"),
            ValueError,
            "chat_one_turn",
            model_h,
            tok_h,
            "hi",
            n,
            greedy_rng(),
            hint=(
                "在生成之前先检查：max_new_tokens < 0 或 ≥ model.config.max_seq_len 都 "
                "raise ValueError（说明给了什么、应当是什么）。",
                "Check before generating: max_new_tokens < 0 or ≥ model.config.max_seq_len "
                "raises ValueError (saying what was given and what was expected).",
            ),
        )


def swapped_stop_state() -> dict[str, np.ndarray]:
    """The shipped weights with the lm_head columns of EOS and <|end|> swapped."""
    model, tok = shipped()
    state = model.state_dict()
    head = state["lm_head"].copy()
    eos, end = tok.eos_id, tok.token_id(END_TAG)
    head[:, [eos, end]] = head[:, [end, eos]]
    state["lm_head"] = head
    return state


def local_model(state: dict[str, np.ndarray]) -> GPTModel:
    """A GPTModel with these weights (the shipped sizes, the vocab of lm_head), here."""
    config = replace(shipped()[0].config, vocab_size=state["lm_head"].shape[1])
    model = GPTModel(config)
    model.load_state(state)
    return model


def sandbox_model(t: TestContext, state: dict[str, np.ndarray]) -> Any:
    """The same model as `local_model`, built in the sandbox."""
    model = t.build(GPT, t.build(CONFIG, *local_model(state).config.as_tuple()))
    t.method(model, "load_state", state)
    return model


@lab.test(
    "chat_one_turn：遇到 <|end|> 或 EOS 就停",
    "chat_one_turn: stops at <|end|> or EOS",
    requires=[tokenize_prompt, decode_text],
    timeout=TIMEOUT,
    hint=[
        (
            "回复在模型写出 EOS 或 <|end|> 的地方结束；这个 id 本身不属于回复。",
            "The reply ends where the model writes EOS or <|end|>; that id is not part of it.",
        ),
        (
            '停止的 id 有两个：tok.eos_id 和 tok.token_id("<|end|>")；抽到以后先判断，再决定是否'
            "加进回复。",
            'There are two stop ids: tok.eos_id and tok.token_id("<|end|>"); test the drawn id '
            "before you add it to the reply.",
        ),
    ],
)
def one_turn_stop(t: TestContext) -> None:
    model_h, tok_h = sandbox_pair(t)
    want = reference("1+2=?", 40)
    call = t.call("chat_one_turn", model_h, tok_h, "1+2=?", 40, greedy_rng())
    same_reply(
        t,
        (
            f"课程模型写完 {want!r} 后写 <|end|>：到此为止",
            f"the course model writes <|end|> after {want!r}: the reply ends there",
        ),
        call.value,
        want,
        H_STOP_END,
    )
    state = swapped_stop_state()
    want = reference("1+2=?", 40, local_model(state))
    call = t.call("chat_one_turn", sandbox_model(t, state), tok_h, "1+2=?", 40, greedy_rng())
    same_reply(
        t,
        (
            f"EOS 与 <|end|> 对调的模型：在 EOS 处停，回复 {want!r}",
            f"a model with EOS and <|end|> swapped: stops at EOS, reply {want!r}",
        ),
        call.value,
        want,
        H_STOP_EOS,
    )


ABCDE = "abcde"  # the five ids a constant model may say (bytes 97..101 are ids 101..105)


def constant_state(extra: int = 8) -> dict[str, np.ndarray]:
    """Weights whose logits are the same whatever the input.

    The final LayerNorm has gamma 0 and beta e_0, so every position's logits are row 0 of
    lm_head: PAD, UNK and `extra` ids beyond the tokenizer's vocabulary are the most
    likely, then a > b > c > d > e; every other id (EOS and <|end|> too) is far behind.
    """
    model, tok = shipped()
    state = model.state_dict()
    h, v = model.config.hidden_dim, tok.vocab_size
    table = state["embedding.token_embedding"]
    state["embedding.token_embedding"] = np.concatenate([table, table[:extra]])  # (V', H)
    row = np.full(v + extra, -30.0, dtype=np.float32)  # (V',)
    row[[tok.pad_id, tok.unk_id]] = 9.0
    row[v:] = 10.0
    row[[b + 4 for b in ABCDE.encode()]] = [4.0, 3.5, 3.0, 2.5, 2.0]
    head = np.zeros((h, v + extra), dtype=np.float32)  # (H, V')
    head[0] = row
    state["lm_head"] = head
    state["final_ln.gamma"] = np.zeros(h, dtype=np.float32)
    state["final_ln.beta"] = np.eye(h, dtype=np.float32)[0]
    return state


def letters(
    t: TestContext, name: tuple[str, str], got: Any, allowed: str, n: int, hint: Hint
) -> None:
    ok = isinstance(got, str) and len(got) == n and set(got) <= set(allowed)
    t.check(
        name,
        ok,
        tr(
            f"期望 {n} 个 {allowed} 中的字母，实际 {show(got)}",
            f"expected {n} letters from {allowed}, got {show(got)}",
        ),
        hint=hint,
    )


@lab.test(
    "chat_one_turn：只从词表认识的 id 里采样",
    "chat_one_turn: samples only ids the tokenizer knows",
    requires=[tokenize_prompt, decode_text],
    timeout=TIMEOUT,
    hint=[
        (
            "模型的 vocab_size 可以比词表大；PAD、UNK 和 ≥ tok.vocab_size 的 id 都不能被选中："
            "tok.known_ids() 列出能选的 id。",
            "The model's vocab_size may exceed the tokenizer's; PAD, UNK and ids ≥ "
            "tok.vocab_size must never be chosen: tok.known_ids() lists those that may.",
        ),
        (
            "先屏蔽（设成 -inf），再做 top-k：否则 top-k 留下的可能全是不认识的 id。"
            "随机数只能来自参数 rng。",
            "Mask first (set to -inf), then top-k: otherwise top-k may keep only unknown ids. "
            "Randomness comes only from the rng argument.",
        ),
    ],
)
def one_turn_known_ids(t: TestContext) -> None:
    _, tok_h = sandbox_pair(t)
    state = constant_state()
    model_h = sandbox_model(t, state)
    want = reference("hi", 10, local_model(state))
    got = t.returns(("greedy", "greedy"), "chat_one_turn", model_h, tok_h, "hi", 10, greedy_rng())
    if got is not None:
        same_reply(
            t,
            (
                f"贪心：最大的 logit 属于 PAD/UNK/词表外的 id，回复应是 {want!r}",
                f"greedy: PAD/UNK/out-of-vocabulary ids have the largest logits; the "
                f"reply must be {want!r}",
            ),
            got.value,
            want,
            H_KNOWN_GREEDY,
        )
    name = ("temperature=1：30 个 id 都是认识的（a–e）", "temperature=1: all 30 ids known (a–e)")
    if got := t.returns(name, "chat_one_turn", model_h, tok_h, "hi", 30, t.rng(1), 1.0):
        letters(t, name, got.value, ABCDE, 30, H_KNOWN_SAMPLE)
    name = ("temperature=1, top_k=2：只有 a 和 b", "temperature=1, top_k=2: only a and b")
    if got := t.returns(name, "chat_one_turn", model_h, tok_h, "hi", 30, t.rng(2), 1.0, 2):
        letters(t, name, got.value, "ab", 30, H_KNOWN_TOP_K)
    name = (
        "rng：同一个 seed → 同一个回复，另一个 seed → 另一个",
        "rng: the same seed → the same reply, another seed → another",
    )
    values = []
    for seed in (5, 5, 6):
        if (
            got := t.returns(name, "chat_one_turn", model_h, tok_h, "hi", 30, t.rng(seed), 1.0)
        ) is None:
            return
        values.append(got.value)
    t.check(
        name,
        values[0] == values[1] != values[2],
        tr(
            f"seed 5、5、6 的回复：{show(values, 300)}",
            f"replies for seeds 5, 5, 6: {show(values, 300)}",
        ),
        hint=H_RNG,
    )


TRUNC_INPUT = "what is attention? " * 20  # 106 ids: more than 128 - TRUNC_NEW
TRUNC_NEW = 90  # the tail kept (38 ids) still holds a question; the reply is 20 ids


@lab.test(
    "chat_one_turn：太长的提示词丢掉最前面的 id",
    "chat_one_turn: a prompt too long drops its oldest ids",
    requires=[tokenize_prompt, decode_text],
    timeout=TIMEOUT,
    hint=[
        (
            "提示词加上回复必须放得进 model.config.max_seq_len 个位置（也就是 KV cache 的长度）。",
            "The prompt plus the reply must fit in model.config.max_seq_len positions (the "
            "length of the KV cache).",
        ),
        (
            "提示词最多留 max_seq_len - max_new_tokens 个 id，丢掉的是最前面的："
            "ids = ids[-(max_seq_len - max_new_tokens):]。",
            "Keep at most max_seq_len - max_new_tokens ids of the prompt, dropping the oldest: "
            "ids = ids[-(max_seq_len - max_new_tokens):].",
        ),
    ],
)
def one_turn_truncate(t: TestContext) -> None:
    model_h, tok_h = sandbox_pair(t)
    size = shipped()[0].config.max_seq_len
    prompt = prompt_ids(TRUNC_INPUT)
    keep = size - TRUNC_NEW
    logged = t.build(LOGGED, model_h)
    name = (
        f"{len(prompt)} 个 id 的提示词、max_new_tokens={TRUNC_NEW}：回复与框架一致",
        f"a prompt of {len(prompt)} ids, max_new_tokens={TRUNC_NEW}: the framework's reply",
    )
    call = t.returns(name, "chat_one_turn", logged, tok_h, TRUNC_INPUT, TRUNC_NEW, greedy_rng())
    if call is None:
        return
    same_reply(t, name, call.value, reference(TRUNC_INPUT, TRUNC_NEW), H_TRUNC_REPLY)
    calls = t.getattr(logged, "calls")
    first = fed_ids(calls[0]) if calls else []
    t.check(
        (
            f"prefill 只喂最后 {size} - {TRUNC_NEW} = {keep} 个 id",
            f"the prefill gets only the last {size} - {TRUNC_NEW} = {keep} ids",
        ),
        first == prompt[-keep:],
        tr(f"实际喂了 {len(first)} 个 id", f"it got {len(first)} ids"),
        hint=H_TRUNC_PREFILL,
    )


# -- chat_loop -----------------------------------------------------------------------------
LOOP_HINT = [
    (
        '每一轮：先 stdout.write("> ")，再 line = stdin.readline()；读到 ""（EOF）就结束。',
        'Each round: stdout.write("> ") first, then line = stdin.readline(); "" (EOF) ends '
        "the loop.",
    ),
    (
        'line.strip() 之后："/quit" 结束，空行跳过（不算一轮），其他的调用 chat_one_turn'
        '（MAX_NEW_TOKENS、贪心）并写 "Bot: " + 回复 + "\\n"。',
        'After line.strip(): "/quit" ends, an empty line is skipped (not a turn), anything '
        'else goes to chat_one_turn (MAX_NEW_TOKENS, greedy) and "Bot: " + reply + "\\n" '
        "is written.",
    ),
    (
        "只用参数里的 stdin 和 stdout：不要 input()，也不要 print()（评测时它们连的不是终端）。",
        "Use only the stdin and stdout arguments: no input(), no print() (while checking "
        "they are not a terminal).",
    ),
]


def run_loop(t: TestContext, text: str) -> tuple[Any, str, str, list[dict[str, Any]]]:
    """chat_loop with a stdin holding `text` that echoes into stdout, like a terminal.

    Returns (value, stdout's text, what was printed, the logged model's forward calls).
    """
    model_h, tok_h = sandbox_pair(t)
    logged = t.build(LOGGED, model_h)
    stdout = t.build(TEXT_FILE)
    stdin = t.build(ECHOING, text, stdout)
    call = t.call("chat_loop", logged, tok_h, stdin, stdout, greedy_rng())
    written = t.method(stdout, "getvalue").value
    calls = t.getattr(logged, "calls")
    return call.value, written if isinstance(written, str) else "", call.output, calls


def expected_run(text: str) -> tuple[list[str], str]:
    """(lines answered as read, transcript) of the REPL the lab asks, on a stdin of `text`."""
    lines, out, answered = io.StringIO(text), "", list[str]()
    while True:
        out += "> "
        line = lines.readline()
        out += line if line.endswith("\n") or not line else line + "\n"  # the echo
        if not line or line.strip() == "/quit":
            return answered, out
        if line.strip():
            out += f"Bot: {reference(line.strip())}\n"
            answered.append(line)


def check_run(t: TestContext, text: str) -> None:
    """chat_loop on `text`: turns, what the model was asked, the Bot lines, the transcript."""
    read, want = expected_run(text)
    value, written, printed, calls = run_loop(t, text)
    turns = len(read)
    t.equal(
        (f"返回 {turns}（回答过的轮数）", f"returns {turns} (the turns answered)"),
        value,
        turns,
        hint=H_TURNS,
    )
    asked = [fed_ids(c) for c in calls]
    # Lines with nothing around them but their "\n", and lines with spaces or a "\r\n":
    # the second kind catches a loop that strips the newline only.
    answered = [line.strip() for line in read if line.rstrip("\n") == line.strip()]
    padded = [line for line in read if line.rstrip("\n") != line.strip()]
    missing = [a for a in answered if prompt_ids(a) not in asked]
    t.check(
        (
            f"模型收到的是 chat_tokenize(去掉首尾空白的行)：{answered}",
            f"the model is asked chat_tokenize(the stripped line): {answered}",
        ),
        not missing,
        tr(
            f"没有一次 forward 的输入是这些行的提示词：{missing}",
            f"no forward call was given the prompt of: {missing}",
        ),
        hint=H_ASKED,
    )
    if padded:
        missing = [line for line in padded if prompt_ids(line.strip()) not in asked]
        t.check(
            (
                "带空格、\\r\\n 的行：去掉空白后再交给模型",
                "lines padded with spaces or ending in \\r\\n: the model gets them stripped",
            ),
            not missing,
            tr(
                f"模型没有被问到这些行去掉首尾空白后的文字：{missing}",
                f"the model was never asked about the stripped text of these lines: {missing}",
            ),
            hint=(
                "行首尾的空格或结尾的 \\r 跟着这一行一起交给了模型：只去掉结尾的 \\n 不够，"
                "首尾的空白都不属于用户的问题。",
                "The spaces around the line, or the \\r before its \\n, reached the model with "
                "it: removing only the final \\n is not enough, no surrounding whitespace "
                "belongs to the user's question.",
            ),
        )
    bots, want_bots = re.findall(r"Bot: .*", written), re.findall(r"Bot: .*", want)
    t.check(
        (
            f"stdout 里有 {turns} 行 Bot: 回复，与 chat_one_turn 一致",
            f"stdout holds {turns} Bot: lines, equal to chat_one_turn's replies",
        ),
        bots == want_bots,
        tr(
            f"期望 {show(want_bots, 300)}\n实际 {show(bots, 300)}",
            f"expected {show(want_bots, 300)}\ngot      {show(bots, 300)}",
        ),
        hint=H_BOT_LINES,
    )
    t.check(
        (
            '每次读之前写 "> "，此外只写 Bot: 行：与终端上的记录逐字一致（输入行是回显）',
            '"> " before every read, nothing but the Bot: lines besides: the transcript '
            "matches (input lines are echoed)",
        ),
        written == want,
        tr(
            f"期望 {show(want, 400)}\n实际 {show(written, 400)}",
            f"expected {show(want, 400)}\ngot      {show(written, 400)}",
        ),
        hint=H_TRANSCRIPT,
    )
    t.check(
        ("没有往终端打印（print）任何东西", "nothing printed to the terminal (print)"),
        not printed.strip(),
        tr(f"打印了 {show(printed)}", f"printed {show(printed)}"),
        hint=H_NO_PRINT,
    )


@lab.test(
    "chat_loop：一问一答，空行跳过，/quit 结束",
    "chat_loop: question and answer, empty lines skipped, /quit ends",
    requires=[one_turn_replies],
    timeout=TIMEOUT,
    hint=LOOP_HINT,
)
def loop_quit(t: TestContext) -> None:
    check_run(t, "你好\n\n   \n1+2=?\n  good morning  \nbye\r\n/quit\nhello\n")


@lab.test(
    "chat_loop：读到 EOF 就结束",
    "chat_loop: ends at EOF",
    requires=[one_turn_replies],
    timeout=TIMEOUT,
    hint=LOOP_HINT,
)
def loop_eof(t: TestContext) -> None:
    check_run(t, "hello\n\nwhat is 5 plus 3")
    value, written, _, _ = run_loop(t, "")
    t.check(
        ('空的 stdin：写一个 "> "，返回 0', 'an empty stdin: one "> " written, returns 0'),
        (value, written) == (0, "> "),
        tr(f"实际 {show((value, written))}", f"got {show((value, written))}"),
        hint=H_EMPTY_STDIN,
    )
