"""Collectives: the launcher (chatty, failing and hanging ranks), the slowest-rank time, the
per-GPU NIC rate of each collective across nodes, NVLS, and the figures and verdicts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from gpuplan.bench import collectives
from gpuplan.bench.collectives import (
    INTER_NODE_FLOOR_EFFICIENCY,
    add_collective_figures,
    bus_bandwidth_factor,
    link_efficiency,
    measured_row,
    network_rate,
    network_share,
    per_gpu_network_rate,
    run_on_this_node,
)
from gpuplan.bench.report import (
    DEFAULT_THRESHOLDS,
    ERROR,
    FAIL,
    PASS,
    SKIPPED,
    WARN,
    figure_to_dict,
)
from gpuplan.catalog import load_gpu
from gpuplan.errors import InputError

FAKE_RANK = textwrap.dedent(
    """
    import json, os, pathlib, sys, time
    rank, mode = int(os.environ["RANK"]), os.environ["FAKE_MODE"]
    output = pathlib.Path(sys.argv[sys.argv.index("--output") + 1])
    marker = pathlib.Path(os.environ["FAKE_DIR"]) / "rank1.done"
    if mode == "chatty":
        if rank == 1:
            sys.stderr.write("NCCL INFO chatter\\n" * 16384)
            sys.stderr.flush()
            marker.touch()
        else:
            while not marker.exists():
                time.sleep(0.02)
            table = {"ranks": 2, "nodes": 1, "ranks_per_node": 2, "backend": "gloo",
                     "results": []}
            output.write_text(json.dumps(table))
    elif mode == "oom":
        if rank == 1:
            sys.stderr.write("Traceback (most recent call last):\\n")
            sys.stderr.write("torch.OutOfMemoryError: CUDA out of memory. Tried 2.00 GiB\\n")
            sys.exit(3)
        time.sleep(60)
    elif mode == "hang":
        sys.stderr.write(f"rank {rank} waiting in all_reduce\\n")
        sys.stderr.flush()
        time.sleep(60)
    """
)


@pytest.fixture
def fake_rank(tmp_path, monkeypatch):
    script = tmp_path / "fake_rank.py"
    script.write_text(FAKE_RANK)
    monkeypatch.setenv("FAKE_DIR", str(tmp_path))

    def launch(mode: str, timeout_seconds: float = 30) -> tuple[dict, float]:
        monkeypatch.setenv("FAKE_MODE", mode)
        started = time.monotonic()
        table = run_on_this_node(
            2,
            "cpu",
            (2**16,),
            timeout_seconds=timeout_seconds,
            worker=[sys.executable, str(script)],
            poll_seconds=0.02,
        )
        return table, time.monotonic() - started

    return launch


def test_an_unread_stderr_pipe_blocks_a_chatty_rank():
    """The old launcher's fault: a rank writing more than a pipe holds blocks until read."""
    chatty = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stderr.write('x' * 2**20)"],
        stderr=subprocess.PIPE,
    )
    with pytest.raises(subprocess.TimeoutExpired):
        chatty.wait(timeout=1.0)
    chatty.kill()
    chatty.communicate()


def test_a_chatty_rank_no_longer_blocks_the_launch(fake_rank):
    table, seconds = fake_rank("chatty")
    assert "error" not in table
    assert table["ranks"] == 2
    assert seconds < 10


def test_a_failing_rank_stops_the_others_and_is_named(fake_rank):
    table, seconds = fake_rank("oom")
    error = table["error"]
    assert (error["rank"], error["returncode"]) == (1, 3)
    assert "CUDA out of memory" in error["stderr_tail"]
    assert seconds < 10, "rank 0 (sleeping 60 s) must be stopped, not waited for"
    figures: list = []
    add_collective_figures(figures, table, load_gpu("h200-sxm-141gb"))
    judged = figure_to_dict(figures[0], DEFAULT_THRESHOLDS)
    assert judged["verdict"] == ERROR
    assert "rank 1 exited with status 3" in judged["reason"]
    assert "CUDA out of memory" in judged["reason"]


def test_a_launch_timeout_is_an_error_result_not_an_exception(fake_rank):
    table, seconds = fake_rank("hang", timeout_seconds=1.0)
    assert table["error"]["reason"].startswith("timeout")
    assert table["error"]["failed_ranks"] == [0, 1]
    assert "waiting in all_reduce" in table["error"]["stderr_tail"]
    assert seconds < 10
    figures: list = []
    add_collective_figures(figures, table, None)
    assert figure_to_dict(figures[0], DEFAULT_THRESHOLDS)["verdict"] == ERROR


def test_the_slowest_rank_sets_the_time():
    row = measured_row("all_reduce", 8 * 2**30, [0.030, 0.040, 0.035, 0.031], ranks=4)
    assert row["seconds"] == 0.040
    assert row["slowest_rank"] == 1
    assert row["mean_rank_seconds"] == pytest.approx(0.034)
    assert row["algorithm_bandwidth_bytes_per_second"] == pytest.approx(8 * 2**30 / 0.040)
    assert row["bus_bandwidth_bytes_per_second"] == pytest.approx(8 * 2**30 / 0.040 * 1.5)


@pytest.mark.slow
def test_two_gloo_ranks_measure_every_collective_at_the_slowest_rank():
    table = run_on_this_node(2, "cpu", (2**16,), warmup_iterations=1, iterations=2)
    assert "error" not in table
    assert {row["collective"] for row in table["results"]} == set(collectives.COLLECTIVES)
    for row in table["results"]:
        assert row["seconds"] == row["slowest_rank_seconds"] >= row["mean_rank_seconds"]


OOM_ON_RANK_1 = textwrap.dedent(
    """
    import os, sys
    from gpuplan.bench import collectives
    real = collectives._operation
    def failing(dist, torch, collective, size, ranks, device):
        if os.environ["RANK"] == "1" and size == 2**20:
            raise RuntimeError("CUDA out of memory. Tried to allocate 4.00 MiB")
        return real(dist, torch, collective, size, ranks, device)
    collectives._operation = failing
    collectives.main(sys.argv[1:])
    """
)


@pytest.mark.slow
def test_an_allocation_failure_on_one_rank_skips_the_size_on_all(tmp_path):
    script = tmp_path / "oom_rank.py"
    script.write_text(OOM_ON_RANK_1)
    table = run_on_this_node(
        2,
        "cpu",
        (2**16, 2**20),
        ("all_reduce",),
        warmup_iterations=1,
        iterations=1,
        timeout_seconds=60,
        worker=[sys.executable, str(script)],
    )
    assert "error" not in table
    rows = {row["size_bytes"]: row for row in table["results"]}
    assert (
        rows[2**20]["error"]
        == "rank 1: RuntimeError: CUDA out of memory. Tried to allocate 4.00 MiB"
    )
    assert rows[2**16]["seconds"] > 0


@pytest.mark.parametrize(
    ("collective", "nodes", "ranks", "share"),
    [
        # hierarchical: intra-node reduce-scatter leaves S/8; inter-node all-reduce of it
        # among 2 nodes sends 2(2-1)/2 x S/8 = S/8
        ("all_reduce", 2, 16, 1 / 8),
        # 4 x 8: 2(4-1)/4 x S/8 = 3S/16 (ml-engineering's 0.75 GiB of a 4 GiB payload)
        ("all_reduce", 4, 32, 0.75 / 4),
        # the node needs the other node's 8 shards of S/16 = S/2, over 8 NICs: S/16
        ("all_gather", 2, 16, 1 / 16),
        ("reduce_scatter", 2, 16, 1 / 16),
        # each rank sends S/16 to each of 16 ranks, 8 of them off-node: S/2
        ("all_to_all", 2, 16, 1 / 2),
        # 4 x 8: 24 of 32 destinations off-node: 3S/4
        ("all_to_all", 4, 32, 3 / 4),
    ],
)
def test_network_share_matches_the_hand_computation(collective, nodes, ranks, share):
    assert network_share(collective, nodes, ranks) == pytest.approx(share)


def test_per_gpu_network_rate_undoes_busbw_per_collective():
    assert per_gpu_network_rate(381.80e9, 4, 32) == pytest.approx(36.95e9, rel=1e-3)
    algbw = 40e9
    busbw = algbw * bus_bandwidth_factor("all_to_all", 16)
    old_formula = busbw * (2 - 1) / (16 - 1)
    rate = per_gpu_network_rate(busbw, 2, 16, "all_to_all")
    assert rate == pytest.approx(algbw / 2)
    assert rate / old_formula == pytest.approx(8.0)
    with pytest.raises(ValueError):
        network_share("all_reduce", 3, 16)


def test_network_rate_takes_a_name_or_a_rate_and_names_the_field_when_wrong():
    assert network_rate("ib-ndr-400g")[0] == 50e9
    assert network_rate("200Gbps")[0] == 25e9
    with pytest.raises(InputError, match=r"^--network:"):
        network_rate("fast")
    with pytest.raises(SystemExit):
        collectives._arguments(["--network", "fast"])


def multi_node_table(nic_fraction_of_line: dict[str, float], network: str | None) -> dict:
    """Two 8-GPU nodes whose NICs run at the given share of 50 GB/s for each collective."""
    nodes, ranks, payload = 2, 16, 2**31
    rows = []
    for name, fraction in nic_fraction_of_line.items():
        algbw = fraction * 50e9 / network_share(name, nodes, ranks)
        rows.append(measured_row(name, payload, [payload / algbw] * ranks, ranks))
    table = {
        "ranks": ranks,
        "nodes": nodes,
        "ranks_per_node": 8,
        "backend": "nccl",
        "results": rows,
    }
    if network:
        rate, source = network_rate(network)
        table["network"] = {"bytes_per_second_per_gpu": rate, "source": source}
    return table


def judged(table: dict, gpu: str | None = "h200-sxm-141gb") -> dict[str, dict]:
    figures: list = []
    add_collective_figures(figures, table, load_gpu(gpu) if gpu else None)
    return {f.key: figure_to_dict(f, DEFAULT_THRESHOLDS) for f in figures}


def test_healthy_multi_node_nic_rates_pass_and_slow_ones_fail():
    healthy = judged(
        multi_node_table({"all_reduce": 0.74, "all_gather": 0.72, "all_to_all": 0.80}, "400Gbps")
    )
    for name in ("all_reduce", "all_gather", "all_to_all"):
        figure = healthy[f"collectives.{name}.inter_node"]
        assert figure["verdict"] == PASS, figure
        assert figure["spec"] == 50e9
    assert healthy["collectives.all_reduce.inter_node"]["reference"] == pytest.approx(
        INTER_NODE_FLOOR_EFFICIENCY * 50e9
    )
    assert healthy["collectives.all_to_all.inter_node"]["measured"] == pytest.approx(40e9)
    slow = judged(multi_node_table({"all_reduce": 0.40, "all_to_all": 0.30}, "ib-ndr-400g"))
    assert slow["collectives.all_reduce.inter_node"]["verdict"] == FAIL
    assert slow["collectives.all_to_all.inter_node"]["verdict"] == FAIL


def test_an_unknown_line_rate_skips_the_verdict_with_a_reason():
    figure = judged(multi_node_table({"all_reduce": 0.74}, None))[
        "collectives.all_reduce.inter_node"
    ]
    assert figure["verdict"] == SKIPPED
    assert "--network" in figure["reason"]
    assert figure["measured"] == pytest.approx(0.74 * 50e9)


def eight_h200_table(busbw: float, nvls_setting: str | None) -> dict:
    payload, ranks = 2**31, 8
    algbw = busbw / bus_bandwidth_factor("all_reduce", ranks)
    return {
        "ranks": ranks,
        "nodes": 1,
        "ranks_per_node": ranks,
        "backend": "nccl",
        "nccl_nvls_enable": nvls_setting,
        "results": [measured_row("all_reduce", payload, [payload / algbw] * ranks, ranks)],
    }


def test_nvls_busbw_above_the_link_passes_and_its_link_efficiency_is_capped():
    figure = judged(eight_h200_table(468e9, None))["collectives.all_reduce"]
    assert figure["verdict"] == PASS
    assert figure["reference"] == 469.17e9
    assert "all-reduce-8xH200.md" in figure["reference_source"]
    assert figure["details"]["nvls"]["likely_active"]
    assert figure["details"]["link_efficiency"] == 1.0
    assert "NVLS" in figure["label"]
    assert link_efficiency(300e9, 450e9) == pytest.approx(2 / 3)


def test_a_ring_busbw_with_nvls_on_is_held_to_the_nvls_reference():
    figure = judged(eight_h200_table(367e9, None))["collectives.all_reduce"]
    assert figure["details"]["nvls"]["likely_active"]
    assert figure["verdict"] == WARN
    ring = judged(eight_h200_table(367e9, "0"))["collectives.all_reduce"]
    assert not ring["details"]["nvls"]["likely_active"]
    assert ring["reference"] == 367.61e9
    assert ring["verdict"] == PASS
    broken = judged(eight_h200_table(250e9, "0"))["collectives.all_reduce"]
    assert broken["verdict"] == FAIL


def test_gloo_figures_are_measured_without_a_reference():
    table = eight_h200_table(1e9, None) | {"backend": "gloo"}
    figure = judged(table)["collectives.all_reduce"]
    assert figure["verdict"] == SKIPPED
    assert figure["measured"] == pytest.approx(1e9)
    assert "link_efficiency" not in figure["details"]


def test_launch_commands_carry_the_network():
    assert (
        "--network ib-ndr-400g"
        in collectives.launch_commands(2, 8, network="ib-ndr-400g")["torchrun"]
    )
    assert "--network" not in collectives.launch_commands(2, 8)["slurm"]


def b200_table(busbw: float, ranks: int, payload: int) -> dict:
    algbw = busbw / bus_bandwidth_factor("all_reduce", ranks)
    return {
        "ranks": ranks,
        "nodes": 1,
        "ranks_per_node": ranks,
        "backend": "nccl",
        "nccl_nvls_enable": None,
        "results": [measured_row("all_reduce", payload, [payload / algbw] * ranks, ranks)],
    }


def test_nvls_needs_enough_ranks_and_a_published_payload():
    five = judged(b200_table(600e9, 5, 2**33), "b200-sxm-180gb")["collectives.all_reduce"]
    assert not five["details"]["nvls"]["likely_active"]
    assert five["reference"] == pytest.approx(0.80 * 900e9)
    eight = judged(b200_table(830e9, 8, 2**33), "b200-sxm-180gb")["collectives.all_reduce"]
    assert eight["details"]["nvls"]["likely_active"]
    assert (eight["reference"], eight["verdict"]) == (838.0e9, PASS)
    small = judged(b200_table(700e9, 8, 2**31), "b200-sxm-180gb")["collectives.all_reduce"]
    assert small["verdict"] == SKIPPED
    assert "no published NVLS busbw" in small["reason"]
