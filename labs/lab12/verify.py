"""Lab12 checks: counting adjacent pairs, merging one pair, and a BPE training loop.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process, and every value is compared here, in the grader. All values are exact integers:
there are no tolerances in this lab. Token ids are byte + 4 (as in Lab02), new ids start
at 264, as in the framework's `BPETokenizer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from framework.bpe_tokenizer import FIRST_MERGE_ID, BPETokenizer
from framework.bpe_train import count_pairs, merge_pair
from grader.dsl import Lab, TestContext
from grader.i18n import Text, tr

lab = Lab("lab12", "BPE 分词", "BPE tokenisation")

lab.forbid(
    "bpe_count_pairs",
    "framework.bpe_train:count_pairs",
    "framework.bpe_train:train_merges",
    "framework.bpe_tokenizer:BPETokenizer.train",
    why=("这一课要你自己数相邻对", "this lab is about counting the pairs yourself"),
)
lab.forbid(
    "bpe_apply_merge",
    "framework.bpe_train:merge_pair",
    "framework.bpe_encode:BytePairEncoder.merge",
    "framework.bpe_encode:BytePairEncoder.encode",
    why=("这一课要你自己做合并", "this lab is about merging the pair yourself"),
)

BYTES = BPETokenizer()  # no merges: each byte b is the id b + 4
Pair = tuple[int, int]
Counted = tuple[Pair, int] | None
# The C course's loop corpus, then one in Chinese and English (about 570 bytes) with runs
# such as 哈哈哈 and ......, where merging without overlap matters.
C_CORPUS = "ababab ababab cdcd ef ef"
CORPUS = (
    "用户：你好！\n助手：你好，很高兴见到你。\n"
    "用户：今天天气怎么样？\n助手：今天天气很好，阳光明媚。\n"
    "user: hello, how are you?\nbot: I am fine, thank you. how are you?\n"
    "用户：一加一等于几？\n助手：一加一等于二。\n"
    "用户：二加二等于几？\n助手：二加二等于四。\n"
    "user: what is two plus two?\nbot: two plus two is four.\n"
    "用户：谢谢你！\n助手：不客气，很高兴帮到你。\n"
    "用户：哈哈哈哈哈！\n助手：哈哈哈，很高兴你开心。\n"
    "user: hmm...... ok!!!\nbot: ok...... see you!!!\n"
)

# -- the hints of single checks: what this failure means, where to look -------------------
Hint = tuple[str, str]
H_EVERY_POS = (
    "(a, b) 从位置 0、2、4 开始，共 3 次：每个 i 都要看，一直看到最后一对 (tokens[-2], tokens[-1])",
    "(a, b) starts at positions 0, 2 and 4, three times: look at every i, up to the last pair "
    "(tokens[-2], tokens[-1])",
)
H_ODD_POS = (
    "(5, 2) 从位置 1、3、5 开始：奇数位置上开始的对和偶数位置上的一样要数",
    "(5, 2) starts at positions 1, 3 and 5: pairs that start at odd positions count like those "
    "at even ones",
)
H_TIE_BYTES = (
    "这 6 个字节出现两遍，有 5 个对都是 2 次：并列时赢的是在序列里最先出现的那一对（见并列的测试）",
    "these 6 bytes come twice, so five pairs occur twice: on a tie the pair that appears first "
    "in the sequence wins (see the test about ties)",
)
H_ONCE = (
    "连最常见的一对也只出现 1 次时答案是 None：合并至少要 2 次才有好处",
    "when even the most frequent pair occurs once, the answer is None: a merge needs a count "
    "of at least 2",
)
H_EMPTY = (
    "空序列没有任何对：在找最大值之前就返回 None",
    "an empty sequence has no pairs: return None before looking for a maximum",
)
H_ONE_ID = (
    "一个 id 没有相邻的 id，所以也没有对：和空序列一样返回 None",
    "one id has no neighbour, so no pair either: None, as for the empty sequence",
)
H_ONCE_55 = (
    "[5, 5] 里 (5, 5) 只有 1 次：次数 1 低于门槛 2",
    "(5, 5) occurs once in [5, 5]: a count of 1 is below the threshold of 2",
)
H_ONCE_EACH = (
    "(1, 2) 和 (2, 1) 各 1 次：最大次数是 1，所以是 None",
    "(1, 2) and (2, 1) occur once each: the top count is 1, so None",
)
H_TIE_FIRST = (
    "(1, 2) 和 (3, 4) 都是 2 次，(1, 2) 在序列里先出现，所以是它；在数完之后选，也不能被后来的"
    "同样次数替换",
    "(1, 2) and (3, 4) occur twice each and (1, 2) appears first, so it wins; choose after "
    "counting, and let no later pair of the same count replace it",
)
H_TIE_REACH = (
    "(1, 2) 先数到 2，但 (3, 4) 先出现：谁赢要等所有对都数完，再按第一次出现的先后定",
    "(1, 2) reaches 2 first, but (3, 4) appears first: the winner is chosen once every pair is "
    "counted, by first appearance",
)
H_TIE_VALUE = (
    "(9, 8) 在 (1, 2) 之前出现：并列时对的数值大小不起作用",
    "(9, 8) appears before (1, 2): on a tie the pairs' numeric order plays no part",
)
H_OVERLAP3 = (
    '"aaa" 的两对在位置 0 和 1，彼此重叠：数的时候每个位置都看，(a, a) 是 2 次',
    'the two pairs of "aaa" are at positions 0 and 1 and overlap: counting looks at every '
    "position, so (a, a) occurs twice",
)
H_OVERLAP4 = (
    '"aaaa" 里有三个互相重叠的 (a, a)：位置 0、1、2',
    '"aaaa" holds three overlapping (a, a) pairs: at positions 0, 1 and 2',
)
H_OVERLAP_INNER = (
    "(a, a) 在位置 1 和 2：长序列中间的重叠对也要数",
    "(a, a) is at positions 1 and 2: overlapping pairs inside a longer sequence count too",
)
H_COUNT_INPUT = (
    "bpe_count_pairs 只读 tokens：报告给出了调用后它变成的样子；要加或改什么，放进你自己的列表",
    "bpe_count_pairs only reads tokens: the report shows what the list became after the call; "
    "anything you add or change belongs in a list of your own",
)
H_MERGE_INPUT = (
    "bpe_apply_merge 建一个新列表返回：调用者的 tokens 在调用后必须和之前一样"
    "（报告给出了它变成的样子）",
    "bpe_apply_merge builds and returns a new list: the caller's tokens must be as before the "
    "call (the report shows what they became)",
)
H_MERGE_ALL = (
    "每一个 (97, 98) 都变成 99：写下 new_id 之后，从这一对后面接着扫描",
    "every (97, 98) becomes 99: after writing new_id the scan goes on after the pair",
)
H_TRAILING = (
    "最后一个 id 没有搭档：它原样抄进结果",
    "the last id has no partner: it is copied to the result as it is",
)
H_LAST_PAIR = (
    "这一对可以在序列的最后：落在最后两个位置上的匹配也要替换",
    "the pair may end the sequence: a match at the last two positions is replaced too",
)
H_ORDER = (
    "对是有顺序的：只有 1 后面紧跟 2 才匹配 (1, 2)",
    "pairs are ordered: only a 1 followed by a 2 matches (1, 2)",
)
H_NO_MATCH = (
    "这里没有相邻的 (1, 2)：每个 id 都按原来的顺序原样回来，一个也不少",
    "there is no adjacent (1, 2) here: every id comes back unchanged, in order, none missing",
)
H_RUN3 = (
    '连续重复时最左边的一对先合并，它的两个 id 就用掉了："aaa" 剩下的那个 a 照抄',
    'in a run the leftmost pair merges first and uses up its two ids: the a left over in "aaa" '
    "is copied",
)
H_RUN4 = (
    '"aaaa" 是两对互不重叠的 (a, a)：结果是两个 new_id',
    '"aaaa" is two pairs (a, a) that do not overlap: the result is two new ids',
)
H_RUN5 = (
    '"aaaaa"：从左往右两对合并，最后剩一个 a 照抄',
    '"aaaaa": two pairs merge from the left, and the one a left at the end is copied',
)
H_RUN_INNER = (
    'b 之间的 aaa 和单独的 "aaa" 一样从左边开始合并，两头的 b 照抄',
    "the aaa between the b's merges from its left like \"aaa\" alone, and both b's are copied",
)
H_MERGE_EMPTY = (
    "空列表得到空列表：扫描要在读 tokens[i] 之前先看 i 是否还在范围内",
    "an empty list gives an empty list: the scan tests the index before it reads tokens[i]",
)
H_MERGE_ONE = (
    "一个 id 没有对：它被抄进结果，不能丢",
    "one id has no pair: it is copied to the result, not dropped",
)
H_MERGE_PAIR = (
    "整个序列可以恰好就是这一对：结果只有 new_id",
    "the whole sequence may be exactly the pair: the result is new_id alone",
)
H_MERGE_TUPLE = (
    "tokens 也可以是元组：下标和 len() 对它一样有效，返回的是一个新 list",
    "tokens may be a tuple: indexing and len() work on it the same way, and the result is a new "
    "list",
)
H_COUNT_TUPLE = (
    "元组 (1, 2, 3, 1, 2) 里 (1, 2) 有 2 次：像列表一样按下标读，不要改它，也不要往上拼东西",
    "the tuple (1, 2, 3, 1, 2) holds (1, 2) twice: read it by index like a list, without "
    "changing or extending it",
)
H_LOOP_MERGES = (
    "报告写出了第一个出错的步骤和函数：用那一步的输入（前面几次合并之后的 id）单独调用它看看",
    "the report names the first step and function that went wrong: call that function on the "
    "input of that step (the ids after the earlier merges) by itself",
)
H_LOOP_IDS = (
    "最终序列由合并列表决定：合并列表不对时先修它；否则比较报告里的两个长度",
    "the final sequence follows from the merges: if the merge list differs fix that first; "
    "otherwise compare the two lengths in the report",
)


def ids_of(text: str) -> list[int]:
    return BYTES.encode(text)


def is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


def as_counted(value: Any) -> tuple[bool, Counted]:
    """(ok, ((a, b), n) with plain ints or None) from what bpe_count_pairs returned."""
    if value is None:
        return True, None
    if isinstance(value, tuple | list) and len(value) == 2:
        pair, n = value
        if isinstance(pair, tuple | list) and len(pair) == 2 and all(map(is_int, (*pair, n))):
            return True, ((int(pair[0]), int(pair[1])), int(n))
    return False, None


def as_ids(value: Any) -> list[int] | None:
    """A list of plain ints from what bpe_apply_merge returned, or None if it is not one."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        return [int(x) for x in value]
    if isinstance(value, list | tuple) and all(is_int(x) for x in value):
        return [int(x) for x in value]
    return None


def short(x: Any, n: int = 100) -> str:
    text = repr(x)
    return text if len(text) <= n else text[:n] + "…"


class Changed(list[str]):
    """The inputs that a test's calls modified; `report` records one check for all."""

    def report(self, t: TestContext, hint: Hint) -> None:
        t.check(
            ("每次调用后输入都没有被修改", "every call left its input unchanged"),
            not self,
            tr(
                "这些输入被改动了（应返回新列表，不要修改 tokens）：" + "；".join(self[:3]),
                "these inputs were modified (return a new list, leave tokens alone): "
                + "; ".join(self[:3]),
            ),
            hint=hint,
        )


def check_count(
    t: TestContext,
    label: tuple[str, str],
    tokens: Sequence[int],
    want: Counted,
    changed: Changed,
    hint: Hint,
) -> None:
    """One check: bpe_count_pairs(tokens) == want (`hint` says what the case is about); a
    modified input goes to `changed`."""
    call = t.call("bpe_count_pairs", list(tokens))
    ok, got = as_counted(call.value)
    detail = (
        tr(f"期望 {want}，实际 {short(got)}", f"expected {want}, got {short(got)}")
        if ok
        else tr(
            f"应返回 ((first, second), count) 或 None，实际 {short(call.value)}",
            f"must return ((first, second), count) or None, got {short(call.value)}",
        )
    )
    t.check(label, ok and got == want, detail, hint=hint)
    if call.args[0] != list(tokens):
        changed.append(f"{short(list(tokens), 40)} → {short(call.args[0], 40)}")


def check_merge(
    t: TestContext,
    label: tuple[str, str],
    tokens: Sequence[int],
    pair: Pair,
    want: list[int],
    changed: Changed,
    hint: Hint,
) -> None:
    """One check: bpe_apply_merge(tokens, pair, 99) == want (`hint` says what the case is
    about); a modified input to `changed`."""
    call = t.call("bpe_apply_merge", list(tokens), pair, 99)
    got = as_ids(call.value)
    detail = (
        tr(f"期望 {want}，实际 {short(got)}", f"expected {want}, got {short(got)}")
        if got is not None
        else tr(
            f"应返回 int 列表，实际 {short(call.value)}",
            f"must return a list of ints, got {short(call.value)}",
        )
    )
    t.check(label, got == want, detail, hint=hint)
    if call.args[0] != list(tokens):
        changed.append(f"{short(list(tokens), 40)} → {short(call.args[0], 40)}")


def counts(t: TestContext, cases: list[tuple[str, str, Sequence[int], Counted, Hint]]) -> None:
    changed = Changed()
    for zh, en, tokens, want, hint in cases:
        check_count(t, (zh, en), tokens, want, changed, hint)
    changed.report(t, H_COUNT_INPUT)


def merges(
    t: TestContext, cases: list[tuple[str, str, Sequence[int], Pair, list[int], Hint]]
) -> None:
    changed = Changed()
    for zh, en, tokens, pair, want, hint in cases:
        check_merge(t, (zh, en), tokens, pair, want, changed, hint)
    changed.report(t, H_MERGE_INPUT)


@lab.test(
    "bpe_count_pairs：最常见的相邻对",
    "bpe_count_pairs: the most frequent adjacent pair",
    hint=[
        (
            "数一遍所有相邻对 (tokens[i], tokens[i + 1])，i 取 range(len(tokens) - 1)，"
            "最后一对也算；返回出现最多的那一对和它的次数。",
            "Count every adjacent pair (tokens[i], tokens[i + 1]) for i in "
            "range(len(tokens) - 1), the last pair too, and return the most frequent one with "
            "its count.",
        ),
        (
            "返回形如 ((first, second), count) 的元组，三个都是 int。",
            "Return a tuple shaped ((first, second), count), all three ints.",
        ),
        (
            "用一个 dict（或 collections.Counter）计数，只读 tokens，不要改动它。",
            "Count with a dict (or collections.Counter), and only read tokens, never change it.",
        ),
    ],
)
def count_basic(t: TestContext) -> None:
    counts(
        t,
        [
            (
                '"ababab" → ((97, 98), 3)',
                '"ababab" → ((97, 98), 3)',
                b"ababab",
                ((97, 98), 3),
                H_EVERY_POS,
            ),
            (
                "[1, 5, 2, 5, 2, 5, 2, 9] → ((5, 2), 3)",
                "[1, 5, 2, 5, 2, 5, 2, 9] → ((5, 2), 3)",
                [1, 5, 2, 5, 2, 5, 2, 9],
                ((5, 2), 3),
                H_ODD_POS,
            ),
            (  # e4 bd a0 e5 a5 bd, twice: five pairs tie at 2
                '"你好你好" 的字节 id → ((232, 193), 2)',
                'byte ids of "你好你好" → ((232, 193), 2)',
                ids_of("你好你好"),
                ((232, 193), 2),
                H_TIE_BYTES,
            ),
        ],
    )


@lab.test(
    "bpe_count_pairs：返回 None 的情况",
    "bpe_count_pairs: when the answer is None",
    hint=[
        (
            "最多的一对只出现一次时，合并没有好处：返回 None。",
            "When the top pair occurs only once, merging gains nothing: return None.",
        ),
        (
            "少于 2 个 id 时没有相邻对；最大次数 < 2 时也返回 None，不要报错。",
            "Fewer than 2 ids have no pairs; a top count below 2 also returns None, never an "
            "error.",
        ),
    ],
)
def count_none(t: TestContext) -> None:
    counts(
        t,
        [
            (
                '"abcde"：每对只出现一次 → None',
                '"abcde": every pair occurs once → None',
                b"abcde",
                None,
                H_ONCE,
            ),
            ("空序列 → None", "an empty sequence → None", [], None, H_EMPTY),
            ("只有 1 个 id → None", "a single id → None", [5], None, H_ONE_ID),
            (
                "[5, 5]：(5, 5) 只出现一次 → None",
                "[5, 5]: (5, 5) occurs once → None",
                [5, 5],
                None,
                H_ONCE_55,
            ),
            (
                "[1, 2, 1]：(1, 2) 和 (2, 1) 各一次 → None",
                "[1, 2, 1]: (1, 2) and (2, 1) once each → None",
                [1, 2, 1],
                None,
                H_ONCE_EACH,
            ),
        ],
    )


@lab.test(
    "bpe_count_pairs：并列时取先出现的对",
    "bpe_count_pairs: ties go to the pair seen first",
    hint=[
        (
            "次数相同时，取在序列里最先出现的那一对，而不是数值更小或最先数满的那一对。",
            "On a tie, take the pair that first appears in the sequence, not the smaller one "
            "or the one counted up first.",
        ),
        (
            "dict 按第一次插入的顺序保存键；按这个顺序找最大值，只在严格更大时才替换。",
            "A dict keeps keys in first-insertion order; scan in that order and replace only "
            "on a strictly larger count.",
        ),
    ],
)
def count_ties(t: TestContext) -> None:
    counts(
        t,
        [
            (
                "[1, 2, 5, 3, 4, 1, 2, 3, 4]：(1, 2) 先出现",
                "[1, 2, 5, 3, 4, 1, 2, 3, 4]: (1, 2) comes first",
                [1, 2, 5, 3, 4, 1, 2, 3, 4],
                ((1, 2), 2),
                H_TIE_FIRST,
            ),
            (
                "[3, 4, 1, 2, 1, 2, 3, 4]：(3, 4) 先出现，虽然 (1, 2) 先数到 2",
                "[3, 4, 1, 2, 1, 2, 3, 4]: (3, 4) comes first, though (1, 2) reaches 2 sooner",
                [3, 4, 1, 2, 1, 2, 3, 4],
                ((3, 4), 2),
                H_TIE_REACH,
            ),
            (
                "[9, 8, 1, 2, 9, 8, 1, 2]：不是数值更小的 (1, 2)",
                "[9, 8, 1, 2, 9, 8, 1, 2]: not the smaller (1, 2)",
                [9, 8, 1, 2, 9, 8, 1, 2],
                ((9, 8), 2),
                H_TIE_VALUE,
            ),
        ],
    )


@lab.test(
    "bpe_count_pairs：重叠的对也要数",
    "bpe_count_pairs: overlapping pairs count",
    hint=[
        (
            '数的时候每个位置 i 都要看："aaa" 里 (a, a) 出现 2 次。',
            'Counting looks at every position i: (a, a) occurs twice in "aaa".',
        ),
        (
            "计数时不要跳过刚数过的对，步长是 1；不重叠只是合并时的规则。",
            "Do not skip past a counted pair: step by 1; no-overlap is a rule of merging only.",
        ),
    ],
)
def count_overlap(t: TestContext) -> None:
    counts(
        t,
        [
            ('"aaa" → ((97, 97), 2)', '"aaa" → ((97, 97), 2)', b"aaa", ((97, 97), 2), H_OVERLAP3),
            (
                '"aaaa" → ((97, 97), 3)',
                '"aaaa" → ((97, 97), 3)',
                b"aaaa",
                ((97, 97), 3),
                H_OVERLAP4,
            ),
            (
                '"baaab" → ((97, 97), 2)',
                '"baaab" → ((97, 97), 2)',
                b"baaab",
                ((97, 97), 2),
                H_OVERLAP_INNER,
            ),
        ],
    )


@lab.test(
    "bpe_apply_merge：替换每一处",
    "bpe_apply_merge: replaces every occurrence",
    hint=[
        (
            "从左往右扫描：遇到这一对就写入 new_id 并跳过 2 个，否则照抄 1 个。",
            "Scan left to right: at the pair write new_id and skip 2, otherwise copy 1.",
        ),
        (
            "注意边界：最后一对也要替换，末尾落单的 id 也要照抄。",
            "Mind the end: the last pair is replaced too, and a trailing unpaired id is copied.",
        ),
        (
            "顺序有关：(1, 2) 不匹配 2, 1；并且返回一个新列表。",
            "Order matters: (1, 2) does not match 2, 1; and return a new list.",
        ),
    ],
)
def merge_basic(t: TestContext) -> None:
    merges(
        t,
        [
            (
                '"ababab"，(97, 98) → [99, 99, 99]',
                '"ababab", (97, 98) → [99, 99, 99]',
                b"ababab",
                (97, 98),
                [99, 99, 99],
                H_MERGE_ALL,
            ),
            (
                "[1, 2, 1, 2, 1]：末尾落单的 1 照抄",
                "[1, 2, 1, 2, 1]: the last, unpaired 1 is copied",
                [1, 2, 1, 2, 1],
                (1, 2),
                [99, 99, 1],
                H_TRAILING,
            ),
            (
                "[3, 1, 2]：最后一对也替换",
                "[3, 1, 2]: the last pair is replaced too",
                [3, 1, 2],
                (1, 2),
                [3, 99],
                H_LAST_PAIR,
            ),
            (
                "[2, 1, 5, 1, 2]：(1, 2) 不匹配 2, 1",
                "[2, 1, 5, 1, 2]: (1, 2) does not match 2, 1",
                [2, 1, 5, 1, 2],
                (1, 2),
                [2, 1, 5, 99],
                H_ORDER,
            ),
            (
                "[4, 1, 6, 2, 1]：不相邻不算",
                "[4, 1, 6, 2, 1]: not adjacent, no match",
                [4, 1, 6, 2, 1],
                (1, 2),
                [4, 1, 6, 2, 1],
                H_NO_MATCH,
            ),
        ],
    )


@lab.test(
    "bpe_apply_merge：连续重复从左往右、不重叠",
    "bpe_apply_merge: runs merge left to right, without overlap",
    hint=[
        (
            '连续重复时从左往右、不重叠："aaa" 合并 (a, a) 得到 [new, a]：'
            "末尾落单的 a 照抄，不能丢。",
            'Runs merge left to right without overlap: "aaa" with (a, a) gives [new, a]: the '
            "trailing a is copied, not dropped.",
        ),
        (
            "替换之后跳过两个位置（i += 2），不要只前进一个，也不要回头再看。",
            "After a replacement advance two positions (i += 2), not one, and never look back.",
        ),
    ],
)
def merge_overlap(t: TestContext) -> None:
    a = 97
    merges(
        t,
        [
            ('"aaa" → [99, 97]', '"aaa" → [99, 97]', b"aaa", (a, a), [99, a], H_RUN3),
            ('"aaaa" → [99, 99]', '"aaaa" → [99, 99]', b"aaaa", (a, a), [99, 99], H_RUN4),
            (
                '"aaaaa" → [99, 99, 97]',
                '"aaaaa" → [99, 99, 97]',
                b"aaaaa",
                (a, a),
                [99, 99, a],
                H_RUN5,
            ),
            (
                '"baaab" → [98, 99, 97, 98]',
                '"baaab" → [98, 99, 97, 98]',
                b"baaab",
                (a, a),
                [98, 99, a, 98],
                H_RUN_INNER,
            ),
        ],
    )


@lab.test(
    "bpe_apply_merge：空序列、单个 id、元组输入",
    "bpe_apply_merge: empty, one id, a tuple",
    hint=[
        (
            "空序列和只有一个 id 时直接返回（副本）；不要读 tokens[i + 1] 越界。",
            "An empty or one-id sequence comes back as it is (a copy); never read past the end.",
        ),
        (
            "tokens 也可能是元组：只用下标和 len() 读取，返回 list。",
            "tokens may be a tuple: read it by index and len() only, and return a list.",
        ),
    ],
)
def merge_edges(t: TestContext) -> None:
    merges(
        t,
        [
            ("[] → []", "[] → []", [], (1, 2), [], H_MERGE_EMPTY),
            ("[7] → [7]", "[7] → [7]", [7], (7, 7), [7], H_MERGE_ONE),
            ("[1, 2] → [99]", "[1, 2] → [99]", [1, 2], (1, 2), [99], H_MERGE_PAIR),
        ],
    )
    name = ("tokens 是元组 (1, 2, 3, 1, 2) 也能用", "tokens as a tuple (1, 2, 3, 1, 2) works")
    if call := t.returns(name, "bpe_apply_merge", (1, 2, 3, 1, 2), (1, 2), 99):
        got = short(call.value)
        detail = tr(f"期望 [99, 3, 99]，实际 {got}", f"expected [99, 3, 99], got {got}")
        t.check(name, as_ids(call.value) == [99, 3, 99], detail, hint=H_MERGE_TUPLE)
    name = (
        "bpe_count_pairs 对元组 (1, 2, 3, 1, 2) 也数得对",
        "bpe_count_pairs counts a tuple (1, 2, 3, 1, 2) right too",
    )
    if call := t.returns(name, "bpe_count_pairs", (1, 2, 3, 1, 2)):
        got = short(call.value)
        detail = tr(f"期望 ((1, 2), 2)，实际 {got}", f"expected ((1, 2), 2), got {got}")
        t.check(name, as_counted(call.value) == (True, ((1, 2), 2)), detail, hint=H_COUNT_TUPLE)


def run_loop(t: TestContext, text: str, n: int) -> tuple[list[Pair], list[int], Text | None]:
    """Train up to `n` merges with the student's two functions, checking every step.

    Returns the merges, the final ids, and what went wrong first (None if nothing did).
    """
    ids = ids_of(text)
    done: list[Pair] = []
    for k in range(n):
        value = t.call("bpe_count_pairs", ids).value
        ok, got = as_counted(value)
        want = count_pairs(ids)
        if not ok or got != want:
            return (
                done,
                ids,
                tr(
                    f"第 {k + 1} 步 bpe_count_pairs：期望 {want}，实际 {short(value)}",
                    f"step {k + 1}, bpe_count_pairs: expected {want}, got {short(value)}",
                ),
            )
        if got is None:
            break
        value = t.call("bpe_apply_merge", ids, got[0], FIRST_MERGE_ID + k).value
        new, want_ids = as_ids(value), merge_pair(ids, got[0], FIRST_MERGE_ID + k)
        if new != want_ids:
            return (
                done,
                ids,
                tr(
                    f"第 {k + 1} 步 bpe_apply_merge({got[0]} → {FIRST_MERGE_ID + k})：从第 "
                    f"{first_diff(new, want_ids)} 个 id 起与正确结果不同",
                    f"step {k + 1}, bpe_apply_merge({got[0]} → {FIRST_MERGE_ID + k}): differs "
                    f"from the right result from id {first_diff(new, want_ids)} on",
                ),
            )
        ids = new
        done.append(got[0])
    return done, ids, None


def first_diff(got: list[int] | None, want: list[int]) -> int:
    if got is None:
        return 0
    return next((k for k, (g, w) in enumerate(zip(got, want, strict=False)) if g != w), len(want))


def check_loop(t: TestContext, text: str, n: int, what: Text) -> None:
    """The student's loop gives the framework's merges and its encoding of `text`."""
    ref = BPETokenizer.train(text, n)
    merges, ids, problem = run_loop(t, text, n)
    n_ref, n_bytes, want = len(ref.merges), len(ids_of(text)), ref.encode(text)
    t.check(
        tr(
            f"{what.zh}：合并列表 = BPETokenizer.train 的 {n_ref} 次合并",
            f"{what.en}: the merges = BPETokenizer.train's {n_ref} merges",
        ),
        problem is None and merges == ref.merges,
        problem,
        hint=H_LOOP_MERGES,
    )
    t.check(
        tr(
            f"{what.zh}：最终序列 = BPETokenizer.encode（{n_bytes} 个字节 → {len(want)} 个 id）",
            f"{what.en}: the final sequence = BPETokenizer.encode "
            f"({n_bytes} bytes → {len(want)} ids)",
        ),
        problem is None and ids == want,
        problem
        or tr(f"长度 {len(ids)}，期望 {len(want)}", f"length {len(ids)}, expected {len(want)}"),
        hint=H_LOOP_IDS,
    )


@lab.test(
    "小型 BPE 训练：与框架逐次一致",
    "mini BPE training: merge for merge like the framework",
    requires=[count_basic, merge_basic],
    hint=[
        (
            "训练循环就是反复 bpe_count_pairs 再 bpe_apply_merge，每次的 new_id 依次加 1。",
            "The loop repeats bpe_count_pairs then bpe_apply_merge, with new_id one higher "
            "each time.",
        ),
        (
            "报告会指出第一步出错的函数：先让它的单项测试（并列、重叠）通过。",
            "The report names the first step that goes wrong: make that function's tie and "
            "overlap tests pass first.",
        ),
    ],
)
def loop_matches_framework(t: TestContext) -> None:
    c_text = Text('"ababab ababab cdcd ef ef"，最多 50 次', '"ababab ababab cdcd ef ef", up to 50')
    check_loop(t, C_CORPUS, 50, c_text)
    check_loop(
        t, CORPUS, 50, Text("中英文对话语料，50 次", "a Chinese and English corpus, 50 merges")
    )
