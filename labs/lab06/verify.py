"""Lab06 checks: the default config, model creation from a seed, and the model file.

Read freely; do not edit. Every call into your `student.py` runs in a separate sandbox
process. A model file your `model_save` writes is read back by the framework's
`model_load` inside that sandbox process too (the grader never opens it), under a new
file name each time, so a file left over from an earlier run can never pass a check.
Random weights use fixed seeds; a failure prints the seed.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import numpy as np

from framework.config import ModelConfig
from framework.gpt import parameter_shapes
from framework.model import GPTModel, init_weights
from grader.dsl import Build, Handle, Lab, Name, TestContext, tr

lab = Lab("lab06", "完整 GPT 模型", "The complete GPT model")
lab.forbid(
    "default_config",
    "framework.config:default_config",
    why=("这一课要你亲手写下六个默认值", "this lab asks you to write the six default values down"),
)
lab.forbid(
    "model_save",
    "framework.model:model_save",
    why=(
        "这一课就是亲手按格式写出文件头、配置和每个数组",
        "this lab is about writing the header, the config and every array in the format's order",
    ),
)

CONFIG = "framework.config:ModelConfig"
GPT = "framework.model:GPTModel"
LOAD = "framework.model:model_load"
FIELDS = ("vocab_size", "hidden_dim", "num_heads", "num_layers", "ffn_dim", "max_seq_len")
DEFAULT = (260, 64, 4, 4, 256, 128)  # 240,512 parameters, a 962,080-byte file
TINY = (260, 32, 2, 2, 128, 64)  # 43,904 parameters
ODD = (50, 24, 3, 5, 40, 16)  # six different numbers: a swapped header field shows
IDS = [1, 7, 2, 49, 0, 3]


def n_params(fields: tuple[int, ...]) -> int:
    return sum(math.prod(s) for _, s in parameter_shapes(ModelConfig(*fields)))


def reference_state(fields: tuple[int, ...], seed: int) -> dict[str, np.ndarray]:
    """What `model_create` must give: the framework's own init_weights(model, seed).

    Compared bit for bit: the same code draws the same float32 numbers from the same seed
    in the grader and in the sandbox, so any difference is a different initialisation.
    """
    model = GPTModel(ModelConfig(*fields))
    init_weights(model, seed)
    return model.state_dict()


def random_state(t: TestContext, fields: tuple[int, ...], seed: int) -> dict[str, np.ndarray]:
    """Every parameter random: each LayerNorm and bias differs from every other.

    After init_weights all gammas are 1 and all betas and biases 0, so a file that swaps
    two LayerNorms would load back unchanged (the C course could not see it).
    """
    rng = t.rng(seed)
    state = {}
    for name, shape in parameter_shapes(ModelConfig(*fields)):
        base = 1.0 if name.endswith("gamma") else 0.0
        state[name] = (base + rng.normal(0.0, 0.3, size=shape)).astype(np.float32)
    return state


def sandbox_model(t: TestContext, fields: tuple[int, ...], state: dict[str, np.ndarray]) -> Any:
    """A GPTModel with these weights, built by the framework in the sandbox."""
    model = t.build(GPT, t.build(CONFIG, *fields))
    t.method(model, "load_state", state)
    return model


def new_path() -> str:
    """A file name never used before, in the sandbox's scratch folder (its working dir)."""
    return f"model-{uuid.uuid4().hex[:12]}.bin"


def is_model(value: Any) -> bool:
    return isinstance(value, Handle) and value.type_name == "framework.model.GPTModel"


def load_back(t: TestContext, name: tuple[str, str], path: str) -> Any:
    """`model_load(path)` in the sandbox; a refused file is a FAIL line `name`, else a PASS."""
    out = t.session.build(Build(LOAD, (path,)), timeout=t.timeout)
    if out.ok and isinstance(out.value, Handle):
        t.check(name, True)
        return out.value
    t.unless_raised(LOAD, out)  # a timeout or a crash is said as any call's is
    message = (out.error.message or str(out.kind)).replace(f"{path}: ", "")
    t.check(
        name,
        False,
        tr(f"model_load 拒绝了这个文件：{message}", f"model_load refused the file: {message}"),
    )
    return None


def state_of(t: TestContext, name: Name, model: Any) -> dict[str, Any] | None:
    """The state_dict of a GPTModel in the sandbox; a FAIL line `name` for anything else."""
    if not is_model(model):
        t.check(
            name,
            False,
            tr(
                f"期望一个 GPTModel，实际是 {model!r}"[:200],
                f"expected a GPTModel, got {model!r}"[:200],
            ),
        )
        return None
    got = t.method(model, "state_dict").value
    return got if isinstance(got, dict) else {}


def same_state(
    t: TestContext, name: Name, got: dict[str, Any] | None, want: dict[str, Any]
) -> bool:
    """Every parameter of `got` (a state_dict from the sandbox) bit-equal to `want`."""
    if got is None:
        return False
    for key, arr in want.items():
        have = got.get(key)
        if not isinstance(have, np.ndarray) or have.shape != arr.shape:
            found = "nothing" if have is None else f"{getattr(have, 'shape', type(have).__name__)}"
            return t.check(
                name,
                False,
                tr(
                    f"{key}：期望形状 {list(arr.shape)}，实际 {found}",
                    f"{key}: expected shape {list(arr.shape)}, got {found}",
                ),
            )
        if not np.array_equal(have, arr):
            twin = next(
                (
                    k
                    for k, v in want.items()
                    if k != key and v.shape == arr.shape and np.array_equal(v, have)
                ),
                None,
            )
            with np.errstate(all="ignore"):  # values read in the wrong byte order may be inf
                worst = float(np.max(np.abs(have.astype(np.float64) - arr)))
            zh = f"第一个不同的参数是 {key}（最大误差 {worst:.3g}）"
            en = f"the first parameter that differs is {key} (max abs error {worst:.3g})"
            if twin is not None:
                zh += f"：它的值其实是 {twin} 的，写入顺序和规定的不同"
                en += f": it holds the values of {twin}, so the order differs from the format"
            return t.check(name, False, tr(zh, en))
    return t.check(name, True)


# -- default_config -----------------------------------------------------------------------
@lab.test(
    "default_config：六个字段都是课程的默认值",
    "default_config: all six fields are the course's defaults",
    hint=[
        (
            "六个字段都要等于课程的默认值，而不只是正数。",
            "All six fields must equal the course's defaults, not just be positive.",
        ),
        (
            "vocab 260、hidden 64、heads 4、layers 4、ffn 256、max_seq_len 128，都用 int（4.0 "
            "* 64 是 float）。",
            "vocab 260, hidden 64, heads 4, layers 4, ffn 256, max_seq_len 128, all ints (4.0 "
            "* 64 is a float).",
        ),
        (
            "用关键字参数构造 ModelConfig，这样字段不会错位。",
            "Build the ModelConfig with keyword arguments, so no field lands in another's place.",
        ),
    ],
)
def default_fields(t: TestContext) -> None:
    cfg = t.call("default_config").value
    ok = t.check(
        ("返回一个 ModelConfig", "returns a ModelConfig"),
        isinstance(cfg, Handle) and cfg.type_name == "framework.config.ModelConfig",
        tr(f"实际返回了 {cfg!r}"[:200], f"it returned {cfg!r}"[:200]),
    )
    if not ok:
        return
    got = tuple(t.getattr(cfg, f) for f in FIELDS)
    bad = [
        (f, g, w)
        for f, g, w in zip(FIELDS, got, DEFAULT, strict=True)
        if type(g) is not int or g != w
    ]
    t.check(
        (
            "vocab 260、hidden 64、heads 4、layers 4、ffn 256、max_seq_len 128",
            "vocab 260, hidden 64, heads 4, layers 4, ffn 256, max_seq_len 128",
        ),
        not bad,
        tr(
            "；".join(f"{f} = {g!r}（应为 {w}）" for f, g, w in bad),
            "; ".join(f"{f} = {g!r} (should be {w})" for f, g, w in bad),
        ),
    )
    name = ("这个配置的模型有 240,512 个参数", "a model of this config has 240,512 parameters")
    try:
        count = n_params(ModelConfig(*got).validate().as_tuple())
    except (TypeError, ValueError) as e:
        t.check(name, False, tr(f"这个配置无效：{e}", f"the config is invalid: {e}"))
        return
    t.check(name, count == 240_512, tr(f"实际是 {count:,} 个", f"it has {count:,}"))


# -- model_create -------------------------------------------------------------------------
@lab.test(
    "model_create：权重就是框架按 seed 初始化的结果",
    "model_create: the weights are the framework's initialisation from the seed",
    hint=[
        (
            "不要自己抽随机数：用 GPTModel(config) 建模型，再调用 init_weights(model, seed)。",
            "Do not draw weights yourself: build GPTModel(config), then call "
            "init_weights(model, seed).",
        ),
        (
            "seed 默认是 0，并且要把传进来的 seed 交给 init_weights；最后返回这个模型。",
            "seed defaults to 0, and the seed you are given goes to init_weights; then return "
            "the model.",
        ),
    ],
)
def create_default(t: TestContext) -> None:
    cfg = t.build(CONFIG, *DEFAULT)
    model = t.call("model_create", cfg).value
    name: Name = ("返回一个 GPTModel", "returns a GPTModel")
    if state_of(t, name, model) is None:
        return
    t.check(name, True)
    name = (
        "model_create(config)：seed 默认为 0，每个权重都等于 init_weights(model, 0)",
        "model_create(config): seed 0 by default, every weight equals init_weights(model, 0)",
    )
    same_state(t, name, state_of(t, name, model), reference_state(DEFAULT, 0))
    name = ("seed = 7 → init_weights(model, 7)", "seed = 7 → init_weights(model, 7)")
    model = t.call("model_create", cfg, 7).value
    same_state(t, name, state_of(t, name, model), reference_state(DEFAULT, 7))


@lab.test(
    "model_create：用的是传进来的配置",
    "model_create: builds the config it is given",
    hint=[
        (
            "用传进来的 config 建模型，不要用 default_config()。",
            "Build the model from the config you are given, not from default_config().",
        ),
        (
            "把 config 原样交给 GPTModel，不要逐个字段重新组装（容易错位）。",
            "Hand config to GPTModel as it is; do not rebuild it field by field (fields get "
            "swapped).",
        ),
    ],
)
def create_config(t: TestContext) -> None:
    for fields, name in (
        (
            TINY,
            ("tiny 配置（43,904 个参数），seed 1", "the tiny config (43,904 parameters), seed 1"),
        ),
        (
            ODD,
            (
                "V 50、H 24、3 头、5 层、F 40、S 16，seed 1",
                "V 50, H 24, 3 heads, 5 layers, F 40, S 16, seed 1",
            ),
        ),
    ):
        model = t.call("model_create", t.build(CONFIG, *fields), 1).value
        same_state(t, name, state_of(t, name, model), reference_state(fields, 1))


@lab.test(
    "model_create：无效的配置 → 异常",
    "model_create: an invalid config → an exception",
    hint=[
        (
            "无效的配置要抛异常，不要返回 None。",
            "An invalid config must raise, not return None.",
        ),
        (
            "建模型之前先调用 config.validate()：它会为出错的字段抛出 ValueError 或 TypeError。",
            "Call config.validate() before building: it raises ValueError or TypeError naming "
            "the field.",
        ),
    ],
)
def create_invalid(t: TestContext) -> None:
    cases: list[tuple[tuple[Any, ...], type[Exception], Name]] = [
        (
            (260, 64, 5, 4, 256, 128),
            ValueError,
            (
                "hidden 64 不能被 5 个头整除 → ValueError",
                "hidden 64 not divisible by 5 heads → ValueError",
            ),
        ),
        (
            (260, 64, 4, 0, 256, 128),
            ValueError,
            ("num_layers = 0 → ValueError", "num_layers = 0 → ValueError"),
        ),
        (
            (260, 64.0, 4, 4, 256, 128),
            TypeError,
            ("hidden_dim = 64.0 → TypeError", "hidden_dim = 64.0 → TypeError"),
        ),
    ]
    for fields, exc, name in cases:
        t.raises(name, exc, "model_create", t.build(CONFIG, *fields), 0)


# -- model_save ---------------------------------------------------------------------------
@lab.test(
    "model_save：默认模型的文件（头与长度）",
    "model_save: the default model's file (header and length)",
    hint=[
        (
            "文件头是 MAGIC、VERSION（uint32）加六个 int32 配置，全部小端，共 32 字节。",
            "The header is MAGIC and VERSION (uint32) plus six int32 config fields, "
            "little-endian, 32 bytes.",
        ),
        (
            '数组写成小端 float32（"<f4"）：写成 float64 文件会大一倍。',
            'Write the arrays as little-endian float32 ("<f4"): float64 doubles the file\'s size.',
        ),
        (
            '用 "wb" 打开文件（不是 "ab"），函数返回 None，出错时抛异常。',
            'Open the file with "wb" (not "ab"), return None, and raise on errors.',
        ),
    ],
)
def save_default(t: TestContext) -> None:
    model = sandbox_model(t, DEFAULT, reference_state(DEFAULT, 3))
    path = new_path()
    call = t.call("model_save", model, path)
    t.check(
        ("返回 None", "returns None"),
        call.value is None,
        tr(
            f"返回了 {call.value!r}（C 版本返回 0；这里出错就抛异常）",
            f"it returned {call.value!r} (the C version returned 0; here errors raise)",
        ),
    )
    loaded = load_back(
        t,
        (
            "model_load 读得回来：MLLM、版本 1、正好 962,080 字节",
            "model_load reads it back: MLLM, version 1, exactly 962,080 bytes",
        ),
        path,
    )
    if loaded is None:
        return
    got = t.method(t.getattr(loaded, "config"), "as_tuple").value
    t.equal(
        ("文件头里的配置 = 默认配置", "the config in the header = the default config"), got, DEFAULT
    )


@lab.test(
    "model_save → model_load：每个权重、每个 logit 都一样",
    "model_save → model_load: every weight and every logit the same",
    hint=[
        (
            "文件里没有名字和形状，读取全靠顺序：每个数组都要按格式规定的顺序写。",
            "The file has no names or shapes, only order: write every array in the format's order.",
        ),
        (
            "按 model.parameters() 的顺序写：它就是文件的顺序（ln1 与 ln2 不要对调）。",
            "Write in the order of model.parameters(): it is the file's order (do not swap "
            "ln1 and ln2).",
        ),
        (
            "配置字段按 vocab、hidden、heads、layers、ffn、max_seq_len 的顺序写，且不要改动模型。",
            "Write the config as vocab, hidden, heads, layers, ffn, max_seq_len, and leave "
            "the model unchanged.",
        ),
    ],
)
def save_roundtrip(t: TestContext) -> None:
    state = random_state(t, ODD, 606)
    model = sandbox_model(t, ODD, state)
    path = new_path()
    t.call("model_save", model, path)
    loaded = load_back(t, ("model_load 读得回来", "model_load reads it back"), path)
    if loaded is None:
        return
    got = t.method(t.getattr(loaded, "config"), "as_tuple").value
    t.equal(("配置的六个字段顺序正确", "the six config fields are in order"), got, ODD)
    name: Name = (
        "每个参数都回到原位（两个 LayerNorm 的值不同）",
        "every parameter comes back in its place (the two LayerNorms differ)",
    )
    same_state(t, name, state_of(t, name, loaded), state)
    before = t.method(model, "forward", IDS).value
    after = t.method(loaded, "forward", IDS).value
    # the same float32 weights through the same code in the same process: bit-identical
    t.allclose(
        ("读回的模型：logits 逐位相等", "the model read back: bit-identical logits"),
        after,
        before,
        atol=0.0,
    )
    name = ("model_save 没有改动模型", "model_save leaves the model unchanged")
    same_state(t, name, state_of(t, name, model), state)
