<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="ko_KR">
<context>
    <name>AnswerHistogramPlot</name>
    <message>
        <location filename="../../kvstudio/ui/plots/answer_histogram.py" line="43" />
        <source>Distinct answers over repeated samples</source>
        <translation>반복 샘플링의 서로 다른 답</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/answer_histogram.py" line="44" />
        <source>answer (most common first; hover to read)</source>
        <translation>답 (많은 순; 마우스를 올리면 내용 표시)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/answer_histogram.py" line="45" />
        <source>count</source>
        <translation>횟수</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/answer_histogram.py" line="46" />
        <source>T = {0:g}</source>
        <translation>T = {0:g}</translation>
    </message>
</context>
<context>
    <name>AnswerPanel</name>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="87" />
        <source>Cancelled</source>
        <translation>취소됨</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="94" />
        <source>(empty answer)</source>
        <translation>(빈 답)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="105" />
        <source>Sample ×N</source>
        <translation>N번 샘플링</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="107" />
        <source>Generate N answers to the prompt in one batch and count the distinct ones.</source>
        <translation>프롬프트에 대한 답 N개를 한 배치로 생성하고 서로 다른 답을 셉니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="108" />
        <source>N: samples per temperature.</source>
        <translation>N: 온도마다 뽑을 샘플 수.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="109" />
        <source>Temperatures</source>
        <translation>온도</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="110" />
        <source>current, or e.g. 0.3, 0.85, 1.5</source>
        <translation>현재 값, 또는 예: 0.3, 0.85, 1.5</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="112" />
        <source>Leave empty to use the current temperature, or list several separated by commas.</source>
        <translation>비워 두면 현재 온도를 쓰고, 여러 개는 쉼표로 구분해 적습니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/answer_panel.py" line="113" />
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
</context>
<context>
    <name>CacheBytesPlot</name>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="52" />
        <source>layer</source>
        <translation>레이어</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="53" />
        <source>bytes</source>
        <translation>바이트</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="55" />
        <source>K (used)</source>
        <translation>K (사용)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="56" />
        <source>V (used)</source>
        <translation>V (사용)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="57" />
        <source>allocated (static)</source>
        <translation>할당됨 (정적)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="58" />
        <source>KV cache per layer</source>
        <translation>레이어별 KV 캐시</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="60" />
        <source>KV cache: {0} measured · formula 2·L·T·H_kv·d·bytes = {1} (T = {2})</source>
        <translation>KV 캐시: 측정 {0} · 공식 2·L·T·H_kv·d·bytes = {1} (T = {2})</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="61" />
        <source>KV cache: recompute mode keeps no cache</source>
        <translation>KV 캐시: 재계산 모드는 캐시를 두지 않습니다</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/cache_bytes.py" line="62" />
        <source>window cap W = {0}</source>
        <translation>윈도 상한 W = {0}</translation>
    </message>
</context>
<context>
    <name>ControlsPanel</name>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="129" />
        <source>max</source>
        <translation>최대</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="130" />
        <source>{0:g}/s</source>
        <translation>초당 {0:g}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="133" />
        <source>❚❚ Pause</source>
        <translation>❚❚ 일시정지</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="133" />
        <source>▶ Play</source>
        <translation>▶ 재생</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="136" />
        <source>Mode</source>
        <translation>모드</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="137" />
        <source>Run</source>
        <translation>실행</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="138" />
        <source>Cached (KV cache)</source>
        <translation>캐시 (KV 캐시)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="140" />
        <source>Feed the prompt once, then only the newest token; keys and values of earlier tokens are kept in the KV cache.</source>
        <translation>프롬프트는 한 번만 넣고 그다음부터는 새 토큰 하나만 넣습니다. 앞 토큰들의 키와 값은 KV 캐시에 보관됩니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="142" />
        <source>Recompute (no cache)</source>
        <translation>재계산 (캐시 없음)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="144" />
        <source>Feed the whole sequence again at every step: no cache, the work grows with length.</source>
        <translation>매 단계 전체 시퀀스를 다시 넣습니다. 캐시가 없어 길이에 따라 계산량이 늘어납니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="145" />
        <source>Step ▸</source>
        <translation>한 토큰 ▸</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="146" />
        <source>Generate exactly one token (→ or Space).</source>
        <translation>토큰 하나만 생성합니다 (→ 또는 스페이스).</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="147" />
        <source>Reset</source>
        <translation>초기화</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="148" />
        <source>Forget the drawn runs and start again from the prompt.</source>
        <translation>그려진 실행을 지우고 프롬프트부터 다시 시작합니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="149" />
        <source>Run to end</source>
        <translation>끝까지 실행</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="150" />
        <source>Generate until the end-of-text token or the budget.</source>
        <translation>끝 토큰이 나오거나 최대 토큰 수에 이를 때까지 생성합니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="151" />
        <source>Speed</source>
        <translation>속도</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/controls_panel.py" line="152" />
        <source>Steps per second while playing.</source>
        <translation>재생 중 초당 단계 수.</translation>
    </message>
</context>
<context>
    <name>GenerationView</name>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="172" />
        <source>Prompt</source>
        <translation>프롬프트</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="173" />
        <source>Type a question or some text, then press Step.</source>
        <translation>질문이나 글을 입력한 뒤 '한 토큰'을 누르세요.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="174" />
        <source>Chat template</source>
        <translation>채팅 템플릿</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="176" />
        <source>Wrap the prompt in the chat model's template (&lt;|im_start|&gt;user … assistant). Only for chat models.</source>
        <translation>프롬프트를 채팅 모델의 템플릿(&lt;|im_start|&gt;user … assistant)으로 감쌉니다. 채팅 모델에서만 쓸 수 있습니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="178" />
        <source>Generated tokens appear here, one chip per token.</source>
        <translation>생성된 토큰이 토큰마다 칩 하나로 여기에 나타납니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="179" />
        <source>{0} run: {1} of {2} new tokens</source>
        <translation>{0} 실행: 새 토큰 {2}개 중 {1}개</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="180" />
        <source>Prompt token id {0}</source>
        <translation>프롬프트 토큰 id {0}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="182" />
        <source>Token id {0}
probability {1:.3f}
tokens fed this step: {2}
time: {3:.2f} ms
step {4}</source>
        <translation>토큰 id {0}
확률 {1:.3f}
이 단계에 넣은 토큰: {2}
시간: {3:.2f} ms
단계 {4}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/generation_view.py" line="184" />
        <source>Part of a character: its text appears with the next token.</source>
        <translation>글자의 일부입니다. 글자는 다음 토큰과 함께 나타납니다.</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="73" />
        <source>Live</source>
        <translation>실시간</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="74" />
        <source>Controls</source>
        <translation>조작</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="221" />
        <source>KV Studio</source>
        <translation>KV Studio</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="239" />
        <source>KV Studio — KV cache and sampling, token by token</source>
        <translation>KV Studio — 토큰 단위로 보는 KV 캐시와 샘플링</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="240" />
        <source>&amp;File</source>
        <translation>파일(&amp;F)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="241" />
        <source>Open model folder…</source>
        <translation>모델 폴더 열기…</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="242" />
        <source>Open MiniMind .pth…</source>
        <translation>MiniMind .pth 열기…</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="243" />
        <source>Quit</source>
        <translation>끝내기</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="244" />
        <source>&amp;Language</source>
        <translation>언어(&amp;L)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="245" />
        <source>System default</source>
        <translation>시스템 기본값</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/main_window.py" line="248" />
        <source>&amp;View</source>
        <translation>보기(&amp;V)</translation>
    </message>
</context>
<context>
    <name>ModelPanel</name>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="58" />
        <source>Open a model folder</source>
        <translation>모델 폴더 열기</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="63" />
        <source>Open a MiniMind .pth checkpoint</source>
        <translation>MiniMind .pth 체크포인트 열기</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="64" />
        <source>PyTorch state dict (*.pth *.pt)</source>
        <translation>PyTorch state dict (*.pth *.pt)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="68" />
        <source>Choose the folder with its tokenizer.json</source>
        <translation>tokenizer.json이 있는 폴더를 고르세요</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="77" />
        <source>Loading…</source>
        <translation>불러오는 중…</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="79" />
        <source>chat</source>
        <translation>채팅</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="79" />
        <source>base</source>
        <translation>기본</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="80" />
        <source>Loaded: {0} ({1})</source>
        <translation>불러옴: {0} ({1})</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="82" />
        <source>Random weights: the text is meaningless, the measurements are real.</source>
        <translation>무작위 가중치: 글은 의미가 없지만 측정값은 실제입니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="87" />
        <source>Model</source>
        <translation>모델</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="88" />
        <source>Embedded chat model</source>
        <translation>내장 채팅 모델</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="89" />
        <source>Embedded base model</source>
        <translation>내장 기본 모델</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="91" />
        <source>The models shipped with KV Studio (a seeded course model when none is installed).</source>
        <translation>KV Studio에 포함된 모델 (설치된 모델이 없으면 시드로 만든 강의용 모델).</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="92" />
        <source>Open model folder…</source>
        <translation>모델 폴더 열기…</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="94" />
        <source>A folder with config.json, model weights and tokenizer.json.</source>
        <translation>config.json, 모델 가중치, tokenizer.json이 든 폴더.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="95" />
        <source>Open MiniMind .pth…</source>
        <translation>MiniMind .pth 열기…</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/model_panel.py" line="97" />
        <source>A MiniMind checkpoint (.pth state dict), then the folder holding its tokenizer.</source>
        <translation>MiniMind 체크포인트(.pth state dict)를 고른 뒤 토크나이저가 있는 폴더를 고릅니다.</translation>
    </message>
</context>
<context>
    <name>Names</name>
    <message>
        <location filename="../../kvstudio/ui/names.py" line="15" />
        <source>Cached</source>
        <translation>캐시</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/names.py" line="16" />
        <source>Recompute</source>
        <translation>재계산</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/names.py" line="21" />
        <source>Dynamic</source>
        <translation>동적</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/names.py" line="22" />
        <source>Static</source>
        <translation>정적</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/names.py" line="23" />
        <source>Sliding window</source>
        <translation>슬라이딩 윈도</translation>
    </message>
</context>
<context>
    <name>RunController</name>
    <message>
        <location filename="../../kvstudio/ui/run_controller.py" line="70" />
        <source>Loading the model…</source>
        <translation>모델을 불러오는 중…</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/run_controller.py" line="124" />
        <source>Model ready: {0}</source>
        <translation>모델 준비됨: {0}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/run_controller.py" line="138" />
        <source>Run finished. Reset, or change a setting, to run again.</source>
        <translation>실행이 끝났습니다. 다시 하려면 초기화하거나 설정을 바꾸세요.</translation>
    </message>
</context>
<context>
    <name>RunStatusBar</name>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="58" />
        <source>Mode: {0}</source>
        <translation>모드: {0}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="59" />
        <source>Step {0}/{1}</source>
        <translation>단계 {0}/{1}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="60" />
        <source>Tokens fed: {0}</source>
        <translation>넣은 토큰: {0}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="61" />
        <source>Cache: {0}</source>
        <translation>캐시: {0}</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="62" />
        <source>TTFT: {0} ms</source>
        <translation>첫 토큰 시간: {0} ms</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="63" />
        <source>{0} ms/token</source>
        <translation>토큰당 {0} ms</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="64" />
        <source>{0} tokens/s</source>
        <translation>초당 {0} 토큰</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/status_bar.py" line="65" />
        <source>torch threads: {0} · {1}</source>
        <translation>torch 스레드: {0} · {1}</translation>
    </message>
</context>
<context>
    <name>SamplingPanel</name>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="149" />
        <source>Sampling</source>
        <translation>샘플링</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="150" />
        <source>KV cache</source>
        <translation>KV 캐시</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="152" />
        <source>Greedy</source>
        <translation>그리디</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="153" />
        <source>Temperature</source>
        <translation>온도</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="154" />
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="155" />
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="156" />
        <source>Repetition penalty</source>
        <translation>반복 페널티</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="157" />
        <source>Seed</source>
        <translation>시드</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="158" />
        <source>Max new tokens</source>
        <translation>최대 새 토큰 수</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="159" />
        <source>Cache kind</source>
        <translation>캐시 종류</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="160" />
        <source>Static length</source>
        <translation>정적 길이</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="161" />
        <source>Window W</source>
        <translation>윈도 W</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="168" />
        <source>Always take the most likely token (temperature 0). Same prompt, same answer.</source>
        <translation>항상 가장 확률 높은 토큰을 고릅니다 (온도 0). 같은 프롬프트면 같은 답이 나옵니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="170" />
        <source>Divides the logits before softmax: below 1 sharpens the distribution, above 1 flattens it and answers vary more. Course default 0.85.</source>
        <translation>소프트맥스 전에 로짓을 나눕니다. 1보다 작으면 분포가 뾰족해지고, 1보다 크면 평평해져 답이 더 다양해집니다. 강의 기본값 0.85.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="173" />
        <source>Keep only the k most likely tokens before sampling. 0 = off (course default).</source>
        <translation>샘플링 전에 확률 높은 토큰 k개만 남깁니다. 0 = 끔 (강의 기본값).</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="174" />
        <source>off</source>
        <translation>끔</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="176" />
        <source>Keep the smallest set of likely tokens whose probabilities add up to p (nucleus sampling). 1.0 = off; course default 0.85.</source>
        <translation>확률 합이 p에 이르는 가장 작은 토큰 집합만 남깁니다 (뉴클리어스 샘플링). 1.0 = 끔, 강의 기본값 0.85.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="179" />
        <source>Makes tokens already in the text less likely; 1.0 = off (course default).</source>
        <translation>이미 글에 나온 토큰이 덜 나오게 합니다. 1.0 = 끔 (강의 기본값).</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="181" />
        <source>Seeds this run's random generator: the same seed gives the same samples.</source>
        <translation>이 실행의 난수 생성기 시드입니다. 같은 시드면 같은 샘플이 나옵니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="182" />
        <source>The most tokens a run generates (N).</source>
        <translation>한 실행이 생성하는 최대 토큰 수 (N).</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="184" />
        <source>Dynamic grows by one token per step; static is allocated once for its length; a sliding window keeps only the last W tokens.</source>
        <translation>동적 캐시는 단계마다 한 토큰씩 늘고, 정적 캐시는 길이만큼 한 번에 할당되며, 슬라이딩 윈도는 마지막 W개 토큰만 보관합니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="187" />
        <source>Tokens a static cache preallocates; prompt + new tokens must fit.</source>
        <translation>정적 캐시가 미리 할당하는 토큰 수. 프롬프트 + 새 토큰이 들어가야 합니다.</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/sampling_panel.py" line="189" />
        <source>Tokens a sliding-window cache keeps; each query looks back at most W tokens.</source>
        <translation>슬라이딩 윈도 캐시가 보관하는 토큰 수. 각 쿼리는 최대 W개 토큰까지만 돌아봅니다.</translation>
    </message>
</context>
<context>
    <name>StepTimePlot</name>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="43" />
        <source>Time per step</source>
        <translation>단계별 시간</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="44" />
        <source>step (0 = prefill)</source>
        <translation>단계 (0 = 프리필)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="45" />
        <source>ms per step</source>
        <translation>단계당 ms</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="46" />
        <source>cumulative ms (dashed)</source>
        <translation>누적 ms (점선)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="50" />
        <source>{0}: ms per step</source>
        <translation>{0}: 단계당 ms</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="51" />
        <source>{0}: cumulative</source>
        <translation>{0}: 누적</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="52" />
        <source>prefill = time to first token</source>
        <translation>프리필 = 첫 토큰까지 시간</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/step_time.py" line="53" />
        <source>TTFT {0:.1f} ms</source>
        <translation>첫 토큰 {0:.1f} ms</translation>
    </message>
</context>
<context>
    <name>TokensFedPlot</name>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="41" />
        <source>Tokens fed to the model per step</source>
        <translation>단계별로 모델에 넣은 토큰</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="42" />
        <source>step (0 = prefill)</source>
        <translation>단계 (0 = 프리필)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="43" />
        <source>tokens fed (bars)</source>
        <translation>넣은 토큰 (막대)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="44" />
        <source>cumulative (lines)</source>
        <translation>누적 (선)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="48" />
        <source>{0}: per step</source>
        <translation>{0}: 단계별</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="49" />
        <source>{0}: cumulative</source>
        <translation>{0}: 누적</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="50" />
        <source>formula P+(N−1)</source>
        <translation>공식 P+(N−1)</translation>
    </message>
    <message>
        <location filename="../../kvstudio/ui/plots/tokens_fed.py" line="51" />
        <source>formula P·N+N(N−1)/2</source>
        <translation>공식 P·N+N(N−1)/2</translation>
    </message>
</context>
</TS>