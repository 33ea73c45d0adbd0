"""`minillm similarity`: a copied pair among independent lab04 solutions ranks first.

The class is built from this course's own lab04 stub: each student fills its three TODOs
(`attention_scores`, `apply_mask`, `softmax`) with one of five structurally different,
equivalent bodies per function. The ten independent students take the rows
``(a, b, (a + b) mod 5)`` of an orthogonal array, so two of them never share more than one
of their three functions (as students who write one small function alike, honestly). The
eleventh writes her own (0, 2, 2); the twelfth copies her: variables renamed, comments
rewritten, docstrings dropped, functions reordered.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import cli
from grader.labs import resolve_lab
from grader.similarity import Settings, compare_class, fingerprint, rank_lab
from grader.similarity.rank import stub_hashes
from grader.similarity.report import DISCLAIMER, plain, ranked, render_report
from grader.similarity.tokens import layout, normalise
from grader.similarity.winnow import kgram_hashes, winnow

LAB = resolve_lab("lab04")
STUB = LAB.student.read_text(encoding="utf-8")
TODO = re.compile(
    r'    # TODO\(lab04\): .*\n    raise NotImplementedError\("lab04: implement (\w+)"\)\n'
)

SCORES = [  # attention_scores(q, k, scale)
    """    qt, kt = as_tensor(q, "q"), as_tensor(k, "k")
    if qt.ndim != 2 or kt.ndim != 2:
        raise ValueError(f"q and k must be 2-D, got q {qt.shape} and k {kt.shape}")
    if qt.shape[1] != kt.shape[1]:
        raise ValueError(f"q is {qt.shape} and k is {kt.shape}: head sizes differ")
    return tensor_from(np.float32(scale) * (qt.numpy() @ kt.numpy().T))  # (S, T)
""",
    """    qa = as_tensor(q, "q").numpy()
    ka = as_tensor(k, "k").numpy()
    if len(qa.shape) != 2:
        raise ValueError("q must be 2-D")
    if len(ka.shape) != 2:
        raise ValueError("k must be 2-D")
    s_len, hd = qa.shape
    t_len, hd_k = ka.shape
    if hd != hd_k:
        raise ValueError("head sizes differ")
    out = tensor_zeros((s_len, t_len))
    view = out.numpy()
    for i in range(s_len):
        for j in range(t_len):
            total = 0.0
            for d in range(hd):
                total += float(qa[i, d]) * float(ka[j, d])
            view[i, j] = total * scale
    return out
""",
    """    a = np.asarray(as_tensor(q, "q").numpy(), dtype=np.float32)
    b = np.asarray(as_tensor(k, "k").numpy(), dtype=np.float32)
    if a.ndim == 2 and b.ndim == 2 and a.shape[-1] == b.shape[-1]:
        return tensor_from(np.matmul(a, np.transpose(b)) * scale)
    raise ValueError(f"bad shapes {a.shape} and {b.shape}")
""",
    """    queries = as_tensor(q, "q")
    keys = as_tensor(k, "k")
    for name, t in (("q", queries), ("k", keys)):
        if t.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got {t.shape}")
    if queries.shape[-1] != keys.shape[-1]:
        raise ValueError("q and k need the same last dimension")
    scores = np.einsum("sd,td->st", queries.numpy(), keys.numpy())
    scores *= scale
    return tensor_from(scores.astype(np.float32))
""",
    """    qn = as_tensor(q, "q").numpy()
    kn = as_tensor(k, "k").numpy()
    shapes_ok = qn.ndim == 2 and kn.ndim == 2
    if not shapes_ok or qn.shape[1] != kn.shape[1]:
        raise ValueError("attention_scores: expected [S, hd] and [T, hd]")
    rows = []
    for row in qn:
        rows.append(np.dot(kn, row) * scale)
    return tensor_from(np.stack(rows) if rows else np.zeros((0, kn.shape[0]), np.float32))
""",
]
MASKS = [  # apply_mask(scores, mask)
    """    mt = as_tensor(mask, "mask")
    if isinstance(scores, np.ndarray):
        view = scores
    elif isinstance(scores, Tensor):
        view = scores.numpy()
    else:
        raise TypeError(f"scores must be a Tensor or ndarray, not {type(scores).__name__}")
    if view.shape != mt.shape:
        raise ValueError(f"scores is {view.shape} but mask is {mt.shape}")
    view += mt.numpy()
""",
    """    target = scores.numpy() if isinstance(scores, Tensor) else scores
    m = as_tensor(mask, "mask").numpy()
    if tuple(target.shape) != tuple(m.shape):
        raise ValueError("mask and scores differ in shape")
    np.add(target, m, out=target)
""",
    """    if not isinstance(scores, (Tensor, np.ndarray)):
        raise TypeError("scores must be a Tensor or an ndarray")
    arr = scores if isinstance(scores, np.ndarray) else scores.numpy()
    mk = as_tensor(mask, "mask")
    if mk.shape != arr.shape:
        raise ValueError(f"shape mismatch: {arr.shape} vs {mk.shape}")
    mv = mk.numpy()
    for idx in np.ndindex(arr.shape):
        arr[idx] = arr[idx] + mv[idx]
""",
    """    mask_arr = np.asarray(as_tensor(mask, "mask").numpy())
    if isinstance(scores, Tensor):
        buf = scores.numpy()
    else:
        buf = np.asarray(scores)
    if buf.shape == mask_arr.shape:
        rows, cols = buf.shape
        for r in range(rows):
            for c in range(cols):
                buf[r, c] += mask_arr[r, c]
        return
    raise ValueError("scores and mask must have exactly the same shape")
""",
    """    m = as_tensor(mask, "mask")
    try:
        data = scores.numpy()
    except AttributeError:
        data = scores
    if data.shape != m.shape:
        raise ValueError(f"apply_mask: {data.shape} != {m.shape}")
    data[...] = data + m.numpy()
""",
]
SOFTMAXES = [  # softmax(x)
    """    xt = as_tensor(x, "x")
    if xt.ndim == 0 or xt.shape[-1] == 0:
        raise ValueError(f"softmax needs a non-empty last dimension, got shape {xt.shape}")
    v = xt.numpy()
    e = np.exp(v - v.max(axis=-1, keepdims=True))  # max subtraction: no overflow
    return tensor_from(e / e.sum(axis=-1, keepdims=True))
""",
    """    t = as_tensor(x, "x")
    if t.ndim < 1 or t.shape[-1] < 1:
        raise ValueError("softmax needs a non-empty last dimension")
    flat = t.numpy().reshape(-1, t.shape[-1])
    out = np.empty_like(flat)
    for i, row in enumerate(flat):
        shifted = row - np.max(row)
        ex = np.exp(shifted)
        out[i] = ex / np.sum(ex)
    return tensor_from(out.reshape(t.shape))
""",
    """    arr = as_tensor(x, "x").numpy()
    if arr.ndim == 0:
        raise ValueError("x must have at least one dimension")
    if arr.shape[-1] == 0:
        raise ValueError("the last dimension of x is empty")
    biggest = arr.max(axis=-1)[..., None]
    num = np.exp(arr - biggest)  # the biggest exponent is 0
    den = num.sum(axis=-1)[..., None]
    return tensor_from(num / den)
""",
    """    xs = as_tensor(x, "x")
    if not xs.shape or xs.shape[-1] == 0:
        raise ValueError(f"softmax: bad shape {xs.shape}")

    def one_row(v):
        z = np.exp(v - v.max())
        return z / z.sum()

    return tensor_from(np.apply_along_axis(one_row, -1, xs.numpy()))
""",
    """    tx = as_tensor(x, "x")
    if tx.ndim == 0 or tx.shape[-1] == 0:
        raise ValueError("empty last dimension")
    v = tx.numpy().astype(np.float64)
    m = np.max(v, axis=-1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(v - m), axis=-1, keepdims=True))
    return tensor_from(np.exp(v - lse).astype(np.float32))
""",
]
INDEPENDENT = ["ann", "ben", "cai", "dan", "eve", "fay", "gus", "hal", "ivy", "jon"]
ROWS = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]
RENAMES = {"queries": "qq", "keys": "kk", "scores": "sc", "arr": "values", "mk": "mask_t"}
RENAMES |= {"mv": "mask_values", "idx": "where", "biggest": "top", "num": "numer"}
RENAMES |= {"den": "denom"}


def student_file(scores: str, mask: str, soft: str) -> str:
    """The lab04 stub with its three TODOs filled in (and numpy imported)."""
    bodies = {"attention_scores": scores, "apply_mask": mask, "softmax": soft}
    text = TODO.sub(lambda m: bodies[m.group(1)], STUB)
    return text.replace("from framework import", "import numpy as np\n\nfrom framework import")


def copied(original: str) -> str:
    """`original` as a copier hands it in: variables renamed, comments changed, docstrings
    dropped, the functions in another order."""
    text = re.sub(r'\n    """.*?"""\n', "\n", original, flags=re.DOTALL)  # docstrings
    text = re.sub(r"  # .*", "  # my own idea", text)
    for old, new in RENAMES.items():
        text = re.sub(rf"(?<![\w.\"]){old}\b(?!\")", new, text)
    head, *funcs = text.split("\n\n\ndef ")
    funcs = [funcs[2], funcs[0], funcs[1]]  # softmax first
    return "\n\n\n# Lab 4, done late at night\ndef ".join([head, *funcs])


def submission(root: Path, name: str, text: str) -> Path:
    path = root / name / "labs" / "lab04" / "student.py"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return root / name


def a_class(root: Path) -> list[Path]:
    """Twelve submissions: ten independent, kim, and lee who copied kim."""
    paths = []
    for name, (a, b) in zip(INDEPENDENT, ROWS, strict=True):
        text = student_file(SCORES[a], MASKS[b], SOFTMAXES[(a + b) % 5])
        paths.append(submission(root, name, text))
    kim = student_file(SCORES[0], MASKS[2], SOFTMAXES[2])
    paths.insert(3, submission(root, "kim", kim))
    paths.append(submission(root, "lee", copied(kim)))
    return paths


def test_the_copied_pair_ranks_first_and_clearly_higher(tmp_path: Path) -> None:
    found = compare_class(a_class(tmp_path), [LAB])
    assert found.problems == []
    pairs = found.pairs["lab04"]
    assert len(pairs) == 12 * 11 // 2
    first, second = pairs[0], pairs[1]
    assert {first.a, first.b} == {"kim", "lee"}
    assert first.score >= 0.8  # renames, comments and order leave most fingerprints intact
    assert first.score - second.score >= 0.3  # the rest share at most one function
    assert all(0.0 <= p.score <= 1.0 for p in pairs)


def test_the_copy_is_found_without_the_short_function_rule_too(tmp_path: Path) -> None:
    found = compare_class(a_class(tmp_path), [LAB], Settings(min_function=0))
    assert {found.pairs["lab04"][0].a, found.pairs["lab04"][0].b} == {"kim", "lee"}


@pytest.mark.parametrize("min_function", [0, 30])
def test_stubs_handed_in_as_they_are_share_nothing(tmp_path: Path, min_function: int) -> None:
    paths = [submission(tmp_path, n, STUB) for n in ("s1", "s2")]
    paths.append(submission(tmp_path, "done", student_file(SCORES[0], MASKS[0], SOFTMAXES[0])))
    found = compare_class(paths, [LAB], Settings(min_function=min_function))
    assert [p.score for p in found.pairs["lab04"]] == [0.0, 0.0, 0.0]
    assert found.docs["lab04"][0].prints == {}  # the stub's text is set aside


def test_a_shared_short_helper_counts_for_nothing() -> None:
    helper = "\n\ndef _shape(t):\n    return tuple(int(n) for n in t.shape)\n"
    plain_a = student_file(SCORES[1], MASKS[1], SOFTMAXES[1])
    plain_b = student_file(SCORES[3], MASKS[3], SOFTMAXES[3])

    def shared(a: str, b: str, settings: Settings) -> int:
        stub = stub_hashes([STUB], settings.k)
        docs = [fingerprint(n, "lab04", t, stub, settings) for n, t in (("a", a), ("b", b))]
        return rank_lab(docs, settings)[0].shared

    for settings in (Settings(), Settings(min_function=0)):
        base = shared(plain_a, plain_b, settings)
        with_helper = shared(plain_a + helper, plain_b + helper, settings)
        assert (with_helper > base) is (settings.min_function == 0)


def test_names_comments_docstrings_and_layout_do_not_change_the_tokens() -> None:
    one = 'def f(a, b):\n    """Add."""\n    return a + b  # sum\n'
    two = "def add(x,\n        y):\n    # the sum\n\n    return x + y\n"
    assert [t.kind for t in normalise(one)] == [t.kind for t in normalise(two)]
    assert [t.kind for t in normalise("x = 1\n")] == ["V", "=", "N", "NEWLINE"]
    assert [t.kind for t in normalise("x = f'{y}!'\n")] == ["V", "=", "S", "NEWLINE"]


@pytest.mark.parametrize(
    "text", ["def f(:\n  )))\n", "x = '''unclosed\n", "\0\0", "if x:\n y\n  z\n"]
)
def test_text_that_does_not_tokenize_is_taken_up_to_the_error(text: str) -> None:
    tokens = normalise(text)
    assert layout(text, tokens, 30).short == [False] * len(tokens)  # it does not parse


def test_winnowing_keeps_the_rightmost_minimum_of_each_window() -> None:
    assert winnow([5, 3, 9, 3, 7, 1, 8], 3) == [1, 3, 5]
    assert winnow([None, None, 4, None], 2) == [2]
    assert winnow([], 4) == []
    assert kgram_hashes(["V", "=", "N"], 2) == kgram_hashes(["V", "=", "N"], 2)  # stable


def test_the_json_is_every_pair_highest_first(tmp_path: Path) -> None:
    paths = a_class(tmp_path)
    out = tmp_path / "sim.json"
    done = CliRunner().invoke(
        cli, ["similarity", *map(str, paths), "--labs", "lab04", "--json", str(out), "--lang", "en"]
    )
    assert done.exit_code == 0, done.output
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert len(rows) == 66
    assert all(set(r) == {"a", "b", "lab", "score"} for r in rows)
    assert all(r["lab"] == "lab04" and 0 <= r["score"] <= 1 for r in rows)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert {rows[0]["a"], rows[0]["b"]} == {"kim", "lee"}
    assert DISCLAIMER.en in done.output
    high = CliRunner().invoke(
        cli,
        ["similarity", *map(str, paths), "--labs", "4", "--json", str(out), "--min-score", "0.8"],
    )
    assert high.exit_code == 0
    assert [(r["a"], r["b"]) for r in json.loads(out.read_text())] == [("kim", "lee")]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_report_says_it_is_a_lead_and_escapes_the_students_text(
    tmp_path: Path, lang: str
) -> None:
    evil = "# </pre><script>alert(1)</script> \u202e\n" + STUB.replace(
        "from __future__", "x = '<b>'\nfrom __future__"
    )
    paths = [*a_class(tmp_path)[:3], submission(tmp_path, "<script>x</script>", evil)]
    report = tmp_path / "sim.html"
    done = CliRunner().invoke(
        cli,
        [
            "similarity",
            *map(str, paths),
            "--labs",
            "lab04",
            "--report",
            str(report),
            "--lang",
            lang,
            "--top",
            "6",
        ],
    )
    assert done.exit_code == 0, done.output
    page = report.read_text(encoding="utf-8")
    assert DISCLAIMER.pick(lang) in page
    assert "<script" not in page and "<b>" not in page and "\u202e" not in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\\u202e" in page
    assert page.count("<details") == 6 and page.count("<pre>") == 12
    assert "<mark>" in page  # the shared regions of the top pair


def test_the_shared_regions_are_the_copied_code(tmp_path: Path) -> None:
    found = compare_class(a_class(tmp_path), [LAB])
    page = render_report(found, "en", top=1)
    marked = "".join(re.findall(r"<mark>(.*?)</mark>", page, flags=re.DOTALL))
    assert "np.ndindex" in marked and "apply_along_axis" not in marked


def test_unreadable_submissions_are_one_line_each_and_skipped(tmp_path: Path) -> None:
    paths = a_class(tmp_path)[:2]
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("labs/lab04/student.py", "x = 1\n")
        z.writestr("../escape.py", "x = 1\n")
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip at all")
    latin = tmp_path / "latin"
    (latin / "labs" / "lab04").mkdir(parents=True)
    (latin / "labs" / "lab04" / "student.py").write_bytes(b"x = '\xe9'\n")
    args = ["similarity", str(bad), *map(str, paths), str(junk), str(latin), "--labs", "lab04"]
    done = CliRunner().invoke(cli, [*args, "--lang", "en", "--json", str(tmp_path / "j.json")])
    assert done.exit_code == 0, done.output
    lines = [line for line in done.stderr.splitlines() if "skipped" in line]
    assert len(lines) == 3, done.stderr
    assert "bad:" in lines[0] and "outside the zip" in lines[0]
    assert "junk:" in lines[1] and "latin: lab04" in lines[2]
    rows = json.loads((tmp_path / "j.json").read_text())
    assert [(r["a"], r["b"]) for r in rows] == [("ann", "ben")]


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["similarity"]).exit_code == 2
    assert CliRunner().invoke(cli, ["similarity", ".", "--labs", "lab99"]).exit_code == 2
    assert CliRunner().invoke(cli, ["similarity", ".", "--top", "0"]).exit_code == 2
    assert CliRunner().invoke(cli, ["similarity", ".", "--min-score", "2"]).exit_code == 2


def test_plain_makes_invisible_characters_visible() -> None:
    assert plain("a\u202eb\x1b[31m\n") == "a\\u202eb\\u001b[31m\n"
    assert ranked(compare_class([], [LAB])) == []
