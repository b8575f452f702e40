"""A MiniMind-compatible decoder that can be fed a chunk of tokens on top of a KV cache.

Owns the network: RMSNorm, RoPE (half-split), grouped-query attention whose
K/V are cached before ``repeat_kv``, SwiGLU MLP, optional QK-norm, tied
embeddings. This is the forward every step runs, for decoding (autograd off)
and for training (autograd on); there is no second path. Serving several
requests at once (``forward_packed``) runs the same three sections of each
layer (`Block.queries_keys_values`, `Block.attend`, `Block.output_and_mlp`)
over the requests' tokens packed as rows, each row at its own position.

A decode step is about a hundred small kernels, so every kernel and every
Python frame shows. What keeps this forward at the eager floor
(``benchmarks/forward_floor.py`` times it against a bare loop of the same ops):

- **Fused projections.** One ``qkv_proj`` for q|k|v and one ``gate_up_proj``
  for gate|up, as nanoGPT fuses q, k, v: one product instead of three.
- **Weights stored (in, out)**, as GPT-2's ``Conv1D`` stores them, so a
  product reads ``x @ W`` and the residual add joins it in one kernel
  (``torch.addmm(x, y, W)`` is x + y @ W). MKL multiplies one row by an
  (in, out) matrix faster: the course model's LM head takes about 150 µs
  against 240 µs for ``F.linear`` on the (out, in) weight. A tied model
  keeps its one token matrix as the LM head's (C, V) and looks tokens up in
  its columns.
- **One layer, one forward.** `Block` holds its own weights and runs
  attention then the MLP top to bottom, without submodule calls.
- **RoPE as a roll** on q and k together, with the cos/sin tables built once.

The state dict keeps MiniMind's names, shapes and order
(``model.layers.0.self_attn.q_proj.weight`` is (H·d, C), …): a hook splits
and transposes on ``state_dict()``, another fuses on ``load_state_dict()``,
so course checkpoints, MiniMind ``.pth`` files and the transformers
conversion read and write them unchanged.

It does not sample, time or record anything: see ``generate.py``.

Letters in shape comments: B batch, T new tokens, N = B·T rows, S visible
keys (past + new), H query heads, G K/V heads, d head_dim, C hidden size,
F MLP width, V vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import nn

from kvstudio.engine.cache.base import CacheLayer, KVCache
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.minimind_names import state_dict_from_minimind, state_dict_to_minimind

# Called per layer as probe(layer, q (B, T, H, d), k (B, S, G, d)) with the queries after RoPE
# and the keys they attend (the cache inspector); None on the ordinary path costs one test.
AttentionProbe = Callable[[int, torch.Tensor, torch.Tensor], None]


def inverse_rms(x: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """x (…, C) → 1/sqrt(mean(x²) + eps) (…, 1), in fp32 as MiniMind computes it."""
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True, dtype=torch.float32)  # (…, 1) ‖x‖
    # mean(x²) + eps = ‖x‖²/C + eps: three kernels where .square().mean() dispatches a dozen.
    inv = torch.addcmul(eps, norm, norm, value=1.0 / x.shape[-1]).rsqrt_()  # (…, 1)
    return inv if x.dtype == torch.float32 else inv.to(x.dtype)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """RMSNorm: weight · x / sqrt(mean(x²) + eps) over the last dim, x (…, C) → (…, C)."""
    return x * inverse_rms(x, eps) * weight


def norm_weight(dim: int) -> nn.Parameter:
    """An RMSNorm's weight (dim,), ones at the start."""
    return nn.Parameter(torch.ones(dim))


def eps_tensor(eps: float) -> torch.Tensor:
    """RMSNorm's epsilon as a 0-d CPU fp32 tensor: addcmul takes it on any device, in any dtype.

    Kept as a plain attribute rather than a buffer, so .to() leaves it fp32.
    """
    with torch.inference_mode(False):  # usable with and without autograd
        return torch.tensor(eps, dtype=torch.float32)


def in_out_weight(d_in: int, d_out: int) -> nn.Parameter:
    """A bias-free linear map's weight stored (in, out), applied as ``x @ weight``.

    MiniMind's ``nn.Linear`` stores (out, in); the state dict hooks at the end of
    this module transpose at save and load, so files keep MiniMind's layout.
    """
    return nn.Parameter(torch.empty(d_in, d_out))


def rope_tables(head_dim: int, length: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables (length, d) for the half-split RoPE layout (MiniMind's)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))  # (d/2,)
    angles = torch.outer(torch.arange(length).float(), inv_freq)  # (length, d/2)
    angles = torch.cat([angles, angles], dim=-1)  # (length, d)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """[x1, x2] → [-x2, x1] over the last dim: the 90° turn RoPE mixes in."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope_reference(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """MiniMind's RoPE: x (B, T, heads, d), cos, sin (T, d) → x·cos + rotate_half(x)·sin."""
    cos, sin = cos[:, None, :], sin[:, None, :]  # (T, 1, d) broadcast over heads
    return x * cos + rotate_half(x) * sin


def signed_sin(sin: torch.Tensor) -> torch.Tensor:
    """sin with its first half negated, so rotate_half(x)·sin = roll(x, d/2)·signed_sin."""
    half = sin.shape[-1] // 2
    return torch.cat([-sin[..., :half], sin[..., half:]], dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin_signed: torch.Tensor) -> torch.Tensor:
    """RoPE on x (B, T, heads, d) with cos, sin_signed (T, 1, d): `apply_rope_reference`'s
    x·cos + rotate_half(x)·sin in three kernels instead of seven (rotate_half's slices,
    minus and cat become one roll; its minus sign lives in `signed_sin`)."""
    rolled = torch.roll(x, shifts=x.shape[-1] // 2, dims=-1)  # (B, T, heads, d): [x2, x1]
    return torch.addcmul(x * cos, rolled, sin_signed)  # (B, T, heads, d)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """(B, S, G, d) → (B, S, G·n_rep, d): each K/V head serves n_rep query heads.

    MiniMind calls this on every forward. Attention below asks SDPA for the
    same grouping (``enable_gqa``) without materialising the n_rep copies
    unless `Attention.use_repeat_kv` is set; a test checks both agree.
    """
    if n_rep == 1:
        return x
    B, S, G, d = x.shape
    return x[:, :, :, None, :].expand(B, S, G, n_rep, d).reshape(B, S, G * n_rep, d)


def attention_mask(
    q_start: int, new_tokens: int, k_start: int, window: int | None, device: torch.device
) -> torch.Tensor | None:
    """Boolean mask (T, S): True where a query may attend to a key.

    Queries sit at positions q_start … q_start+T-1 and keys at k_start … q_start+T-1.
    The causal triangle covers only the newest T columns; with a window W, a query at
    position i sees keys i − W + 1 … i (W keys, itself included, as transformers'
    ``sliding_window``). Returns None when
    every key is visible to every query (a single decode step inside the window).
    """
    k_end = q_start + new_tokens
    q_pos = torch.arange(q_start, k_end, device=device)[:, None]  # (T, 1)
    k_pos = torch.arange(k_start, k_end, device=device)[None, :]  # (1, S)
    allowed = k_pos <= q_pos
    if window is not None:
        allowed &= k_pos > q_pos - window
    if bool(allowed.all()):
        return None
    return allowed


class Block(nn.Module):
    """One decoder layer (MiniMind's ``MiniMindBlock``): x + attention(norm(x)), then
    that + mlp(norm(that)), read top to bottom in one forward.

    MiniMind splits the layer into ``Attention``, ``FeedForward`` and ``RMSNorm``
    modules; here they are the sections of this forward and the block holds
    their weights, because a module call (and each look-up of a submodule's
    weight) costs about as much as one of a decode step's small kernels. The
    state dict still lists MiniMind's ``self_attn.*``, ``mlp.*`` and ``….weight``
    names (see the hooks at the end).
    """

    # True: copy K/V n_rep times like MiniMind (slower); False: grouped SDPA, same maths.
    use_repeat_kv = False

    def __init__(self, cfg: ModelConfig, layer_index: int) -> None:
        super().__init__()
        self.layer_index = layer_index  # passed to the probe
        self.n_heads = cfg.num_attention_heads  # H
        self.n_kv_heads = cfg.num_key_value_heads  # G
        self.n_rep = cfg.n_rep  # H / G query heads per K/V head
        self.head_dim = cfg.resolved_head_dim  # d
        C, H, G, d = cfg.hidden_size, self.n_heads, self.n_kv_heads, self.head_dim
        F_ = cfg.resolved_intermediate_size
        # Attention (MiniMind's self_attn): q_proj | k_proj | v_proj side by side, and o_proj.
        self.qkv_proj = in_out_weight(C, (H + 2 * G) * d)  # (C, (H+2G)·d)
        self.o_proj = in_out_weight(H * d, C)  # (H·d, C)
        self.q_norm = norm_weight(d) if cfg.qk_norm else None  # (d,) QK-norm (minimind-3)
        self.k_norm = norm_weight(d) if cfg.qk_norm else None  # (d,)
        self.input_layernorm = norm_weight(C)  # (C,) RMSNorm weights
        self.post_attention_layernorm = norm_weight(C)  # (C,)
        self.eps = eps_tensor(cfg.rms_norm_eps)  # () every norm's epsilon
        # SwiGLU MLP (MiniMind's mlp): gate_proj | up_proj side by side, and down_proj.
        self.gate_up_proj = in_out_weight(C, 2 * F_)  # (C, 2F)
        self.down_proj = in_out_weight(F_, C)  # (F, C)

    def forward(
        self,
        x: torch.Tensor,  # (N, C) the residual stream, one row per token
        cos: torch.Tensor,  # (T, 1, d)
        sin: torch.Tensor,  # (T, 1, d) signed, see `apply_rope`
        cache_layer: CacheLayer | None,
        mask: torch.Tensor | None,  # (T, S) bool, None = every key visible (or plain causal)
        causal: bool,  # True: SDPA's own square causal triangle
        probe: AttentionProbe | None = None,
    ) -> torch.Tensor:
        T = cos.shape[0]
        B = x.shape[0] // T
        q, k, v = self.queries_keys_values(x, cos, sin, B)  # (B, T, H, d), (B, T, G, d) ×2
        if cache_layer is not None:
            # The cache stores K/V after RoPE and BEFORE repeat_kv: G heads, not H.
            k, v = cache_layer.update(k, v)  # (B, S, G, d): the past keys and these
        if probe is not None:
            probe(self.layer_index, q, k)
        y = self.attend(q, k, v, mask, causal)  # (N, H·d)
        return self.output_and_mlp(x, y)  # (N, C)

    def forward_packed(
        self,
        x: torch.Tensor,  # (N, C) one row per token, the tokens of several requests
        cos: torch.Tensor,  # (N, 1, d) each row at its own position
        sin: torch.Tensor,  # (N, 1, d) signed
        attend_rows: PackedAttention,
    ) -> torch.Tensor:
        """The same layer over packed rows: every product sees all N rows at once, and
        `attend_rows` gives each row its attention over its own request's keys."""
        q, k, v = self.queries_keys_values(x, cos, sin, 1)  # (1, N, H, d), (1, N, G, d) ×2
        y = attend_rows(self, q[0], k[0], v[0])  # (N, H·d)
        return self.output_and_mlp(x, y)  # (N, C)

    # ---- the layer's three sections ----------------------------------------------------------
    def queries_keys_values(
        self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, batch: int
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q (B, T, H, d), k and v (B, T, G, d) from x (N = B·T, C): norm, q|k|v, RoPE."""
        B, T = batch, x.shape[0] // batch
        H, G, d = self.n_heads, self.n_kv_heads, self.head_dim
        # ---- attention: x + o_proj(softmax(q·Kᵀ/√d)·V), q, k, v from input_layernorm(x)
        h = x * inverse_rms(x, self.eps) * self.input_layernorm  # (N, C) RMSNorm
        qkv = (h @ self.qkv_proj).view(B, T, H + 2 * G, d)  # (B, T, H+2G, d)
        qk, v = qkv[:, :, : H + G], qkv[:, :, H + G :]  # (B, T, H+G, d), (B, T, G, d)
        if self.q_norm is not None and self.k_norm is not None:  # QK-norm, before RoPE
            q = rms_norm(qk[:, :, :H], self.q_norm, self.eps)  # (B, T, H, d), per head
            k = rms_norm(qk[:, :, H:], self.k_norm, self.eps)  # (B, T, G, d)
            qk = torch.cat([q, k], dim=2)  # (B, T, H+G, d)
        qk = apply_rope(qk, cos, sin)  # (B, T, H+G, d): q and k rotated in one call
        return qk[:, :, :H], qk[:, :, H:], v  # (B, T, H, d), (B, T, G, d), (B, T, G, d)

    def attend(
        self,
        q: torch.Tensor,  # (B, T, H, d)
        k: torch.Tensor,  # (B, S, G, d)
        v: torch.Tensor,  # (B, S, G, d)
        mask: torch.Tensor | None,  # (T, S) bool
        causal: bool,
    ) -> torch.Tensor:
        """softmax(q·Kᵀ/√d)·V for every head → (B·T, H·d), the heads side by side."""
        B, T, H, d = q.shape
        if self.use_repeat_kv:
            k, v = repeat_kv(k, self.n_rep), repeat_kv(v, self.n_rep)  # (B, S, H, d)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2),  # (B, H, T, d)
            k.transpose(1, 2),  # (B, G, S, d), or (B, H, S, d) after repeat_kv
            v.transpose(1, 2),  # same as k
            attn_mask=mask,
            is_causal=causal,
            enable_gqa=self.n_rep > 1 and not self.use_repeat_kv,  # head h reads K/V h // n_rep
        )  # (B, H, T, d)
        return y.transpose(1, 2).reshape(B * T, H * d)  # (N, H·d)

    def output_and_mlp(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x (N, C) + o_proj(y (N, H·d)), then that + SwiGLU MLP of its norm → (N, C)."""
        x = torch.addmm(x, y, self.o_proj)  # (N, C) x + y @ W_o: the residual add in the product
        # ---- SwiGLU MLP: x + down(silu(gate) · up), gate and up from post_attention_layernorm(x)
        h = x * inverse_rms(x, self.eps) * self.post_attention_layernorm  # (N, C) RMSNorm
        gate, up = (h @ self.gate_up_proj).chunk(2, dim=-1)  # (N, F), (N, F)
        return torch.addmm(x, F.silu(gate) * up, self.down_proj)  # (N, C)


# Called per layer as attend_rows(block, q (N, H, d), k (N, G, d), v (N, G, d)) → y (N, H·d):
# stores the rows' keys and values in their requests' caches and gives each row its attention
# (kvstudio.engine.serving.model_runner does it over the block pool).
PackedAttention = Callable[[Block, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


class DecoderStack(nn.Module):
    """MiniMind's ``MiniMindModel``: embeddings, blocks, final norm (MiniMind's names on save)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        # A tied model has no table of its own: it reads the LM head's (see MiniMindLM).
        self.embed_tokens = (
            None if cfg.tie_word_embeddings else nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        )
        self.layers = nn.ModuleList(Block(cfg, i) for i in range(cfg.num_hidden_layers))
        self.norm = norm_weight(cfg.hidden_size)  # (C,) the final RMSNorm
        self.eps = eps_tensor(cfg.rms_norm_eps)  # () the final norm's epsilon


class MiniMindLM(nn.Module):
    """MiniMind's ``MiniMindForCausalLM``: a decoder stack plus a (tied) LM head."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.config = cfg
        self.model = DecoderStack(cfg)
        self.lm_head = in_out_weight(cfg.hidden_size, cfg.vocab_size)  # (C, V)
        cos, sin = rope_tables(cfg.resolved_head_dim, cfg.max_position_embeddings, cfg.rope_theta)
        # Not saved in the state dict (MiniMind does the same with freqs_cos/freqs_sin).
        self.rope_cos: torch.Tensor  # (max_positions, d)
        self.rope_sin_signed: torch.Tensor  # (max_positions, d), see `apply_rope`
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin_signed", signed_sin(sin), persistent=False)
        self.max_positions = cfg.max_position_embeddings  # the tables' length
        self._register_state_dict_hook(state_dict_to_minimind)
        self._register_load_state_dict_pre_hook(state_dict_from_minimind, with_module=True)

    def init_weights(self, seed: int) -> MiniMindLM:
        """Seeded random initialisation (normal std 0.02, residual outputs scaled down).

        Drawn tensor by tensor in MiniMind's names and shapes, so a seed gives the
        same model as it did when q, k and v were three matrices.
        """
        gen = torch.Generator().manual_seed(seed)
        tied = self.config.tie_word_embeddings
        resid_std = 0.02 / math.sqrt(2 * self.config.num_hidden_layers)
        state: dict[str, torch.Tensor] = {}
        for name, tensor in self.state_dict().items():
            if name.endswith("norm.weight"):
                state[name] = torch.ones(tensor.shape)
            elif not (tied and name == "lm_head.weight"):  # tied: the embedding's draw
                std = resid_std if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
                state[name] = torch.randn(tensor.shape, generator=gen) * std
        with torch.no_grad():
            self.load_state_dict(state)
        return self

    @property
    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def token_table(self) -> torch.Tensor:
        """The embedding table (V, C); for a tied model, a view of the LM head's (C, V)."""
        embed = self.model.embed_tokens
        return self.lm_head.t() if embed is None else embed.weight

    def forward(
        self,
        input_ids: torch.Tensor,  # (B, T)
        cache: KVCache[Any] | None = None,
        *,
        window: int | None = None,
        logits_to_keep: int = 0,
        probe: AttentionProbe | None = None,
    ) -> torch.Tensor:
        """Logits (B, T', V) for the last `logits_to_keep` positions (0 = all T).

        With a cache, the chunk sits at positions cache.seq_length … +T-1 and the
        cache is updated in place. Without one, the chunk starts at position 0 and
        `window` (if given) limits how far back each query may look, exactly as
        a sliding-window cache would. `probe` (the cache inspector) is called per
        layer with the queries and the keys they attend.
        """
        B, T = input_ids.shape
        start = cache.seq_length if cache is not None else 0
        if start + T > self.max_positions:
            raise ValueError(
                f"Sequence of {start + T} tokens exceeds the model's "
                f"{self.max_positions} positions; use a shorter prompt or fewer new tokens."
            )
        # One new token on a cache sees every key the cache returns (a sliding cache keeps
        # only the window), so the common decode step needs no mask at all.
        single_decode = cache is not None and T == 1
        mask, causal = (None, False) if single_decode else self._mask(T, start, cache, window)
        cos = self.rope_cos[start : start + T, None]  # (T, 1, d): broadcast over heads
        sin = self.rope_sin_signed[start : start + T, None]  # (T, 1, d)
        x = F.embedding(input_ids, self.token_table()).view(B * T, -1)  # (N, C)
        layers = self.model.layers
        cache_layers = cache if cache is not None else [None] * len(layers)
        for block, cache_layer in zip(layers, cache_layers, strict=True):
            # block.forward rather than block(…): nn.Module's call adds two Python frames
            # of hook dispatch per layer, as much as a small kernel (no hooks run on blocks).
            x = block.forward(x, cos, sin, cache_layer, mask, causal, probe)  # (N, C)
        if logits_to_keep and logits_to_keep < T:
            x = x.view(B, T, -1)[:, -logits_to_keep:].reshape(B * logits_to_keep, -1)  # (N', C)
            T = logits_to_keep
        stack = self.model
        logits = rms_norm(x, stack.norm, stack.eps) @ self.lm_head  # (N', V)
        return logits.view(B, T, -1)  # (B, T', V)

    def forward_packed(
        self,
        input_ids: torch.Tensor,  # (N,) the new tokens of several requests, side by side
        positions: torch.Tensor,  # (N,) each token's position in its own request
        attend_rows: PackedAttention,
        logits_rows: torch.Tensor,  # (R,) the rows whose next-token logits are wanted
    ) -> torch.Tensor:
        """Logits (R, V) for packed rows: requests with caches of different lengths in one
        forward (the serving engine's step; ``kvstudio.engine.serving``).

        Every product (q|k|v, o_proj, the MLP, the LM head) runs once over all N rows;
        RoPE turns each row by its own position; `attend_rows` stores each row's K/V in
        its request's cache and gives it attention over its own request's keys only.

        What a row computes never depends on the rows beside it (every operation is
        row by row, attention included), but how a product rounds may: a CPU's or GPU's
        matrix-product kernel picks its code path, blocking and summation order from
        the shape, so a row of an N-row product can differ in its last bits from the
        same row multiplied alone (on x86 CPUs once N ≥ 4 under AVX2, and a lone row
        takes a matrix-vector kernel). A request's logits batched are therefore its
        logits alone to float32 rounding, not bit for bit: the serving lab measures the
        gap (``RequestOutcome.max_abs_logit_diff``) and ``tests/core/test_serving.py``
        bounds it.
        """
        if int(positions.max()) >= self.max_positions:
            raise ValueError(
                f"Position {int(positions.max())} is past the model's {self.max_positions} "
                "positions; shorten the prompt or ask for fewer new tokens."
            )
        cos = self.rope_cos[positions][:, None]  # (N, 1, d): each row at its own position
        sin = self.rope_sin_signed[positions][:, None]  # (N, 1, d)
        x = F.embedding(input_ids, self.token_table())  # (N, C)
        for block in cast(Iterable[Block], self.model.layers):
            x = block.forward_packed(x, cos, sin, attend_rows)  # (N, C)
        x = x[logits_rows]  # (R, C)
        stack = self.model
        return rms_norm(x, stack.norm, stack.eps) @ self.lm_head  # (R, V)

    def _mask(
        self, new_tokens: int, start: int, cache: KVCache[Any] | None, window: int | None
    ) -> tuple[torch.Tensor | None, bool]:
        """(mask (T, S) or None, causal): which keys T new queries from `start` see."""
        T = new_tokens
        if cache is not None:
            window = cache.window
            k_start = cache.visible_start(T)
        else:
            k_start = 0
        if T == 1 and k_start == 0 and window is None:
            return None, False
        if start == 0 and window is None:
            return None, T > 1  # SDPA's fused causal path; no mask tensor needed
        return attention_mask(start, T, k_start, window, self.rope_cos.device), False
