"""The served-engine client against the real llama.cpp server: ko-chat as GGUF
(`kvstudio convert --to gguf`), served by ``llama-server`` on 127.0.0.1 with ``--metrics
--slots`` and one slot; the serving lab's shared-prefix requests go through
`labs.serving.served` one after another, and each must stream its tokens (TTFT, ITL) while
the server's ``llamacpp:prompt_tokens_cached_total`` grows once the second request finds
the first's system prompt in the slot, beside KV Studio's radix prefix hits for the same
requests.

Needs the ``llama-server`` binary, built from the source llama-cpp-python's sdist vendors
(``scripts/build_engines.sh``: ``~/.cache/kvstudio/llama-server-build/bin/llama-server``,
under ``$KVSTUDIO_ENGINE_CACHE`` if set, or ``$KVSTUDIO_LLAMA_SERVER``) and the gguf
package; skipped without either. Marked ``engines`` (``pytest -m engines tests/engines``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.serving.records import SchedulerConfig
from kvstudio.engine.serving.request_file import parse_request_lines
from kvstudio.files.checkpoints import load_any
from kvstudio.files.resources import MODELS_DIR
from kvstudio.labs.serving import served
from kvstudio.labs.serving.lab import EXAMPLE_SYSTEM, load_requests, serving
from kvstudio.labs.serving.records import ServingResult

pytestmark = [pytest.mark.engines, pytest.mark.slow]

ENGINE_CACHE = Path(os.environ.get("KVSTUDIO_ENGINE_CACHE", Path.home() / ".cache/kvstudio"))
SERVER = Path(os.environ.get(  # where scripts/build_engines.sh builds it
    "KVSTUDIO_LLAMA_SERVER", ENGINE_CACHE / "llama-server-build/bin/llama-server"))
REQUESTS = "인공지능이란 무엇인가요?\n한국의 수도는 어디인가요?\n김치찌개는 어떻게 끓여요?\n"
NEW_TOKENS = 12
START_S = 120.0  # loading an 18 MB model takes a second; a loaded machine, much more


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def gguf_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SERVER.is_file():
        pytest.skip(f"no llama-server at {SERVER}: build it as docs/serving.md says, or set "
                    "KVSTUDIO_LLAMA_SERVER")
    pytest.importorskip("gguf", reason="gguf is not installed: pip install -e '.[llama]'")
    try:
        from kvstudio.files.gguf_export import export_gguf
    except ImportError as exc:  # the exporter is the llama extra's
        pytest.skip(f"no GGUF export: {exc}")
    loaded = load_any(MODELS_DIR / "ko-chat", dtype="float32")
    out = tmp_path_factory.mktemp("gguf") / "ko-chat.gguf"
    return Path(export_gguf(loaded.model, loaded.tokenizer, out, name="ko-chat"))


@pytest.fixture(scope="module")
def llama_server(gguf_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [str(SERVER), "-m", str(gguf_file), "--alias", "ko-chat", "--host", "127.0.0.1",
               "--port", str(port), "--metrics", "--slots", "-np", "1", "-c", "1024",
               "-t", "1", "-ctk", "f32", "-ctv", "f32", "--no-webui"]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama-server exited ({process.returncode}): "
                            f"{log.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass  # not listening yet, or 503 while it loads the model
            if time.monotonic() > deadline:
                pytest.fail(f"llama-server did not start within {START_S:g} s: "
                            f"{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_llama_server_streams_and_counts_its_cached_prompt(llama_server: str) -> None:
    lines = parse_request_lines(REQUESTS, "test requests")
    run = served.serve_requests(llama_server, lines, model="ko-chat", system=EXAMPLE_SYSTEM,
                                max_tokens=NEW_TOKENS, sequential=True, timeout_s=120)
    assert run.server == "llama.cpp" and run.metrics_note is None
    for r in run.requests:
        assert r.chunks >= 2 and r.completion_tokens is not None
        assert 0 < r.ttft_s <= r.e2e_s
        assert r.itl_p50_s is not None and r.itl_p50_s > 0
    readings = {m.name: m for m in run.metrics}
    cached = readings["llamacpp:prompt_tokens_cached_total"].delta
    assert cached is not None and cached > 0
    # The first request finds nothing; each after it finds the shared system prompt and
    # template in the one slot (the cached column, llama-server's timings.cache_n).
    per_request = [r.cached_tokens for r in run.requests]
    assert per_request[0] == 0 and all(c is not None and c > 0 for c in per_request[1:])
    assert cached == sum(c or 0 for c in per_request)
    generated = readings["llamacpp:tokens_predicted_total"].delta
    assert generated == sum(r.completion_tokens or 0 for r in run.requests)

    # KV Studio's engine on the same requests, one at a time, token-exact prefix cache:
    # the same prompts (the GGUF carries ko-chat's ChatML template) and the same hits.
    loaded = load_any(MODELS_DIR / "ko-chat", dtype="float32")
    specs = load_requests(Path("test requests"), loaded.tokenizer, loaded.backend,
                          system=EXAMPLE_SYSTEM, max_new_tokens=NEW_TOKENS, lines=lines)
    config = SchedulerConfig(policy="continuous", max_batch=1, prefix_cache="radix")
    result = None
    for item in serving(loaded.backend, loaded.tokenizer, specs, (config,),
                        system=EXAMPLE_SYSTEM, sampling=SamplingSettings.greedy_settings()):
        if isinstance(item, ServingResult):
            result = item
    assert result is not None
    ours = result.runs[0].outcomes
    assert [r.prompt_tokens for r in run.requests] == [o.prompt_tokens for o in ours]
    assert per_request[1:] == [o.prefix_hit for o in ours][1:]
    # greedy on both engines: the same answers (llama.cpp's tokens equal ours: test_llamacpp)
    assert [r.answer.strip() for r in run.requests] == [o.answer_text.strip() for o in ours]
