"""Model folders and MiniMind .pth files: round trips, inference from shapes, clear errors."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import (
    MODELS_DIR,
    RANDOM_LABEL,
    default_model,
    load_any,
    load_minimind_pth,
    load_model_folder,
    random_model,
    save_model_folder,
)
from kvstudio.files.pth import infer_config, read_pth_state_dict

MINIMIND_KEYS = {
    "model.embed_tokens.weight",
    "model.norm.weight",
    "lm_head.weight",
    "model.layers.0.input_layernorm.weight",
    "model.layers.0.post_attention_layernorm.weight",
    "model.layers.0.self_attn.q_proj.weight",
    "model.layers.0.self_attn.k_proj.weight",
    "model.layers.0.self_attn.v_proj.weight",
    "model.layers.0.self_attn.o_proj.weight",
    "model.layers.0.mlp.gate_proj.weight",
    "model.layers.0.mlp.up_proj.weight",
    "model.layers.0.mlp.down_proj.weight",
}


def logits(model: MiniMindLM) -> torch.Tensor:
    with torch.inference_mode():
        return model(torch.tensor([[3, 4, 5, 6]]))


def test_state_dict_uses_minimind_names(tiny_model: MiniMindLM) -> None:
    assert MINIMIND_KEYS <= set(tiny_model.state_dict())


def test_model_folder_round_trip(
    tmp_path: Path, tiny_model: MiniMindLM, tokenizer: TextTokenizer
) -> None:
    folder = save_model_folder(tiny_model, tokenizer, tmp_path / "m")
    assert {p.name for p in folder.iterdir()} >= {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
    }
    loaded = load_model_folder(folder)
    assert loaded.config == tiny_model.config  # None and the number it stands for are equal
    assert torch.equal(logits(loaded.model), logits(tiny_model))
    assert loaded.tokenizer.vocab_size == tokenizer.vocab_size
    assert load_any(folder).name == "m"


@pytest.mark.parametrize("stored", ["float16", "bfloat16"])
def test_16_bit_weights_are_cast_to_fp32(
    tmp_path: Path, tiny_model: MiniMindLM, tokenizer: TextTokenizer, stored: str
) -> None:
    folder = save_model_folder(tiny_model, tokenizer, tmp_path / stored, weights_dtype=stored)
    loaded = load_model_folder(folder)
    assert next(loaded.model.parameters()).dtype == torch.float32
    assert (logits(loaded.model) - logits(tiny_model)).abs().max().item() < 0.05


def test_minimind_pth_round_trip_with_config(
    tmp_path: Path, tiny_model: MiniMindLM, tokenizer: TextTokenizer
) -> None:
    pth = tmp_path / "full_sft_64.pth"
    # DDP-saved checkpoints prefix every key with "module."; those load too.
    torch.save({f"module.{k}": v for k, v in tiny_model.state_dict().items()}, pth)
    tokenizer.save(tmp_path / "tok")
    tiny_model.config.save(tmp_path / "config.json")
    loaded = load_minimind_pth(pth, tmp_path / "tok", config_path=tmp_path / "config.json")
    assert torch.equal(logits(loaded.model), logits(tiny_model))
    assert loaded.name == "full_sft_64"


def test_shapes_tell_the_architecture(tokenizer: TextTokenizer) -> None:
    course = replace(ModelConfig(), vocab_size=tokenizer.vocab_size)
    state = MiniMindLM(course).init_weights(0).state_dict()
    inferred = infer_config(state)  # MiniMind's defaults for what shapes cannot tell
    assert inferred == course
    qk = replace(course, num_attention_heads=4, num_key_value_heads=1, head_dim=48, qk_norm=True)
    inferred = infer_config(MiniMindLM(qk).state_dict())  # minimind-3 style: heads from q_norm
    assert (inferred.num_attention_heads, inferred.num_key_value_heads) == (4, 1)
    assert (inferred.head_dim, inferred.qk_norm) == (48, True)


# ---- every bad checkpoint gives a clear ValueError ---------------------------------------
@pytest.fixture
def good_folder(tmp_path: Path, tiny_model: MiniMindLM, tokenizer: TextTokenizer) -> Path:
    return save_model_folder(tiny_model, tokenizer, tmp_path / "good")


@pytest.mark.parametrize("name", ["config.json", "model.safetensors", "tokenizer.json"])
def test_missing_file(good_folder: Path, name: str) -> None:
    (good_folder / name).unlink()
    with pytest.raises(ValueError, match=f"missing {name}"):
        load_model_folder(good_folder)


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder"):
        load_model_folder(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="does not exist"):
        load_any(tmp_path / "nowhere")


def test_truncated_safetensors(good_folder: Path) -> None:
    weights = good_folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ValueError, match="truncated"):
        load_model_folder(good_folder)


def test_broken_config(good_folder: Path) -> None:
    (good_folder / "config.json").write_text("{ not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_model_folder(good_folder)


def test_config_that_is_huge_a_pipe_or_not_text(good_folder: Path) -> None:
    """A config.json is read with a size cap, never blocks, and must be UTF-8 JSON."""
    config = good_folder / "config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    data["padding"] = "x" * (2 * 1024 * 1024)  # valid JSON, 2 MiB: refused before parsing
    config.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"larger than 1 MiB.*config\.json"):
        load_model_folder(good_folder)
    config.unlink()
    os.mkfifo(config)  # nothing will ever write to it: reading must not wait
    with pytest.raises(ValueError, match="not a regular file"):
        load_model_folder(good_folder)
    config.unlink()
    config.write_bytes(b'{"hidden_size": 64}\xff')  # Latin-1 junk after the JSON
    with pytest.raises(ValueError, match="not UTF-8"):
        load_model_folder(good_folder)


def test_shape_mismatch(good_folder: Path) -> None:
    data = json.loads((good_folder / "config.json").read_text(encoding="utf-8"))
    data["intermediate_size"] = 96
    (good_folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"has shape .* config.json"):
        load_model_folder(good_folder)


def test_wrong_layer_count(good_folder: Path) -> None:
    data = json.loads((good_folder / "config.json").read_text(encoding="utf-8"))
    data["num_hidden_layers"] = 3
    (good_folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="lacks"):
        load_model_folder(good_folder)


def test_tokenizer_vocab_must_match_embedding(
    good_folder: Path, tmp_path: Path, tiny_model: MiniMindLM
) -> None:
    from kvstudio.files.checkpoints import train_fallback_tokenizer

    train_fallback_tokenizer(vocab_size=300).save(good_folder)
    with pytest.raises(ValueError, match="embedding has"):
        load_model_folder(good_folder)


def test_truncated_pth(tmp_path: Path, tiny_model: MiniMindLM) -> None:
    pth = tmp_path / "cut.pth"
    torch.save(tiny_model.state_dict(), pth)
    pth.write_bytes(pth.read_bytes()[:5000])
    with pytest.raises(ValueError, match="truncated"):
        read_pth_state_dict(pth)


class Payload:
    """Stands for a pickle that would run code when loaded."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("this would have run",))


def test_pickle_with_code_is_refused(tmp_path: Path) -> None:
    pth = tmp_path / "evil.pth"
    torch.save({"model.embed_tokens.weight": torch.zeros(2, 2), "x": Payload()}, pth)
    with pytest.raises(ValueError, match="holds code") as info:
        read_pth_state_dict(pth)
    assert "weights_only" not in str(info.value)  # torch's advice to run the code is not passed on


def test_file_that_is_no_checkpoint_is_called_damaged_not_code(tmp_path: Path) -> None:
    pth = tmp_path / "notes.pth"
    pth.write_text("garbage, not a pickle", encoding="utf-8")
    with pytest.raises(ValueError, match="damaged or not a PyTorch checkpoint") as info:
        read_pth_state_dict(pth)
    assert "holds code" not in str(info.value)


class SystemCall:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch pwned-by-pth",))


@pytest.mark.parametrize("protocol", [0, 2, 4])
def test_bare_pickle_with_code_says_it_holds_code(
    tmp_path: Path, protocol: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 14.6: a plain pickle (not torch's zip) naming os.system is called code, not damage."""
    import pickle

    monkeypatch.chdir(tmp_path)
    pth = tmp_path / "evil.pth"
    pth.write_bytes(pickle.dumps({"w": SystemCall()}, protocol=protocol))
    with pytest.raises(ValueError, match="holds code") as info:
        read_pth_state_dict(pth)
    assert "system" in str(info.value) and "weights_only" not in str(info.value)
    assert not (tmp_path / "pwned-by-pth").exists()


def test_empty_and_random_pth_are_damaged(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pth"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        read_pth_state_dict(empty)
    noise = tmp_path / "noise.pth"
    noise.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match="damaged") as info:
        read_pth_state_dict(noise)
    assert "weights_only" not in str(info.value)


def test_pth_that_is_not_a_state_dict(tmp_path: Path) -> None:
    pth = tmp_path / "list.pth"
    torch.save([torch.zeros(2)], pth)
    with pytest.raises(ValueError, match="state dict"):
        read_pth_state_dict(pth)
    torch.save({"weight": torch.zeros(2)}, pth)
    with pytest.raises(ValueError, match="not a MiniMind state dict"):
        load_minimind_pth(pth, tmp_path)


def test_pth_tokenizer_mismatch(tmp_path: Path, tiny_model: MiniMindLM) -> None:
    from kvstudio.files.checkpoints import train_fallback_tokenizer

    pth = tmp_path / "m.pth"
    torch.save(tiny_model.state_dict(), pth)
    train_fallback_tokenizer(vocab_size=300).save(tmp_path / "tok")
    tiny_model.config.save(tmp_path / "config.json")
    with pytest.raises(ValueError, match="must match"):
        load_minimind_pth(pth, tmp_path / "tok", config_path=tmp_path / "config.json")


def test_random_weights_are_labelled() -> None:
    loaded = random_model()
    assert loaded.is_random and loaded.name.startswith(RANDOM_LABEL)
    assert "RANDOM WEIGHTS" in loaded.description
    assert loaded.config.num_hidden_layers == 4 and loaded.config.num_key_value_heads == 2
    assert loaded.tokenizer.vocab_size == loaded.config.vocab_size
    assert not default_model().is_random  # the embedded model, never random weights


def test_config_json_writes_numbers_and_reads_both_forms(tmp_path: Path) -> None:
    """MiniMind's MiniMindConfig fails on null head_dim / intermediate_size: write numbers."""
    path = tmp_path / "config.json"
    ModelConfig().save(path)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert (written["head_dim"], written["intermediate_size"]) == (32, 704)
    nulls = dict(written, head_dim=None, intermediate_size=None)
    path.write_text(json.dumps(nulls), encoding="utf-8")
    old_form = ModelConfig.load(path)
    assert (old_form.resolved_head_dim, old_form.resolved_intermediate_size) == (32, 704)
    del nulls["head_dim"], nulls["intermediate_size"]
    path.write_text(json.dumps(nulls), encoding="utf-8")
    assert ModelConfig.load(path).concrete() == old_form.concrete() == ModelConfig.load(
        tmp_path / "config.json").concrete()


@pytest.mark.parametrize("name", ["ko-chat", "ko-base"])
def test_shipped_configs_hold_concrete_numbers(name: str) -> None:
    path = MODELS_DIR / name / "config.json"
    if not path.is_file():
        pytest.skip(f"{name} is not shipped")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data["head_dim"], int) and isinstance(data["intermediate_size"], int)
