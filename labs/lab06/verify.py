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
from grader.spec import HintArg

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


def load_back(t: TestContext, name: tuple[str, str], path: str, hint: HintArg = None) -> Any:
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
        hint=hint,
    )
    return None


def state_of(t: TestContext, name: Name, model: Any, hint: HintArg = None) -> dict[str, Any] | None:
    """The state_dict of a GPTModel in the sandbox; a FAIL line `name` for anything else."""
    if not is_model(model):
        t.check(
            name,
            False,
            tr(
                f"期望一个 GPTModel，实际是 {model!r}"[:200],
                f"expected a GPTModel, got {model!r}"[:200],
            ),
            hint=hint,
        )
        return None
    got = t.method(model, "state_dict").value
    return got if isinstance(got, dict) else {}


def same_state(
    t: TestContext,
    name: Name,
    got: dict[str, Any] | None,
    want: dict[str, Any],
    hint: HintArg = None,
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
                hint=hint,
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
            return t.check(name, False, tr(zh, en), hint=hint)
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
        hint=(
            "default_config 要返回一个 ModelConfig 对象（framework/config.py），"
            "而不是装在别的容器里的六个数：模型和文件都按名字读取它的字段。",
            "default_config must return a ModelConfig object (framework/config.py), not six "
            "numbers in another container: the model and the file read its fields by name.",
        ),
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
        hint=(
            "消息里列出的每个字段，都和讲义里的默认值表逐个对照：值要相等，类型也要是 int"
            "（和 float 相乘得到的是 float，哪怕值相等）。",
            "Compare each field the message lists with the handout's table of defaults: the "
            "value must be equal and the type an int (a product with a float is a float, even "
            "when the value is equal).",
        ),
    )
    name = ("这个配置的模型有 240,512 个参数", "a model of this config has 240,512 parameters")
    count_hint = (
        "参数个数完全由六个尺寸决定：不是 240,512，就说明 vocab、hidden、heads、layers、ffn、"
        "max_seq_len 里有不是默认值的（上一行会指出是哪个），或者这组值根本不是合法配置。",
        "The parameter count follows from the six sizes alone: anything but 240,512 means one "
        "of vocab, hidden, heads, layers, ffn, max_seq_len is not the default (the line above "
        "names it), or the six values are no valid config at all.",
    )
    try:
        count = n_params(ModelConfig(*got).validate().as_tuple())
    except (TypeError, ValueError) as e:
        t.check(
            name, False, tr(f"这个配置无效：{e}", f"the config is invalid: {e}"), hint=count_hint
        )
        return
    t.check(
        name, count == 240_512, tr(f"实际是 {count:,} 个", f"it has {count:,}"), hint=count_hint
    )


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
    returns_hint = (
        "model_create 要把它建好的模型交回去：返回值必须是一个 GPTModel（消息里是实际返回的东西；"
        "None 说明函数走完时没有 return）。",
        "model_create must hand back the model it built: the value returned must be a "
        "GPTModel (the message shows what came back; None means the function ended without "
        "a return).",
    )
    if state_of(t, name, model, returns_hint) is None:
        return
    t.check(name, True)
    name = (
        "model_create(config)：seed 默认为 0，每个权重都等于 init_weights(model, 0)",
        "model_create(config): seed 0 by default, every weight equals init_weights(model, 0)",
    )
    hint: HintArg = [
        (
            "每个权重都和框架 GPTModel(config) 上 init_weights(model, 0) 的结果逐位比较：任何别的"
            "取值方式（哪怕分布相同）都会得到别的数。消息里是第一个不同的参数。",
            "Every weight is compared bit for bit with init_weights(model, 0) on the "
            "framework's GPTModel(config): any other way of setting the weights, even from the "
            "same distribution, gives other numbers. The message names the first one that "
            "differs.",
        ),
        (
            "不传 seed 时用的是默认值 0；建好模型之后、返回之前，权重要由 init_weights 设定。",
            "Without a seed argument the default 0 is used; the weights are set by "
            "init_weights after the model is built and before it is returned.",
        ),
    ]
    same_state(t, name, state_of(t, name, model, hint), reference_state(DEFAULT, 0), hint)
    name = ("seed = 7 → init_weights(model, 7)", "seed = 7 → init_weights(model, 7)")
    model = t.call("model_create", cfg, 7).value
    hint = (
        "seed = 7 时权重必须是 init_weights(model, 7) 的结果：上一项（seed 0）通过而这一项失败，"
        "说明传进来的 seed 没有一路传到 init_weights。",
        "With seed = 7 the weights must be those of init_weights(model, 7): if the seed-0 "
        "check above passes and this one fails, the seed you are given does not reach "
        "init_weights.",
    )
    same_state(t, name, state_of(t, name, model, hint), reference_state(DEFAULT, 7), hint)


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
    cases: list[tuple[tuple[int, ...], Name, HintArg]] = [
        (
            TINY,
            ("tiny 配置（43,904 个参数），seed 1", "the tiny config (43,904 parameters), seed 1"),
            (
                "模型要有 tiny 配置的形状，权重是 init_weights(model, 1) 给出的：消息说形状不对，"
                "模型就是按别的配置建的，不是按传进来的这个。",
                "The model must have the tiny config's shapes and the weights "
                "init_weights(model, 1) gives: a shape message means it was built from another "
                "config than the one passed in.",
            ),
        ),
        (
            ODD,
            (
                "V 50、H 24、3 头、5 层、F 40、S 16，seed 1",
                "V 50, H 24, 3 heads, 5 layers, F 40, S 16, seed 1",
            ),
            (
                "这个配置的六个数各不相同：哪个字段落到了别的位置，或者用的不是传进来的配置，"
                "都会表现为某个参数的形状不对；seed 1 的值不对则是初始化的问题。",
                "This config's six numbers all differ: a field in another's place, or a config "
                "other than the one passed in, shows as a parameter of the wrong shape; right "
                "shapes with wrong values point at the initialisation from seed 1.",
            ),
        ),
    ]
    for fields, name, hint in cases:
        model = t.call("model_create", t.build(CONFIG, *fields), 1).value
        same_state(t, name, state_of(t, name, model, hint), reference_state(fields, 1), hint)


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
    cases: list[tuple[tuple[Any, ...], type[Exception], Name, HintArg]] = [
        (
            (260, 64, 5, 4, 256, 128),
            ValueError,
            (
                "hidden 64 不能被 5 个头整除 → ValueError",
                "hidden 64 not divisible by 5 heads → ValueError",
            ),
            (
                "64 不能平分给 5 个头，这个配置建不出模型：必须抛 ValueError。返回任何东西"
                "（None 或一个模型）都不算拒绝。",
                "64 cannot be split over 5 heads, so no model can be built: this must raise "
                "ValueError. Returning anything (None, a model) is not a refusal.",
            ),
        ),
        (
            (260, 64, 4, 0, 256, 128),
            ValueError,
            ("num_layers = 0 → ValueError", "num_layers = 0 → ValueError"),
            (
                "0 层不是一个模型：期望 ValueError。这类检查针对配置的值本身，要在建模型之前做。",
                "Zero layers is no model: a ValueError is expected. Such a check is on the "
                "config's values themselves, before any model is built.",
            ),
        ),
        (
            (260, 64.0, 4, 4, 256, 128),
            TypeError,
            ("hidden_dim = 64.0 → TypeError", "hidden_dim = 64.0 → TypeError"),
            (
                "64.0 的值虽然对，类型却是 float：类型不对的错误是 TypeError，不是 ValueError，"
                "也不能建出模型。",
                "64.0 has the right value but the type float: a wrong type is a TypeError, not a "
                "ValueError, and no model may be built from it.",
            ),
        ),
    ]
    for fields, exc, name, hint in cases:
        t.raises(name, exc, "model_create", t.build(CONFIG, *fields), 0, hint=hint)


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
        hint=(
            "model_save 的成果是那个文件；函数本身返回 None，出错时抛异常。返回状态码是 C 的习惯。",
            "model_save's product is the file; the function itself returns None and raises on "
            "errors. A status code is the C habit.",
        ),
    )
    loaded = load_back(
        t,
        (
            "model_load 读得回来：MLLM、版本 1、正好 962,080 字节",
            "model_load reads it back: MLLM, version 1, exactly 962,080 bytes",
        ),
        path,
        (
            "model_load 拒绝了你的文件，消息说明是哪一部分不对（magic、版本、配置或长度）。"
            "962,080 = 32 字节文件头 + 240,512 个参数 × 4 字节。",
            "model_load refused your file; its message says which part is wrong (magic, "
            "version, config or length). 962,080 = a 32-byte header + 240,512 parameters × 4 "
            "bytes.",
        ),
    )
    if loaded is None:
        return
    got = t.method(t.getattr(loaded, "config"), "as_tuple").value
    t.equal(
        ("文件头里的配置 = 默认配置", "the config in the header = the default config"),
        got,
        DEFAULT,
        hint=(
            "文件读得回来，但文件头里是另一组配置：六个字段要按格式的顺序写，每个都是模型配置里"
            "同名字段的值（不是由它算出来的别的量）。",
            "The file reads back, but its header holds another config: the six fields go in "
            "the format's order, each the value of the model config's field of that name (not "
            "a quantity derived from it).",
        ),
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
    loaded = load_back(
        t,
        ("model_load 读得回来", "model_load reads it back"),
        path,
        (
            "model_load 拒绝了这个（V 50、H 24……）模型的文件，消息说明是哪一部分：文件头和长度都要"
            "和这个配置一致（32 + 4 × 参数个数 字节）。",
            "model_load refused the file of this (V 50, H 24, ...) model; the message names the "
            "part: header and length must both fit this config (32 + 4 × parameters bytes).",
        ),
    )
    if loaded is None:
        return
    got = t.method(t.getattr(loaded, "config"), "as_tuple").value
    t.equal(
        ("配置的六个字段顺序正确", "the six config fields are in order"),
        got,
        ODD,
        hint=(
            "这个配置的六个数各不相同，任何一个字段写错位置或写成别的量都会显出来：把读回的配置和"
            "模型的配置逐个字段对照。",
            "This config's six numbers all differ, so any field in another's place, or another "
            "quantity written for it, shows: compare the config read back with the model's, "
            "field by field.",
        ),
    )
    name: Name = (
        "每个参数都回到原位（两个 LayerNorm 的值不同）",
        "every parameter comes back in its place (the two LayerNorms differ)",
    )
    hint: HintArg = [
        (
            "读回时，文件里的浮点数按格式的顺序依次填进各个参数：某个参数拿到了别人的值、别的字节序"
            "或别的排列（比如转置过的矩阵），都会在这里出错。消息里是第一个不同的参数。",
            "On reading, the file's floats fill the parameters one after another in the "
            "format's order: a parameter that gets another's values, another byte order or "
            "another layout (a transposed matrix, say) fails here. The message names the first "
            "one.",
        ),
        (
            "消息说“它的值其实是 X 的”，就是顺序问题；差得离谱（inf、1e30）是字节序；形状对、"
            "值是重排过的，是矩阵的布局。",
            "'it holds the values of X' is an order problem; absurd values (inf, 1e30) are the "
            "byte order; right shape with rearranged values is a matrix's layout.",
        ),
    ]
    same_state(t, name, state_of(t, name, loaded, hint), state, hint)
    before = t.method(model, "forward", IDS).value
    after = t.method(loaded, "forward", IDS).value
    # the same float32 weights through the same code in the same process: bit-identical
    t.allclose(
        ("读回的模型：logits 逐位相等", "the model read back: bit-identical logits"),
        after,
        before,
        atol=0.0,
        hint=(
            "读回的模型和保存前的模型算出的 logits 不同：要么有参数没能原样往返（看上一项），"
            "要么保存的过程中原模型自己的权重被改了（看下一项）。",
            "The model read back and the model before saving give different logits: either "
            "some parameter did not survive the round trip (see the line above), or saving "
            "changed the original model's own weights (see the line below).",
        ),
    )
    name = ("model_save 没有改动模型", "model_save leaves the model unchanged")
    hint = (
        "model_save 在写文件的过程中改动了模型自己的权重：t.numpy() 是参数本身的内存，任何原地"
        "转换都会落在模型上。要写的是转换后的新数组。",
        "model_save changed the model's own weights while writing them: t.numpy() is the "
        "parameter's own memory, so any in-place conversion lands in the model. Write a "
        "converted new array instead.",
    )
    same_state(t, name, state_of(t, name, model, hint), state, hint)
