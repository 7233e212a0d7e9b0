"""`--lang zh` on the main commands: every word a reader sees is Chinese, except ids, numbers,
units and proper nouns (the allow-list below), and names that come from the catalog's data."""

from __future__ import annotations

import re
from functools import cache

import pytest

from gpuplan.cli.lazy_group import command_name

PROPER_NOUNS = frozenset(
    [
        "GPU",
        "GPUs",
        "CPU",
        "CUDA",
        "NCCL",
        "NVLink",
        "PCIe",
        "P2P",
        "TDP",
        "HBM",
        "GDDR",
        "SXM",
        "NVIDIA",
        "AMD",
        "Hopper",
        "Ascend",
        "MFU",
        "HFU",
        "TFLOP",
        "PFLOP",
        "FLOP",
        "GiB",
        "MiB",
        "KiB",
        "GB",
        "MB",
        "TB",
        "Gb",
        "tok",
        "token",
        "tokens",
        "W",
        "h",
        "d",
        "s",
        "m",
        "LLM",
        "LoRA",
        "QLoRA",
        "MoE",
        "MLP",
        "FFN",
        "KV",
        "SwiGLU",
        "GeGLU",
        "ZeRO",
        "FSDP",
        "Megatron",
        "DeepSpeed",
        "Llama",
        "Qwen",
        "JSON",
        "YAML",
        "TOML",
        "CSV",
        "HTML",
        "TCO",
        "SkyPilot",
        "OpenAPI",
        "API",
        "TLS",
        "TCP",
        "IP",
        "IPs",
        "Slurm",
        "Markdown",
        "Hugging",
        "Face",
        "id",
        "ID",
        "CNY",
        "USD",
        "EUR",
        "logits",
        "shell",
        "stderr",
        "x",
        "Usage",
        "OPTIONS",
        "COMMAND",
        "ARGS",
        "LANG",
        "N",
        "A",
        "B",
        "RATE",
        "CATEGORY",
        "str",
        "int",
        "float",
        "path",
        "file",
        "range",
        "text",
        "gpuplan",
        "en",
        "zh",
        "PASS",
        "WARN",
        "FAIL",
        "infiniband",
        "ethernet",
        "roce",
        "efa",
        "nvlink",
        "hccs",
        "xgmi",
        "framework",
        "method",
        "scenario",
        "base",
        "rates",
        "observed",
        "provider",
        "hourly",
        "monthly",
        "spot",
        "table",
        "md",
        "csv",
        "gpuhunt",
        "GEMM",
        "TP",
        "torchrun",
        "pip",
        "install",
        "cuda",
        "cpu",
        "store",
    ]
)
"""Words that stay as they are in Chinese text: units, acronyms, product and project names,
Click's usage line and metavars, language codes, verdicts, link ids, and the scenario keys,
file keys and billing ids that help texts name."""

WORD = re.compile(r"[A-Za-z0-9_\-./=+@~*]+")
CHOICES = re.compile(r"[\w.+-]+(?:\s*\|\s*[\w.+-]+)+|[\w.+-]+(?:,[\w.+-]+)+")
"""An option's accepted values, ``cost | time | pareto`` or ``matmul,memory``: ids, shown as
they are."""


@cache
def catalog_names() -> frozenset[str]:
    """Names the catalog's data gives (providers, GPUs and their sources, models, frameworks,
    billing ids, the values of scenario settings, node link kinds, the exchange rates' sources):
    shown as they are, never translated."""
    from gpuplan.catalog import all_gpus, all_models
    from gpuplan.hardware.topology import INTRA_NODE_LINKS
    from gpuplan.pricing.currency import default_rates
    from gpuplan.pricing.offers import catalog_offers

    names: set[str] = set()
    for gpu in all_gpus():
        names.update(WORD.findall(f"{gpu.name} {gpu.source}"))
    for model in all_models():
        names.update(WORD.findall(f"{model.name} {model.family} {model.position_embedding}"))
        names.add(model.norm)
    for offer in catalog_offers():
        names.update(WORD.findall(offer.provider))
    names.update(WORD.findall(" ".join(INTRA_NODE_LINKS)))
    rates = default_rates()
    for currency in rates.currencies:
        if currency != rates.base:
            names.update(WORD.findall(str(rates.describe(currency)["source"])))
    names.update(command_names())
    names.update(
        [
            "full",
            "lora",
            "qlora",
            "freeze",
            "selective",
            "none",
            "eager",
            "flash",
            "cudnn",
            "auto",
            "megatron",
            "fsdp",
            "deepspeed",
            "hf",
            "torchtitan",
            "accelerate",
            "skypilot",
            "student",
            "startup",
            "enterprise",
            "adamw",
            "sgd",
            "adafactor",
            "True",
            "False",
            "undated",
        ]
    )
    return frozenset(names)


def english_words(text: str) -> list[str]:
    """The words of ``text`` that are English prose: ASCII words without digits or id
    punctuation, neither a proper noun nor a catalog name."""
    allowed = PROPER_NOUNS | catalog_names()
    found = []
    for token in WORD.findall(CHOICES.sub(" ", text)):
        word = token.strip(".")
        if not word or re.search(r"[\d_\-./=+@~*]", word) or word in allowed:
            continue
        found.append(word)
    return found


def command_names() -> set[str]:
    """Every command and subcommand name: ``plan``, ``offers``, ``import``, ..."""
    from gpuplan.cli.app import commands

    names = set()
    for info in commands.registered_commands:
        names.add(command_name(info))
    for group in commands.registered_groups:
        names.add(command_name(group))
        assert group.typer_instance is not None
        names.update(command_name(info) for info in group.typer_instance.registered_commands)
    return names


COMMANDS = [
    ("plan", "--lang", "zh", "--preset", "student"),
    ("--lang", "zh", "plan", "--preset", "startup", "--objective", "pareto"),
    ("plan", "--preset", "startup", "--max-gpus", "2", "--lang", "zh"),
    ("estimate", "--lang", "zh", "examples/llama-8b-fsdp-8xh100.yaml"),
    ("memory", "--lang", "zh", "--model", "llama-3.1-8b", "--method", "qlora",
     "--gpu", "rtx-4090-24gb", "--seq-len", "4096", "--recompute", "full"),
    ("quote", "--lang", "zh", "--offer", "autodl-rtx-4090-x1", "--duration", "40d"),
    ("tco", "--lang", "zh", "examples/seed-tco.toml"),
    ("models", "--lang", "zh"),
    ("model", "--lang", "zh", "qwen3-30b-a3b"),
    ("gpus", "--lang", "zh"),
    ("offers", "--lang", "zh", "--gpu", "rtx-4090-24gb"),
    ("--lang", "zh", "--help"),
    ("plan", "--help", "--lang", "zh"),
    ("quote", "--lang", "zh", "--help"),
    ("offers", "import", "--lang", "zh", "--help"),
    ("bench", "--lang", "zh", "--help"),
]  # fmt: skip


@pytest.mark.parametrize("arguments", COMMANDS, ids=" ".join)
def test_chinese_output_has_no_english_words(entry_point, arguments):
    result = entry_point(*arguments)
    assert result.returncode in (0, 1), result.stderr
    shown = result.stdout + result.stderr
    assert re.search(r"[\u4e00-\u9fff]", shown), shown
    words = english_words(shown)
    assert not words, f"English words in {' '.join(arguments)}: {sorted(set(words))}"


def test_the_language_comes_from_gpuplan_lang(entry_point, monkeypatch):
    monkeypatch.setenv("GPUPLAN_LANG", "zh")
    assert "内置模型" in entry_point("models").stdout
    monkeypatch.setenv("GPUPLAN_LANG", "en")
    assert "Built-in models" in entry_point("models").stdout
    assert "内置模型" in entry_point("models", "--lang", "zh").stdout


def test_an_unknown_language_is_bad_input_on_any_command(entry_point):
    result = entry_point("models", "--lang", "klingon")
    assert result.returncode == 2 and "--lang" in result.stderr


def test_the_allow_list_lets_ids_pass_and_catches_prose():
    assert english_words("16 x b200-sxm-180gb，MFU 50%，tp2 pp4") == []
    assert english_words("按 cost 排序，the runner-up is faster") == ["cost", "the", "is", "faster"]


@pytest.mark.parametrize(
    ("arguments", "chinese"),
    [
        (("plan", "--lang", "zh", "--model", "llama-3.1-8x"), "未知的模型 'llama-3.1-8x'；是不是"),
        (("plan", "--lang", "zh", "--model", "llama-3.1-8b", "--tokens", "5x"), "无法把 '5x' 读作token 数"),
        (("models", "--lang", "klingon"), "--lang"),
    ],
)  # fmt: skip
def test_errors_are_one_line_in_the_readers_language(entry_point, arguments, chinese):
    result = entry_point(*arguments)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and chinese in result.stderr


def test_an_error_keeps_its_english_text_and_renders_in_any_language():
    from gpuplan.errors import InputError
    from gpuplan.units import parse_duration

    with pytest.raises(InputError) as raised:
        parse_duration("soon")
    assert str(raised.value).startswith("cannot read 'soon' as a duration; accepted forms: ")
    assert raised.value.text("zh").startswith("无法把 'soon' 读作时长；可接受的写法：数字加")
    assert InputError("plain sentence").text("zh") == "plain sentence"


SCENARIO_HEAD = "model: llama-3.1-8b\ntokens: 1B\nhardware: {gpu: h100-sxm-80gb, count: 8}\n"
OFFER_HEAD = 'provider = "Example Error Cloud"\ncurrency = "USD"\n[[offers]]\nid = "error-4090"\n'
OFFER_TOPOLOGY = (
    'gpu = "rtx-4090-24gb"\ngpus = 1\ntopology = { intra_node = "none", p2p = false, '
    'network = "none", source = "test", observed = "2026-12-01" }\n'
)


@pytest.mark.parametrize(
    ("scenario", "english", "chinese"),
    [
        ("lora: 5\n", "lora: expected a mapping with rank, alpha, targets", "lora：应为包含 rank、alpha、targets 的映射"),
        ("seq_len: 2.5\n", "seq_len: expected a whole number, got 2.5", "seq_len：应为整数，实际为 2.5"),
        ("strategy: {recompute: sometimes}\n", "strategy.recompute: 'sometimes' is not one of none, selective, full", "'sometimes' 不在可选值 none, selective, full 之中"),
        ("strategy: {tp: 3}\n", "strategy: tp*pp*cp = 3 does not divide hardware.count = 8", "tp*pp*cp = 3 不能整除 hardware.count = 8"),
        ("strategy: {ep: 2}\n", "strategy.ep: expert parallelism needs a mixture-of-experts model", "专家并行需要混合专家（MoE）模型"),
        ("framework: {base: fsdp, bucket_count: 0}\n", "framework.bucket_count: expected a whole number >= 1, got 0", "framework.bucket_count：应为不小于 1 的整数，实际为 0"),
        ("framework: {base: fsdp, version: '0.1'}\n", "framework.version: only the torchtitan preset has versions", "只有 torchtitan 预设有版本"),
    ],
)  # fmt: skip
def test_scenario_strategy_and_framework_errors_in_chinese(
    entry_point, tmp_path, scenario, english, chinese
):
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO_HEAD + scenario, encoding="utf-8")
    in_english = entry_point("estimate", str(path), "--lang", "en")
    assert in_english.returncode == 2 and english in in_english.stderr, in_english.stderr
    result = entry_point("estimate", str(path), "--lang", "zh")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and chinese in result.stderr, result.stderr
    assert english not in result.stderr


@pytest.mark.parametrize(
    ("plans", "chinese"),
    [
        ('min_instances = 4\nmax_instances = 2\nplans = [ { mode = "per_second", price = 0.3, per = "gpu", observed = "2026-12-01", source = "test" } ]\n', "max_instances：2 小于 min_instances 4"),
        ('plans = [ { mode = "per_second", price = 0.3, per = "gpu", term = "1mo", observed = "2026-12-01", source = "test" } ]\n', "只有包期和预留套餐才有期限"),
    ],
)  # fmt: skip
def test_offers_file_errors_in_chinese(entry_point, tmp_path, plans, chinese):
    path = tmp_path / "offers.toml"
    path.write_text(OFFER_HEAD + OFFER_TOPOLOGY + plans, encoding="utf-8")
    result = entry_point("offers", "--offers", str(path), "--lang", "zh")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and chinese in result.stderr, result.stderr


def test_a_nested_error_renders_in_the_same_language():
    from gpuplan.errors import InputError
    from gpuplan.scenario import parse_scenario

    with pytest.raises(InputError) as raised:
        parse_scenario(
            {"model": "llama-3.1-8b", "hardware": {"gpu": "h100-sxm-80gb", "host_memory": "lots"}}
        )
    assert str(raised.value).startswith(
        "hardware.host_memory: cannot read 'lots' as a size in bytes"
    )
    assert raised.value.text("zh").startswith("hardware.host_memory：无法把 'lots' 读作")


def test_a_bad_discount_is_an_error_in_chinese(entry_point):
    result = entry_point("offers", "--discount", "AWS=2", "--lang", "zh")
    assert result.returncode == 2
    assert "折扣 'AWS=2'：系数必须在 (0, 1] 之内，例如 0.8 表示优惠 20 %" in result.stderr
    in_english = entry_point("offers", "--discount", "AWS=2", "--lang", "en")
    assert "the factor must be in (0, 1], e.g. 0.8 for 20 % off" in in_english.stderr


@pytest.mark.parametrize(
    ("arguments", "english", "chinese"),
    [
        (("--fx", "CNY=abc"), "exchange rate 'CNY=abc': 'abc' is not a number", "汇率 'CNY=abc'：'abc' 不是数字"),
        (("--fx", "CNY=-1"), "exchange rate 'CNY=-1': the rate must be positive", "汇率必须为正数"),
        (("--fx", "USD=7"), "exchange rate 'USD=7': CUR=RATE prices the dollar", "CUR=RATE 是美元的价格"),
    ],
)  # fmt: skip
def test_exchange_rate_errors_in_chinese(entry_point, arguments, english, chinese):
    assert english in entry_point("offers", *arguments, "--lang", "en").stderr
    result = entry_point("offers", *arguments, "--lang", "zh")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and chinese in result.stderr, result.stderr


def test_config_json_errors_render_in_chinese():
    from gpuplan.errors import InputError
    from gpuplan.scenario import parse_scenario

    with pytest.raises(InputError) as raised:
        parse_scenario({"model": {"hidden_size": 4096}})
    assert "missing; a config must give" in str(raised.value)
    assert "config 必须给出" in raised.value.text("zh")
    with pytest.raises(InputError) as raised:
        parse_scenario({"model": "llama-3.1-8b", "seq_len": "long"})
    assert str(raised.value) == "seq_len: expected a whole number, got 'long'"
    assert raised.value.text("zh") == "seq_len：应为整数，实际为 'long'"
