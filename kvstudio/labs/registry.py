"""Every lab of the course and its parameters, declared once (`kvstudio.labs.params`).

Owns `LABS` (one `LabSpec` per lab, in the window's order) and `spec` (a lab by
its key). Defaults come from the course preset (`kvstudio.labs.course.COURSE`);
bounds are the ones every front enforces (`kvstudio.labs.bounds` where the
command line shares them). The window's lab panels build their boxes from these
specs and label them with each parameter's `label` (`label_ko` in a Korean window:
the window's labels are written here, not in the panels' translations), the
notebook's lab functions check their arguments with them, and
``tests/ui/test_lab_registry.py`` iterates `LABS` to hold the window's boxes, the
notebook's signatures and the command line's options to them. A new parameter is
one line here. It imports nothing that imports torch: the window builds its lab
boxes before torch loads.
"""

from __future__ import annotations

from kvstudio.engine.limits import MAX_DRAFT_TOKENS
from kvstudio.engine.records import DEFAULT_REPEATS, DTYPES, MAX_TEMPERATURE, check_temperature
from kvstudio.labs.bounds import MAX_BLOCK_SIZE
from kvstudio.labs.course import CACHE_PRESETS, COURSE
from kvstudio.labs.params import LabSpec, Param

MAX_SEED = 2**31 - 1  # the window's box holds a 32-bit seed; every front takes the same
MAX_LAB_PROMPT = 4096  # P of a cache lab (the model's positions are checked when it runs)
MAX_LAB_NEW = 2048  # N of a cache lab (recompute's cost grows as N²: the cost rule asks)
MAX_PROJECTED_CONTEXT = 1 << 30  # tokens per row a projection may ask about (arithmetic only)
MAX_PROJECTED_BATCH = 1 << 20  # rows a projection may ask about


def _prompt(name: str = "prompt", option: str | None = "--prompt", label: str = "Prompt",
            label_ko: str = "프롬프트") -> Param:
    return Param(name, "text", COURSE.question, help="the question, in the chat template",
                 help_ko="질문 (채팅 템플릿으로 감쌈)", option=option, label=label,
                 label_ko=label_ko)


def _seed(option: str | None = "--seed", label: str = "Seed") -> Param:
    return Param("seed", "int", COURSE.seed, 0, MAX_SEED, help="the sampling seed",
                 help_ko="샘플링 시드", option=option, label=label, label_ko="시드")


def _repeats(high: int = 50, default: int = DEFAULT_REPEATS, option: str | None = None,
             label: str = "Rounds (median of)", label_ko: str = "반복 횟수 (중앙값)") -> Param:
    return Param("repeats", "int", default, 1, high, unit="rounds",
                 help="interleaved rounds; times are medians (1: a single measurement)",
                 help_ko="번갈아 잰 횟수; 시간은 중앙값 (1: 한 번 측정)", option=option,
                 label=label, label_ko=label_ko)


def _tokens(name: str, default: int, high: int, option: str | None = None,
            help: str = "new tokens", help_ko: str = "새 토큰 수", label: str = "New tokens N",
            label_ko: str = "새 토큰 수 N") -> Param:
    return Param(name, "int", default, 1, high, unit="tokens", help=help, help_ko=help_ko,
                 option=option, label=label, label_ko=label_ko)


def _p_and_n(options: bool = False) -> tuple[Param, Param]:
    """A cache lab's P and N (the course's), with ``--prompt-tokens`` and ``--new-tokens``."""
    return (_tokens("prompt_tokens", COURSE.prompt_tokens, MAX_LAB_PROMPT,
                    "--prompt-tokens" if options else None, help="P, prompt tokens",
                    help_ko="P, 프롬프트 토큰 수", label="Prompt tokens P",
                    label_ko="프롬프트 토큰 수 P"),
            _tokens("new_tokens", COURSE.new_tokens, MAX_LAB_NEW,
                    "--new-tokens" if options else None, help="N, new tokens",
                    help_ko="N, 새 토큰 수"))


COMPARE = LabSpec("compare", "Cache vs recompute", title_ko="캐시 vs 재계산",
    course_role="cache", command="compare", times_model=True,
    runner="kvstudio.labs.cache.compare:run",
    options=("prompt_ids", "cache", "stop_at_eos", "mode"),
    params=(
    Param("preset", "choice", "course", choices=tuple(CACHE_PRESETS), option="--preset",
          help="P and N: the course's (183, 64) or the seed notebook's (16, 64)",
          help_ko="P와 N: 강의 (183, 64) 또는 시드 노트북 (16, 64)", label="Preset",
          label_ko="설정"),
    *_p_and_n(options=True),
    Param("warmup", "int", 4, 0, 64, unit="steps", help="warm-up steps before timing",
          help_ko="측정 전 예열 단계", option="--warmup", label="Warm-up tokens",
          label_ko="예열 토큰 수"),
    _repeats(option="--repeats"),
    Param("dtype", "choice", "float32", choices=DTYPES, option="--dtype",
          help="the arithmetic: fp32, fp16 or bf16", help_ko="연산 정밀도",
          label="Number format", label_ko="수 형식"),
))

SAMPLE = LabSpec("sample", "Temperature", title_ko="온도", course_role="sampling", command="sample",
    runner="kvstudio.labs.sampling.temperature:run", options=("raw",), params=(
    _prompt(),
    Param("temperatures", "floats", COURSE.temperatures, 0.0, 5.0, option="--temperatures",
          help="temperatures to sample at", help_ko="샘플링할 온도들", step=0.05,
          rule=check_temperature, label="Temperatures", label_ko="온도 목록"),
    Param("samples", "int", COURSE.samples, 1, 512, unit="samples", option="--samples",
          help="samples per temperature", help_ko="온도마다 샘플 수",
          label="Samples per temperature", label_ko="온도당 샘플 수"),
    _tokens("new_tokens", COURSE.answer_tokens, 256, option="--new-tokens",
            help="an answer's token budget", help_ko="답의 토큰 예산",
            label="New tokens per answer", label_ko="답당 새 토큰 수"),
    Param("top_k", "int", COURSE.top_k, 0, 100_000, option="--top-k",
          help="keep the k most likely (0: off)", help_ko="가장 그럴듯한 k개 (0: 끔)",
          label="Top-k (0 = off)", label_ko="Top-k (0 = 끔)"),
    Param("top_p", "float", COURSE.top_p, 0.01, 1.0, option="--top-p", step=0.05,
          help="keep the smallest set holding p", help_ko="누적 확률 p까지", label="Top-p",
          label_ko="Top-p"),
    Param("penalty", "float", COURSE.repetition_penalty, 0.5, 3.0, step=0.05,
          option="--repetition-penalty", help="repetition penalty", help_ko="반복 페널티",
          label="Repetition penalty", label_ko="반복 페널티"),
    _seed(),
    Param("both_modes", "bool", True, box="both_modes", option="--both-modes",
          help="also sample in recompute mode: the same seed gives the same answers",
          help_ko="재계산 모드로도 샘플링: 같은 시드, 같은 답",
          label="Check recompute gives the same", label_ko="재계산 모드도 같은지 확인"),
))

CUTOFF = LabSpec("cutoff", "Top-p / top-k", title_ko="Top-p / top-k", course_role="sampling",
    runner="kvstudio.labs.sampling.cutoff:run", params=(
    _prompt(option=None),
    Param("temperature", "float", COURSE.temperature, 0.0, 5.0, step=0.05,
          help="temperature (0: greedy)", help_ko="온도 (0: 그리디)", rule=check_temperature,
          label="Temperature", label_ko="온도"),
    Param("top_k", "int", COURSE.top_k, 0, 100_000, help="keep the k most likely (0: off)",
          help_ko="가장 그럴듯한 k개 (0: 끔)", label="Top-k (0 = off)",
          label_ko="Top-k (0 = 끔)"),
    Param("top_p", "float", COURSE.top_p, 0.01, 1.0, step=0.05,
          help="keep the smallest set holding p", help_ko="누적 확률 p까지",
          label="Top-p (1 = off)", label_ko="Top-p (1 = 끔)"),
    _tokens("new_tokens", COURSE.answer_tokens, 512, help="an answer's token budget",
            help_ko="답의 토큰 예산", label="New tokens", label_ko="새 토큰 수"),
    _seed(option=None),
))

CACHE_KINDS = LabSpec("cache_kinds", "Cache kinds", title_ko="캐시 종류",
    course_role="cache", runner="kvstudio.labs.cache.kinds:run", params=(
    *_p_and_n(),
    Param("window", "int", COURSE.window, 1, 8192, unit="tokens", box="window_size",
          help="the sliding window W", help_ko="슬라이딩 윈도 W", label="Sliding window W",
          label_ko="슬라이딩 윈도 W"),
))

SWEEP = LabSpec("sweep", "Length sweep", title_ko="길이 스윕",
    course_role="cache", command="sweep", times_model=True,
    runner="kvstudio.labs.cache.sweep:run", options=("cache",), params=(
    Param("vary", "choice", COURSE.sweep_vary, choices=("prompt", "new"), option="--vary",
          help="what grows: N (new) or P (prompt)", help_ko="늘리는 것: N 또는 P",
          label="Vary", label_ko="바꿀 길이"),
    Param("values", "ints", COURSE.sweep_lengths, 1, 4096, unit="tokens", option="--values",
          help="the lengths", help_ko="길이들", label="Lengths", label_ko="길이 목록"),
    Param("fixed", "int", COURSE.sweep_fixed, 1, 4096, unit="tokens", option="--fixed",
          help="the other length, held fixed", help_ko="고정한 다른 길이",
          label="The other length", label_ko="다른 쪽 길이"),
    _repeats(option="--repeats"),
))

PAGED = LabSpec("paged", "Paged cache", title_ko="페이지 캐시", course_role="paged",
    runner="kvstudio.labs.cache.paged:run", options=("greedy_prompt_ids", "greedy_tokens"),
    params=(
    Param("samples", "int", COURSE.samples, 1, 64, unit="samples",
          help="rows of the sampling run", help_ko="샘플링 실행의 행 수", label="Samples",
          label_ko="샘플 수"),
    _tokens("new_tokens", 48, 512, help="their token budget", help_ko="토큰 예산"),
    Param("block_size", "int", 16, 1, MAX_BLOCK_SIZE, unit="tokens",
          help="tokens a block holds", help_ko="블록 하나의 토큰 수", label="Block size b",
          label_ko="블록 크기 b"),
))

QUANTIZED = LabSpec("quantized", "Quantized cache", title_ko="양자화 캐시", course_role="cache",
    runner="kvstudio.labs.cache.quantized:run", options=("prompt_ids",), params=_p_and_n())

PROJECTOR = LabSpec("projector", "Scale projector", title_ko="규모 예측기", needs_model=False,
    command="project", runner="kvstudio.labs.projector:run", params=(
    Param("source", "text", "exaone-4.0-1.2b",  # the window's opening choice
          help="what to project: a preset (kvstudio.labs.scale.PRESETS), a config.json's "
               "path, or 'loaded': the model the lab runs on, checked by a real run",
          help_ko="투영할 모델: 프리셋, config.json 경로, 또는 'loaded' (실행하는 모델; "
                  "실제 실행으로 확인)", label="Model", label_ko="모델"),
    Param("context", "int", 32768, 16, MAX_PROJECTED_CONTEXT, unit="tokens", step=1024,
          option="--context", help="tokens per row", help_ko="행마다 토큰 수",
          label="Context length", label_ko="문맥 길이"),
    Param("batch", "int", 8, 1, MAX_PROJECTED_BATCH, unit="rows", option="--batch",
          help="rows in the batch", help_ko="배치의 행 수", label="Batch", label_ko="배치"),
    Param("bits", "choice", 0, choices=(0, 16, 8, 4, 32), option="--bits",
          help="bits per cached number (0: the config's own dtype; 8 and 4 count a float16 "
               "scale per token and K/V head)",
          help_ko="캐시 숫자당 비트 (0: 설정의 dtype; 8과 4는 토큰·K/V 헤드마다 "
                  "float16 스케일 포함)", label="Bits per cached number",
          label_ko="캐시 숫자당 비트"),
))

SERVING = LabSpec("serving", "Serving", title_ko="서빙",
    course_role="paged", command="serving", times_model=True,
    runner="kvstudio.labs.serving.lab:run",
    extras=("requests",),
    options=("policies", "plain", "confirmed", "confirm_hint"),
    params=(
    Param("system", "text", "", option="--system",
          help="a system prompt every request shares ('': the example's; none with your own file)",
          help_ko="모든 요청이 공유하는 시스템 프롬프트", label="System prompt",
          label_ko="시스템 프롬프트"),
    Param("policy", "choice", "continuous", choices=("continuous", "static"), option="--policy",
          help="continuous or static batching", help_ko="연속 또는 정적 배칭",
          label="Scheduler", label_ko="스케줄러"),
    # (lower case: the window shows these labels beside their boxes, on the scheduler's row)
    Param("chunk", "int", 0, 0, 4096, unit="tokens", option="--chunk",
          help="chunked prefill's budget (0: off)",
          help_ko="청크 프리필 예산 (0: 끔)", label="chunk", label_ko="청크"),
    Param("block_size", "int", 16, 1, MAX_BLOCK_SIZE, unit="tokens", option="--block-size",
          help="tokens a block holds", help_ko="블록 하나의 토큰 수", label="block b",
          label_ko="블록 b"),
    Param("prefix", "choice", "none", choices=("none", "blocks", "radix"),
          option="--prefix-cache", help="prefix cache: none, blocks (vLLM) or radix (SGLang)",
          help_ko="프리픽스 캐시", label="prefix cache", label_ko="프리픽스 캐시"),
    Param("max_batch", "int", 8, 1, 64, unit="requests", option="--max-batch",
          help="requests running at once", help_ko="동시에 실행하는 요청 수",
          label="max batch", label_ko="최대 배치"),
    Param("block_budget", "int", 0, 0, MAX_SEED, unit="blocks", option="--blocks",
          help="the pool's block budget, the memory budget (0: no limit)",
          help_ko="블록 예산, 곧 메모리 예산 (0: 제한 없음)", label="Block budget",
          label_ko="블록 예산"),
    _tokens("answer_tokens", 24, 512, option="--max-new-tokens",
            help="a request's answer budget (a line's '+N' overrides it)",
            help_ko="요청 하나의 답 예산", label="answer tokens ≤", label_ko="답 토큰 ≤"),
    Param("rounds", "int", 3, 1, 50, unit="rounds", option="--rounds",
          help="the requests' interleaved rounds; times are medians (1: a single measurement)",
          help_ko="요청 실행을 번갈아 잰 횟수; 시간은 중앙값 (1: 한 번 측정)",
          label="rounds (median of)", label_ko="반복 (중앙값)"),
    Param("temperature", "float", 0.0, 0.0, MAX_TEMPERATURE, option="--temperature",
          step=0.05, rule=check_temperature,
          help="0: greedy; above 0 the course's top-k/top-p, each request its own seed",
          help_ko="0: 그리디; 0보다 크면 요청마다 자기 시드로 샘플링",
          label="temperature", label_ko="온도"),
    _seed(label="seed"),
    Param("batch_sizes", "ints", (1, 2, 4, 8, 16, 32), 1, 1024, unit="rows", allow_empty=True,
          option="--batch-sizes",
          help="the decode sweep's batch sizes",
          help_ko="디코드 측정의 배치 크기들", label="Batch sweep (sizes)",
          label_ko="배치 스윕 (크기)"),
    _repeats(option="--sweep-rounds", label="rounds (median of)", label_ko="반복 (중앙값)"),
    Param("context", "int", 64, 1, MAX_LAB_PROMPT, unit="tokens", option="--sweep-context",
          help="the sweep's prompt tokens per row before the timed step",
          help_ko="측정 전 행마다 프롬프트 토큰 수", label="tokens per row",
          label_ko="행마다 토큰"),
))

BEAM = LabSpec("beam", "Beam search", title_ko="빔 서치", course_role="sampling", command="beam",
    runner="kvstudio.labs.beam:run", options=("raw", "num_return"), params=(
    _prompt(label="Question", label_ko="질문"),
    Param("beams", "int", 4, 2, 16, unit="beams", option="--beams", help="K beams",
          help_ko="빔 K개", label="Beams K", label_ko="빔 수 K"),
    Param("length_penalty", "float", 1.0, -5.0, 5.0, option="--length-penalty", step=0.5,
          help="score ÷ length^penalty", help_ko="길이 페널티", label="length penalty",
          label_ko="길이 벌점"),
    Param("early_stopping", "choice", False, choices=(False, True, "never"),
          option="--early-stopping", help="transformers' early_stopping",
          help_ko="transformers의 early_stopping", label="early stopping",
          label_ko="조기 종료"),
    _tokens("new_tokens", 16, 128, option="--new-tokens"),
    Param("block_size", "int", 16, 1, MAX_BLOCK_SIZE, unit="tokens", option="--block-size",
          help="tokens a block holds (the paged comparison)", help_ko="블록 하나의 토큰 수",
          label="block size b", label_ko="블록 크기 b"),
    Param("transformers", "bool", True, box="check_transformers", option="--check",
          help="check against transformers' generate(num_beams=…)",
          help_ko="transformers의 generate와 비교", label="compare with transformers",
          label_ko="transformers와 비교"),
))

SPECULATIVE = LabSpec("speculative", "Speculative decoding", title_ko="추측 디코딩",
    course_role="sampling", command="speculative",
    runner="kvstudio.labs.speculative:run",
    options=("raw", "sampling", "kinds", "draft", "stop_at_eos"),
    params=(
    _prompt("question", label="Question", label_ko="질문"),
    Param("ks", "ints", (1, 2, 4, 8), 1, MAX_DRAFT_TOKENS, unit="drafts", option="--k",
          help="draft lengths k to try", help_ko="시도할 초안 길이 k",
          label="k values (drafts per round)", label_ko="k 값 (라운드당 초안 수)"),
    _tokens("new_tokens", 64, 512, option="--new-tokens"),
    Param("temperature", "float", 0.0, 0.0, 2.0, option="--temperature", step=0.05,
          help="0: greedy (the lesson's equality holds)", help_ko="0: 그리디",
          rule=check_temperature, label="Temperature (0 = greedy)", label_ko="온도 (0 = 탐욕)"),
    _repeats(high=20, default=3, option="--repeats", label="Timing repeats (median of)",
             label_ko="시간 측정 반복 (중앙값)"),
))

CHAT = LabSpec("chat", "Chat", title_ko="채팅", command="chat", own_tab=True,
    runner="kvstudio.labs.chat.lab:run",
    extras=("turn", "session"), options=("script", "cache_kind", "system", "confirm_cost"),
    params=(
    Param("reuse", "bool", True, box="reuse_box", help="run the turns keeping the cache",
          help_ko="캐시를 유지하며 실행", label="Reuse", label_ko="재사용"),
    Param("refeed", "bool", True, box="refeed_box", help="run the turns re-feeding the history",
          help_ko="대화를 다시 넣으며 실행", label="Compare", label_ko="비교"),
    _tokens("answer_tokens", 48, 512, option="--max-new-tokens", help="an answer's budget",
            help_ko="답의 토큰 예산", label="Answer tokens at most", label_ko="답변 최대 토큰"),
    Param("context_limit", "int", 1024, 16, 32768, unit="tokens", step=64,
          option="--context-limit",
          help="the conversation's context limit", help_ko="대화의 문맥 한도",
          label="Context limit (tokens)", label_ko="컨텍스트 한도 (토큰)"),
    Param("rounds", "int", DEFAULT_REPEATS, 1, 20, unit="rounds", box="ttft_rounds",
          option="--rounds",
          help="rounds of each turn's TTFT; a median (1: a single measurement)",
          help_ko="TTFT 반복 횟수", label="TTFT rounds (median of)",
          label_ko="TTFT 반복 횟수 (중앙값)"),
))

# The engine twin (issue 34): KV Studio and llama.cpp side by side on the loaded model, written
# as a temporary GGUF (needs the llama extra: its run says what to install when it is missing).
TWIN = LabSpec("twin", "Engine twin", title_ko="엔진 쌍둥이", command="twin", times_model=True,
    runner="kvstudio.labs.twin:run", params=(
    *_p_and_n(options=True),
    Param("temperature", "float", 0.0, 0.0, 5.0, step=0.05, option="--temperature",
          help="0: greedy; above: sampled by our sampler in both engines (the course's "
               "top-p and penalty)", help_ko="0: 그리디; 그 위: 두 엔진 모두 우리 샘플러로 "
               "샘플링 (강의의 top-p와 페널티)", rule=check_temperature,
          label="Temperature (0: greedy)", label_ko="온도 (0: 그리디)"),
    _seed(),
    _repeats(high=20, default=5, option="--repeats", label="Timing rounds",
             label_ko="시간 측정 횟수"),
))

LABS: tuple[LabSpec, ...] = (COMPARE, SAMPLE, CUTOFF, CACHE_KINDS, SWEEP, PAGED, QUANTIZED,
                             PROJECTOR, SERVING, SPECULATIVE, BEAM, CHAT, TWIN)


def spec(key: str) -> LabSpec:
    """The lab `key` (a notebook function's name: ``compare``, ``sample`` …)."""
    for lab in LABS:
        if lab.key == key:
            return lab
    raise KeyError(f"no lab {key!r}; the labs are {', '.join(lab.key for lab in LABS)}")
