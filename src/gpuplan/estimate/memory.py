"""Per-GPU memory of a training job, part by part, for the most loaded rank.

The most loaded rank is the first pipeline stage (embedding, the most micro-batches in
flight) or the last (output head, logits and loss), whichever holds more. Parts, in bytes:

- ``weights``, ``gradients``, ``optimizer`` (fp32 master copy plus optimizer states): bytes per
  parameter from the precision, optimizer and framework profile (``frameworks.py``), divided
  by tensor, pipeline and expert parallelism, and by the ``dp * cp`` group under ZeRO.
- ``activations``: what each op keeps for backward, tensor by tensor
  (:func:`activation_bytes_per_token_per_layer`), times the layers on the stage and the
  micro-batches in flight (1F1B: ``min(pp, m)``; interleaved: times ``1 + (pp-1)/(pp*vpp)``,
  Korthikanti et al. 2022, section 4.2.3).
- ``logits``: the output head's logits and the loss, on the last stage.
- ``buffers``: framework buffers inside the allocator (FSDP/ZeRO-3 gathered layers, DeepSpeed
  and DDP gradient buckets, QLoRA's dequantized weight).
- ``fragmentation``: caching-allocator overhead, ``reserved - allocated``.
- ``context``: the CUDA context and NCCL communicator buffers, outside the allocator.

``allocated_bytes`` is the sum of the first six (``torch.cuda.max_memory_allocated``),
``reserved_bytes`` adds fragmentation (``max_memory_reserved``), ``peak_bytes`` adds the context
(what ``nvidia-smi`` shows). Every function takes a :class:`~gpuplan.strategy.Layout` of NumPy
arrays and broadcasts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.frameworks import profile_values, resolve_framework_codes
from gpuplan.strategy import Layout
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

FloatArray = npt.NDArray[np.float64]

BF16 = 2.0
FP32 = 4.0
NF4_BYTES_PER_PARAM = 0.5
NF4_BLOCK = 64
DOUBLE_QUANT_BLOCK = 256
CUDA_CONTEXT_BYTES = 0.6 * 2**30
"""CUDA context with lazy module loading, cuBLAS and cuDNN handles: about 500-700 MiB on
A100/H100 with CUDA 12 (PyTorch forum measurements; ml-engineering ``training/performance``)."""
NCCL_BYTES_PER_COMMUNICATOR = 0.2 * 2**30
"""NCCL buffers per communicator that spans more than one GPU (NCCL_BUFFSIZE 4 MiB x channels x
peers, plus proxy buffers): about 150-300 MiB each on NVLink systems."""
DEFAULT_SAFETY_MARGIN = 0.10
"""``fits`` requires ``peak_bytes <= capacity * (1 - margin)``, and the plan search keeps the same
headroom: the driver and ECC reserve a few hundred MiB (an 80 GiB H100 shows 81,559 MiB in
nvidia-smi), allocation spikes vary from run to run, and the model's median error against
published peaks is about 7 %, with QLoRA about 17 % under (docs/accuracy.md)."""

PARTS = (
    "weights",
    "gradients",
    "optimizer",
    "activations",
    "logits",
    "buffers",
    "fragmentation",
    "context",
)


@dataclass(frozen=True)
class MemoryEstimate:
    """Per-rank memory in bytes, each an array over the layouts (0-d for one layout)."""

    parts: dict[str, FloatArray]
    allocated_bytes: FloatArray
    reserved_bytes: FloatArray
    peak_bytes: FloatArray
    capacity_bytes: float
    safety_margin: float

    @property
    def fits(self) -> npt.NDArray[np.bool_]:
        return self.peak_bytes <= self.capacity_bytes * (1.0 - self.safety_margin)

    @property
    def headroom(self) -> FloatArray:
        """Share of the capacity left free at the peak (negative when it does not fit)."""
        return 1.0 - self.peak_bytes / self.capacity_bytes


# --- model states -----------------------------------------------------------------------------


def optimizer_state_bytes_per_param(job: TrainingJob) -> float:
    """Optimizer state per trained parameter, without the master copy.

    AdamW: two fp32 moments, 8 bytes (Loshchilov & Hutter 2019); 8-bit AdamW: two 8-bit moments
    plus block-wise fp32 scales, 2 bytes + 8/2048 (Dettmers et al. 2022, block size 2048);
    SGD with momentum: 4; Adafactor: factored second moments, 4 * (rows + cols) per matrix
    (Shazeer & Stern 2018), written here as a per-parameter average. States follow the
    parameter dtype under ``bf16-pure`` (half the bytes).
    """
    if job.optimizer == "adamw-8bit":
        return 2.0 + 8.0 / 2048
    if job.optimizer == "adafactor":
        return FP32 * _factored_state_fraction(job.model)
    state = {"adamw": 8.0, "sgd": 4.0}[job.optimizer]
    return state / 2 if job.precision == "bf16-pure" else state


def _factored_state_fraction(model: ModelSpec) -> float:
    """Σ(rows + cols) / Σ(rows * cols) over one layer's weight matrices."""
    d, q_width, kv_width = model.hidden_size, model.q_width, model.kv_width
    width = model.moe_intermediate_size if model.is_moe else model.intermediate_size
    shapes = [(d, q_width), (d, kv_width), (d, kv_width), (q_width, d), (d, width), (width, d)]
    if model.gated_mlp:
        shapes.append((d, width))
    return sum(r + c for r, c in shapes) / sum(r * c for r, c in shapes)


def lora_params_per_layer(model: ModelSpec, rank: int, targets: tuple[str, ...]) -> int:
    """LoRA adds A (d_in x r) and B (r x d_out) to each target: r * (d_in + d_out) (Hu et al. 2021)."""
    d, q_width, kv_width, width = (
        model.hidden_size,
        model.q_width,
        model.kv_width,
        model.intermediate_size,
    )
    shapes = {
        "q_proj": (d, q_width),
        "k_proj": (d, kv_width),
        "v_proj": (d, kv_width),
        "o_proj": (q_width, d),
        "gate_proj": (d, width),
        "up_proj": (d, width),
        "down_proj": (width, d),
    }
    if not model.gated_mlp:
        shapes.pop("gate_proj")
    return sum(rank * (shapes[name][0] + shapes[name][1]) for name in targets if name in shapes)


def nf4_bytes_per_param(double_quant: bool) -> float:
    """QLoRA NF4 storage: 4 bits per weight plus one fp32 absmax per 64 weights, or with double
    quantization an 8-bit absmax plus one fp32 constant per 256 absmaxes (Dettmers et al. 2023,
    section 3: 0.5 -> 0.127 bits of constants per parameter)."""
    if double_quant:
        return NF4_BYTES_PER_PARAM + 1.0 / NF4_BLOCK + FP32 / (NF4_BLOCK * DOUBLE_QUANT_BLOCK)
    return NF4_BYTES_PER_PARAM + FP32 / NF4_BLOCK


def quantizes_head(job: TrainingJob) -> bool:
    """Whether QLoRA's output head is 4-bit: Lightning's ``BitsandbytesPrecision`` (litgpt 0.4,
    ``lora.quantizer: bitsandbytes-0.42``) replaces every ``torch.nn.Linear`` as the model is
    built (``_ClassReplacementContextManager({"torch.nn.Linear": ...})``, lightning 2.4
    ``fabric/plugins/precision/bitsandbytes.py``); transformers' ``BitsAndBytesConfig`` keeps the
    output embedding in the compute dtype (``get_keys_to_not_convert``). A tied head is the
    embedding matrix and stays bf16."""
    return (
        job.method == "qlora"
        and job.lora.quantizer == "bitsandbytes-0.42"
        and not job.model.tie_word_embeddings
    )


def quantized_head_parameters(job: TrainingJob, layout: Layout, last_stage: bool) -> FloatArray:
    """Output-head parameters held in NF4 on one rank of the first or last pipeline stage."""
    on_stage = (layout.pp == 1) | last_stage
    head = job.model.vocab_size * job.model.hidden_size / layout.tp.astype(float)
    return np.asarray(np.where(on_stage & quantizes_head(job), head, 0.0), dtype=float)


@dataclass(frozen=True)
class StageParameters:
    """Parameters held by one rank of the first or last pipeline stage, by kind."""

    dense: FloatArray
    experts: FloatArray
    linear: FloatArray
    other: FloatArray
    layers: FloatArray
    largest_layer: FloatArray
    head_or_embedding: FloatArray


def stage_parameters(model: ModelSpec, layout: Layout, last_stage: bool) -> StageParameters:
    """Parameters on one rank of the first (``last_stage=False``) or last pipeline stage.

    Layers split ``ceil(L / pp)`` on the loaded stages; non-expert weights divide by ``tp``,
    routed experts by ``ep * tp`` (Megatron-Core's default expert tensor parallel size is
    ``tp``); norms are replicated. The first stage holds the embedding (and learned positions),
    the last the output head and final norm; with tied embeddings and ``pp > 1`` the last stage
    keeps its own copy of the embedding matrix (Megatron-LM ``shared_embedding``).
    """
    breakdown = model.parameter_breakdown()
    layers = np.ceil(model.num_layers / layout.pp)
    per_layer_attention = breakdown["attention"] / model.num_layers
    per_layer_dense_mlp = breakdown["mlp"] / model.num_layers
    per_layer_experts = breakdown["experts"] / model.num_layers
    per_layer_norms = (
        breakdown["norms"] - model.norm_params() * (2 if model.embedding_norm else 1)
    ) / model.num_layers
    tp, ep = layout.tp.astype(float), layout.ep.astype(float)
    dense = layers * ((per_layer_attention + per_layer_dense_mlp) / tp + per_layer_norms)
    experts = layers * per_layer_experts / (ep * tp)
    vocab_matrix = model.vocab_size * model.hidden_size
    single_stage = layout.pp == 1
    if last_stage:
        head = 0.0 if model.tie_word_embeddings else float(vocab_matrix)
        head = np.where(single_stage | (not model.tie_word_embeddings), head, vocab_matrix) / tp
        edge = head + model.norm_params()
        edge = edge + np.where(single_stage, breakdown["embeddings"] / tp, 0.0)
    else:
        edge = breakdown["embeddings"] / tp + (model.norm_params() if model.embedding_norm else 0.0)
        edge = edge + np.where(single_stage, (breakdown["head"] / tp) + model.norm_params(), 0.0)
    linear_per_layer = (per_layer_attention + per_layer_dense_mlp) / tp + per_layer_experts / (
        ep * tp
    )
    largest = (
        model.layer_params(model.num_layers - 1) if model.is_moe else model.layer_params(0)
    ) / tp
    return StageParameters(
        dense=dense + edge,
        experts=experts,
        linear=layers * linear_per_layer,
        other=layers * per_layer_norms + edge,
        layers=layers,
        largest_layer=np.asarray(largest, dtype=float) + 0 * layers,
        head_or_embedding=np.asarray(vocab_matrix / tp, dtype=float),
    )


def model_state_bytes(
    job: TrainingJob, layout: Layout, framework_codes: npt.NDArray[np.int64], last_stage: bool
) -> dict[str, FloatArray]:
    """Weights, gradients and optimizer bytes on one rank of the first or last stage.

    Trained parameters take the framework's bytes (``frameworks.py``); under ``bf16-pure``
    weights and gradients are 2 bytes and there is no master copy; under ``fp32`` 4 + 4, no
    master. ZeRO divides over ``dp * cp``: stage 1 the master and optimizer states, stage 2
    also gradients, stage 3 also weights. Frozen weights (LoRA, QLoRA, freeze) are bf16, or NF4
    for QLoRA's linear layers. Offload moves master and optimizer states (and with
    ``optimizer+params`` the sharded weights) to host memory. Under FSDP with gradient
    accumulation the rank also holds the unsharded gradients it accumulates (``frameworks.py``).
    """
    model = job.model
    stage = stage_parameters(model, layout, last_stage)
    total_on_rank = stage.dense + stage.experts
    shard = (layout.dp * layout.cp).astype(float)
    zero = layout.zero

    if job.is_adapter:
        per_layer = lora_params_per_layer(model, job.lora.rank, job.lora.targets)
        trained = stage.layers * per_layer / layout.tp
        frozen = total_on_rank
    elif job.method == "freeze":
        assert job.trainable_layers is not None
        trained_share = min(1.0, job.trainable_layers / model.num_layers)
        trained = (stage.dense + stage.experts - stage.other) * trained_share
        frozen = total_on_rank - trained
    else:
        trained = total_on_rank
        frozen = np.zeros_like(total_on_rank)

    if job.precision == "bf16-pure":
        weight_bytes, grad_bytes, master_bytes = (
            np.full_like(shard, BF16),
            np.full_like(shard, BF16),
            np.zeros_like(shard),
        )
    elif job.precision == "fp32" or job.is_adapter:
        weight_bytes, grad_bytes, master_bytes = (
            np.full_like(shard, FP32),
            np.full_like(shard, FP32),
            np.zeros_like(shard),
        )
    else:
        weight_bytes = profile_values(framework_codes, "compute_weight_bytes")
        grad_bytes = profile_values(framework_codes, "gradient_bytes")
        master_bytes = profile_values(framework_codes, "master_bytes")
        if job.precision == "fp8":
            weight_bytes = weight_bytes + 1.0
    state_bytes = optimizer_state_bytes_per_param(job)

    optimizer_divisor = np.where(zero >= 1, shard, 1.0)
    gradient_divisor = np.where(zero >= 2, shard, 1.0)
    weight_divisor = np.where(zero >= 3, shard, 1.0)
    offloaded_optimizer = layout.offload >= 1
    offloaded_params = layout.offload >= 2

    weights = trained * weight_bytes / weight_divisor
    weights = np.where(offloaded_params, 0.0, weights)
    if job.method == "qlora":
        quantized = stage.linear + quantized_head_parameters(job, layout, last_stage)
        frozen_bytes = (
            quantized * nf4_bytes_per_param(job.lora.double_quant) + (frozen - quantized) * BF16
        )
    else:
        frozen_bytes = frozen * (FP32 if job.precision == "fp32" else BF16)
    weights = weights + frozen_bytes / weight_divisor
    gradients = trained * grad_bytes / gradient_divisor
    accumulates_unsharded = (
        (zero == 3)
        & (layout.micro_batches > 1)
        & (profile_values(framework_codes, "accumulates_unsharded_gradients") > 0)
    )
    unsharded_bytes = FP32 if job.precision == "fp32" else BF16
    gradients = gradients + np.where(accumulates_unsharded, trained * unsharded_bytes, 0.0)
    optimizer = trained * (master_bytes + state_bytes) / optimizer_divisor
    optimizer = np.where(offloaded_optimizer, 0.0, optimizer)
    return {"weights": weights, "gradients": gradients, "optimizer": optimizer}


# --- activations ------------------------------------------------------------------------------

ACTIVATION_CLASSES = (
    "norm",
    "qk_norm",
    "attention_input",
    "mla_latent",
    "qkv",
    "scores",
    "attention_output",
    "mlp_input",
    "mlp",
    "router",
    "experts",
    "shared_experts",
    "dropout",
    "lora",
)
"""The tensor classes of :func:`activation_terms`, which ``benchmarks/trace_activations.py``
measures one by one on real layers."""

HF_FUSED_QKV_FAMILIES = frozenset({"phi3", "falcon", "chatglm", "internlm2"})
"""Families whose transformers modelling code projects Q, K and V with one linear layer and
applies rotary embeddings to views of its output (``Phi3Attention.qkv_proj``,
``FalconAttention.query_key_value``, ChatGLM and InternLM2 ``query_key_value``/``wqkv``)."""
HF_CONCATENATED_ROTARY_FAMILIES = frozenset({"phi3", "chatglm"})
"""Families whose transformers rotary embedding builds Q by concatenating its rotated and
passed-through parts (``modeling_phi3.apply_rotary_pos_emb``: ``torch.cat``)."""
HF_BF16_SOFTMAX_FAMILIES = frozenset({"gpt2", "opt", "bloom", "mpt"})
"""Families whose transformers eager attention keeps the softmax in the input dtype
(``GPT2Attention`` ``eager_attention_forward``); the others upcast it to fp32
(``modeling_llama.eager_attention_forward``: ``softmax(..., dtype=torch.float32).to(dtype)``)."""


@dataclass(frozen=True)
class ActivationKernels:
    """What a stack's kernels keep for backward, per layout (arrays broadcast like a Layout).

    Bytes per element of the tensor named, for 16-bit compute:

    - ``norm_input_bytes``: each norm's input (2: fused RMSNorm and ``native_layer_norm`` keep the
      bf16 input; 4: the eager RMSNorm upcasts and keeps the fp32 copy);
    - ``norm_output_bytes``: the normalised value the norm weight's gradient needs (0 fused; 2 when
      the eager norm multiplies the weight by ``x.to(dtype)``; 4 when it multiplies in fp32);
    - ``swiglu_bytes``: per FFN element of a gated MLP (6: Megatron's fused kernel keeps the fc1
      output pair and the fc2 input; 8: eager gate, activation, up and product);
    - ``softmax_bytes``: per attention score of the eager softmax (2 bf16, 4 fp32);
    - ``repeats_kv``: K and V copied to every query head before attention;
    - ``fused_qkv``: Q, K and V are views of one projection's output, so rotary embeddings make
      new Q and K while V keeps the whole buffer alive;
    - ``rotary_by_concatenation``: rotary embeddings build Q with ``torch.cat``, so Q is laid
      out by head and flash attention's output, allocated like Q (FlashAttention-2 ``mha_fwd``
      ``empty_like(q)``; PyTorch's meta kernel for ``_scaled_dot_product_flash_attention``), is
      not the storage the output projection reads: the model makes a contiguous copy;
    - ``composite_gelu``: the tanh GeLU written as separate ops (transformers ``gelu_new``,
      ``NewGELUActivation``), which keep four FFN-wide tensors instead of one;
    - ``moe_combine_copies``: expert outputs kept per routed token by the combine (1: the
      permute/unpermute of Megatron-Core; 2: transformers' expert loop, whose ``index_add_``
      keeps the weighted output beside the unweighted one its multiply keeps);
    - ``every_other_matmul``: torchtitan's per-op selective recompute policy.
    """

    norm_input_bytes: FloatArray
    norm_output_bytes: FloatArray
    swiglu_bytes: FloatArray
    softmax_bytes: FloatArray
    repeats_kv: npt.NDArray[np.bool_]
    fused_qkv: npt.NDArray[np.bool_]
    rotary_by_concatenation: npt.NDArray[np.bool_]
    composite_gelu: npt.NDArray[np.bool_]
    moe_combine_copies: FloatArray
    every_other_matmul: npt.NDArray[np.bool_]


def activation_kernels(
    model: ModelSpec, framework_codes: npt.NDArray[np.int64]
) -> ActivationKernels:
    """The kernels of each layout's framework profile (``frameworks.py``), with what the
    transformers modelling code does differently by family where the profile runs it:
    Gemma's RMSNorm multiplies by ``1 + weight`` in fp32 (``GemmaRMSNorm.forward``), ``gelu_new``
    is composite, some families fuse Q, K and V (``HF_FUSED_QKV_FAMILIES``) and GPT-2-style
    attention keeps a bf16 softmax (``HF_BF16_SOFTMAX_FAMILIES``)."""
    transformers = profile_values(framework_codes, "runs_transformers_modeling") > 0
    rmsnorm = model.norm == "rmsnorm"
    norm_input = profile_values(framework_codes, "rmsnorm_input_bytes")
    norm_output = profile_values(framework_codes, "rmsnorm_output_bytes")
    gemma = model.family.startswith("gemma")
    norm_output = np.where(transformers & gemma & (norm_output > 0), FP32, norm_output)
    if not rmsnorm:
        norm_input, norm_output = np.full_like(norm_input, BF16), np.zeros_like(norm_output)
    softmax = profile_values(framework_codes, "softmax_bytes_per_score")
    softmax = np.where(transformers & (model.family in HF_BF16_SOFTMAX_FAMILIES), BF16, softmax)
    fused = profile_values(framework_codes, "fuses_qkv_projection") > 0
    fused = fused | (transformers & (model.family in HF_FUSED_QKV_FAMILIES))
    composite_gelu = transformers & (model.hidden_act == "gelu_new")
    concatenated = profile_values(framework_codes, "rotates_by_concatenation") > 0
    concatenated = concatenated | (transformers & (model.family in HF_CONCATENATED_ROTARY_FAMILIES))
    return ActivationKernels(
        norm_input_bytes=np.asarray(norm_input, dtype=float),
        norm_output_bytes=np.asarray(norm_output, dtype=float),
        swiglu_bytes=profile_values(framework_codes, "swiglu_bytes_per_element"),
        softmax_bytes=np.asarray(softmax, dtype=float),
        repeats_kv=profile_values(framework_codes, "repeats_kv_heads") > 0,
        fused_qkv=np.asarray(fused, dtype=bool),
        rotary_by_concatenation=np.asarray(concatenated & (model.position_embedding == "rope")),
        composite_gelu=np.asarray(composite_gelu, dtype=bool),
        moe_combine_copies=np.where(transformers, 2.0, 1.0),
        every_other_matmul=profile_values(framework_codes, "selective_every_other_matmul") > 0,
    )


def activation_terms(
    model: ModelSpec,
    layout: Layout,
    kernels: ActivationKernels,
    sequence_length: int,
    flash_attention: bool = True,
    dropout: bool = False,
    lora_targets: tuple[str, ...] | None = None,
    lora_dropout: bool = False,
    frozen_linear_keeps_input: bool = False,
    compiled: bool = False,
    bytes_per_value: float = BF16,
) -> dict[str, FloatArray]:
    """Bytes one layer keeps for backward per token of the micro-batch on one rank, by tensor
    class (``ACTIVATION_CLASSES``). Tensor by tensor, after Korthikanti et al. 2022 (section 4.1)
    and measured on transformers layers (``benchmarks/trace_activations.py``, docs/accuracy.md),
    for hidden h, heads a and KV heads g of head size d, query width q = a d, K/V width k = g d,
    FFN width F and 2-byte values (bytes below; fp32 compute doubles them):

    - ``norm``, per norm: the input (2 h or 4 h, ``ActivationKernels``) and the normalised value
      when the weight trains (0, 2 h or 4 h), plus fp32 statistics (rstd 4, LayerNorm mean and
      rstd 8);
    - ``qk_norm`` (Qwen3, Gemma 3 per head; OLMo 2 over the width): the same kernel on Q and K;
    - ``attention_input``: the input of the Q/K/V projections, 2 h (with a parallel MLP also the
      MLP's input, ``mlp_input`` is then 0);
    - ``mla_latent`` (DeepSeek multi-head latent attention): the query and KV latent norms and the
      up-projections' inputs;
    - ``qkv``: Q, K, V as the attention kernel keeps them, 2 (q + 2k); 6 q where K and V are
      repeated to every head; with ``fused_qkv`` and rotary embeddings the whole projection
      output (q + 2k) plus the rotated Q and K (q + k), 2 (2q + 3k);
    - ``scores``: flash attention's fp32 log-sum-exp, 4 a; eager attention a s times the softmax
      (2 or 4), its bf16 copy or dropped copy fed to the value product (2, when it is a new
      tensor), the dropout mask (1) and Gemma 2's soft-capping ``tanh`` output (2);
    - ``attention_output``: the output projection's input, 2 q: flash attention's saved output is
      the same storage unless ``rotary_by_concatenation`` (then 4 q when the projection keeps
      its input); eager attention keeps only the projection's input;
    - ``mlp``: gated ``swiglu_bytes`` F; GeLU its input and the fc2 input, 4 F (``gelu_new`` 10 F);
    - MoE layers: ``router`` (fp32 softmax 4 E, int64 top-k indices 8 k, renormalised weights
      4 k + 4), ``experts`` per routed token (the gathered input 2 h, the expert MLP,
      ``moe_combine_copies`` outputs of 2 h, fp32 weight 4, int64 indices 16) and
      ``shared_experts`` as a dense MLP;
    - ``dropout``: the two residual dropout masks, 1 byte per element each;
    - ``lora``: each adapter with dropout keeps the dropped bf16 copy of its input and a 1-byte
      mask (PEFT ``lora.Linear.forward``); with ``fused_qkv`` the Q, K and V adapters share one
      (litgpt ``LoRAQKVLinear``).

    Tensor parallelism divides everything but the norms, the projections' inputs and the
    residual masks, which sequence parallelism divides too. Korthikanti's GPT case (LayerNorm,
    GeLU, dropout, eager attention, Megatron) gives ``34 h + 5 a s`` bytes per token plus the
    norms' statistics, their eq. 1; with TP ``10 h + (24 h + 5 a s)/t`` (eq. 2), with sequence
    parallelism ``(34 h + 5 a s)/t`` (eq. 3). Selective recompute drops the ``a s`` terms (eq. 4)
    and, for the eager stacks' SwiGLU, the activation output and product. The FSDP profile's
    selective recompute is torchtitan's per-op policy instead
    (``torchtitan/models/llama3/infra/parallelize.py``, ``_save_list``): it keeps the block input,
    the outputs of every other matmul (wq, wv, w1, w2) and of flash attention.

    LoRA (frozen base weights, Hu et al. 2021): a frozen linear layer keeps no input and a frozen
    norm no normalised output; a target keeps its input for the adapter's A gradient, or with
    LoRA dropout the dropped copy instead. ``frozen_linear_keeps_input``: bitsandbytes up to
    0.43.1 keeps every 4-bit layer's input (``MatMul4Bit.forward``: ``ctx.tensors = (A, B)``).
    ``compiled`` (``torch.compile``): Inductor's min-cut partitioner keeps the gate and up
    projections and the norms' bf16 inputs, and recomputes the SwiGLU product and the norms'
    fp32 intermediates.
    """
    h, a = float(model.hidden_size), float(model.num_attention_heads)
    tp = layout.tp.astype(float)
    sp = layout.sequence_parallel
    selective = layout.recompute == 1
    trained = lora_targets is None
    targets = set(lora_targets) if lora_targets is not None else set()
    zeros = np.zeros(np.broadcast(tp, kernels.swiglu_bytes).shape)

    def keeps_input(*modules: str) -> float:
        if trained or frozen_linear_keeps_input:
            return 1.0
        return 1.0 if targets.intersection(modules) and not lora_dropout else 0.0

    norm_input = kernels.norm_input_bytes
    norm_output = kernels.norm_output_bytes if trained else np.zeros_like(kernels.norm_output_bytes)
    swiglu = kernels.swiglu_bytes
    if compiled:
        swiglu = np.minimum(swiglu, 4.0)
        norm_input, norm_output = np.full_like(norm_input, BF16), np.zeros_like(norm_output)
    stats = FP32 if model.norm == "rmsnorm" else 2 * FP32
    norms = float(min(model.norms_per_layer, 4))
    terms: dict[str, FloatArray] = {}
    terms["norm"] = norms * (h * (norm_input + norm_output) + stats) + zeros

    q_width = float(model.q_width)
    kv_width = float(model.kv_width)
    if model.qk_norm != "none":
        qk_widths = q_width + kv_width
        norm_stats = (a + model.num_kv_heads) if model.qk_norm == "per_head" else 2.0
        terms["qk_norm"] = (qk_widths * (norm_input + norm_output) + FP32 * norm_stats) / tp + zeros

    attention_keeps = keeps_input("q_proj", "k_proj", "v_proj")
    mlp_keeps = keeps_input("gate_proj", "up_proj")
    if model.parallel_attention:
        attention_keeps, mlp_keeps = max(attention_keeps, mlp_keeps), 0.0
    terms["attention_input"] = BF16 * h * attention_keeps + zeros
    terms["mlp_input"] = BF16 * h * mlp_keeps + zeros
    terms["dropout"] = (2.0 * h if dropout else 0.0) + zeros

    rotary = model.position_embedding == "rope"
    if model.uses_mla:
        q_lora = float(model.q_lora_rank or 0)
        kv_lora = float(model.kv_lora_rank or 0)
        latents = q_lora + kv_lora
        latent_norms = 2.0 if q_lora else 1.0
        terms["mla_latent"] = (
            latents * (norm_input + norm_output + BF16) + FP32 * latent_norms
        ) / tp + zeros
        qk_head = float(model.qk_nope_head_dim + model.qk_rope_head_dim)
        kv_buffer = float(model.qk_nope_head_dim + model.v_head_dim)
        qkv_elements = a * (2.0 * qk_head + kv_buffer) + zeros
    else:
        repeated = kernels.repeats_kv & (model.num_kv_heads < model.num_attention_heads)
        whole_buffer = kernels.fused_qkv & ~repeated & rotary
        kept_kv = np.where(repeated, q_width, kv_width)
        qkv_elements = np.where(
            whole_buffer, 2.0 * q_width + 3.0 * kv_width, q_width + 2.0 * kept_kv
        )
    terms["qkv"] = BF16 * qkv_elements / tp
    output_keeps = keeps_input("o_proj")
    if flash_attention:
        copy = np.where(kernels.rotary_by_concatenation, output_keeps, 0.0)
        terms["attention_output"] = BF16 * q_width * (1.0 + copy) / tp + zeros
        terms["scores"] = FP32 * a / tp + zeros
    else:
        terms["attention_output"] = BF16 * q_width * output_keeps / tp + zeros
        copy = np.where((kernels.softmax_bytes > BF16) | dropout, BF16, 0.0)
        per_score = kernels.softmax_bytes + copy + (1.0 if dropout else 0.0)
        per_score = per_score + (BF16 if model.family == "gemma2" else 0.0)
        terms["scores"] = np.where(selective, 0.0, a * sequence_length * per_score / tp)

    def mlp_bytes(width: float) -> FloatArray:
        down_input = keeps_input("down_proj")
        if not model.gated_mlp:
            activation = np.where(kernels.composite_gelu, 4.0, 1.0)
            return np.asarray(BF16 * (activation + down_input) * width + zeros, dtype=float)
        per_element = np.where(selective & (swiglu > 6), 4.0, swiglu)
        if down_input == 0.0:
            per_element = np.maximum(per_element - BF16, 4.0)
        return np.asarray(per_element * width + zeros, dtype=float)

    if model.is_moe:
        moe_share = model.num_moe_layers / model.num_layers
        k = float(model.num_experts_per_token)
        router = model.settings.router
        renormalised = router is not None and router.normalizes_top_k
        router_bytes = (
            FP32 * model.num_experts + 8.0 * k + ((FP32 * k + FP32) if renormalised else 0.0)
        )
        per_routed_token = (
            BF16 * h * (1.0 + kernels.moe_combine_copies)
            + mlp_bytes(model.moe_intermediate_size)
            + FP32
            + 16.0
        )
        terms["router"] = moe_share * router_bytes / tp + zeros
        terms["experts"] = moe_share * k * per_routed_token / tp
        if model.shared_expert_intermediate_size:
            terms["shared_experts"] = (
                moe_share * mlp_bytes(model.shared_expert_intermediate_size) / tp
            )
        terms["mlp"] = (1 - moe_share) * mlp_bytes(model.intermediate_size) / tp
    else:
        terms["mlp"] = mlp_bytes(model.intermediate_size) / tp

    if targets and lora_dropout:
        widths = {
            "o_proj": q_width,
            "gate_proj": h,
            "up_proj": h,
            "down_proj": float(model.intermediate_size),
        }
        others = sum(widths[name] for name in targets if name in widths)
        attention_targets = len(targets & {"q_proj", "k_proj", "v_proj"})
        attention = np.where(kernels.fused_qkv, min(attention_targets, 1), attention_targets) * h
        terms["lora"] = (BF16 + 1.0) * (others + attention) / tp + zeros

    replicated = ("norm", "attention_input", "mlp_input", "dropout")
    for name in replicated:
        terms[name] = np.where(sp, terms[name] / tp, terms[name])

    if np.any(selective & kernels.every_other_matmul):
        width = (
            model.moe_intermediate_size * model.num_experts_per_token
            if model.is_moe
            else model.intermediate_size
        )
        block_ends = np.where(sp, 2.0 * h / tp, 2.0 * h)
        saved_outputs = (q_width + kv_width + q_width + 2.0 * a + width) / tp
        policy = selective & kernels.every_other_matmul
        for name in list(terms):
            terms[name] = np.where(policy, 0.0, terms[name])
        terms["attention_input"] = np.where(policy, BF16 * block_ends, terms["attention_input"])
        terms["mlp"] = np.where(policy, BF16 * saved_outputs, terms["mlp"])
    scale = bytes_per_value / BF16
    return {name: np.asarray(value * scale, dtype=float) for name, value in terms.items()}


def activation_bytes_per_token_per_layer(
    model: ModelSpec,
    layout: Layout,
    framework_codes: npt.NDArray[np.int64],
    sequence_length: int,
    flash_attention: bool = True,
    dropout: bool = False,
    lora_targets: tuple[str, ...] | None = None,
    lora_dropout: bool = False,
    frozen_linear_keeps_input: bool = False,
    compiled: bool = False,
    bytes_per_value: float = BF16,
) -> FloatArray:
    """Bytes one layer keeps for backward, per token of the micro-batch, on one rank: the sum of
    :func:`activation_terms` under each layout's framework kernels (:func:`activation_kernels`)."""
    terms = activation_terms(
        model,
        layout,
        activation_kernels(model, framework_codes),
        sequence_length,
        flash_attention,
        dropout,
        lora_targets,
        lora_dropout,
        frozen_linear_keeps_input,
        compiled,
        bytes_per_value,
    )
    return np.asarray(sum(terms.values()), dtype=float)


def korthikanti_activation_bytes(
    sequence_length: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
) -> float:
    """Korthikanti et al. 2022, eqs. 1-4 and section 4.3, one GPT layer, 16-bit values:
    ``s b h (34 + 5 a s / h)`` without parallelism; ``s b h (10 + 24/t + 5 a s/(h t))`` with TP;
    ``s b h/t (34 + 5 a s / h)`` with TP and sequence parallelism; ``34 s b h / t`` with selective
    recompute and sequence parallelism; ``2 s b h`` (``/t`` with SP) with full recompute."""
    s, b, h, a, t = sequence_length, micro_batch, hidden, heads, tensor_parallel
    if recompute == "full":
        return 2 * s * b * h / (t if sequence_parallel else 1)
    attention_core = 0.0 if recompute == "selective" else 5 * a * s / h
    if sequence_parallel:
        return s * b * h / t * (34 + attention_core)
    return s * b * h * (10 + (24 + attention_core) / t)


def micro_batches_in_flight(layout: Layout) -> FloatArray:
    """Activations the first stage holds at its peak, in micro-batches: 1 without a pipeline,
    ``min(pp, m)`` under 1F1B, times ``1 + (pp - 1)/(pp * vpp)`` interleaved (Korthikanti et
    al. 2022, section 4.2.3; Narayanan et al. 2021, section 2.2)."""
    pp, m = layout.pp.astype(float), layout.micro_batches.astype(float)
    in_flight = np.minimum(pp, np.maximum(m, 1.0))
    interleave = np.where(layout.vpp > 1, 1.0 + (pp - 1.0) / (pp * layout.vpp), 1.0)
    return np.asarray(np.where(layout.pp > 1, in_flight * interleave, 1.0), dtype=float)


def logits_bytes(
    job: TrainingJob, layout: Layout, framework_codes: npt.NDArray[np.int64]
) -> FloatArray:
    """Output logits and the loss for one micro-batch on the last stage: ``s b V / (t cp)`` logits
    times the bytes per logit the stack keeps (Megatron 6, eager 12; see ``frameworks.py``). A
    fused or chunked cross-entropy keeps the bf16 logits and their log-probabilities (bf16 in
    litgpt's ``chunked_cross_entropy``; fp32 per chunk after torchtune's
    ``CEWithChunkedOutputLoss`` frees the bf16 chunks), 4 bytes."""
    tokens = job.seq_len * layout.micro_batch / layout.cp
    elements = tokens * job.model.vocab_size / layout.tp
    per_element = (
        4.0 if job.fused_loss else profile_values(framework_codes, "logit_bytes_per_element")
    )
    return np.asarray(elements * per_element, dtype=float)


# --- the whole rank ------------------------------------------------------------------------------


def estimate_memory(
    job: TrainingJob,
    layout: Layout,
    capacity_bytes: float,
    flash_attention: bool = True,
    safety_margin: float = DEFAULT_SAFETY_MARGIN,
) -> MemoryEstimate:
    """Peak memory of the most loaded rank, part by part (see the module docstring)."""
    model = job.model
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    tokens = job.seq_len * layout.micro_batch / layout.cp
    lora_targets = job.lora.targets if job.is_adapter else None
    keeps_quantized_inputs = job.method == "qlora" and job.lora.quantizer == "bitsandbytes-0.42"

    def kept_per_layer(of: Layout, keeps_quantized_inputs: bool = keeps_quantized_inputs) -> FloatArray:  # fmt: skip
        per_token = activation_bytes_per_token_per_layer(
            model,
            of,
            codes,
            job.seq_len,
            flash_attention,
            lora_targets=lora_targets,
            lora_dropout=job.is_adapter and job.lora.dropout > 0,
            frozen_linear_keeps_input=keeps_quantized_inputs,
            compiled=job.compile,
            bytes_per_value=FP32 if job.precision == "fp32" else BF16,
        )
        return np.asarray(per_token * tokens, dtype=float)

    layer_activation = kept_per_layer(layout)
    whole_layer = kept_per_layer(replace(layout, recompute=np.zeros_like(layout.recompute)))
    layer_input = (
        tokens * model.hidden_size * BF16 / np.where(layout.sequence_parallel, layout.tp, 1)
    )
    layers_on_stage = np.ceil(model.num_layers / layout.pp)
    stored_per_layer = np.where(layout.recompute == 2, layer_input, layer_activation)
    recomputes_in_backward = (layout.recompute == 2) | (
        (layout.recompute == 1) & (profile_values(codes, "selective_every_other_matmul") > 0)
    )
    working_layer = np.where(
        recomputes_in_backward,
        whole_layer - np.where(layout.recompute == 2, 0.0, layer_activation),
        0.0,
    )
    in_flight = micro_batches_in_flight(layout)
    held: float | FloatArray = 0.0
    if keeps_quantized_inputs:
        inputs = layer_activation - kept_per_layer(layout, False)
        held = np.where(layout.recompute == 0, layers_on_stage * inputs, 0.0)
    first_activations = layers_on_stage * stored_per_layer * in_flight + working_layer + held
    last_activations = layers_on_stage * stored_per_layer + working_layer + held

    first_states = model_state_bytes(job, layout, codes, last_stage=False)
    last_states = model_state_bytes(job, layout, codes, last_stage=True)
    logits = logits_bytes(job, layout, codes)
    buffers = framework_buffer_bytes(job, layout, codes)

    first_total = sum(first_states.values()) + first_activations
    last_total = sum(last_states.values()) + last_activations + logits
    last_is_peak = (layout.pp == 1) | (last_total >= first_total)
    parts: dict[str, FloatArray] = {}
    for name in ("weights", "gradients", "optimizer"):
        parts[name] = np.where(last_is_peak, last_states[name], first_states[name])
    parts["activations"] = np.where(last_is_peak, last_activations, first_activations)
    parts["logits"] = np.where(last_is_peak, logits, 0.0)
    parts["buffers"] = buffers

    transient = gradients_are_transient(layout, codes)
    backward_end_is_peak = transient & (parts["gradients"] > parts["activations"] + parts["logits"])
    parts["gradients"] = np.where(transient & ~backward_end_is_peak, 0.0, parts["gradients"])
    parts["activations"] = np.where(backward_end_is_peak, 0.0, parts["activations"])
    parts["logits"] = np.where(backward_end_is_peak, 0.0, parts["logits"])
    allocated = sum(
        parts[name]
        for name in ("weights", "gradients", "optimizer", "activations", "logits", "buffers")
    )
    parts["fragmentation"] = allocated * profile_values(codes, "fragmentation")
    parts["context"] = CUDA_CONTEXT_BYTES + NCCL_BYTES_PER_COMMUNICATOR * communicator_count(layout)
    reserved = allocated + parts["fragmentation"]
    peak = reserved + parts["context"]
    return MemoryEstimate(
        parts={name: np.asarray(parts[name], dtype=float) for name in PARTS},
        allocated_bytes=np.asarray(allocated, dtype=float),
        reserved_bytes=np.asarray(reserved, dtype=float),
        peak_bytes=np.asarray(peak, dtype=float),
        capacity_bytes=float(capacity_bytes),
        safety_margin=safety_margin,
    )


def gradients_are_transient(
    layout: Layout, framework_codes: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Whether gradients are freed between steps and so never live beside the activations.

    PyTorch's ``optimizer.zero_grad()`` sets gradients to ``None`` (the default since 2.0);
    eager PyTorch, Hugging Face and FSDP2 then allocate gradients during backward as the
    activations are freed, and the peak is the larger of the forward end (activations and
    logits) and the backward end (all gradients). Megatron-LM and DeepSpeed keep persistent
    gradient buffers, and gradient accumulation keeps gradients across micro-batches.
    """
    persistent = profile_values(framework_codes, "persistent_gradients") > 0
    return np.asarray(~persistent & (layout.micro_batches == 1) & (layout.pp == 1), dtype=bool)


def framework_buffer_bytes(
    job: TrainingJob, layout: Layout, framework_codes: npt.NDArray[np.int64]
) -> FloatArray:
    """Buffers the stack allocates beside the model states.

    - ZeRO-3 / FSDP: the current and the prefetched layer gathered in bf16 plus one layer's
      unsharded fp32 gradient before its reduce-scatter, or the embedding/head when larger
      (torchtitan wraps them separately; PyTorch FSDP2 ``fully_shard`` prefetch of one module).
    - DeepSpeed ZeRO-1/2: two gradient buckets of ``hidden**2`` elements (the Hugging Face
      integration's ``"auto"`` reduce_bucket_size), 2 bytes each.
    - DDP (Hugging Face, plain PyTorch with dp > 1): 25 MB gradient buckets (PyTorch default), fp32.
    - QLoRA: the dequantized copy of the largest 4-bit weight (:func:`dequantized_weight_bytes`).
    """
    model = job.model
    stage = stage_parameters(model, layout, last_stage=False)
    gathered_unit = np.maximum(stage.largest_layer, stage.head_or_embedding)
    fsdp_buffers = np.where(layout.zero == 3, gathered_unit * (2 * BF16 + FP32), 0.0)
    if job.is_adapter:
        fsdp_buffers = np.where(layout.zero == 3, gathered_unit * 2 * BF16, 0.0)
    deepspeed = (framework_codes == 2) & (layout.zero >= 1) & (layout.zero <= 2)
    bucket = np.where(deepspeed, 2.0 * model.hidden_size**2 * BF16, 0.0)
    ddp = (framework_codes == 3) & (layout.dp > 1) & (layout.zero == 0)
    bucket = bucket + np.where(
        ddp, profile_values(framework_codes, "gradient_bucket_elements") * 2, 0.0
    )
    dequantized = 0.0
    if job.method == "qlora":
        dequantized = dequantized_weight_bytes(job)
    return np.asarray(fsdp_buffers + bucket + dequantized / layout.tp, dtype=float)


def dequantized_weight_bytes(job: TrainingJob) -> float:
    """QLoRA's transient full-width copy of the largest 4-bit weight, alive at the peak: every
    4-bit matmul dequantizes its weight forward and backward (bitsandbytes ``MatMul4Bit``:
    ``F.dequantize_4bit(B, quant_state).to(A.dtype)``). ``dequantize_4bit`` returns the dtype the
    weight was quantized from (``torch.empty(quant_state.shape, dtype=quant_state.dtype)``):
    Lightning quantizes from fp16 (``_Linear4bit.quantize``: ``weight.to(dtype=torch.half)``),
    so under ``bitsandbytes-0.42`` the fp16 copy and its bf16 cast are both alive, 4 bytes per
    weight; transformers quantizes from the bf16 load dtype, one 2-byte copy. With a 4-bit
    head the largest weight is the head, dequantized for every chunk of litgpt's chunked head,
    the last of them at the forward pass's end (``benchmarks/trace_qlora.py``)."""
    model = job.model
    largest = model.hidden_size * max(model.intermediate_size, model.q_width)
    if quantizes_head(job):
        largest = max(largest, model.vocab_size * model.hidden_size)
    per_weight = BF16 + BF16 if job.lora.quantizer == "bitsandbytes-0.42" else BF16
    return float(largest * per_weight)


def communicator_count(layout: Layout) -> FloatArray:
    """Process groups of more than one GPU that a rank joins (TP, PP, DP, CP, EP)."""
    groups = [layout.tp, layout.pp, layout.dp, layout.cp, layout.ep]
    return np.asarray(sum((group > 1).astype(float) for group in groups), dtype=float)
