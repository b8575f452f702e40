"""`kvstudio serve-bench` and ``labs/serving/served`` against a tiny OpenAI-compatible server
started here on 127.0.0.1 (http.server, one thread per request): it streams tokens as
server-sent events and serves /metrics in llama.cpp's and vLLM's formats, so the parsing,
the timing fields, the metric deltas and every refusal are checked without a network.
(The real llama-server: tests/engines/test_llama_server.py.)"""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kvstudio.engine.serving.request_file import parse_request_lines
from kvstudio.labs.serving import metrics, openai_http, served
from tests.cli.running import one_error_line, run_cli

LINES = parse_request_lines(
    "첫 질문입니다.\n@1 두 번째 질문.\n@2 +3 세 번째.\n", "test requests")
ANSWER = ["안녕", "하세요", ".", " 반갑", "습니다"]


@dataclass
class Fake:
    """What the fake server does, and what it counted."""

    flavour: str = "llama.cpp"  # llama.cpp | vLLM | other | none (no /metrics)
    models: tuple[str, ...] = ("ko-chat",)
    mode: str = "ok"  # ok | html | slow | error | not-sse | empty
    wait_for_scrape: bool = False  # hold each stream until /metrics was read during it
    prompt_tokens: int = 0
    cached_tokens: int = 0
    generated: int = 0
    running: int = 0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    scraped: threading.Event = field(default_factory=threading.Event)

    def metrics(self) -> str:
        if self.flavour == "llama.cpp":
            return (
                "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
                "# TYPE llamacpp:prompt_tokens_total counter\n"
                f"llamacpp:prompt_tokens_total {self.prompt_tokens - self.cached_tokens}\n"
                "# TYPE llamacpp:prompt_tokens_cached_total counter\n"
                f"llamacpp:prompt_tokens_cached_total {self.cached_tokens}\n"
                "# TYPE llamacpp:tokens_predicted_total counter\n"
                f"llamacpp:tokens_predicted_total {self.generated}\n"
                "# TYPE llamacpp:n_busy_slots_per_decode gauge\n"
                "llamacpp:n_busy_slots_per_decode 1\n"
                "# TYPE llamacpp:requests_processing gauge\n"
                f"llamacpp:requests_processing {self.running}\n"
            )
        if self.flavour == "vLLM":
            label = '{engine="0",model_name="ko-chat"}'
            return (
                "# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of tokens.\n"
                "# TYPE vllm:prefix_cache_hits_total counter\n"
                f"vllm:prefix_cache_hits_total{label} {float(self.cached_tokens)}\n"
                f"vllm:prefix_cache_hits_created{label} 1.7e+09\n"
                "# TYPE vllm:prefix_cache_queries_total counter\n"
                f"vllm:prefix_cache_queries_total{label} {float(self.prompt_tokens)}\n"
                "# TYPE vllm:generation_tokens_total counter\n"
                f"vllm:generation_tokens_total{label} {float(self.generated)}\n"
                "# TYPE vllm:num_requests_running gauge\n"
                f"vllm:num_requests_running{label} {float(self.running)}\n"
                "# TYPE vllm:kv_cache_usage_perc gauge\n"
                f"vllm:kv_cache_usage_perc{label} {0.25 * self.running}\n"
                "# TYPE vllm:time_to_first_token_seconds histogram\n"
                f'vllm:time_to_first_token_seconds_bucket{{le="+Inf",model_name="ko-chat"}} '
                f"{float(self.generated)}\n"
            )
        return ("# TYPE my_requests_total counter\n"
                f"my_requests_total {len(self.bodies)}\nmy_static_total 7\nmy_gauge 3\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: Fake

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def send(self, code: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        fake = self.fake
        if fake.mode == "slow":
            time.sleep(1.0)
        if self.path == "/v1/models":
            if fake.mode == "html":
                self.send(200, b"<html>hello</html>", "text/html")
                return
            data = {"object": "list", "data": [{"id": m, "object": "model"}
                                               for m in fake.models]}
            self.send(200, json.dumps(data).encode())
        elif self.path == "/metrics" and fake.flavour != "none":
            with fake.lock:
                text = fake.metrics()
                if fake.running:
                    fake.scraped.set()
            self.send(200, text.encode(), "text/plain; version=0.0.4")
        else:
            self.send(404, b'{"error": {"message": "Not Found"}}')

    def do_POST(self) -> None:
        fake = self.fake
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if fake.mode == "error":
            self.send(400, json.dumps({"error": {"message": "max_tokens is too large",
                                                 "type": "invalid_request_error"}}).encode())
            return
        chat = self.path == "/v1/chat/completions"
        with fake.lock:
            fake.bodies.append(body)
            # A shared prefix: each request after the first finds 4 of its 10 prompt tokens.
            cached = 4 if len(fake.bodies) > 1 else 0
            fake.prompt_tokens += 10
            fake.cached_tokens += cached
            fake.running += 1
            fake.scraped.clear()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(data: object) -> None:
            text = f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
            raw = text.encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()

        if fake.mode == "not-sse":
            raw = b"<html>oops</html>\n"
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n0\r\n\r\n")
            return
        tokens = [] if fake.mode == "empty" else ANSWER[: body["max_tokens"]]
        if chat:
            event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        for i, piece in enumerate(tokens):
            if i == 1 and fake.wait_for_scrape:
                fake.scraped.wait(5.0)
            time.sleep(0.005)
            choice = ({"index": 0, "delta": {"content": piece}} if chat else
                      {"index": 0, "text": piece})
            event({"choices": [{**choice, "finish_reason": None}]})
        last: dict[str, Any] = {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
        with fake.lock:
            fake.generated += len(tokens)
            fake.running -= 1
        if fake.flavour == "llama.cpp":
            last["timings"] = {"cache_n": cached, "prompt_n": 10 - cached,
                               "predicted_n": len(tokens)}
        else:
            last["usage"] = None
        event(last)
        if fake.flavour != "llama.cpp":
            event({"choices": [], "usage": {
                "prompt_tokens": 10, "completion_tokens": len(tokens),
                "prompt_tokens_details": {"cached_tokens": cached}}})
        event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def fake_server() -> Iterator[tuple[str, Fake]]:
    fake = Fake()
    handler = type("FakeHandler", (Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", fake
    finally:
        server.shutdown()
        server.server_close()


# ---- Prometheus text format ------------------------------------------------------------------
def test_prometheus_text_is_parsed_with_labels_escapes_and_special_values() -> None:
    text = (
        "# HELP a_total Things.\n# TYPE a_total counter\n"
        'a_total{model_name="m,1",path="C:\\\\x \\"q\\"\\n"} 3 1700000000000\n'
        'a_total{model_name="m2"} 4.5e1\n'
        "b NaN\nc +Inf\nd -Inf\n"
        'e{le="0.5",} 2\n'  # a trailing comma is allowed
        "not a metric line\n"
    )
    scrape = metrics.parse_prometheus(text)
    assert scrape.total("a_total") == 48.0
    first = scrape.samples[0]
    assert first.labels == (("model_name", "m,1"), ("path", 'C:\\x "q"\n'))
    assert math.isnan(scrape.total("b") or 0.0)
    assert scrape.total("c") == math.inf and scrape.total("d") == -math.inf
    assert scrape.total("e") == 2 and scrape.total("missing") is None
    assert scrape.type_of("a_total") == "counter"
    assert scrape.names() == ("a_total", "b", "c", "d", "e")


def test_text_that_is_not_prometheus_is_refused() -> None:
    with pytest.raises(ValueError, match="not in Prometheus' text format"):
        metrics.parse_prometheus("<html>\n<body>hello</body>\n</html>\n")
    assert metrics.parse_prometheus("# only comments\n").samples == ()


def test_the_server_is_known_by_its_metric_names() -> None:
    for prefix, kind in (("vllm:", "vLLM"), ("sglang:", "SGLang"), ("llamacpp:", "llama.cpp")):
        assert metrics.server_kind(metrics.parse_prometheus(f"{prefix}x_total 1\n")) == kind
    assert metrics.server_kind(metrics.parse_prometheus("process_cpu_seconds_total 1\n")) == (
        "unknown")


def test_older_vllm_names_are_read_too() -> None:
    before = metrics.parse_prometheus("vllm:gpu_prefix_cache_hits_total 2\n"
                                     "vllm:gpu_cache_usage_perc 0.1\n")
    after = metrics.parse_prometheus("vllm:gpu_prefix_cache_hits_total 10\n"
                                    "vllm:gpu_cache_usage_perc 0.0\n")
    during = metrics.parse_prometheus("vllm:gpu_cache_usage_perc 0.5\n")
    readings = {r.name: r for r in metrics.metric_readings(before, after, [during])}
    assert readings["vllm:gpu_prefix_cache_hits_total"].delta == 8
    usage = readings["vllm:gpu_cache_usage_perc"]
    assert (usage.before, usage.peak, usage.after) == (0.1, 0.5, 0.0)


# ---- the address -----------------------------------------------------------------------------
@pytest.mark.parametrize(("typed", "base"), [
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
    ("http://127.0.0.1:8000/", "http://127.0.0.1:8000"),
    ("  http://gpu-server:8000/v1 ", "http://gpu-server:8000"),
    ("https://example.org/vllm/v1/chat/completions", "https://example.org/vllm"),
    ("http://[::1]:8080/v1/", "http://[::1]:8080"),
])
def test_a_server_address_is_read_with_or_without_v1(typed: str, base: str) -> None:
    assert openai_http.check_base_url(typed) == base


@pytest.mark.parametrize(("typed", "message"), [
    ("", "No server address"),
    ("localhost:8000", "not an http:// or https:// address"),
    ("ftp://host/x", "not an http:// or https:// address"),
    ("http://", "names no host"),
    ("http://host:99999", "port that is not a number"),
    ("http://host:8000/v1?key=1", "carries a query"),
    ("http://user:secret@host:8000", "carries a query, a fragment or a password"),
    ("http://" + "a" * 3000, "characters long"),
])
def test_a_bad_address_is_one_message_with_an_example(typed: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        openai_http.check_base_url(typed)
    assert "http://127.0.0.1:8000" in str(info.value)


# ---- against the fake server -----------------------------------------------------------------
def test_a_llama_cpp_server_one_request_after_another(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    run = served.serve_requests(url, LINES, endpoint="chat", system="시스템", max_tokens=4,
                                sequential=True, poll_s=0.05)
    assert run.server == "llama.cpp" and run.model == "ko-chat" and run.metrics_note is None
    assert [r.index for r in run.requests] == [0, 1, 2]
    for r, budget in zip(run.requests, (4, 4, 3), strict=True):
        assert r.chunks == budget == r.completion_tokens
        assert r.answer == "".join(ANSWER[:budget])
        assert 0 < r.ttft_s <= r.e2e_s
        assert r.itl_p50_s is not None and r.itl_p95_s is not None
        assert 0 < r.itl_p50_s <= r.itl_p95_s
        assert r.prompt_tokens == 10 and r.finish_reason == "length"
    assert [r.cached_tokens for r in run.requests] == [0, 4, 4]
    # one after another: each sent after the one before it ended
    for a, b in zip(run.requests, run.requests[1:], strict=False):
        assert b.sent_s >= a.sent_s + a.e2e_s
    readings = {m.name: m for m in run.metrics}
    assert readings["llamacpp:prompt_tokens_cached_total"].delta == 8
    assert readings["llamacpp:prompt_tokens_total"].delta == 22
    assert readings["llamacpp:tokens_predicted_total"].delta == 11
    busy = readings["llamacpp:n_busy_slots_per_decode"]
    assert busy.kind == "gauge" and busy.before == busy.after == 1
    # what was sent: the chat messages, streamed, greedy, the budget of each line
    assert fake.bodies[0]["messages"] == [{"role": "system", "content": "시스템"},
                                          {"role": "user", "content": "첫 질문입니다."}]
    assert [b["max_tokens"] for b in fake.bodies] == [4, 4, 3]
    assert all(b["stream"] is True and b["temperature"] == 0.0 for b in fake.bodies)


def test_a_vllm_server_concurrently_with_the_gauges_peak(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    fake.flavour, fake.wait_for_scrape = "vLLM", True
    run = served.serve_requests(url + "/v1", LINES, model="ko-chat", endpoint="completions",
                                max_tokens=5, step_s=0.0, poll_s=0.02)
    assert run.server == "vLLM" and not run.sequential
    assert sorted(r.cached_tokens or 0 for r in run.requests) == [0, 4, 4]
    assert all(r.completion_tokens == r.chunks for r in run.requests)
    readings = {m.name: m for m in run.metrics}
    assert readings["vllm:prefix_cache_hits_total"].delta == 8
    assert readings["vllm:prefix_cache_queries_total"].delta == 30
    assert run.prefix_hit_rate == pytest.approx(8 / 30)
    assert readings["vllm:generation_tokens_total"].delta == 13
    running = readings["vllm:num_requests_running"]
    assert running.before == running.after == 0
    assert running.peak is not None and running.peak >= 1  # read while a stream was held
    assert readings["vllm:prefix_cache_hits_total"].figure == "prefix_hit_tokens"
    assert all("prompt" in b and "messages" not in b for b in fake.bodies)


def test_an_unknown_server_lists_the_counters_that_moved(fake_server: tuple[str, Fake]
                                                         ) -> None:
    url, fake = fake_server
    fake.flavour = "other"
    run = served.serve_requests(url, LINES[:2], sequential=True)
    assert run.server == "unknown"
    assert [(m.name, m.delta) for m in run.metrics] == [("my_requests_total", 2)]


def test_a_server_without_metrics_says_so(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    fake.flavour = "none"
    run = served.serve_requests(url, LINES[:1])
    assert run.metrics == () and run.metrics_note is not None
    assert "HTTP 404" in run.metrics_note and "--metrics" in run.metrics_note
    assert run.requests[0].cached_tokens == 0  # from usage.prompt_tokens_details


# ---- refusals ----------------------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_nothing_listening_is_one_message() -> None:
    with pytest.raises(ValueError, match=r"Nothing answers at 127\.0\.0\.1:\d+ \(connection "
                       "refused\\): is the server running"):
        served.serve_requests(f"http://127.0.0.1:{_closed_port()}", LINES)


def test_a_server_that_is_not_openai_is_named(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    fake.mode = "html"
    with pytest.raises(ValueError, match="not JSON: not a server of the OpenAI API"):
        served.serve_requests(url, LINES)


def test_a_stream_that_is_not_sse_is_named(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    fake.mode = "not-sse"
    with pytest.raises(ValueError, match=r"Request 1 .* did not answer with an OpenAI event "
                       "stream"):
        served.serve_requests(url, LINES, sequential=True)


def test_a_silent_server_times_out(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    fake.mode = "slow"
    with pytest.raises(ValueError, match=r"did not answer within 0\.2 s"):
        served.serve_requests(url, LINES, timeout_s=0.2)


def test_the_servers_own_error_message_is_quoted(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    fake.mode = "error"
    with pytest.raises(ValueError, match=r"Request 1 .* HTTP 400 \(Bad Request\): max_tokens "
                       "is too large"):
        served.serve_requests(url, LINES, sequential=True)


def test_an_answer_without_text_is_refused(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    fake.mode = "empty"
    with pytest.raises(ValueError, match="streamed no text for request 1"):
        served.serve_requests(url, LINES[:1])


def test_a_model_the_server_does_not_serve(fake_server: tuple[str, Fake]) -> None:
    url, fake = fake_server
    with pytest.raises(ValueError, match="does not serve 'llama'; it lists: ko-chat"):
        served.serve_requests(url, LINES, model="llama")
    fake.models = ("a", "b")
    with pytest.raises(ValueError, match=r"lists 2 models .*choose one with --model"):
        served.serve_requests(url, LINES)
    assert fake.bodies == []  # nothing was sent


# ---- the command -------------------------------------------------------------------------------
def test_serve_bench_prints_the_table_and_the_metrics(
    fake_server: tuple[str, Fake], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = fake_server
    requests = tmp_path / "r.txt"
    requests.write_text("첫 질문입니다.\n@1 두 번째 질문.\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "serve-bench", url, "--requests", str(requests),
                             "--sequential", "--max-new-tokens", "3")
    assert code == 0, err
    assert "Server: llama.cpp at " + url + " · model 'ko-chat'" in out
    assert "single measurements" in out
    assert "TTFT" in out and "ITL p50" in out and "end-to-end" in out
    assert "→ 안녕하세요." in out
    assert "llamacpp:prompt_tokens_cached_total" in out and "+4" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["serve-bench", "localhost:1"], "not an http:// or https:// address"),
    (["serve-bench", "http://127.0.0.1:{port}"], "connection refused"),
    (["serve-bench", "http://127.0.0.1:1", "--timeout", "0"], "must be at least 1"),
    (["serve-bench", "http://127.0.0.1:1", "--step-ms", "1e3"], "expected a whole number"),
    (["serve-bench", "http://127.0.0.1:1", "--requests", "/no/such/file"], "/no/such/file"),
])
def test_serve_bench_refusals_are_one_line(capsys: pytest.CaptureFixture[str],
                                           argv: list[str], message: str) -> None:
    argv = [a.replace("{port}", str(_closed_port())) for a in argv]
    assert message in one_error_line(capsys, argv)


@pytest.mark.slow
def test_compare_runs_kvstudio_beside_the_server(
    fake_server: tuple[str, Fake], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = fake_server
    requests = tmp_path / "r.txt"
    requests.write_text("안녕?\n@1 안녕하세요?\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "serve-bench", url, "--requests", str(requests),
                             "--system", "짧게 답하세요.", "--sequential",
                             "--max-new-tokens", "3", "--compare")
    assert code == 0, err
    assert "KV Studio: prompt" in out and "same answer" in out
    assert "KV Studio: prefix hits" in out
    assert "KV Studio's run: continuous" in out and "prefix radix" in out
