"""The serving lab's batch sweep and users-that-fit: bytes, FLOPs and counts against hand
formulas on the tiny model (never the times), and the CLI options' tables."""

from __future__ import annotations

import argparse

import pytest
import torch

from kvstudio.cli import serving_batching as cli
from kvstudio.cli.main import build_parser
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.labs.common import Progress
from kvstudio.labs.scale import GIB, preset
from kvstudio.labs.serving import batching as lab
from kvstudio.labs.serving import fit as fit_lab


def _by_hand_parameters(cfg: ModelConfig) -> int:
    """The tiny model's parameters from its config: q|k|v, o, gate|up, down, two norms a
    layer; the tied (C, V) table once; the final norm."""
    C, L, H, G = cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads, \
        cfg.num_key_value_heads
    d, F, V = cfg.resolved_head_dim, cfg.resolved_intermediate_size, cfg.vocab_size
    layer = C * (H + 2 * G) * d + H * d * C + C * 2 * F + F * C + 2 * C
    return L * layer + C * V + C


def test_model_work_counts_the_parameters_and_the_formulas(tiny_backend, tiny_config) -> None:
    work = lab.model_work(tiny_backend)
    cfg = tiny_config
    assert cfg.tie_word_embeddings  # the table is the LM head: every token multiplies by it
    assert work.parameters == work.product_parameters == _by_hand_parameters(cfg)
    assert work.weight_bytes == 4 * work.parameters  # fp32
    B, S = 3, 10
    L, H, G, d = cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads, \
        cfg.resolved_head_dim
    assert work.step_flops(B, S) == 2 * B * work.parameters + 4 * B * L * H * d * S
    assert work.kv_bytes(B, S) == 2 * L * S * G * d * 4 * B


def test_an_untied_table_is_a_look_up_not_a_product(tiny_config) -> None:
    from dataclasses import replace

    cfg = replace(tiny_config, tie_word_embeddings=False)
    backend = MiniMindBackend(MiniMindLM(cfg).init_weights(3).eval(), name="untied")
    work = lab.model_work(backend)
    table = cfg.vocab_size * cfg.hidden_size
    assert work.parameters == _by_hand_parameters(cfg) + table
    assert work.product_parameters == work.parameters - table


def test_the_sweep_reads_and_computes_what_the_formulas_say(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    items = list(lab.batch_sweep(tiny_backend, tokenizer, batch_sizes=(4, 1, 2), context=6,
                                 rounds=2, measure_machine=False))
    progress = [i for i in items if isinstance(i, Progress)]
    assert [p.done for p in progress] == list(range(1, 7))  # 2 rounds × 3 sizes
    result = items[-1]
    assert isinstance(result, lab.BatchSweepResult)
    assert [p.batch for p in result.points] == [1, 2, 4]
    assert result.peaks is None and result.rounds == 2
    work = lab.model_work(tiny_backend)
    for point in result.points:
        # prompt 6, one untimed step, one timed step: the timed query read 8 keys
        assert point.keys == 6 + 2
        assert point.kv_bytes == work.kv_bytes(point.batch, point.keys)  # measured = formula
        assert point.weight_bytes == work.weight_bytes
        assert point.flops == work.step_flops(point.batch, point.keys)
        assert point.bytes_read == point.weight_bytes + point.kv_bytes
        assert point.intensity == pytest.approx(point.flops / point.bytes_read)
        assert point.step_seconds.count == 2
        assert point.tokens_per_second == pytest.approx(point.batch / point.step_seconds.median)
        assert point.bound is None  # no machine floors measured
    # The weights are read once whatever the batch: intensity grows with B.
    intensities = [p.intensity for p in result.points]
    assert intensities == sorted(intensities) and intensities[-1] > 3 * intensities[0]


def test_the_bound_follows_the_floors() -> None:
    def point(step: float, memory: float, compute: float) -> lab.BatchPoint:
        return lab.BatchPoint(1, 1, lab.spread([step]), 1, 1, 1, memory, compute)

    assert point(1.0, 0.9, 0.1).bound == "memory"
    assert point(1.0, 0.1, 0.9).bound == "compute"
    assert point(1.0, 0.2, 0.3).bound == "overhead"  # 1.0 > 3 × 0.3


def test_machine_peaks_are_positive_and_sized() -> None:
    peaks = lab.machine_peaks(torch.device("cpu"), torch.float32, rounds=1)
    assert peaks.copy_bytes == 2 * lab.COPY_BYTES
    assert peaks.matmul_size == lab.MATMUL_SIZE_CPU
    assert peaks.bandwidth.median > 0 and peaks.flops.median > 0


def test_bad_sweeps_are_refused(tiny_backend, tokenizer) -> None:
    with pytest.raises(ValueError, match="positive batch sizes"):
        lab.check_batch_sizes([0, 2])
    with pytest.raises(ValueError, match="past"):
        lab.check_batch_sizes([lab.MAX_BATCH + 1])
    with pytest.raises(ValueError, match="round"):
        list(lab.batch_sweep(tiny_backend, tokenizer, rounds=0))


def test_users_that_fit_by_hand() -> None:
    # 2,048 B a token, 200-token requests, 1 MiB: ⌊1,048,576 ÷ 409,600⌋ = 2 contiguous;
    # paged b = 16: ⌊1,048,576 ÷ 32,768⌋ = 32 blocks, ⌈200 ÷ 16⌉ = 13 a request → 2.
    assert fit_lab.users_that_fit(2048, 200, 1024**2) == 2
    assert fit_lab.users_that_fit(2048, 200, 1024**2, block_size=16) == 32 // 13
    # b = 64: 8 blocks, 4 a request → 2; b = 1 equals contiguous.
    assert fit_lab.users_that_fit(2048, 200, 1024**2, block_size=64) == 2
    assert fit_lab.users_that_fit(2048, 200, 10 * 1024**2, block_size=1) == fit_lab.users_that_fit(
        2048, 200, 10 * 1024**2)
    assert fit_lab.users_that_fit(2048, 200, 0) == 0
    with pytest.raises(ValueError, match="negative"):
        fit_lab.users_that_fit(2048, 200, -1)


def test_bytes_per_token_are_read_from_the_caches(tiny_backend, tokenizer, tiny_config) -> None:
    size = fit_lab.measure_cache_size(tiny_backend, tokenizer, block_size=5, tokens=12)
    cfg = tiny_config
    per_token = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * cfg.resolved_head_dim * 4
    assert size.bytes_per_token == per_token
    assert size.blocks == 3  # ⌈12 ÷ 5⌉
    assert size.block_bytes == 5 * per_token


def test_fit_budget_on_the_loaded_model_and_a_preset(tiny_backend, tokenizer) -> None:
    fit = fit_lab.fit_budget(tiny_backend, tokenizer, request_tokens=100, block_size=16,
                         budget_bytes=10**6, gpu_gib=(16,))
    assert fit.measured
    first, gpu = fit.rows
    assert first.budget_bytes == 10**6 and first.weight_bytes == 0
    assert first.requests_dense == 10**6 // (fit.bytes_per_token * 100)
    assert first.requests_paged == (10**6 // fit.block_bytes) // 7  # ⌈100 ÷ 16⌉ = 7
    weights = sum(p.numel() * 4 for p in tiny_backend.model.parameters())
    assert gpu.weight_bytes == weights and gpu.budget_bytes == 16 * GIB - weights
    llama = fit_lab.fit_budget(None, None, request_tokens=4096, geometry=preset("llama-3.1-8b"),
                           gpu_gib=(80,))
    row = llama.rows[0]
    assert llama.bytes_per_token == 131_072 and not llama.measured
    assert row.requests_dense == (80 * GIB - preset("llama-3.1-8b").weights_nbytes) // (
        131_072 * 4096)
    with pytest.raises(ValueError, match="Load a model"):
        fit_lab.fit_budget(None, None, request_tokens=10)


def _args(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(["serving", *argv])  # the one parser


def test_the_cli_prints_the_preset_table_without_a_model(capsys) -> None:
    assert cli.run(_args(["--fit-budget", "--preset", "llama-3.1-8b",
                          "--request-tokens", "4096"])) == 0
    out = capsys.readouterr().out
    assert "131,072 B per token" in out and "80 GiB GPU" in out
    with pytest.raises(ValueError, match="--sweep-batch or --fit-budget"):
        cli.run(_args([]))


def test_add_arguments_leaves_the_serving_commands_own_options() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--block-size", type=int, default=4)
    parser.add_argument("--model")
    cli.add_arguments(parser)  # no clash
    args = parser.parse_args(["--fit-budget"])
    assert args.block_size == 4 and args.fit_budget and not args.sweep_batch


@pytest.mark.parametrize(("tokens", "block_size", "budget"), [
    (40, 16, 10 * 4096), (33, 16, 20 * 4096 + 5), (21, 5, 50_000), (9, 1, 30_000)])
def test_the_count_is_the_continuous_schedulers_admission(
    tiny_backend, tokenizer, tokens: int, block_size: int, budget: int
) -> None:
    check = fit_lab.admission_check(tiny_backend, tokenizer, request_tokens=tokens,
                                budget_bytes=budget, block_size=block_size)
    size = fit_lab.measure_cache_size(tiny_backend, tokenizer, block_size)
    assert check.block_bytes == size.block_bytes
    assert check.budget_blocks == budget // size.block_bytes
    assert check.formula == check.budget_blocks // -(-tokens // block_size)  # by hand
    assert check.offered == check.formula + 2  # some must wait
    assert check.admitted == check.formula
    assert check.blocks_used == check.admitted * -(-tokens // block_size)
    assert check.equal


def test_a_budget_below_one_request_is_refused(tiny_backend, tokenizer) -> None:
    with pytest.raises(ValueError, match="larger budget"):
        fit_lab.admission_check(tiny_backend, tokenizer, request_tokens=40, budget_bytes=1000)


def test_a_check_past_its_size_is_refused(tiny_backend, tokenizer) -> None:
    with pytest.raises(ValueError, match="smaller budget"):
        fit_lab.admission_check(tiny_backend, tokenizer, request_tokens=8, budget_bytes=10**9)
