"""Train a tiny Llama for a few optimizer steps under an exported DeepSpeed config, unchanged,
on the CPU; run by torchrun in the launcher environment with ``DS_ACCELERATOR=cpu`` (DeepSpeed's
CPU accelerator, gloo collectives, its CPU FusedAdam and shared-memory all-reduce, both built on
first use):

    DS_ACCELERATOR=cpu torchrun --nproc_per_node DP train_deepspeed_cpu.py CONFIG.json STEPS

The config's batch arithmetic, ZeRO stage, precision, optimizer, scheduler and clipping all
come from the file; only the model is a stand-in (2 layers of the Llama architecture, hidden size
64). Rank 0 prints one JSON line: world size, ZeRO stage, optimizer class, optimizer steps taken,
the learning rate after each optimizer step and the loss of each micro-batch.
"""

from __future__ import annotations

import json
import math
import sys

import deepspeed
import torch
from transformers import LlamaConfig, LlamaForCausalLM

VOCABULARY = 256
SEQUENCE = 32


def tiny_llama() -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=VOCABULARY,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=SEQUENCE,
    )
    return LlamaForCausalLM(config)


def main(config_path: str, steps: int) -> None:
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    model = tiny_llama()
    engine, optimizer, _, scheduler = deepspeed.initialize(
        model=model, model_parameters=model.parameters(), config=config
    )
    micro_batch = engine.train_micro_batch_size_per_gpu()
    losses, rates = [], []
    for micro_step in range(steps * engine.gradient_accumulation_steps()):
        seed = micro_step * engine.world_size + engine.global_rank
        tokens = torch.randint(
            0, VOCABULARY, (micro_batch, SEQUENCE), generator=torch.Generator().manual_seed(seed)
        )
        loss = engine(input_ids=tokens, labels=tokens).loss
        engine.backward(loss)
        engine.step()
        losses.append(loss.item())
        if scheduler is not None and engine.global_steps > len(rates):
            rates.append(scheduler.get_last_lr()[0])
    if engine.global_rank == 0:
        report = {
            "world_size": engine.world_size,
            "zero_stage": engine.zero_optimization_stage(),
            "optimizer": type(optimizer).__name__,
            "optimizer_steps": engine.global_steps,
            "learning_rates": rates,
            "losses_finite": all(math.isfinite(value) for value in losses),
            "losses": losses,
        }
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
