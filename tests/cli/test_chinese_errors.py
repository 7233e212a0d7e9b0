"""Errors of every area in the reader's language: `--lang zh` shows one line of Chinese and
exits 2, `--lang en` the same error in its English words; the errors that no command line
reaches in a test (tool output, thresholds, catalog schemas) are rendered directly."""

from __future__ import annotations

import pytest

from gpuplan.errors import InputError, Verbatim

OFFERS_HEAD = (
    'provider = "Example Error Cloud"\ncurrency = "USD"\n[[offers]]\nid = "error-4090"\n'
    'gpu = "rtx-4090-24gb"\ngpus = 1\n'
    'topology = { intra_node = "none", p2p = false, network = "none", source = "test", '
    'observed = "2026-12-01" }\n'
)
PLAN = '{ mode = "per_second", price = 0.3, per = "gpu", observed = "2026-12-01", source = "test" }'
SCENARIO = "model: llama-3.1-8b\ntokens: 1B\nhardware: {gpu: h100-sxm-80gb, count: 8}\n"
TINY_CONFIG = (
    "{hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 128, "
    "vocab_size: 100"
)

# (file name, file text, arguments with {file} for its path, English, Chinese)
CASES = [
    pytest.param(
        "usage.csv",
        "instance,start,stop,gpus\nrun-1,2026-01-01T00:00:00Z,soon,1\n",
        ("audit", "{file}", "--offer", "autodl-rtx-4090-x1"),
        "row 2: stop: 'soon' is not an ISO 8601 time",
        "第 2 行：stop：'soon' 不是 ISO 8601 时间",
        id="audit-usage-file",
    ),
    pytest.param(
        "unknown.csv",
        "a,b\n1,2\n",
        ("offers", "import", "{file}"),
        "the header is no catalog format gpuplan reads",
        "表头不属于 gpuplan 能读取的任何目录格式",
        id="offers-import-format",
    ),
    pytest.param(
        "quotes.csv",
        "provider,gpu,price,currency,per\nX,rtx-4090-24gb,abc,USD,gpu\n",
        ("offers", "import", "{file}"),
        "row 2, column price: 'abc' is not a number",
        "第 2 行，price 列：'abc' 不是数字",
        id="quotes-csv-cell",
    ),
    pytest.param(
        "family.yaml",
        SCENARIO.replace("llama-3.1-8b", TINY_CONFIG + ", model_type: nope}"),
        ("estimate", "{file}"),
        "model_type: unknown family 'nope'; accepted: ",
        "model_type：未知的模型家族 'nope'；可选值：",
        id="model-family",
    ),
    pytest.param(
        "heads.yaml",
        SCENARIO.replace(
            "llama-3.1-8b", TINY_CONFIG.replace("num_attention_heads: 4", "num_attention_heads: 5")
            + "}"
        ),
        ("estimate", "{file}"),
        "5 heads do not divide hidden_size 64; give head_dim",
        "5 个头不能整除 hidden_size 64；请给出 head_dim",
        id="model-builder",
    ),
    pytest.param(
        "broken.yaml",
        "model: [",
        ("estimate", "{file}"),
        "not valid YAML (line 1)",
        "不是有效的 YAML（第 1 行）",
        id="file-limits",
    ),
    pytest.param(
        "schedule.yaml",
        SCENARIO + "training: {stage: sometime}\n",
        ("estimate", "{file}"),
        "training.stage: 'sometime' is not one of pretrain, continued, finetune",
        "training.stage：'sometime' 不在可选值 pretrain, continued, finetune 之中",
        id="estimate-schedule",
    ),
    pytest.param(
        "key.toml",
        OFFERS_HEAD + 'colour = "red"\n' + f"plans = [ {PLAN} ]\n",
        ("offers", "--offers", "{file}"),
        "offer 'error-4090': colour: unknown key; accepted: id, gpu",
        "报价 'error-4090': colour：未知的键；可用的键：id, gpu",
        id="catalog-schema-key",
    ),
    pytest.param(
        "mode.toml",
        OFFERS_HEAD + f"plans = [ {PLAN.replace('per_second', 'per_sec')} ]\n",
        ("offers", "--offers", "{file}"),
        "plans[0].mode: 'per_sec' is not one of per_second",
        "'per_sec' 不在可选值 per_second",
        id="catalog-schema-choice",
    ),
    pytest.param(
        None,
        "",
        ("plan", "--model", "llama-3.1-8b", "--method", "lora", "--tokens", "100M", "--export", "megatron"),
        "method: megatron export covers full training only, got lora",
        "method：megatron 导出只支持全量训练，实际为 lora；请使用带 PEFT 的 accelerate 或 deepspeed 导出",
        id="export",
    ),
    pytest.param(
        None, "", ("bench", "--device", "tpu"),
        "--device: expected cuda or cpu, got 'tpu'",
        "--device：应为 cuda 或 cpu，实际为 'tpu'",
        id="bench-options",
    ),
    pytest.param(
        None, "", ("plan", "--preset", "student", "--format", "xyz"),
        "--format: expected table or md, got 'xyz'",
        "--format：应为 table 或 md，实际为 'xyz'",
        id="report-format",
    ),
    pytest.param(
        None, "", ("quote", "--offer", "autodl-rtx-4090-x1", "--duration=-5d"),
        "--duration must not be negative, got '-5d'",
        "--duration 不能为负数，实际为 '-5d'",
        id="services-pricing",
    ),
    pytest.param(
        None, "", ("plan",),
        "model: give --model, a scenario file, or --preset (student, startup, enterprise)",
        "model：请给出 --model、场景文件或 --preset（student, startup, enterprise）",
        id="cli-plan",
    ),
    pytest.param(
        None, "", ("serve", "--host", "0.0.0.0"),
        "serves gpuplan to the network with no login",
        "会把 gpuplan 无需登录地开放到网络上",
        id="cli-serve",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "arguments", "english", "chinese"), CASES)
def test_errors_of_every_area_in_chinese(
    entry_point, tmp_path, name, text, arguments, english, chinese
):
    path = tmp_path / (name or "unused")
    path.write_text(text, encoding="utf-8")
    filled = [argument.format(file=path) for argument in arguments]
    in_english = entry_point(*filled, "--lang", "en")
    assert in_english.returncode == 2 and english in in_english.stderr, in_english.stderr
    result = entry_point(*filled, "--lang", "zh")
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and chinese in result.stderr, result.stderr
    assert english not in result.stderr


def test_store_and_write_errors_in_chinese(entry_point, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path / "data"))
    result = entry_point("bench", "show", "7", "--lang", "zh")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "没有已保存的基准测试运行 7" in result.stderr, result.stderr
    export = (
        "plan",
        "--preset",
        "student",
        "--export",
        "deepspeed",
        "--export-path",
        str(tmp_path),
    )
    assert entry_point(*export).returncode == 0
    again = entry_point(*export, "--lang", "zh")
    assert again.returncode == 2 and again.stderr.count("\n") == 1
    assert "已存在；加 --force 可覆盖" in again.stderr, again.stderr
    assert "already exists" in entry_point(*export, "--lang", "en").stderr


def _raised(call, *arguments) -> InputError:
    with pytest.raises(InputError) as raised:
        call(*arguments)
    return raised.value


def test_bench_tool_output_and_threshold_errors_in_chinese():
    from gpuplan.bench.parsers import parse_fio_json, parse_nvidia_smi_csv
    from gpuplan.bench.report import DEFAULT_THRESHOLDS, parse_threshold_override

    assert _raised(parse_fio_json, '{"jobs": []}').text("zh") == "fio：JSON 中没有 jobs"
    assert str(_raised(parse_nvidia_smi_csv, "")) == "nvidia-smi --query-gpu: empty output"
    threshold = _raised(parse_threshold_override, "matmul=a:b", DEFAULT_THRESHOLDS)
    assert str(threshold) == "--threshold 'matmul=a:b': PASS and WARN must be numbers"
    assert threshold.text("zh") == "--threshold 'matmul=a:b'：PASS 和 WARN 必须是数字"


def test_estimate_results_and_schema_names_in_chinese():
    from gpuplan.catalog.schema import schema_type
    from gpuplan.estimate.comm import bus_bandwidth_factor
    from gpuplan.results import result_type

    collective = _raised(bus_bandwidth_factor, "all_sum", 8)
    assert str(collective).startswith("collective: 'all_sum' is not one of all_reduce")
    assert collective.text("zh").startswith("collective：'all_sum' 不在可选值 all_reduce")
    assert _raised(result_type, "nope").text("zh").startswith("result 'nope'：不在可选值")
    assert _raised(schema_type, "nope").text("zh").startswith("schema 'nope'：不在可选值")


def test_file_reading_errors_name_the_kind_of_file_in_chinese(tmp_path):
    from gpuplan.limits import parse_json, read_text_file

    missing = _raised(read_text_file, tmp_path / "none.yaml", "scenario")
    assert str(missing).startswith("cannot read scenario file ")
    assert missing.text("zh").startswith("无法读取场景文件 ")
    constant = _raised(parse_json, '{"a": NaN}', "config.json")
    assert str(constant) == "config.json: NaN is not a number JSON allows"
    assert constant.text("zh") == "config.json：NaN 不是 JSON 允许的数字"


def test_a_verbatim_value_is_not_translated():
    error = InputError.of("error.in_field", field=Verbatim("price"), error="x")
    assert error.text("zh") == "price：x"
    assert InputError.of("error.in_field", field="price", error="x").text("zh") == "价格：x"
