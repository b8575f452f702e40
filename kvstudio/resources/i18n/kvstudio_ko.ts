<?xml version='1.0' encoding='utf-8'?>
<TS version="2.1" language="ko_KR">
<context>
    <name>AnswerHistogramPlot</name>
    <message>
        <source>Distinct answers over repeated samples</source>
        <translation>반복 샘플링의 서로 다른 답</translation>
    </message>
    <message>
        <source>count</source>
        <translation>횟수</translation>
    </message>
    <message>
        <source>T = {0:g}</source>
        <translation>T = {0:g}</translation>
    </message>
    <message>
        <source>Press Sample ×N to fill this chart.</source>
        <translation>N번 샘플링을 누르면 이 차트가 채워집니다.</translation>
    </message>
    <message>
        <source>T = {0:g}: {1} distinct of {2}</source>
        <translation>T = {0:g}: {2}개 중 서로 다른 답 {1}개</translation>
    </message>
    <message>
        <source>Distinct answers</source>
        <translation>서로 다른 답</translation>
    </message>
    <message>
        <source>top-k {0}</source>
        <translation>top-k {0}</translation>
    </message>
    <message>
        <source>penalty {0:g}</source>
        <translation>반복 페널티 {0:g}</translation>
    </message>
    <message>
        <source>seed {0}</source>
        <translation>시드 {0}</translation>
    </message>
    <message>
        <source>≤ {0:,} tokens</source>
        <translation>최대 {0:,} 토큰</translation>
    </message>
    <message>
        <source>Settings: {0}</source>
        <translation>설정: {0}</translation>
    </message>
    <message>
        <source>answer no. (1 = the most common over all temperatures)</source>
        <translation>답 번호 (1 = 모든 온도를 합쳐 가장 흔한 답)</translation>
    </message>
    <message>
        <source>answer no. (1 = most common)</source>
        <translation>답 번호 (1 = 가장 흔한 답)</translation>
    </message>
    <message>
        <source>others</source>
        <translation>기타</translation>
    </message>
    <message>
        <source>{0} each</source>
        <translation>각 {0}번</translation>
    </message>
    <message>
        <source>{0}–{1} each</source>
        <translation>각 {0}–{1}번</translation>
    </message>
    <message>
        <source>others: {0} answers, {1}</source>
        <translation>기타: 답 {0}개, {1}</translation>
    </message>
    <message>
        <source>top-k off</source>
        <translation>top-k 끔</translation>
    </message>
    <message>
        <source>top-p off</source>
        <translation>top-p 끔</translation>
    </message>
    <message>
        <source>top-p {0:g}</source>
        <translation>top-p {0:g}</translation>
    </message>
    <message>
        <source>chat template</source>
        <translation>채팅 템플릿 사용</translation>
    </message>
    <message>
        <source>no chat template</source>
        <translation>채팅 템플릿 없음</translation>
    </message>
    <message>
        <source>answer (text)</source>
        <translation>답 (텍스트)</translation>
    </message>
    <message>
        <source>T = {0:g}: count (samples)</source>
        <translation>T = {0:g}: 횟수 (샘플)</translation>
    </message>
    <message>
        <source>distinct answers</source>
        <translation>서로 다른 답</translation>
    </message>
    <message>
        <source>samples</source>
        <translation>샘플 수</translation>
    </message>
    <message>
        <source>Distinct answers per temperature</source>
        <translation>온도별 서로 다른 답</translation>
    </message>
    <message>
        <source>temperature</source>
        <translation>온도</translation>
    </message>
</context>
<context>
    <name>AnswerPanel</name>
    <message>
        <source>Cancelled</source>
        <translation>취소됨</translation>
    </message>
    <message>
        <source>Sample ×N</source>
        <translation>N번 샘플링</translation>
    </message>
    <message>
        <source>Generate N answers to the prompt in one batch and count the distinct ones.</source>
        <translation>프롬프트에 대한 답 N개를 한 배치로 생성하고 서로 다른 답을 셉니다.</translation>
    </message>
    <message>
        <source>N: samples per temperature.</source>
        <translation>N: 온도마다 뽑을 샘플 수.</translation>
    </message>
    <message>
        <source>T =</source>
        <translation>온도 T =</translation>
    </message>
    <message>
        <source>Temperatures: leave empty to use the current temperature, or list several separated by commas.</source>
        <translation>온도: 비워 두면 현재 온도를 쓰고, 여러 개는 쉼표로 구분해 적습니다.</translation>
    </message>
    <message>
        <source>current, or e.g. 0.3, 0.85, 1.5</source>
        <translation>현재 값, 또는 예: 0.3, 0.85, 1.5</translation>
    </message>
    <message>
        <source>(empty: eos at step 0)</source>
        <translation>(빈 답: 0번째 단계에서 eos)</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>토큰 수</translation>
    </message>
    <message>
        <source>Answer length: each sample generates at most this many tokens. Short answers repeat, long ones are almost always all different.</source>
        <translation>답 길이: 샘플마다 최대 이만큼의 토큰을 생성합니다. 짧은 답은 반복되고, 긴 답은 거의 항상 모두 다릅니다.</translation>
    </message>
</context>
<context>
    <name>BeamSearchPanel</name>
    <message>
        <source>Beam search keeps K answers (beams) at once, one KV cache row each. After every step the K best continuations are kept and the cache rows are reordered (index_select on the batch dimension): a beam that continues another row's answer gets a copy of that whole row. A paged cache copies only block tables and shares the blocks, copying a block only when a row appends to a shared, half-full one (copy on write). Scores as transformers' generate(num_beams=…).</source>
        <translation>빔 서치는 답(빔) K개를 한꺼번에 들고 가며, 빔마다 KV 캐시 한 행을 씁니다. 단계마다 가장 좋은 이어쓰기 K개만 남기고 캐시 행을 다시 배열합니다(배치 차원의 index_select): 다른 행의 답을 잇는 빔은 그 행 전체를 복사해 받습니다. 페이지 캐시는 블록 표만 복사하고 블록은 함께 쓰며, 공유된 반쯤 찬 블록에 토큰을 덧붙일 때만 그 블록을 복사합니다(쓰기 시 복사). 점수는 transformers의 generate(num_beams=…)와 같습니다.</translation>
    </message>
    <message>
        <source>Beams at step</source>
        <translation>빔을 볼 단계</translation>
    </message>
    <message>
        <source>no (False)</source>
        <translation>아니요 (False)</translation>
    </message>
    <message>
        <source>yes (True)</source>
        <translation>예 (True)</translation>
    </message>
    <message>
        <source>never ('never')</source>
        <translation>끝까지 안 함 ('never')</translation>
    </message>
</context>
<context>
    <name>BeamSearchView</name>
    <message>
        <source>Beam tree: the row each beam continues</source>
        <translation>빔 나무: 각 빔이 잇는 행</translation>
    </message>
    <message>
        <source>tokens generated</source>
        <translation>생성한 토큰 수</translation>
    </message>
    <message>
        <source>beam (cache row)</source>
        <translation>빔 (캐시 행)</translation>
    </message>
    <message>
        <source>Bytes copied by reorders, so far</source>
        <translation>재배열이 지금까지 복사한 바이트</translation>
    </message>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>stays in its row</source>
        <translation>제 행에 그대로</translation>
    </message>
    <message>
        <source>copies another row</source>
        <translation>다른 행을 복사</translation>
    </message>
    <message>
        <source>ended (eos or N)</source>
        <translation>끝남 (eos 또는 N)</translation>
    </message>
    <message>
        <source>reorder: rows moved × row bytes</source>
        <translation>재배열: 옮긴 행 × 행 바이트</translation>
    </message>
    <message>
        <source>index_select: every row</source>
        <translation>index_select: 모든 행</translation>
    </message>
    <message>
        <source>paged: copies on write</source>
        <translation>페이지: 쓰기 시 복사</translation>
    </message>
    <message>
        <source>…{0} (ended)</source>
        <translation>…{0} (끝남)</translation>
    </message>
    <message>
        <source>beam</source>
        <translation>빔</translation>
    </message>
    <message>
        <source>from row</source>
        <translation>이전 행</translation>
    </message>
    <message>
        <source>Σ log p</source>
        <translation>Σ log p</translation>
    </message>
    <message>
        <source>last tokens</source>
        <translation>마지막 토큰</translation>
    </message>
    <message>
        <source>Beam tree · token {0}: {1} rows moved, {2}</source>
        <translation>빔 나무 · 토큰 {0}: 옮긴 행 {1}개, {2}</translation>
    </message>
    <message>
        <source>answer {0}</source>
        <translation>답 {0}</translation>
    </message>
    <message>
        <source>same as transformers</source>
        <translation>transformers와 같음</translation>
    </message>
    <message>
        <source>not checked</source>
        <translation>확인 안 함</translation>
    </message>
    <message>
        <source>off or unavailable</source>
        <translation>꺼짐 또는 설치 안 됨</translation>
    </message>
    <message>
        <source>rows moved</source>
        <translation>옮긴 행</translation>
    </message>
    <message>
        <source>{0} steps</source>
        <translation>{0}단계</translation>
    </message>
    <message>
        <source>reorder (B)</source>
        <translation>재배열 (B)</translation>
    </message>
    <message>
        <source>rows moved × row bytes</source>
        <translation>옮긴 행 × 행 바이트</translation>
    </message>
    <message>
        <source>index_select (B)</source>
        <translation>index_select (B)</translation>
    </message>
    <message>
        <source>every row, every step</source>
        <translation>모든 행, 모든 단계</translation>
    </message>
    <message>
        <source>paged: copy on write (B)</source>
        <translation>페이지: 쓰기 시 복사 (B)</translation>
    </message>
    <message>
        <source>blocks of {0} tokens</source>
        <translation>블록당 토큰 {0}개</translation>
    </message>
    <message>
        <source>quantity</source>
        <translation>항목</translation>
    </message>
    <message>
        <source>value</source>
        <translation>값</translation>
    </message>
    <message>
        <source>detail</source>
        <translation>설명</translation>
    </message>
    <message>
        <source>{0} beams, {1} steps: reorders copied {2} (rows moved × row bytes); a paged cache would copy {3}</source>
        <translation>빔 {0}개, {1}단계: 재배열이 {2} 복사 (옮긴 행 × 행 바이트); 페이지 캐시라면 {3} 복사</translation>
    </message>
    <message>
        <source>best answer: score {0:.3f} over {1} tokens (length penalty {2:g})</source>
        <translation>가장 좋은 답: 점수 {0:.3f}, 토큰 {1}개 (길이 벌점 {2:g})</translation>
    </message>
    <message>
        <source>same as transformers: yes</source>
        <translation>transformers와 같음: 예</translation>
    </message>
    <message>
        <source>same as transformers: no</source>
        <translation>transformers와 같음: 아니요</translation>
    </message>
    <message>
        <source>not compared with transformers</source>
        <translation>transformers와 비교하지 않음</translation>
    </message>
    <message>
        <source>reorder, so far (B)</source>
        <translation>재배열, 누적 (B)</translation>
    </message>
    <message>
        <source>index_select, so far (B)</source>
        <translation>index_select, 누적 (B)</translation>
    </message>
    <message>
        <source>paged copy on write, so far (B)</source>
        <translation>페이지 쓰기 시 복사, 누적 (B)</translation>
    </message>
    <message>
        <source>blocks shared</source>
        <translation>공유 블록</translation>
    </message>
    <message>
        <source>beam {0}: from row</source>
        <translation>빔 {0}: 이전 행</translation>
    </message>
    <message>
        <source>beam {0}: Σ log p</source>
        <translation>빔 {0}: Σ log p</translation>
    </message>
    <message>
        <source>Beam tree</source>
        <translation>빔 나무</translation>
    </message>
</context>
<context>
    <name>CacheBytesPlot</name>
    <message>
        <source>layer</source>
        <translation>레이어</translation>
    </message>
    <message>
        <source>bytes</source>
        <translation>바이트</translation>
    </message>
    <message>
        <source>K (used)</source>
        <translation>K (사용)</translation>
    </message>
    <message>
        <source>V (used)</source>
        <translation>V (사용)</translation>
    </message>
    <message>
        <source>allocated (static)</source>
        <translation>할당됨 (정적)</translation>
    </message>
    <message>
        <source>KV cache per layer</source>
        <translation>레이어별 KV 캐시</translation>
    </message>
    <message>
        <source>KV cache: {0} measured (T = {1} tokens)</source>
        <translation>KV 캐시: 측정 {0} (T = {1} 토큰)</translation>
    </message>
    <message>
        <source>formula 2·L·T·H_kv·d·bytes = {0}</source>
        <translation>공식 2·L·T·H_kv·d·바이트 = {0}</translation>
    </message>
    <message>
        <source>KV cache: recompute mode keeps no cache</source>
        <translation>KV 캐시: 재계산 모드는 캐시를 두지 않습니다</translation>
    </message>
    <message>
        <source>window W = {0}: keeps {1} tokens</source>
        <translation>윈도 W = {0}: {1} 토큰 보관</translation>
    </message>
    <message>
        <source>{0} full</source>
        <translation>{0} 전체</translation>
    </message>
    <message>
        <source>{0} W={1}</source>
        <translation>{0} W={1}</translation>
    </message>
    <message>
        <source>formula Σ 2·T_l·H_kv·d·bytes = {0}</source>
        <translation>공식 Σ 2·T_l·H_kv·d·바이트 = {0}</translation>
    </message>
    <message>
        <source>(cached run; recompute keeps none)</source>
        <translation>(캐시 실행; 재계산은 캐시 없음)</translation>
    </message>
    <message>
        <source>KV cache measured {0:,} B = formula 2·L·T·H_kv·d·bytes {1:,} B (T = {2} tokens)</source>
        <translation>KV 캐시 측정값 {0:,} B = 공식 2·L·T·H_kv·d·바이트 {1:,} B (T = {2} 토큰)</translation>
    </message>
    <message>
        <source>{0:,} B per token · L = {1}, H_kv = {2}, d = {3}, {4} bytes per number</source>
        <translation>토큰당 {0:,} B · L = {1}, H_kv = {2}, d = {3}, 숫자당 {4}바이트</translation>
    </message>
    <message>
        <source>static: {0:,} B allocated</source>
        <translation>정적: {0:,} B 할당</translation>
    </message>
    <message>
        <source>K bytes used (B)</source>
        <translation>K 사용 바이트 (B)</translation>
    </message>
    <message>
        <source>V bytes used (B)</source>
        <translation>V 사용 바이트 (B)</translation>
    </message>
    <message>
        <source>K bytes allocated (B)</source>
        <translation>K 할당 바이트 (B)</translation>
    </message>
    <message>
        <source>V bytes allocated (B)</source>
        <translation>V 할당 바이트 (B)</translation>
    </message>
    <message>
        <source>window cap, K or V (B)</source>
        <translation>윈도 상한, K 또는 V (B)</translation>
    </message>
</context>
<context>
    <name>CacheInspectorPanel</name>
    <message>
        <source>cached</source>
        <translation>캐시</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>재계산</translation>
    </message>
    <message>
        <source>What the KV cache holds, step by step, for one layer and one K/V head: the K and V rows (one per position, head_dim numbers each) and how much the newest query looked at each position, for every query head that reads this K/V head. Rows already in the cache never change (max |Δ| = 0) and each step appends exactly one row per layer; in recompute mode the recomputed rows equal the cached ones. That is why caching gives the same tokens.</source>
        <translation>한 레이어, 한 K/V 헤드에 대해 KV 캐시에 무엇이 들어 있는지 단계마다 보여 줍니다: K 행과 V 행(위치마다 한 행, head_dim개의 수)과, 이 K/V 헤드를 읽는 쿼리 헤드마다 가장 최근 쿼리가 각 위치를 얼마나 보았는지. 캐시에 이미 있는 행은 절대 바뀌지 않고(최대 |Δ| = 0) 단계마다 레이어당 정확히 한 행이 추가됩니다. 재계산 모드에서는 다시 계산한 행이 캐시된 행과 같습니다. 그래서 캐시를 써도 같은 토큰이 나옵니다.</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>프롬프트</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>모드</translation>
    </message>
    <message>
        <source>Cache</source>
        <translation>캐시</translation>
    </message>
    <message>
        <source>Static length / window W</source>
        <translation>정적 길이 / 윈도 W</translation>
    </message>
    <message>
        <source>New tokens</source>
        <translation>새 토큰 수</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>레이어</translation>
    </message>
    <message>
        <source>K/V head</source>
        <translation>K/V 헤드</translation>
    </message>
</context>
<context>
    <name>CacheInspectorView</name>
    <message>
        <source>head_dim</source>
        <translation>head_dim</translation>
    </message>
    <message>
        <source>query head</source>
        <translation>쿼리 헤드</translation>
    </message>
    <message>
        <source>position: token</source>
        <translation>위치: 토큰</translation>
    </message>
    <message>
        <source>dynamic</source>
        <translation>동적</translation>
    </message>
    <message>
        <source>static (length)</source>
        <translation>정적 (길이)</translation>
    </message>
    <message>
        <source>sliding window (W)</source>
        <translation>슬라이딩 윈도 (W)</translation>
    </message>
    <message>
        <source>Finished.</source>
        <translation>끝났습니다.</translation>
    </message>
    <message>
        <source>Step {0}: chose {1!r}. {2} rows held;</source>
        <translation>단계 {0}: {1!r} 선택. 캐시에 {2}행;</translation>
    </message>
    <message>
        <source>the prefill appended {0} rows per layer.</source>
        <translation>프리필이 레이어마다 {0}행을 추가했습니다.</translation>
    </message>
    <message>
        <source>old rows max |Δ| = {0:g} {1}; rows appended per layer: {2}.</source>
        <translation>기존 행 최대 |Δ| = {0:g} {1}; 레이어별 추가 행: {2}.</translation>
    </message>
    <message>
        <source>Recomputed vs cached K/V: max |Δ| = {0:.2g} / {1:.2g} ({2}).</source>
        <translation>재계산한 K/V와 캐시된 K/V: 최대 |Δ| = {0:.2g} / {1:.2g} ({2}).</translation>
    </message>
    <message>
        <source>same dtype</source>
        <translation>같은 dtype</translation>
    </message>
    <message>
        <source>dtypes differ</source>
        <translation>dtype이 다름</translation>
    </message>
    <message>
        <source>K rows: layer {0}, K/V head {1} ({2} rows held)</source>
        <translation>K 행: 레이어 {0}, K/V 헤드 {1} ({2}행 보관)</translation>
    </message>
    <message>
        <source>V rows</source>
        <translation>V 행</translation>
    </message>
    <message>
        <source>Attention, position {0}</source>
        <translation>어텐션, 위치 {0}</translation>
    </message>
    <message>
        <source>({0:.0%} on evicted rows)</source>
        <translation>(밀려난 행에 {0:.0%})</translation>
    </message>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>token</source>
        <translation>토큰</translation>
    </message>
    <message>
        <source>rows held</source>
        <translation>보관 행</translation>
    </message>
    <message>
        <source>appended per layer</source>
        <translation>레이어별 추가</translation>
    </message>
    <message>
        <source>old rows max |Δ|</source>
        <translation>기존 행 최대 |Δ|</translation>
    </message>
    <message>
        <source>recompute max |Δ| K</source>
        <translation>재계산 최대 |Δ| K</translation>
    </message>
    <message>
        <source>recompute max |Δ| V</source>
        <translation>재계산 최대 |Δ| V</translation>
    </message>
    <message>
        <source>Layer {0}, K/V head {1}, step {2}: {3} rows held (cache: {4})</source>
        <translation>레이어 {0}, K/V 헤드 {1}, 단계 {2}: {3}행 보관 (캐시: {4})</translation>
    </message>
    <message>
        <source>old rows max |Δ| over {0} steps: {1:g}; one row appended per layer: {2}</source>
        <translation>{0}단계 동안 기존 행 최대 |Δ|: {1:g}; 레이어마다 한 행씩 추가: {2}</translation>
    </message>
    <message>
        <source>recomputed vs cached K/V max |Δ| {0:.2g} / {1:.2g}</source>
        <translation>재계산 대 캐시 K/V 최대 |Δ| {0:.2g} / {1:.2g}</translation>
    </message>
    <message>
        <source>position</source>
        <translation>위치</translation>
    </message>
    <message>
        <source>cache row</source>
        <translation>캐시 행</translation>
    </message>
    <message>
        <source>K rows</source>
        <translation>K 행</translation>
    </message>
    <message>
        <source>Attention of the newest query</source>
        <translation>가장 최근 쿼리의 어텐션</translation>
    </message>
    <message>
        <source>Checks per step</source>
        <translation>단계별 확인</translation>
    </message>
</context>
<context>
    <name>CacheKindsPanel</name>
    <message>
        <source>The same greedy run with three caches. Dynamic grows by one token per step; static reserves P + N tokens up front; with a sliding window W each token sees the last W tokens, itself included (transformers' sliding_window), so the cache keeps W − 1 and its memory stops growing there. When W covers the whole context the output must match the dynamic cache.</source>
        <translation>같은 탐욕적(greedy) 생성을 세 가지 캐시로 실행합니다. 동적 캐시는 한 단계에 토큰 하나씩 늘어나고, 정적 캐시는 P + N 토큰을 미리 잡아 두며, 슬라이딩 윈도 W에서는 각 토큰이 자기 자신을 포함해 마지막 W 토큰을 보므로(transformers의 sliding_window와 같은 뜻) 캐시는 W − 1 토큰만 보관하고 메모리도 거기서 더 늘지 않습니다. W가 전체 문맥을 덮으면 출력은 동적 캐시와 같아야 합니다.</translation>
    </message>
</context>
<context>
    <name>CacheKindsView</name>
    <message>
        <source>Cache memory per step</source>
        <translation>단계별 캐시 메모리</translation>
    </message>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>Keys each new token attends to</source>
        <translation>새 토큰이 어텐션하는 키 수</translation>
    </message>
    <message>
        <source>keys (newest token)</source>
        <translation>키 수 (최신 토큰)</translation>
    </message>
    <message>
        <source>{0} (allocated)</source>
        <translation>{0} (할당)</translation>
    </message>
    <message>
        <source>{0} (used)</source>
        <translation>{0} (사용)</translation>
    </message>
    <message>
        <source>✗ from step {0}</source>
        <translation>✗ {0}단계부터 다름</translation>
    </message>
    <message>
        <source>W = {0} vs P + N − 1 = {1}</source>
        <translation>W = {0} 대 P + N − 1 = {1}</translation>
    </message>
    <message>
        <source>cache</source>
        <translation>캐시</translation>
    </message>
    <message>
        <source>allocated (bytes)</source>
        <translation>할당 (바이트)</translation>
    </message>
    <message>
        <source>used (bytes)</source>
        <translation>사용 (바이트)</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>토큰</translation>
    </message>
    <message>
        <source>keys seen</source>
        <translation>보는 키 수</translation>
    </message>
    <message>
        <source>same as dynamic</source>
        <translation>동적과 같음</translation>
    </message>
    <message>
        <source>The window W = {0} {1} the context P + N − 1 = {2}.</source>
        <translation>윈도 W = {0}은(는) 문맥 P + N − 1 = {2}을(를) {1}.</translation>
    </message>
    <message>
        <source>covers</source>
        <translation>을(를) 덮음</translation>
    </message>
    <message>
        <source>is shorter than</source>
        <translation>보다 짧음</translation>
    </message>
    <message>
        <source>{0} {1:,} B</source>
        <translation>{0} {1:,} B</translation>
    </message>
    <message>
        <source>Cache memory after {0} steps: </source>
        <translation>{0}단계 후 캐시 메모리: </translation>
    </message>
    <message>
        <source>P = {0}, N = {1}</source>
        <translation>P = {0}, N = {1}</translation>
    </message>
    <message>
        <source>Dynamic cache: {0} tokens hold {1:,} B, measured = {2:,} B a token</source>
        <translation>동적 캐시: 토큰 {0}개 = {1:,} B (측정) = 토큰당 {2:,} B</translation>
    </message>
    <message>
        <source>Dynamic cache: {0} tokens hold {1:,} B, measured = {2:,} B a token; {3} tokens: {4:,} B</source>
        <translation>동적 캐시: 토큰 {0}개 = {1:,} B (측정) = 토큰당 {2:,} B · 토큰 {3}개: {4:,} B</translation>
    </message>
    <message>
        <source>{0}: allocated (B)</source>
        <translation>{0}: 할당 (B)</translation>
    </message>
    <message>
        <source>{0}: used (B)</source>
        <translation>{0}: 사용 (B)</translation>
    </message>
    <message>
        <source>{0}: keys each new token attends to</source>
        <translation>{0}: 새 토큰이 주의를 기울이는 키 수</translation>
    </message>
</context>
<context>
    <name>CacheVsRecomputePanel</name>
    <message>
        <source>Greedy generation on the lab prompt in both modes, after a short warm-up. Cached mode feeds P + (N − 1) tokens in total, recompute P·N + N(N − 1)/2. In 16-bit the two modes' logits drift apart; in fp32 they agree to about 1e-5 (float32 rounding: the headline gives the measured largest gap).</source>
        <translation>짧은 예열 뒤 실습 프롬프트로 두 모드에서 탐욕적 생성을 합니다. 캐시 모드는 모두 P + (N − 1) 토큰을, 재계산 모드는 P·N + N(N − 1)/2 토큰을 모델에 넣습니다. 16비트에서는 두 모드의 로짓이 조금씩 벌어지고, fp32에서는 약 1e-5까지 일치합니다 (float32 반올림: 측정한 최대 차이는 헤드라인에 있습니다).</translation>
    </message>
    <message>
        <source>course: P = 183, N = 64</source>
        <translation>강의: P = 183, N = 64</translation>
    </message>
    <message>
        <source>seed notebook: P = 16, N = 64</source>
        <translation>원래 노트북: P = 16, N = 64</translation>
    </message>
</context>
<context>
    <name>CacheVsRecomputeView</name>
    <message>
        <source>Time per step (median, band: min–max)</source>
        <translation>단계별 시간 (중앙값, 띠: 최소~최대)</translation>
    </message>
    <message>
        <source>step (0 = prefill)</source>
        <translation>단계 (0 = 프리필)</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <source>max |Δlogit| per step, cached vs recompute</source>
        <translation>단계별 최대 |Δ로짓|, 캐시 vs 재계산</translation>
    </message>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>max |Δlogit|</source>
        <translation>최대 |Δ로짓|</translation>
    </message>
    <message>
        <source>tokens fed, measured</source>
        <translation>입력 토큰, 측정</translation>
    </message>
    <message>
        <source>tokens fed, formula</source>
        <translation>입력 토큰, 공식</translation>
    </message>
    <message>
        <source>measured = formula</source>
        <translation>측정 = 공식</translation>
    </message>
    <message>
        <source>TTFT (ms)</source>
        <translation>TTFT (ms)</translation>
    </message>
    <message>
        <source>decode ms / token (median step)</source>
        <translation>디코드 토큰당 ms (단계 중앙값)</translation>
    </message>
    <message>
        <source>total (ms)</source>
        <translation>합계 (ms)</translation>
    </message>
    <message>
        <source>{0}, median of {1} rounds</source>
        <translation>{0}, {1}회 중앙값</translation>
    </message>
    <message>
        <source>{0}, fastest round</source>
        <translation>{0}, 가장 빠른 회차</translation>
    </message>
    <message>
        <source>{0}, slowest round</source>
        <translation>{0}, 가장 느린 회차</translation>
    </message>
    <message>
        <source>{0}, single measurement</source>
        <translation>{0}, 한 번 측정</translation>
    </message>
    <message>
        <source>cache, measured (bytes)</source>
        <translation>캐시, 측정값 (바이트)</translation>
    </message>
    <message>
        <source>cache, formula 2·L·T·H_kv·d·bytes</source>
        <translation>캐시, 공식 2·L·T·H_kv·d·바이트</translation>
    </message>
    <message>
        <source>identical tokens</source>
        <translation>토큰 일치</translation>
    </message>
    <message>
        <source>first divergent step</source>
        <translation>처음 달라진 단계</translation>
    </message>
    <message>
        <source>speed ratio (recompute / cached), medians</source>
        <translation>속도 비 (재계산 / 캐시), 중앙값</translation>
    </message>
    <message>
        <source>speed ratio, lowest round</source>
        <translation>속도 비, 가장 낮은 회차</translation>
    </message>
    <message>
        <source>speed ratio, highest round</source>
        <translation>속도 비, 가장 높은 회차</translation>
    </message>
    <message>
        <source>rounds</source>
        <translation>회차 수</translation>
    </message>
    <message>
        <source>number format</source>
        <translation>수 형식</translation>
    </message>
    <message>
        <source>single measurement</source>
        <translation>한 번 측정</translation>
    </message>
    <message>
        <source>median of {0} rounds</source>
        <translation>{0}회 중앙값</translation>
    </message>
    <message>
        <source>Same tokens {0}/{1} · tokens fed {2:,} vs {3:,} · cached {4:.2f} ms/token vs recompute {5:.2f} ms/token ({6})</source>
        <translation>같은 토큰 {0}/{1} · 넣은 토큰 {2:,} vs {3:,} · 캐시 {4:.2f} ms/토큰 vs 재계산 {5:.2f} ms/토큰 ({6})</translation>
    </message>
    <message>
        <source>P+(N−1) = {0:,} and P·N+N(N−1)/2 = {1:,} with P = {2}, N = {3} · TTFT cached {4} vs recompute {5} ms</source>
        <translation>P+(N−1) = {0:,}, P·N+N(N−1)/2 = {1:,} (P = {2}, N = {3}) · TTFT 캐시 {4} vs 재계산 {5} ms</translation>
    </message>
    <message>
        <source>recompute / cached: {0:.1f}× per decoded token, {1:.1f}× in total time · max |Δlogit| {2:.2g}</source>
        <translation>재계산 / 캐시: 디코드 토큰당 {0:.1f}×, 전체 시간 {1:.1f}× · 최대 |Δlogit| {2:.2g}</translation>
    </message>
    <message>
        <source>the seed notebook's case</source>
        <translation>원래 노트북의 설정</translation>
    </message>
    <message>
        <source>the course preset</source>
        <translation>강의 설정</translation>
    </message>
    <message>
        <source>Greedy in both modes, not the course's T {0:g}, so that both modes must choose the same tokens · {1}</source>
        <translation>두 모드 모두 강의의 T {0:g} 대신 그리디로 생성해, 두 모드가 같은 토큰을 고르는지 확인합니다 · {1}</translation>
    </message>
    <message>
        <source>{0}: median time (ms)</source>
        <translation>{0}: 중앙값 시간 (ms)</translation>
    </message>
    <message>
        <source>{0}: fastest round (ms)</source>
        <translation>{0}: 가장 빠른 회차 (ms)</translation>
    </message>
    <message>
        <source>{0}: slowest round (ms)</source>
        <translation>{0}: 가장 느린 회차 (ms)</translation>
    </message>
    <message>
        <source>{0}: tokens fed (tokens)</source>
        <translation>{0}: 입력 토큰 (토큰)</translation>
    </message>
    <message>
        <source>Time per step</source>
        <translation>단계별 시간</translation>
    </message>
    <message>
        <source>max |Δlogit| (logit units)</source>
        <translation>최대 |Δlogit| (로짓 단위)</translation>
    </message>
    <message>
        <source>Tokens fed per step</source>
        <translation>단계별 입력 토큰</translation>
    </message>
</context>
<context>
    <name>ChartExporter</name>
    <message>
        <source>PNG image (*.png)</source>
        <translation>PNG 이미지 (*.png)</translation>
    </message>
    <message>
        <source>SVG vector image (*.svg)</source>
        <translation>SVG 벡터 이미지 (*.svg)</translation>
    </message>
    <message>
        <source>PDF document (*.pdf)</source>
        <translation>PDF 문서 (*.pdf)</translation>
    </message>
    <message>
        <source>CSV data (*.csv)</source>
        <translation>CSV 데이터 (*.csv)</translation>
    </message>
    <message>
        <source>Export chart</source>
        <translation>차트 내보내기</translation>
    </message>
    <message>
        <source>Export slide pack to folder</source>
        <translation>슬라이드 묶음을 내보낼 폴더</translation>
    </message>
    <message>
        <source>{0} files written to {1}</source>
        <translation>{1}에 파일 {0}개를 저장했습니다</translation>
    </message>
    <message>
        <source>(left out, no data yet: {0})</source>
        <translation>(아직 데이터가 없어 제외: {0})</translation>
    </message>
</context>
<context>
    <name>ChatPanel</name>
    <message>
        <source>Send</source>
        <translation>보내기</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>새 대화</translation>
    </message>
    <message>
        <source>Type what the user says, then Enter</source>
        <translation>사용자의 말을 입력하고 Enter</translation>
    </message>
    <message>
        <source>keep the cache across turns (feed only the new tokens)</source>
        <translation>턴이 바뀌어도 캐시 유지 (새 토큰만 입력)</translation>
    </message>
    <message>
        <source>also answer without reuse (re-feed the whole history)</source>
        <translation>재사용 없이도 답하기 (대화 전체를 다시 입력)</translation>
    </message>
    <message>
        <source>User turn</source>
        <translation>사용자 턴</translation>
    </message>
    <message>
        <source>Send next scripted turn</source>
        <translation>대본의 다음 턴 보내기</translation>
    </message>
    <message>
        <source>A conversation in the chat template (ChatML). With reuse the KV cache lives for the whole chat, so a turn feeds only its own new tokens; without it every turn feeds the whole history again. Both answer greedily, so their tokens must be identical (the logits they choose from agree to float32 rounding: max |Δlogit|); the time to the first token grows with the history only without reuse.</source>
        <translation>채팅 템플릿(ChatML)으로 나누는 대화입니다. 재사용하면 KV 캐시가 대화 내내 살아 있어 턴마다 그 턴의 새 토큰만 입력합니다. 재사용하지 않으면 턴마다 지금까지의 대화 전체를 다시 입력합니다. 두 방식 모두 그리디로 답하므로 토큰이 같아야 하며(토큰을 고르는 로짓은 float32 반올림 범위에서 같습니다: 최대 |Δ로짓|), 첫 토큰까지의 시간은 재사용하지 않을 때만 대화가 길어질수록 늘어납니다.</translation>
    </message>
    <message>
        <source>The turn box holds at most {0:,} characters, so a longer paste was cut there. Shorten the turn: a conversation holds at most {1:,} tokens.</source>
        <translation>턴 입력란에는 최대 {0:,}자까지 들어가므로 더 긴 붙여 넣기는 거기서 잘렸습니다. 턴을 줄이세요. 대화에는 토큰이 최대 {1:,}개까지만 들어갑니다.</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <source>Send a turn to fill these charts.</source>
        <translation>보내기를 누르면 차트가 채워집니다.</translation>
    </message>
    <message>
        <source>Prompt tokens fed per turn</source>
        <translation>턴별 입력한 프롬프트 토큰</translation>
    </message>
    <message>
        <source>turn</source>
        <translation>턴</translation>
    </message>
    <message>
        <source>tokens (dashed: running total)</source>
        <translation>토큰 (점선: 누적)</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <source>KV cache after each turn (equal both ways)</source>
        <translation>턴이 끝난 뒤 KV 캐시 (두 방식 같음)</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>reuse</source>
        <translation>재사용</translation>
    </message>
    <message>
        <source>re-feed</source>
        <translation>다시 입력</translation>
    </message>
    <message>
        <source>Turn {0}</source>
        <translation>턴 {0}</translation>
    </message>
    <message>
        <source>reuse fed {0} tokens</source>
        <translation>재사용: {0}토큰 입력</translation>
    </message>
    <message>
        <source>re-feed fed {0} tokens</source>
        <translation>다시 입력: {0}토큰 입력</translation>
    </message>
    <message>
        <source>identical tokens both ways {0}</source>
        <translation>두 방식의 토큰이 같음 {0}</translation>
    </message>
    <message>
        <source>max |Δlogit| {0}</source>
        <translation>최대 |Δ로짓| {0}</translation>
    </message>
    <message>
        <source>the two ways chose different tokens {0}</source>
        <translation>두 방식이 다른 토큰을 골랐음 {0}</translation>
    </message>
    <message>
        <source>the answer was cut at the context limit</source>
        <translation>컨텍스트 한도에서 답이 잘렸음</translation>
    </message>
    <message>
        <source>Time to first token (median of {0} interleaved rounds)</source>
        <translation>첫 토큰까지 시간 (번갈아 잰 {0}회의 중앙값)</translation>
    </message>
    <message>
        <source>Time to first token (single measurements)</source>
        <translation>첫 토큰까지 시간 (한 번씩 측정)</translation>
    </message>
    <message>
        <source>Time to first token</source>
        <translation>첫 토큰까지 시간</translation>
    </message>
    <message>
        <source>{0:,.1f} ms (median of {1}, {2:,.1f}–{3:,.1f})</source>
        <translation>{0:,.1f} ms ({1}회 중앙값, {2:,.1f}–{3:,.1f})</translation>
    </message>
    <message>
        <source>{0:,.1f} ms (single measurement)</source>
        <translation>{0:,.1f} ms (한 번 측정)</translation>
    </message>
    <message>
        <source>User</source>
        <translation>사용자</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>어시스턴트</translation>
    </message>
    <message>
        <source>(empty: eos at step 0)</source>
        <translation>(빈 답: 0번째 단계에서 eos)</translation>
    </message>
    <message>
        <source>history</source>
        <translation>대화 길이</translation>
    </message>
    <message>
        <source>fed (reuse)</source>
        <translation>입력 (재사용)</translation>
    </message>
    <message>
        <source>fed (re-feed)</source>
        <translation>입력 (다시 입력)</translation>
    </message>
    <message>
        <source>TTFT (reuse, ms)</source>
        <translation>TTFT (재사용, ms)</translation>
    </message>
    <message>
        <source>TTFT (re-feed, ms)</source>
        <translation>TTFT (다시 입력, ms)</translation>
    </message>
    <message>
        <source>ms/token (reuse)</source>
        <translation>ms/토큰 (재사용)</translation>
    </message>
    <message>
        <source>ms/token (re-feed)</source>
        <translation>ms/토큰 (다시 입력)</translation>
    </message>
    <message>
        <source>cache KiB</source>
        <translation>캐시 KiB</translation>
    </message>
    <message>
        <source>answer tokens</source>
        <translation>답변 토큰</translation>
    </message>
    <message>
        <source>identical</source>
        <translation>같음</translation>
    </message>
    <message>
        <source>max |Δlogit|</source>
        <translation>최대 |Δ로짓|</translation>
    </message>
    <message>
        <source>Turn {0}, history {1} tokens</source>
        <translation>턴 {0}, 대화 길이 {1}토큰</translation>
    </message>
    <message>
        <source>reuse fed {0} tokens, TTFT {1}</source>
        <translation>재사용 {0}토큰 입력, TTFT {1}</translation>
    </message>
    <message>
        <source>re-feed fed {0} tokens, TTFT {1}</source>
        <translation>다시 입력 {0}토큰 입력, TTFT {1}</translation>
    </message>
    <message>
        <source>identical greedy tokens in {0} of {1} compared turns</source>
        <translation>비교한 턴 {1}개 중 {0}개에서 그리디 토큰이 같음</translation>
    </message>
    <message>
        <source>, max |Δlogit| {0}</source>
        <translation>, 최대 |Δ로짓| {0}</translation>
    </message>
    <message>
        <source>{0}: prompt tokens fed</source>
        <translation>{0}: 입력한 프롬프트 토큰</translation>
    </message>
    <message>
        <source>{0}: running total</source>
        <translation>{0}: 누적</translation>
    </message>
    <message>
        <source>{0}: TTFT, median (ms)</source>
        <translation>{0}: TTFT 중앙값 (ms)</translation>
    </message>
    <message>
        <source>{0}: TTFT, fastest round (ms)</source>
        <translation>{0}: TTFT 가장 빠른 회차 (ms)</translation>
    </message>
    <message>
        <source>{0}: TTFT, slowest round (ms)</source>
        <translation>{0}: TTFT 가장 느린 회차 (ms)</translation>
    </message>
    <message>
        <source>{0}: TTFT rounds</source>
        <translation>{0}: TTFT 반복 횟수</translation>
    </message>
    <message>
        <source>{0}: cache (bytes)</source>
        <translation>{0}: 캐시 (바이트)</translation>
    </message>
</context>
<context>
    <name>ClassroomExtras</name>
    <message>
        <source>Labs</source>
        <translation>실습</translation>
    </message>
    <message>
        <source>No model is loaded yet; wait for it or pick one.</source>
        <translation>아직 모델이 없습니다. 로딩을 기다리거나 모델을 고르세요.</translation>
    </message>
    <message>
        <source>Measuring TTFT {0} times in each mode…</source>
        <translation>모드마다 TTFT를 {0}번 측정하는 중…</translation>
    </message>
    <message>
        <source>Lec&amp;ture</source>
        <translation>강의(&amp;T)</translation>
    </message>
    <message>
        <source>Presenter view (projector: one chart, big numbers)</source>
        <translation>발표자 화면 (프로젝터: 차트 하나, 큰 숫자)</translation>
    </message>
    <message>
        <source>Full screen, high contrast, any chart (labs included): Page Down or → steps, Page Up or ← steps back (as in this window), ↓ / ↑ change the chart, P plays and pauses, Home starts over, Esc returns.</source>
        <translation>전체 화면, 고대비, 모든 차트(실습 포함): Page Down 또는 →는 한 단계 진행, Page Up 또는 ←는 한 단계 뒤로(이 창과 같음), ↓ / ↑는 차트 바꾸기, P는 재생·일시정지, Home은 처음부터, Esc는 돌아가기.</translation>
    </message>
    <message>
        <source>Save run…</source>
        <translation>실행 저장…</translation>
    </message>
    <message>
        <source>Open saved run (replay without the model)…</source>
        <translation>저장한 실행 열기 (모델 없이 다시 보기)…</translation>
    </message>
    <message>
        <source>Replay</source>
        <translation>다시 보기</translation>
    </message>
    <message>
        <source>Next step</source>
        <translation>다음 단계</translation>
    </message>
    <message>
        <source>Play / pause</source>
        <translation>재생 / 일시정지</translation>
    </message>
    <message>
        <source>From the start</source>
        <translation>처음부터</translation>
    </message>
    <message>
        <source>Back to live</source>
        <translation>실시간으로 돌아가기</translation>
    </message>
    <message>
        <source>Export slide pack (all charts and numbers)…</source>
        <translation>슬라이드 묶음 내보내기 (모든 차트와 수치)…</translation>
    </message>
    <message>
        <source>Measure TTFT ×{0} (median, min–max)</source>
        <translation>TTFT ×{0} 측정 (중앙값, 최소~최대)</translation>
    </message>
    <message>
        <source>Runs the prompt's prefill {0} times in each mode, interleaved, and shows the median with the fastest and slowest round at step 0 of the time plot.</source>
        <translation>프롬프트의 프리필을 모드마다 {0}번 번갈아 실행하고, 시간 그래프의 0단계에 중앙값과 가장 빠른·느린 회차를 표시합니다.</translation>
    </message>
    <message>
        <source>TTFT median of {0}: cached {1:.2f} ms, recompute {2:.2f} ms</source>
        <translation>TTFT {0}회 중앙값: 캐시 {1:.2f} ms, 재계산 {2:.2f} ms</translation>
    </message>
    <message>
        <source>Exported: {0}</source>
        <translation>내보냄: {0}</translation>
    </message>
    <message>
        <source>KV Studio</source>
        <translation>KV Studio</translation>
    </message>
</context>
<context>
    <name>ControlsPanel</name>
    <message>
        <source>max</source>
        <translation>최대</translation>
    </message>
    <message>
        <source>{0:g}/s</source>
        <translation>초당 {0:g}</translation>
    </message>
    <message>
        <source>Show the next step of the saved run (→ or Space).</source>
        <translation>저장한 실행의 다음 단계를 보여 줍니다 (→ 또는 Space).</translation>
    </message>
    <message>
        <source>Generate exactly one token (→ or Space; ← looks one step back).</source>
        <translation>토큰을 정확히 하나 생성합니다 (→ 또는 Space, ←는 한 단계 되돌아보기).</translation>
    </message>
    <message>
        <source>❚❚ Pause</source>
        <translation>❚❚ 일시정지</translation>
    </message>
    <message>
        <source>▶ Play</source>
        <translation>▶ 재생</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>모드</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>실행</translation>
    </message>
    <message>
        <source>Cached (KV cache)</source>
        <translation>캐시 (KV 캐시)</translation>
    </message>
    <message>
        <source>Feed the prompt once, then only the newest token; keys and values of earlier tokens are kept in the KV cache.</source>
        <translation>프롬프트는 한 번만 넣고 그다음부터는 새 토큰 하나만 넣습니다. 앞 토큰들의 키와 값은 KV 캐시에 보관됩니다.</translation>
    </message>
    <message>
        <source>Recompute (no cache)</source>
        <translation>재계산 (캐시 없음)</translation>
    </message>
    <message>
        <source>Feed the whole sequence again at every step: no cache, the work grows with length.</source>
        <translation>매 단계 전체 시퀀스를 다시 넣습니다. 캐시가 없어 길이에 따라 계산량이 늘어납니다.</translation>
    </message>
    <message>
        <source>Step ▸</source>
        <translation>한 토큰 ▸</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>초기화</translation>
    </message>
    <message>
        <source>Forget the drawn runs and start again from the prompt.</source>
        <translation>그려진 실행을 지우고 프롬프트부터 다시 시작합니다.</translation>
    </message>
    <message>
        <source>Run to end</source>
        <translation>끝까지 실행</translation>
    </message>
    <message>
        <source>Generate until the end-of-text token or the budget.</source>
        <translation>끝 토큰이 나오거나 최대 토큰 수에 이를 때까지 생성합니다.</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>속도</translation>
    </message>
    <message>
        <source>Steps per second while playing.</source>
        <translation>재생 중 초당 단계 수.</translation>
    </message>
</context>
<context>
    <name>CostDialog</name>
    <message>
        <source>about {0:.0f} s</source>
        <translation>약 {0:.0f}초</translation>
    </message>
    <message>
        <source>about {0:.0f} min</source>
        <translation>약 {0:.0f}분</translation>
    </message>
    <message>
        <source>about {0:.1f} h</source>
        <translation>약 {0:.1f}시간</translation>
    </message>
    <message>
        <source>recompute: P·N + N(N−1)/2 with P = {0:,}, N = {1:,}</source>
        <translation>재계산: P·N + N(N−1)/2, P = {0:,}, N = {1:,}</translation>
    </message>
    <message>
        <source>cached: P + (N−1) with P = {0:,}, N = {1:,}</source>
        <translation>캐시 사용: P + (N−1), P = {0:,}, N = {1:,}</translation>
    </message>
    <message>
        <source>This run feeds the model {0:,} tokens ({1}).</source>
        <translation>이 실행은 모델에 토큰 {0:,}개를 넣습니다 ({1}).</translation>
    </message>
    <message>
        <source>Its time is not known yet: no step has been measured.</source>
        <translation>아직 잰 단계가 없어 걸릴 시간은 알 수 없습니다.</translation>
    </message>
    <message>
        <source>At the speed measured so far that takes {0}.</source>
        <translation>지금까지 잰 속도로는 {0} 걸립니다.</translation>
    </message>
    <message>
        <source>(Each forward call was timed at {0:,.2f} ms + {1:,.4f} ms per token fed, fitted to {2:,} measured steps; this run makes {3:,} calls.)</source>
        <translation>(지금까지 잰 {2:,}개 단계에 맞춘 결과, 순전파 한 번은 {0:,.2f} ms에 입력 토큰마다 {1:,.4f} ms가 더 걸립니다. 이 실행은 순전파를 {3:,}번 합니다.)</translation>
    </message>
    <message>
        <source>Run it? (Cached mode or a shorter prompt costs far less.)</source>
        <translation>실행할까요? (캐시 사용 모드나 더 짧은 프롬프트가 훨씬 적게 듭니다.)</translation>
    </message>
    <message>
        <source>A long run</source>
        <translation>오래 걸리는 실행</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>실행(&amp;R)</translation>
    </message>
</context>
<context>
    <name>EngineTwinPanel</name>
    <message>
        <source>The same model in KV Studio and in llama.cpp (written as a GGUF file): the same tokens (greedy at temperature 0; above it, both engines' logits go through KV Studio's sampler with the same seed), the KV bytes a token costs as each engine reports it, the tokens each evaluates for a second prompt sharing a prefix, a copied and a cropped sequence, and decode ms/token on one thread in interleaved rounds. llama.cpp runs the step as one compiled graph; KV Studio's eager PyTorch dispatches every operation from Python, so each token costs more here. Needs the llama extra: pip install "kvstudio[llama]".</source>
        <translation>같은 모델을 KV Studio와 llama.cpp(GGUF 파일로 저장)에서: 같은 토큰(온도 0이면 그리디, 그 위에서는 두 엔진의 로짓이 같은 시드로 KV Studio의 샘플러를 거침), 각 엔진이 보고하는 토큰당 KV 바이트, 접두사를 공유하는 두 번째 프롬프트에서 각자 계산한 토큰 수, 복사하고 잘라낸 시퀀스, 그리고 스레드 1개에서 번갈아 잰 디코드 ms/토큰. llama.cpp는 한 단계를 컴파일된 그래프 하나로 실행하고, KV Studio의 eager PyTorch는 모든 연산을 Python에서 하나씩 보내므로 여기서는 토큰마다 더 듭니다. llama 추가 패키지가 필요합니다: pip install "kvstudio[llama]".</translation>
    </message>
</context>
<context>
    <name>ExportButton</name>
    <message>
        <source>Export this chart (PNG, SVG, PDF, CSV)</source>
        <translation>이 차트 내보내기 (PNG, SVG, PDF, CSV)</translation>
    </message>
</context>
<context>
    <name>ExportMenu</name>
    <message>
        <source>Export chart</source>
        <translation>차트 내보내기</translation>
    </message>
    <message>
        <source>PNG image, {0}×{1} px…</source>
        <translation>PNG 이미지, {0}×{1} px…</translation>
    </message>
    <message>
        <source>Slide size</source>
        <translation>슬라이드 크기</translation>
    </message>
    <message>
        <source>Headline with the measured numbers</source>
        <translation>측정값 헤드라인 넣기</translation>
    </message>
    <message>
        <source>SVG vector image…</source>
        <translation>SVG 벡터 이미지…</translation>
    </message>
    <message>
        <source>PDF (vector)…</source>
        <translation>PDF (벡터)…</translation>
    </message>
    <message>
        <source>Data as CSV…</source>
        <translation>데이터를 CSV로…</translation>
    </message>
</context>
<context>
    <name>FolderDialog</name>
    <message>
        <source>Choose</source>
        <translation>선택</translation>
    </message>
</context>
<context>
    <name>GenerationView</name>
    <message>
        <source>The prompt box holds at most {0:,} characters: {1:,} were pasted, so the last {2:,} were left out (the clipboard still has them). Shorten the text, or paste it in parts and run each.</source>
        <translation>프롬프트 칸에는 최대 {0:,}자가 들어갑니다. {1:,}자를 붙여 넣어 마지막 {2:,}자는 빠졌습니다 (클립보드에는 그대로 있습니다). 글을 줄이거나 나누어 붙여 넣고 하나씩 실행하세요.</translation>
    </message>
    <message>
        <source>Prompt</source>
        <translation>프롬프트</translation>
    </message>
    <message>
        <source>Type a question or some text, then press Step.</source>
        <translation>질문이나 글을 입력한 뒤 '한 토큰'을 누르세요.</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>채팅 템플릿</translation>
    </message>
    <message>
        <source>Wrap the prompt in the chat model's template (&lt;|im_start|&gt;user … assistant). Only for chat models.</source>
        <translation>프롬프트를 채팅 모델의 템플릿(&lt;|im_start|&gt;user … assistant)으로 감쌉니다. 채팅 모델에서만 쓸 수 있습니다.</translation>
    </message>
    <message>
        <source>Generated tokens appear here, one chip per token.</source>
        <translation>생성된 토큰이 토큰마다 칩 하나로 여기에 나타납니다.</translation>
    </message>
    <message>
        <source>{0} run: {1} of {2} new tokens</source>
        <translation>{0} 실행: 새 토큰 {2}개 중 {1}개</translation>
    </message>
    <message>
        <source>Prompt token id {0}</source>
        <translation>프롬프트 토큰 id {0}</translation>
    </message>
    <message>
        <source>Token id {0}
{1}
tokens fed this step: {2}
time: {3:.2f} ms
step {4}</source>
        <translation>토큰 id {0}
{1}
이 단계에 넣은 토큰: {2}
시간: {3:.2f} ms
단계 {4}</translation>
    </message>
    <message>
        <source>probability {0:.3f} after temperature, penalty, top-k and top-p (drawn from these)</source>
        <translation>온도·페널티·top-k·top-p를 거친 뒤 확률 {0:.3f} (이 분포에서 뽑음)</translation>
    </message>
    <message>
        <source>greedy: the most likely token (argmax, nothing drawn)</source>
        <translation>그리디: 가장 그럴듯한 토큰 (argmax, 뽑지 않음)</translation>
    </message>
    <message>
        <source>Part of a character: its text appears with the next token.</source>
        <translation>글자의 일부입니다. 글자는 다음 토큰과 함께 나타납니다.</translation>
    </message>
    <message>
        <source>A special token: it marks the chat template's turns and is not shown as text.</source>
        <translation>특수 토큰: 채팅 템플릿의 차례를 표시하며 글자로 보이지 않습니다.</translation>
    </message>
    <message>
        <source>{0}: the end of the answer. The model chose this special token at step {1}, so the run stopped here.</source>
        <translation>{0}: 답의 끝. 모델이 {1}단계에서 이 특수 토큰을 골라 실행이 여기서 멈췄습니다.</translation>
    </message>
</context>
<context>
    <name>Headlines</name>
    <message>
        <source>Run the lab to see its numbers</source>
        <translation>실습을 실행하면 숫자가 나옵니다</translation>
    </message>
    <message>
        <source>runs of different length: {0}</source>
        <translation>길이가 다른 실행: {0}</translation>
    </message>
    <message>
        <source>Step to feed the model</source>
        <translation>한 단계 진행하면 모델에 넣은 토큰이 나옵니다</translation>
    </message>
    <message>
        <source>Tokens fed appear after a step.</source>
        <translation>단계을 진행하면 입력 토큰 수가 표시됩니다.</translation>
    </message>
    <message>
        <source>{0} vs {1} tokens fed</source>
        <translation>입력 토큰 {0} 대 {1}</translation>
    </message>
    <message>
        <source>{0} vs {1} tokens fed in N = {2} steps</source>
        <translation>N = {2}단계까지 입력 토큰 {0} 대 {1}</translation>
    </message>
    <message>
        <source>{0} tokens fed ({1})</source>
        <translation>입력 토큰 {0} ({1})</translation>
    </message>
    <message>
        <source>P+(N−1)</source>
        <translation>P+(N−1)</translation>
    </message>
    <message>
        <source>P·N+N(N−1)/2</source>
        <translation>P·N+N(N−1)/2</translation>
    </message>
    <message>
        <source>{0}: P = {1}, N = {2} → {3} = {4}</source>
        <translation>{0}: P = {1}, N = {2} → {3} = {4}</translation>
    </message>
    <message>
        <source>recompute fed {0:.1f}× as many</source>
        <translation>재계산은 {0:.1f}배를 입력</translation>
    </message>
    <message>
        <source>Step to time the model</source>
        <translation>단계을 진행하면 시간이 측정됩니다</translation>
    </message>
    <message>
        <source>{0}: {1:.1f} ms/token</source>
        <translation>{0}: 토큰당 {1:.1f} ms</translation>
    </message>
    <message>
        <source>{0}: time to first token {1:.1f} ms, {2} steps</source>
        <translation>{0}: 첫 토큰까지 {1:.1f} ms, {2} 단계</translation>
    </message>
    <message>
        <source>TTFT {0:.1f} ms</source>
        <translation>첫 토큰 {0:.1f} ms</translation>
    </message>
    <message>
        <source>Step to fill the cache</source>
        <translation>단계을 진행하면 캐시가 채워집니다</translation>
    </message>
    <message>
        <source>{0} B per token · {1} B per 100 tokens</source>
        <translation>토큰당 {0} B · 100 토큰당 {1} B</translation>
    </message>
    <message>
        <source>2·L·H_kv·d·bytes = 2·{0}·{1}·{2}·{3}</source>
        <translation>2·L·H_kv·d·바이트 = 2·{0}·{1}·{2}·{3}</translation>
    </message>
    <message>
        <source>measured now: {0} B for T = {1} tokens</source>
        <translation>지금 측정값: T = {1} 토큰에 {0} B</translation>
    </message>
    <message>
        <source>recompute keeps no cache</source>
        <translation>재계산은 캐시를 두지 않습니다</translation>
    </message>
    <message>
        <source>Sample ×N to count answers</source>
        <translation>N번 샘플링으로 답을 세어 보세요</translation>
    </message>
    <message>
        <source>distinct answers {0}</source>
        <translation>서로 다른 답 {0}</translation>
    </message>
    <message>
        <source>T = {0}</source>
        <translation>T = {0}</translation>
    </message>
    <message>
        <source>{0} samples per temperature</source>
        <translation>온도마다 샘플 {0}개</translation>
    </message>
</context>
<context>
    <name>LabModels</name>
    <message>
        <source>Runs on {0}, the window's model.</source>
        <translation>{0}에서 실행합니다. 창에 불러온 모델입니다.</translation>
    </message>
    <message>
        <source>Runs on {0}, the model you loaded (with an embedded model the course runs this lab on {1}).</source>
        <translation>{0}에서 실행합니다. 직접 불러온 모델입니다(내장 모델이라면 수업에서는 이 실습을 {1}에서 실행합니다).</translation>
    </message>
    <message>
        <source>Runs on {0}, the course's model for the sampling labs.</source>
        <translation>{0}에서 실행합니다. 수업에서 샘플링 실습에 쓰는 모델입니다.</translation>
    </message>
    <message>
        <source>Runs on {0}, the course's model for the paged lab (its answers end at different lengths).</source>
        <translation>{0}에서 실행합니다. 수업에서 페이지 캐시 실습에 쓰는 모델입니다(답마다 끝나는 길이가 다릅니다).</translation>
    </message>
    <message>
        <source>Runs on {0}, the course's model for the cache labs.</source>
        <translation>{0}에서 실행합니다. 수업에서 캐시 실습에 쓰는 모델입니다.</translation>
    </message>
</context>
<context>
    <name>LabPanel</name>
    <message>
        <source>Run</source>
        <translation>실행</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>No model is loaded yet; wait for it or pick one.</source>
        <translation>아직 모델이 없습니다. 로딩을 기다리거나 모델을 고르세요.</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>실행 중…</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>완료.</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>취소했습니다.</translation>
    </message>
</context>
<context>
    <name>LabView</name>
    <message>
        <source>Press Start to fill this chart.</source>
        <translation>시작을 누르면 이 차트가 채워집니다.</translation>
    </message>
    <message>
        <source>Run the lab to fill this chart.</source>
        <translation>실습을 실행하면 이 차트가 채워집니다.</translation>
    </message>
    <message>
        <source>greedy</source>
        <translation>그리디</translation>
    </message>
    <message>
        <source>off</source>
        <translation>끔</translation>
    </message>
    <message>
        <source>top-k {0}</source>
        <translation>top-k {0}</translation>
    </message>
    <message>
        <source>top-p {0}</source>
        <translation>top-p {0}</translation>
    </message>
    <message>
        <source>penalty {0:g}</source>
        <translation>반복 페널티 {0:g}</translation>
    </message>
    <message>
        <source>seed {0}</source>
        <translation>시드 {0}</translation>
    </message>
    <message>
        <source>{0:,} samples</source>
        <translation>샘플 {0:,}개</translation>
    </message>
    <message>
        <source>≤ {0:,} tokens</source>
        <translation>최대 {0:,} 토큰</translation>
    </message>
    <message>
        <source>{0} (course T {1:g})</source>
        <translation>{0} (강의 T {1:g})</translation>
    </message>
    <message>
        <source>top-k {0} (course {1})</source>
        <translation>top-k {0} (강의 {1})</translation>
    </message>
    <message>
        <source>top-p {0} (course {1})</source>
        <translation>top-p {0} (강의 {1})</translation>
    </message>
    <message>
        <source>penalty {0:g} (course {1:g})</source>
        <translation>반복 페널티 {0:g} (강의 {1:g})</translation>
    </message>
    <message>
        <source>seed {0} (course {1})</source>
        <translation>시드 {0} (강의 {1})</translation>
    </message>
    <message>
        <source>Settings: {0}</source>
        <translation>설정: {0}</translation>
    </message>
    <message>
        <source>Changed from the course preset: {0}</source>
        <translation>강의 설정에서 바꾼 값: {0}</translation>
    </message>
    <message>
        <source>The course preset (the sampling dock's defaults).</source>
        <translation>강의 설정 그대로입니다 (샘플링 패널의 기본값).</translation>
    </message>
</context>
<context>
    <name>LengthSweepPanel</name>
    <message>
        <source>Generates at several lengths in both modes and plots the time per generated token (the median decode step, the prefill apart) against the context length P + N. With the cache it stays nearly flat; without it, every token re-reads the whole context, so it grows with length. Each point is the median of several rounds, its bar the fastest and slowest round. Dashed: best straight line; solid: best parabola; a curve is drawn only when it explains the points (R² at least {0:g}).</source>
        <translation>두 모드로 여러 길이를 생성하고, 생성 토큰당 시간(프리필을 뺀 디코드 단계의 중앙값)을 문맥 길이 P + N에 대해 그립니다. 캐시가 있으면 거의 평평하고, 없으면 토큰마다 문맥 전체를 다시 읽으므로 길이에 따라 늘어납니다. 각 점은 여러 회차의 중앙값이고, 막대는 가장 빠른 회차와 가장 느린 회차입니다. 점선: 최적 직선, 실선: 최적 포물선. 곡선은 점들을 설명할 때(R² {0:g} 이상)만 그립니다.</translation>
    </message>
    <message>
        <source>prompt length P</source>
        <translation>프롬프트 길이 P</translation>
    </message>
    <message>
        <source>new tokens N</source>
        <translation>새 토큰 수 N</translation>
    </message>
</context>
<context>
    <name>LengthSweepView</name>
    <message>
        <source>Time per token against context length</source>
        <translation>문맥 길이에 따른 토큰당 시간</translation>
    </message>
    <message>
        <source>context length P + N (tokens)</source>
        <translation>문맥 길이 P + N (토큰)</translation>
    </message>
    <message>
        <source>ms per generated token</source>
        <translation>생성 토큰당 ms</translation>
    </message>
    <message>
        <source>{0}: linear fit</source>
        <translation>{0}: 직선 맞춤</translation>
    </message>
    <message>
        <source>{0}: quadratic fit</source>
        <translation>{0}: 2차 맞춤</translation>
    </message>
    <message>
        <source>linear</source>
        <translation>직선</translation>
    </message>
    <message>
        <source>quadratic</source>
        <translation>2차</translation>
    </message>
    <message>
        <source>{0:.3g} ms/token</source>
        <translation>{0:.3g} ms/토큰</translation>
    </message>
    <message>
        <source>fed {0} (formula {1})</source>
        <translation>입력 {0} (공식 {1})</translation>
    </message>
    <message>
        <source>mode</source>
        <translation>모드</translation>
    </message>
    <message>
        <source>fit / run</source>
        <translation>맞춤 / 실행</translation>
    </message>
    <message>
        <source>ms per token</source>
        <translation>토큰당 ms</translation>
    </message>
    <message>
        <source>R² / fed</source>
        <translation>R² / 입력</translation>
    </message>
    <message>
        <source>no fit (R² {0:.2f} &lt; {1:g})</source>
        <translation>맞춤 없음 (R² {0:.2f} &lt; {1:g})</translation>
    </message>
    <message>
        <source>no fit (the parabola bends down)</source>
        <translation>맞춤 없음 (포물선이 아래로 휨)</translation>
    </message>
    <message>
        <source>{0}: {1:.2f} → {2:.2f} ms per token</source>
        <translation>{0}: 토큰당 {1:.2f} → {2:.2f} ms</translation>
    </message>
    <message>
        <source>Context {0} → {1} tokens: </source>
        <translation>문맥 {0} → {1} 토큰: </translation>
    </message>
    <message>
        <source>{0}: no curve fits (flat or noisy)</source>
        <translation>{0}: 맞는 곡선 없음 (평평하거나 잡음)</translation>
    </message>
    <message>
        <source>{0}: {1} fit R² {2:.2f}</source>
        <translation>{0}: {1} 맞춤 R² {2:.2f}</translation>
    </message>
    <message>
        <source>median of {0} rounds</source>
        <translation>{0}회 중앙값</translation>
    </message>
    <message>
        <source>{0}: median ms per generated token</source>
        <translation>{0}: 생성 토큰당 ms 중앙값</translation>
    </message>
    <message>
        <source>{0}: fastest round (ms per token)</source>
        <translation>{0}: 가장 빠른 회차 (토큰당 ms)</translation>
    </message>
    <message>
        <source>{0}: slowest round (ms per token)</source>
        <translation>{0}: 가장 느린 회차 (토큰당 ms)</translation>
    </message>
    <message>
        <source>{0}: {1} fit (ms per token)</source>
        <translation>{0}: {1} 맞춤 (토큰당 ms)</translation>
    </message>
</context>
<context>
    <name>LivePlot</name>
    <message>
        <source>Press Step ▸ or Run to end to fill this chart.</source>
        <translation>한 토큰 ▸ 또는 끝까지 실행을 누르면 이 차트가 채워집니다.</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Live</source>
        <translation>실시간</translation>
    </message>
    <message>
        <source>Controls</source>
        <translation>조작</translation>
    </message>
    <message>
        <source>KV Studio</source>
        <translation>KV Studio</translation>
    </message>
    <message>
        <source>KV Studio — KV cache and sampling, token by token</source>
        <translation>KV Studio — 토큰 단위로 보는 KV 캐시와 샘플링</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>파일(&amp;F)</translation>
    </message>
    <message>
        <source>Open model folder…</source>
        <translation>모델 폴더 열기…</translation>
    </message>
    <message>
        <source>Open MiniMind .pth…</source>
        <translation>MiniMind .pth 열기…</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>끝내기</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>언어(&amp;L)</translation>
    </message>
    <message>
        <source>System default</source>
        <translation>시스템 기본값</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>보기(&amp;V)</translation>
    </message>
</context>
<context>
    <name>Messages</name>
    <message>
        <source>The prompt is empty: type a question or some text, then step again.</source>
        <translation>프롬프트가 비어 있습니다. 질문이나 글을 입력한 뒤 다시 실행하세요.</translation>
    </message>
    <message>
        <source>The prompt has {0} tokens and {1} new tokens are asked for, but the model handles {2} positions: shorten the prompt or lower 'max new tokens'.</source>
        <translation>프롬프트는 {0} 토큰이고 새 토큰 {1}개를 요청했지만 모델은 {2}개 위치까지만 다룹니다. 프롬프트를 줄이거나 '최대 새 토큰'을 낮추세요.</translation>
    </message>
    <message>
        <source>The static cache holds {0} tokens but this run needs {1}: raise the static length, shorten the prompt, or pick the dynamic cache.</source>
        <translation>정적 캐시는 {0} 토큰을 담지만 이 실행에는 {1} 토큰이 필요합니다. 정적 길이를 늘리거나 프롬프트를 줄이거나 동적 캐시를 고르세요.</translation>
    </message>
    <message>
        <source>Could not read the temperatures {0}: write numbers separated by commas, e.g. 0.5, 1.0, 1.5.</source>
        <translation>온도 {0}을(를) 읽을 수 없습니다. 쉼표로 구분한 숫자로 쓰세요. 예: 0.5, 1.0, 1.5</translation>
    </message>
    <message>
        <source>Temperatures must be 0 (greedy) or positive.</source>
        <translation>온도는 0(탐욕적) 또는 양수여야 합니다.</translation>
    </message>
    <message>
        <source>No model is loaded yet; pick one in the Model menu.</source>
        <translation>아직 모델을 불러오지 않았습니다. 모델 메뉴에서 고르세요.</translation>
    </message>
    <message>
        <source>Temperature must be 0 (greedy) or between {0} and {1}, got {2}: dividing logits by a tinier number overflows, and a huge one makes every token equally likely.</source>
        <translation>온도는 0(탐욕적) 또는 {0}~{1} 사이여야 하는데 {2}입니다. 더 작은 수로 로짓을 나누면 넘치고, 아주 큰 수는 모든 토큰을 똑같이 만듭니다.</translation>
    </message>
    <message>
        <source>Repetition penalty must be between {0} and {1} (1.0 = off), got {2}.</source>
        <translation>반복 페널티는 {0}~{1} 사이여야 하는데(1.0 = 끔) {2}입니다.</translation>
    </message>
    <message>
        <source>top-k must be 0 (off) or a positive count, got {0}.</source>
        <translation>top-k는 0(끄기) 또는 양의 개수여야 합니다. 입력값: {0}</translation>
    </message>
    <message>
        <source>top-p must be in (0, 1], got {0}; use 1.0 to turn it off.</source>
        <translation>top-p는 (0, 1] 범위여야 합니다. 입력값: {0}. 끄려면 1.0을 쓰세요.</translation>
    </message>
    <message>
        <source>The prompt is empty: type a question for the lab.</source>
        <translation>프롬프트가 비어 있습니다. 실습에 쓸 질문을 입력하세요.</translation>
    </message>
    <message>
        <source>P + N = {0} is more than the model's {1} positions.</source>
        <translation>P + N = {0}은(는) 모델의 위치 수 {1}보다 많습니다.</translation>
    </message>
    <message>
        <source>P + N = {0} is more than the model's {1} positions; lower P or N.</source>
        <translation>P + N = {0}은(는) 모델의 위치 수 {1}보다 많습니다. P나 N을 줄이세요.</translation>
    </message>
    <message>
        <source>Could not read the lengths {0}: write whole numbers separated by commas, e.g. 16, 32, 64, 128.</source>
        <translation>길이 {0}을(를) 읽을 수 없습니다. 쉼표로 구분한 정수로 쓰세요. 예: 16, 32, 64, 128</translation>
    </message>
    <message>
        <source>Give at least one positive length, e.g. 16, 32, 64, 128.</source>
        <translation>양의 길이를 하나 이상 주세요. 예: 16, 32, 64, 128</translation>
    </message>
    <message>
        <source>The longest run needs {0} positions but the model has {1}; use shorter lengths.</source>
        <translation>가장 긴 실행에는 위치 {0}개가 필요하지만 모델에는 {1}개뿐입니다. 더 짧은 길이를 쓰세요.</translation>
    </message>
    <message>
        <source>Give at least one temperature, e.g. 0.3, 0.7, 1.0, 1.3.</source>
        <translation>온도를 하나 이상 주세요. 예: 0.3, 0.7, 1.0, 1.3</translation>
    </message>
    <message>
        <source>No model is loaded yet; wait for it or pick a preset.</source>
        <translation>아직 모델이 불러와지지 않았습니다. 기다리거나 프리셋을 고르세요.</translation>
    </message>
    <message>
        <source>No config.json at {0}; give a model folder or its config.json.</source>
        <translation>{0}에 config.json이 없습니다. 모델 폴더나 그 config.json을 고르세요.</translation>
    </message>
    <message>
        <source>{0} is not a JSON object; give a transformers config.json.</source>
        <translation>{0}은(는) JSON 객체가 아닙니다. transformers config.json을 고르세요.</translation>
    </message>
    <message>
        <source>{0}: config.json has no {1}; give a transformers config.json.</source>
        <translation>{0}: config.json에 {1}이(가) 없습니다. transformers config.json을 고르세요.</translation>
    </message>
    <message>
        <source>{0} must be true or false, got {1}.</source>
        <translation>{0}은(는) true 또는 false여야 하는데 {1}입니다.</translation>
    </message>
    <message>
        <source>This turn needs {0} more tokens, but the conversation already holds {1} of its {2} positions. Start a new chat (or raise the context limit) to go on; the conversation so far is kept.</source>
        <translation>이 턴에는 토큰 {0}개가 더 필요하지만 대화가 이미 위치 {2}개 중 {1}개를 쓰고 있습니다. 계속하려면 새 대화를 시작하세요(또는 컨텍스트 한도를 올리세요). 지금까지의 대화는 그대로 있습니다.</translation>
    </message>
    <message>
        <source>This turn needs {0} more tokens, but the conversation already holds {1} of its {2} positions. Start a new chat to go on; the conversation so far is kept.</source>
        <translation>이 턴에는 토큰 {0}개가 더 필요하지만 대화가 이미 위치 {2}개 중 {1}개를 쓰고 있습니다. 계속하려면 새 대화를 시작하세요. 지금까지의 대화는 그대로 있습니다.</translation>
    </message>
    <message>
        <source>This turn needs {0} tokens, but the context limit is {1} positions and the answer needs at least one more: shorten the turn (or raise the context limit).</source>
        <translation>이 턴에는 토큰 {0}개가 필요하지만 컨텍스트 한도는 위치 {1}개이고 답에도 적어도 하나가 더 필요합니다. 턴을 줄이세요(또는 컨텍스트 한도를 올리세요).</translation>
    </message>
    <message>
        <source>This turn needs {0} tokens, but the context limit is {1} positions and the answer needs at least one more: shorten the turn.</source>
        <translation>이 턴에는 토큰 {0}개가 필요하지만 컨텍스트 한도는 위치 {1}개이고 답에도 적어도 하나가 더 필요합니다. 턴을 줄이세요.</translation>
    </message>
    <message>
        <source>This turn needs {0} tokens, but the context limit is {1} positions and the answer needs at least one more: shorten the turn (or raise the context limit); the conversation so far is kept.</source>
        <translation>이 턴에는 토큰 {0}개가 필요하지만 컨텍스트 한도는 위치 {1}개이고 답에도 적어도 하나가 더 필요합니다. 턴을 줄이세요(또는 컨텍스트 한도를 올리세요). 지금까지의 대화는 그대로 있습니다.</translation>
    </message>
    <message>
        <source>This turn needs {0} tokens, but the context limit is {1} positions and the answer needs at least one more: shorten the turn; the conversation so far is kept.</source>
        <translation>이 턴에는 토큰 {0}개가 필요하지만 컨텍스트 한도는 위치 {1}개이고 답에도 적어도 하나가 더 필요합니다. 턴을 줄이세요. 지금까지의 대화는 그대로 있습니다.</translation>
    </message>
    <message>
        <source>Type a user turn first (or take the next scripted one).</source>
        <translation>먼저 사용자 턴을 입력하세요(또는 다음 대본 턴을 가져오세요).</translation>
    </message>
    <message>
        <source>The text holds {0}, one of the model's control tokens, and this model's chat template rewrites its messages, so it cannot be sent as plain text: remove it or turn the chat template off.</source>
        <translation>글에 모델의 제어 토큰 {0}이(가) 들어 있는데, 이 모델의 채팅 템플릿은 메시지를 고쳐 쓰므로 평범한 글로 보낼 수 없습니다. 그 토큰을 지우거나 채팅 템플릿을 끄세요.</translation>
    </message>
    <message>
        <source>Tick at least one way: reuse the cache, re-feed the history, or both.</source>
        <translation>적어도 한 방식을 고르세요: 캐시 재사용, 대화 다시 입력, 또는 둘 다.</translation>
    </message>
    <message>
        <source>The static cache holds {0} tokens but this run needs {1}; raise its length or generate fewer tokens.</source>
        <translation>정적 캐시는 토큰 {0}개를 담지만 이 실행에는 {1}개가 필요합니다. 길이를 늘리거나 생성할 토큰 수를 줄이세요.</translation>
    </message>
    <message>
        <source>Cannot save {0}: the disk is full. Free some space or choose a folder on another drive; nothing was written.</source>
        <translation>{0}을(를) 저장할 수 없습니다. 디스크가 가득 찼습니다. 공간을 비우거나 다른 드라이브의 폴더를 고르세요. 아무것도 쓰지 않았습니다.</translation>
    </message>
    <message>
        <source>Cannot save {0}: {1} is not writable. Choose a folder you can write to (for example your Documents folder); nothing was written.</source>
        <translation>{0}을(를) 저장할 수 없습니다. {1}에 쓸 권한이 없습니다. 쓸 수 있는 폴더(예: 문서 폴더)를 고르세요. 아무것도 쓰지 않았습니다.</translation>
    </message>
    <message>
        <source>Cannot save {0} in {1}: {2}. Choose another folder; nothing was written.</source>
        <translation>{1}에 {0}을(를) 저장할 수 없습니다: {2}. 다른 폴더를 고르세요. 아무것도 쓰지 않았습니다.</translation>
    </message>
    <message>
        <source>Cannot save {0}: {1} does not exist. Choose another folder.</source>
        <translation>{0}을(를) 저장할 수 없습니다. {1} 폴더가 없습니다. 다른 폴더를 고르세요.</translation>
    </message>
    <message>
        <source>Cannot save {0}: {1} is a file, not a folder. Choose another folder.</source>
        <translation>{0}을(를) 저장할 수 없습니다. {1}은(는) 폴더가 아니라 파일입니다. 다른 폴더를 고르세요.</translation>
    </message>
    <message>
        <source>Nothing to export yet: run the model or a lab first.</source>
        <translation>아직 내보낼 것이 없습니다. 먼저 모델이나 실습을 실행하세요.</translation>
    </message>
    <message>
        <source>Nothing to export: no charts were given.</source>
        <translation>내보낼 것이 없습니다. 차트가 없습니다.</translation>
    </message>
    <message>
        <source>The chart rendered as an empty image; is it visible and sized?</source>
        <translation>차트가 빈 이미지로 그려졌습니다. 차트가 보이고 크기가 있나요?</translation>
    </message>
    <message>
        <source>Qt produced an empty PDF; is the chart visible and sized?</source>
        <translation>Qt가 빈 PDF를 만들었습니다. 차트가 보이고 크기가 있나요?</translation>
    </message>
    <message>
        <source>Qt could not encode the PNG image (out of memory?).</source>
        <translation>Qt가 PNG 이미지를 만들지 못했습니다 (메모리 부족?).</translation>
    </message>
    <message>
        <source>The SVG export has no drawing in it; is the chart empty?</source>
        <translation>내보낸 SVG에 그림이 없습니다. 차트가 비어 있나요?</translation>
    </message>
    <message>
        <source>{0} holds code ({1}) and was refused: KV Studio loads only tensors and never runs code from a file. Use a plain state dict saved with torch.save(model.state_dict(), path).</source>
        <translation>{0}에는 코드({1})가 들어 있어 거부했습니다. KV Studio는 텐서만 불러오며 파일의 코드를 절대 실행하지 않습니다. torch.save(model.state_dict(), path)로 저장한 일반 state dict를 쓰세요.</translation>
    </message>
    <message>
        <source>{0} is empty (0 bytes); download or copy the checkpoint again.</source>
        <translation>{0}이(가) 비어 있습니다(0바이트). 체크포인트를 다시 내려받거나 복사하세요.</translation>
    </message>
    <message>
        <source>Cannot read {0}: it is damaged or not a PyTorch checkpoint. Download or copy it again.</source>
        <translation>{0}을(를) 읽을 수 없습니다. 손상되었거나 PyTorch 체크포인트가 아닙니다. 다시 내려받거나 복사하세요.</translation>
    </message>
    <message>
        <source>The model produced NaN logits at step {0}: its weights are broken (NaN or inf inside). Load another checkpoint; this one cannot generate text.</source>
        <translation>모델이 {0}단계에서 NaN 로짓을 냈습니다. 가중치가 망가져 있습니다(NaN 또는 inf 포함). 다른 체크포인트를 불러오세요. 이 모델로는 글을 만들 수 없습니다.</translation>
    </message>
    <message>
        <source>This run ({0} row(s) × {1} positions) needs about {2} of memory but only {3} is free. Use fewer samples, fewer new tokens or a shorter static cache.</source>
        <translation>이 실행({0}행 × {1}개 위치)에는 메모리가 약 {2} 필요하지만 남은 메모리는 {3}뿐입니다. 샘플 수나 새 토큰 수를 줄이거나 정적 캐시를 짧게 하세요.</translation>
    </message>
    <message>
        <source>P + N = {0} + {1} = {2} positions, but the model handles {3}: shorten the prompt or ask for fewer new tokens.</source>
        <translation>P + N = {0} + {1} = {2}개 위치인데 모델은 {3}개까지만 다룹니다. 프롬프트를 줄이거나 새 토큰을 적게 요청하세요.</translation>
    </message>
    <message>
        <source>Cannot load the model ({0}).</source>
        <translation>모델을 불러올 수 없습니다 ({0}).</translation>
    </message>
    <message>
        <source>{0} is not a regular file (a device, pipe or folder); choose a saved run (.kvrun.json).</source>
        <translation>{0}은(는) 일반 파일이 아닙니다(장치, 파이프 또는 폴더). 저장한 실행(.kvrun.json)을 고르세요.</translation>
    </message>
    <message>
        <source>{0} is larger than {1} MiB, far more than a saved run holds; it is not a KV Studio run file.</source>
        <translation>{0}은(는) {1} MiB보다 커서 저장한 실행보다 훨씬 큽니다. KV Studio 실행 파일이 아닙니다.</translation>
    </message>
    <message>
        <source>{0}: {1} prompt tokens + max_new_tokens {2} is more than the {3} positions a model can have; the file is damaged.</source>
        <translation>{0}: 프롬프트 토큰 {1}개 + max_new_tokens {2}가 모델이 가질 수 있는 위치 {3}개보다 많습니다. 파일이 손상되었습니다.</translation>
    </message>
    <message>
        <source>{0} must be between {1} and {2}, got {3}.</source>
        <translation>{0}은(는) {1}~{2} 사이여야 하는데 {3}입니다.</translation>
    </message>
    <message>
        <source>{0} must be a whole number, got {1}.</source>
        <translation>{0}은(는) 정수여야 하는데 {1}입니다.</translation>
    </message>
    <message>
        <source>{0} must be numbers separated by commas, e.g. {1}; got {2}.</source>
        <translation>{0}은(는) 쉼표로 구분한 숫자여야 합니다 (예: {1}). 받은 값: {2}.</translation>
    </message>
    <message>
        <source>{0} must be a finite number between {1} and {2}, got {3}.</source>
        <translation>{0}은(는) {1}~{2} 사이의 유한한 수여야 하는데 {3}입니다.</translation>
    </message>
    <message>
        <source>{0} must be a finite number, got {1}.</source>
        <translation>{0}은(는) 유한한 수여야 하는데 {1}입니다.</translation>
    </message>
    <message>
        <source>{0} is not a regular file (a device, pipe or folder); choose {1}.</source>
        <translation>{0}은(는) 일반 파일이 아닙니다(장치, 파이프 또는 폴더). {1}을(를) 고르세요.</translation>
    </message>
    <message>
        <source>{0} does not exist; choose {1}.</source>
        <translation>{0}이(가) 없습니다. {1}을(를) 고르세요.</translation>
    </message>
    <message>
        <source>{0} is not UTF-8 text ({1}); save it as UTF-8 or choose {2}.</source>
        <translation>{0}은(는) UTF-8 텍스트가 아닙니다({1}). UTF-8로 저장하거나 {2}을(를) 고르세요.</translation>
    </message>
    <message>
        <source>{0} is not valid JSON ({1} at line {2}); fix it or choose {3}.</source>
        <translation>{0}은(는) 올바른 JSON이 아닙니다({2}번째 줄: {1}). 고치거나 {3}을(를) 고르세요.</translation>
    </message>
    <message>
        <source>{0} is nested thousands of levels deep; it is damaged or not {1}.</source>
        <translation>{0}은(는) 수천 단계로 중첩되어 있습니다. 손상되었거나 {1}이(가) 아닙니다.</translation>
    </message>
    <message>
        <source>{0} cannot be read as JSON ({1}); choose {2}.</source>
        <translation>{0}을(를) JSON으로 읽을 수 없습니다({1}). {2}을(를) 고르세요.</translation>
    </message>
    <message>
        <source>The llama.cpp engine needs llama-cpp-python (the optional llama extra): pip install 'kvstudio[llama]'  (it builds llama.cpp from source: about {0} CPU-minutes).</source>
        <translation>llama.cpp 엔진에는 llama-cpp-python(선택 설치 llama)이 필요합니다: pip install 'kvstudio[llama]'  (llama.cpp를 소스에서 빌드합니다: CPU로 약 {0}분).</translation>
    </message>
    <message>
        <source>Writing GGUF needs the `gguf` package (the optional llama extra): pip install 'kvstudio[llama]'  (or: pip install gguf).</source>
        <translation>GGUF를 쓰려면 `gguf` 패키지(선택 설치 llama)가 필요합니다: pip install 'kvstudio[llama]'  (또는: pip install gguf).</translation>
    </message>
    <message>
        <source>The twin lab needs P &gt; {0} tokens (its copy and size checks use the first {1}).</source>
        <translation>엔진 쌍둥이 실습에는 P &gt; {0} 토큰이 필요합니다 (복사와 크기 확인에 처음 {1}개를 씁니다).</translation>
    </message>
</context>
<context>
    <name>ModelPanel</name>
    <message>
        <source>Open a model folder</source>
        <translation>모델 폴더 열기</translation>
    </message>
    <message>
        <source>Open a MiniMind .pth checkpoint</source>
        <translation>MiniMind .pth 체크포인트 열기</translation>
    </message>
    <message>
        <source>PyTorch state dict (*.pth *.pt)</source>
        <translation>PyTorch state dict (*.pth *.pt)</translation>
    </message>
    <message>
        <source>Choose the folder with its tokenizer.json</source>
        <translation>tokenizer.json이 있는 폴더를 고르세요</translation>
    </message>
    <message>
        <source>Opened: {0}</source>
        <translation>열린 모델: {0}</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>불러오는 중…</translation>
    </message>
    <message>
        <source>chat</source>
        <translation>채팅</translation>
    </message>
    <message>
        <source>base</source>
        <translation>기본</translation>
    </message>
    <message>
        <source>Loaded: {0} ({1})</source>
        <translation>불러옴: {0} ({1})</translation>
    </message>
    <message>
        <source>Random weights: the text is meaningless, the measurements are real.</source>
        <translation>무작위 가중치: 글은 의미가 없지만 측정값은 실제입니다.</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>모델</translation>
    </message>
    <message>
        <source>Embedded chat model</source>
        <translation>내장 채팅 모델</translation>
    </message>
    <message>
        <source>Embedded base model</source>
        <translation>내장 기본 모델</translation>
    </message>
    <message>
        <source>The models shipped with KV Studio (a seeded course model when none is installed).</source>
        <translation>KV Studio에 포함된 모델 (설치된 모델이 없으면 시드로 만든 강의용 모델).</translation>
    </message>
    <message>
        <source>Open model folder…</source>
        <translation>모델 폴더 열기…</translation>
    </message>
    <message>
        <source>A folder with config.json, model weights and tokenizer.json.</source>
        <translation>config.json, 모델 가중치, tokenizer.json이 든 폴더.</translation>
    </message>
    <message>
        <source>Open MiniMind .pth…</source>
        <translation>MiniMind .pth 열기…</translation>
    </message>
    <message>
        <source>A MiniMind checkpoint (.pth state dict), then the folder holding its tokenizer.</source>
        <translation>MiniMind 체크포인트(.pth state dict)를 고른 뒤 토크나이저가 있는 폴더를 고릅니다.</translation>
    </message>
</context>
<context>
    <name>Names</name>
    <message>
        <source>Cached</source>
        <translation>캐시</translation>
    </message>
    <message>
        <source>Recompute</source>
        <translation>재계산</translation>
    </message>
    <message>
        <source>Dynamic</source>
        <translation>동적</translation>
    </message>
    <message>
        <source>Static</source>
        <translation>정적</translation>
    </message>
    <message>
        <source>Sliding window</source>
        <translation>슬라이딩 윈도</translation>
    </message>
</context>
<context>
    <name>PagedCachePanel</name>
    <message>
        <source>30 answers to one question, sampled with one seed, stored three ways: preallocated to P + N tokens per row, a dynamic cache that grows every row each step, and a paged cache of fixed-size blocks. Rows share the prompt's blocks (a shared block is stored once; a row that appends to a shared, half-full block copies it first), finished rows stop growing, and the only waste is each row's last block.</source>
        <translation>한 질문에 대한 30개의 답을 같은 시드로 샘플링하고 세 가지 방식으로 저장합니다: 행마다 P + N 토큰을 미리 잡는 방식, 매 단계 모든 행이 자라는 동적 캐시, 고정 크기 블록으로 나눈 페이지 캐시. 행들은 프롬프트 블록을 공유하고(공유 블록은 한 번만 저장되며, 공유된 반쯤 찬 블록에 토큰을 덧붙이는 행은 먼저 그 블록을 복사합니다), 끝난 행은 더 자라지 않으며, 낭비는 각 행의 마지막 블록뿐입니다.</translation>
    </message>
    <message>
        <source>Block table at step</source>
        <translation>블록 테이블을 볼 단계</translation>
    </message>
</context>
<context>
    <name>PagedCacheView</name>
    <message>
        <source>Memory held per step</source>
        <translation>단계별 차지한 메모리</translation>
    </message>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>block (in the row's table)</source>
        <translation>블록 (행의 테이블 안 순서)</translation>
    </message>
    <message>
        <source>sample (row)</source>
        <translation>샘플 (행)</translation>
    </message>
    <message>
        <source>preallocated (P + N per row)</source>
        <translation>미리 할당 (행마다 P + N)</translation>
    </message>
    <message>
        <source>dynamic</source>
        <translation>동적</translation>
    </message>
    <message>
        <source>paged: blocks held</source>
        <translation>페이지: 차지한 블록</translation>
    </message>
    <message>
        <source>paged: slots with tokens</source>
        <translation>페이지: 토큰이 든 칸</translation>
    </message>
    <message>
        <source>shared block</source>
        <translation>공유 블록</translation>
    </message>
    <message>
        <source>own block</source>
        <translation>자기 블록</translation>
    </message>
    <message>
        <source>empty slots</source>
        <translation>빈 칸</translation>
    </message>
    <message>
        <source>preallocated</source>
        <translation>미리 할당</translation>
    </message>
    <message>
        <source>{0} blocks × {1:,} B</source>
        <translation>블록 {0}개 × {1:,} B</translation>
    </message>
    <message>
        <source>the rest is empty slots in last blocks</source>
        <translation>나머지는 마지막 블록들의 빈 칸</translation>
    </message>
    <message>
        <source>hand count</source>
        <translation>손 계산</translation>
    </message>
    <message>
        <source>P//b = {0} shared + Σ(⌈len/b⌉ − {0}) = {1} blocks</source>
        <translation>P//b = 공유 {0} + Σ(⌈len/b⌉ − {0}) = 블록 {1}개</translation>
    </message>
    <message>
        <source>copies on write</source>
        <translation>쓰기 시 복사(CoW) 횟수</translation>
    </message>
    <message>
        <source>same samples in all three</source>
        <translation>세 캐시 모두 같은 샘플</translation>
    </message>
    <message>
        <source>greedy: paged = dynamic</source>
        <translation>탐욕적 생성: 페이지 = 동적</translation>
    </message>
    <message>
        <source>{0} tokens</source>
        <translation>{0} 토큰</translation>
    </message>
    <message>
        <source>cache</source>
        <translation>캐시</translation>
    </message>
    <message>
        <source>held (bytes)</source>
        <translation>보유 (바이트)</translation>
    </message>
    <message>
        <source>how</source>
        <translation>계산</translation>
    </message>
    <message>
        <source>Block tables after step {0}: {1} blocks, {2}</source>
        <translation>단계 {0} 이후 블록 테이블: 블록 {1}개, {2}</translation>
    </message>
    <message>
        <source>{0} answers held at the end: preallocated {1} · dynamic {2} · paged {3}</source>
        <translation>답 {0}개가 끝에 차지한 메모리: 미리 할당 {1} · 동적 {2} · 페이지 {3}</translation>
    </message>
    <message>
        <source>paged: {0} blocks of {1} tokens, shared prompt blocks: {2}, copies on write: {3}</source>
        <translation>페이지: {1}토큰 블록 {0}개, 공유 프롬프트 블록 {2}개, 쓰기 시 복사 {3}회</translation>
    </message>
    <message>
        <source>paged holds {0:.1f}× less than preallocated · P = {1}, N = {2}, {3:,} B per token</source>
        <translation>페이지가 미리 할당보다 {0:.1f}배 적게 차지 · P = {1}, N = {2}, 토큰당 {3:,} B</translation>
    </message>
    <message>
        <source>preallocated (B)</source>
        <translation>미리 할당 (B)</translation>
    </message>
    <message>
        <source>dynamic (B)</source>
        <translation>동적 (B)</translation>
    </message>
    <message>
        <source>paged: blocks held (B)</source>
        <translation>페이지: 차지한 블록 (B)</translation>
    </message>
    <message>
        <source>paged: slots with tokens (B)</source>
        <translation>페이지: 토큰이 든 칸 (B)</translation>
    </message>
    <message>
        <source>blocks held</source>
        <translation>차지한 블록</translation>
    </message>
    <message>
        <source>shared blocks</source>
        <translation>공유 블록</translation>
    </message>
    <message>
        <source>tokens stored</source>
        <translation>저장한 토큰</translation>
    </message>
    <message>
        <source>Block tables after step {0}</source>
        <translation>{0}단계 후 블록 테이블</translation>
    </message>
</context>
<context>
    <name>PresenterView</name>
    <message>
        <source>Tokens fed to the model</source>
        <translation>모델에 넣은 토큰</translation>
    </message>
    <message>
        <source>Time per step</source>
        <translation>단계별 시간</translation>
    </message>
    <message>
        <source>KV cache per layer</source>
        <translation>층별 KV 캐시</translation>
    </message>
    <message>
        <source>Distinct answers over repeated samples</source>
        <translation>반복 샘플링의 서로 다른 답</translation>
    </message>
    <message>
        <source>chart {0} of {1}</source>
        <translation>차트 {0} / {1}</translation>
    </message>
    <message>
        <source>KV Studio — presenter view</source>
        <translation>KV Studio — 발표자 화면</translation>
    </message>
    <message>
        <source>Page Down / → / Space: next step · Page Up / ←: one step back (as in the window) · ↓ / ↑: next / previous chart · 1–9: chart by number · P: play or pause · Home: start over · Esc: back to the window</source>
        <translation>Page Down / → / Space: 다음 단계 · Page Up / ←: 한 단계 뒤로 (창에서와 같음) · ↓ / ↑: 다음 / 이전 차트 · 1–9: 번호로 차트 선택 · P: 재생·일시정지 · Home: 처음부터 · Esc: 창으로 돌아가기</translation>
    </message>
</context>
<context>
    <name>ProjectorPanel</name>
    <message>
        <source>the config's dtype</source>
        <translation>config의 dtype</translation>
    </message>
    <message>
        <source>Bytes per token = 2 · L · H_kv · d · bytes (K and V, every layer); the cache for a batch is batch × context × that; a sliding window keeps W − 1 tokens on its layers, and an 8- or 4-bit cache also stores a float16 scale per token and K/V head. Bytes default to the config's dtype. Presets use the numbers of each model's published config.json. For the loaded model the projection is checked against a real run.</source>
        <translation>토큰당 바이트 = 2 · L · H_kv · d · 바이트 (모든 층의 K와 V)이고, 배치의 캐시는 배치 × 문맥 × 그 값입니다. 슬라이딩 윈도는 해당 층에 W − 1 토큰을 남기고, 8비트나 4비트 캐시는 토큰과 K/V 헤드마다 float16 스케일도 저장합니다. 바이트 수는 기본적으로 config의 dtype을 따릅니다. 프리셋은 각 모델이 공개한 config.json의 값을 씁니다. 불러온 모델은 실제 실행과 비교해 예측을 확인합니다.</translation>
    </message>
    <message>
        <source>the loaded model</source>
        <translation>불러온 모델</translation>
    </message>
    <message>
        <source>config.json…</source>
        <translation>config.json…</translation>
    </message>
    <message>
        <source>Open a config.json</source>
        <translation>config.json 열기</translation>
    </message>
    <message>
        <source>config (*.json)</source>
        <translation>설정 (*.json)</translation>
    </message>
</context>
<context>
    <name>ProjectorView</name>
    <message>
        <source>KV cache for one batch vs context length</source>
        <translation>문맥 길이에 따른 한 배치의 KV 캐시</translation>
    </message>
    <message>
        <source>context length (tokens, log scale)</source>
        <translation>문맥 길이 (토큰, 로그 눈금)</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 캐시</translation>
    </message>
    <message>
        <source>KV cache, 8-bit</source>
        <translation>KV 캐시, 8비트</translation>
    </message>
    <message>
        <source>model weights</source>
        <translation>모델 가중치</translation>
    </message>
    <message>
        <source>GPU memory (16 / 24 / 40 / 80 GiB)</source>
        <translation>GPU 메모리 (16 / 24 / 40 / 80 GiB)</translation>
    </message>
    <message>
        <source>{0}: KV cache for batch {1} vs context length</source>
        <translation>{0}: 배치 {1}의 문맥 길이별 KV 캐시</translation>
    </message>
    <message>
        <source>weights ({0:,} parameters × {1} B)</source>
        <translation>가중치 (파라미터 {0:,}개 × {1} B)</translation>
    </message>
    <message>
        <source>real run: {0} rows × {1} tokens</source>
        <translation>실제 실행: {0}행 × {1} 토큰</translation>
    </message>
    <message>
        <source>measured {0:,} B</source>
        <translation>측정 {0:,} B</translation>
    </message>
    <message>
        <source>projected {0:,} B</source>
        <translation>예측 {0:,} B</translation>
    </message>
    <message>
        <source>source</source>
        <translation>출처</translation>
    </message>
    <message>
        <source>what changes</source>
        <translation>바뀌는 것</translation>
    </message>
    <message>
        <source>bytes per token</source>
        <translation>토큰당 바이트</translation>
    </message>
    <message>
        <source>cache ({0} × {1:,}), GiB</source>
        <translation>캐시 ({0} × {1:,}), GiB</translation>
    </message>
    <message>
        <source>cache + weights, GiB</source>
        <translation>캐시 + 가중치, GiB</translation>
    </message>
    <message>
        <source>{0}: {1:,} B per token ({2}-bit) → {3} for batch {4} × {5:,} tokens</source>
        <translation>{0}: 토큰당 {1:,} B ({2}비트) → 배치 {4} × {5:,} 토큰에 {3}</translation>
    </message>
    <message>
        <source>with the weights ({0}): {1}; fits in GPU memory (GiB): {2}</source>
        <translation>가중치({0})까지: {1}; GPU 메모리(GiB)에 들어가는지: {2}</translation>
    </message>
    <message>
        <source>real run, {0} rows × {1} tokens: measured {2:,} B, projected {3:,} B</source>
        <translation>실제 실행, {0}행 × {1}토큰: 측정 {2:,} B, 예측 {3:,} B</translation>
    </message>
    <message>
        <source>KV cache, {0}-bit (B)</source>
        <translation>KV 캐시, {0}비트 (B)</translation>
    </message>
    <message>
        <source>KV cache, 8-bit (B)</source>
        <translation>KV 캐시, 8비트 (B)</translation>
    </message>
    <message>
        <source>model weights (B)</source>
        <translation>모델 가중치 (B)</translation>
    </message>
    <message>
        <source>bytes per token (B)</source>
        <translation>토큰당 바이트 (B)</translation>
    </message>
    <message>
        <source>cache (B)</source>
        <translation>캐시 (B)</translation>
    </message>
    <message>
        <source>cache + weights (B)</source>
        <translation>캐시 + 가중치 (B)</translation>
    </message>
    <message>
        <source>KV cache for batch {0} vs context length</source>
        <translation>배치 {0}의 KV 캐시와 컨텍스트 길이</translation>
    </message>
    <message>
        <source>context length (tokens)</source>
        <translation>컨텍스트 길이 (토큰)</translation>
    </message>
    <message>
        <source>What changes at {0:,} tokens, batch {1}</source>
        <translation>{0:,} 토큰, 배치 {1}에서 바뀌는 것</translation>
    </message>
    <message>
        <source>as configured</source>
        <translation>설정 그대로</translation>
    </message>
    <message>
        <source>without GQA (H_kv = H)</source>
        <translation>GQA 없이 (H_kv = H)</translation>
    </message>
    <message>
        <source>16-bit cache</source>
        <translation>16비트 캐시</translation>
    </message>
    <message>
        <source>8-bit cache (scales included)</source>
        <translation>8비트 캐시 (스케일 포함)</translation>
    </message>
    <message>
        <source>window W = 4096</source>
        <translation>윈도 W = 4096</translation>
    </message>
    <message>
        <source>without the window</source>
        <translation>윈도 없이</translation>
    </message>
</context>
<context>
    <name>QuantizedCachePanel</name>
    <message>
        <source>The same greedy run with the model's own cache and with K and V stored in 16 bits, in 8 bits (int8, one float16 scale per token and K/V head) and in 4 bits (two numbers a byte, same scales). Attention sees them dequantized. Bytes are measured from the stored tensors, scales included; the drift is the largest logit change per step while the context still matches.</source>
        <translation>같은 탐욕적 생성을 모델 자신의 캐시로, 그리고 K와 V를 16비트, 8비트(int8, 토큰과 K/V 헤드마다 float16 스케일 하나), 4비트(한 바이트에 숫자 두 개, 같은 스케일)로 저장해 실행합니다. 어텐션은 역양자화된 값을 봅니다. 바이트는 스케일을 포함해 저장된 텐서에서 측정하고, 오차는 문맥이 아직 같은 동안 단계마다 가장 크게 바뀐 로짓입니다.</translation>
    </message>
</context>
<context>
    <name>QuantizedCacheView</name>
    <message>
        <source>max |Δlogit| per step (log)</source>
        <translation>단계별 최대 |Δ로짓| (로그)</translation>
    </message>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>max |Δlogit|</source>
        <translation>최대 |Δ로짓|</translation>
    </message>
    <message>
        <source>Cache bytes at the end</source>
        <translation>마지막 캐시 바이트</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>cache</source>
        <translation>캐시</translation>
    </message>
    <message>
        <source>bytes (measured)</source>
        <translation>바이트 (측정)</translation>
    </message>
    <message>
        <source>bytes (formula)</source>
        <translation>바이트 (공식)</translation>
    </message>
    <message>
        <source>× smaller</source>
        <translation>× 작아짐</translation>
    </message>
    <message>
        <source>first divergent step</source>
        <translation>처음 달라진 단계</translation>
    </message>
    <message>
        <source>answer changed</source>
        <translation>답이 바뀜</translation>
    </message>
    <message>
        <source>none</source>
        <translation>없음</translation>
    </message>
    <message>
        <source>KV cache after {0} + {1} tokens, greedy: </source>
        <translation>그리디로 {0} + {1} 토큰 후 KV 캐시: </translation>
    </message>
    <message>
        <source>smaller than fp{0}: </source>
        <translation>fp{0} 대비 작아진 배수: </translation>
    </message>
    <message>
        <source>max |Δlogit|: </source>
        <translation>최대 |Δlogit|: </translation>
    </message>
    <message>
        <source>first divergent step: </source>
        <translation>처음 달라진 단계: </translation>
    </message>
    <message>
        <source>{0}: max |Δlogit|</source>
        <translation>{0}: 최대 |Δlogit|</translation>
    </message>
    <message>
        <source>bytes (measured, B)</source>
        <translation>바이트 (측정, B)</translation>
    </message>
    <message>
        <source>bytes (formula, B)</source>
        <translation>바이트 (공식, B)</translation>
    </message>
    <message>
        <source>bits per number</source>
        <translation>숫자당 비트</translation>
    </message>
    <message>
        <source>max |Δlogit| per step</source>
        <translation>단계별 최대 |Δlogit|</translation>
    </message>
</context>
<context>
    <name>ReplayController</name>
    <message>
        <source>Replaying {0} run(s) of {1}; no model is computing.</source>
        <translation>{1}의 실행 {0}개를 다시 봅니다. 모델은 계산하지 않습니다.</translation>
    </message>
</context>
<context>
    <name>ResultsTable</name>
    <message>
        <source>quantity</source>
        <translation>항목</translation>
    </message>
</context>
<context>
    <name>RunController</name>
    <message>
        <source>Loading the model…</source>
        <translation>모델을 불러오는 중…</translation>
    </message>
    <message>
        <source>Loading the embedded model instead.</source>
        <translation>대신 내장 모델을 불러옵니다.</translation>
    </message>
    <message>
        <source>The lab finished; the live run goes on.</source>
        <translation>실습이 끝났습니다. 실시간 실행을 이어 갑니다.</translation>
    </message>
    <message>
        <source>A lab is measuring times: {0} live step(s) wait until it ends.</source>
        <translation>실습이 시간을 재는 중입니다. 실시간 단계 {0}개가 실습이 끝날 때까지 기다립니다.</translation>
    </message>
    <message>
        <source>A lab is measuring times: the live run waits until it ends.</source>
        <translation>실습이 시간을 재는 중입니다. 실시간 실행은 실습이 끝날 때까지 기다립니다.</translation>
    </message>
    <message>
        <source>Run cancelled before it started.</source>
        <translation>시작하기 전에 실행을 취소했습니다.</translation>
    </message>
    <message>
        <source>Back to the live model.</source>
        <translation>실시간 모델로 돌아왔습니다.</translation>
    </message>
    <message>
        <source>Model ready: {0}</source>
        <translation>모델 준비됨: {0}</translation>
    </message>
    <message>
        <source>Run finished: {0}.</source>
        <translation>실행이 끝났습니다: {0}.</translation>
    </message>
</context>
<context>
    <name>RunState</name>
    <message>
        <source>Ready</source>
        <translation>준비</translation>
    </message>
    <message>
        <source>Live: playing</source>
        <translation>실시간: 재생 중</translation>
    </message>
    <message>
        <source>Live: paused</source>
        <translation>실시간: 멈춤</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>끝남</translation>
    </message>
    <message>
        <source>Replay</source>
        <translation>다시 보기</translation>
    </message>
    <message>
        <source>answer finished at step {0} of {1}: {2}</source>
        <translation>{1}단계 중 {0}단계에서 답이 끝남: {2}</translation>
    </message>
    <message>
        <source>token budget reached: {0} of {1} steps</source>
        <translation>토큰 한도에 닿음: {1}단계 중 {0}단계</translation>
    </message>
    <message>
        <source>looking back at step {0} of {1}</source>
        <translation>{1}단계 중 {0}단계를 되돌아보는 중</translation>
    </message>
    <message>
        <source>{0} of {1} steps</source>
        <translation>{1}단계 중 {0}단계</translation>
    </message>
    <message>
        <source>playing</source>
        <translation>재생 중</translation>
    </message>
</context>
<context>
    <name>RunStateBar</name>
    <message>
        <source>step {0} / {1}</source>
        <translation>단계 {0} / {1}</translation>
    </message>
    <message>
        <source>Step history: drag to see every plot and chip as they were at that step (← back, → forward, End = latest). Exports show the step selected here.</source>
        <translation>단계 기록: 끌어서 그 단계의 모든 그래프와 토큰을 봅니다 (← 뒤로, → 앞으로, End = 최신). 내보내기도 여기서 고른 단계를 보여 줍니다.</translation>
    </message>
    <message>
        <source>Latest</source>
        <translation>최신</translation>
    </message>
    <message>
        <source>Show the latest step again (End).</source>
        <translation>최신 단계를 다시 보여 줍니다 (End).</translation>
    </message>
    <message>
        <source>Back to live</source>
        <translation>실시간으로 돌아가기</translation>
    </message>
    <message>
        <source>Close the replay and step the loaded model again.</source>
        <translation>다시 보기를 닫고 불러온 모델로 다시 실행합니다.</translation>
    </message>
    <message>
        <source>→ or Space: next step · ←: one step back · End: latest · Home (lecture mode): start again what is on screen</source>
        <translation>→ 또는 Space: 다음 단계 · ←: 한 단계 뒤로 · End: 최신 · Home(강의 모드): 화면의 실행을 처음부터 다시</translation>
    </message>
</context>
<context>
    <name>RunStatusBar</name>
    <message>
        <source>Loading the model…</source>
        <translation>모델을 불러오는 중…</translation>
    </message>
    <message>
        <source>Opening the saved run…</source>
        <translation>저장한 실행 여는 중…</translation>
    </message>
    <message>
        <source>Mode: {0}</source>
        <translation>모드: {0}</translation>
    </message>
    <message>
        <source>Step {0}/{1}</source>
        <translation>단계 {0}/{1}</translation>
    </message>
    <message>
        <source>Tokens fed: {0}</source>
        <translation>넣은 토큰: {0}</translation>
    </message>
    <message>
        <source>Cache: {0}</source>
        <translation>캐시: {0}</translation>
    </message>
    <message>
        <source>TTFT: {0} ms (single measurement)</source>
        <translation>TTFT: {0} ms (한 번 측정)</translation>
    </message>
    <message>
        <source>{0} ms/token (median of {1} steps)</source>
        <translation>토큰당 {0} ms ({1}개 단계 중앙값)</translation>
    </message>
    <message>
        <source>— ms/token</source>
        <translation>토큰당 — ms</translation>
    </message>
    <message>
        <source>ms/token: the median time of one decode step, timed by the model's thread around the forward pass and the sampling only (never the drawing); the prefill is apart, as TTFT. Fastest step {0} ms, slowest {1} ms, {2} steps.</source>
        <translation>토큰당 ms: 디코드 한 단계에 걸린 시간의 중앙값입니다. 모델 스레드가 순전파와 샘플링만 잽니다(그리기는 들어가지 않음). 프리필은 TTFT로 따로 봅니다. 가장 빠른 단계 {0} ms, 가장 느린 단계 {1} ms, {2}개 단계.</translation>
    </message>
    <message>
        <source>tokens/s = 1000 ÷ ms/token (decode steps only)</source>
        <translation>초당 토큰 = 1000 ÷ 토큰당 ms (디코드 단계만)</translation>
    </message>
    <message>
        <source>{0} tokens/s</source>
        <translation>초당 {0} 토큰</translation>
    </message>
    <message>
        <source>torch threads: {0} · {1}</source>
        <translation>torch 스레드: {0} · {1}</translation>
    </message>
</context>
<context>
    <name>SamplingPanel</name>
    <message>
        <source>Sampling</source>
        <translation>샘플링</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 캐시</translation>
    </message>
    <message>
        <source>Greedy</source>
        <translation>그리디</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>온도</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Repetition penalty</source>
        <translation>반복 페널티</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>시드</translation>
    </message>
    <message>
        <source>Max new tokens</source>
        <translation>최대 새 토큰 수</translation>
    </message>
    <message>
        <source>Stop at eos</source>
        <translation>eos에서 멈춤</translation>
    </message>
    <message>
        <source>Cache kind</source>
        <translation>캐시 종류</translation>
    </message>
    <message>
        <source>Static length</source>
        <translation>정적 길이</translation>
    </message>
    <message>
        <source>Window W</source>
        <translation>윈도 W</translation>
    </message>
    <message>
        <source>Always take the most likely token (temperature 0). Same prompt, same answer.</source>
        <translation>항상 가장 확률 높은 토큰을 고릅니다 (온도 0). 같은 프롬프트면 같은 답이 나옵니다.</translation>
    </message>
    <message>
        <source>Divides the logits before softmax: below 1 sharpens the distribution, above 1 flattens it and answers vary more. Course default 0.85.</source>
        <translation>소프트맥스 전에 로짓을 나눕니다. 1보다 작으면 분포가 뾰족해지고, 1보다 크면 평평해져 답이 더 다양해집니다. 강의 기본값 0.85.</translation>
    </message>
    <message>
        <source>Keep only the k most likely tokens before sampling. 0 = off (course default).</source>
        <translation>샘플링 전에 확률 높은 토큰 k개만 남깁니다. 0 = 끔 (강의 기본값).</translation>
    </message>
    <message>
        <source>off</source>
        <translation>끔</translation>
    </message>
    <message>
        <source>Keep the smallest set of likely tokens whose probabilities add up to p (nucleus sampling). 1.0 = off; course default 0.85.</source>
        <translation>확률 합이 p에 이르는 가장 작은 토큰 집합만 남깁니다 (뉴클리어스 샘플링). 1.0 = 끔, 강의 기본값 0.85.</translation>
    </message>
    <message>
        <source>Makes tokens already in the text less likely; 1.0 = off (course default).</source>
        <translation>이미 글에 나온 토큰이 덜 나오게 합니다. 1.0 = 끔 (강의 기본값).</translation>
    </message>
    <message>
        <source>Seeds this run's random generator: the same seed gives the same samples.</source>
        <translation>이 실행의 난수 생성기 시드입니다. 같은 시드면 같은 샘플이 나옵니다.</translation>
    </message>
    <message>
        <source>The most tokens a run generates (N).</source>
        <translation>한 실행이 생성하는 최대 토큰 수 (N).</translation>
    </message>
    <message>
        <source>Ticked: a run ends when the model writes its end-of-answer token (eos). Unticked (course default): eos is banned and every run generates N tokens, so cached and recompute are compared over the same N steps.</source>
        <translation>체크하면 모델이 답의 끝 토큰(eos)을 쓸 때 실행이 끝납니다. 체크하지 않으면(강의 기본값) eos를 막아 매번 N개 토큰을 생성하므로, 캐시와 재계산을 같은 N단계로 비교합니다.</translation>
    </message>
    <message>
        <source>Dynamic grows by one token per step; static is allocated once for its length; a sliding window keeps only the last W tokens.</source>
        <translation>동적 캐시는 단계마다 한 토큰씩 늘고, 정적 캐시는 길이만큼 한 번에 할당되며, 슬라이딩 윈도는 마지막 W개 토큰만 보관합니다.</translation>
    </message>
    <message>
        <source>Tokens a static cache preallocates; prompt + new tokens must fit.</source>
        <translation>정적 캐시가 미리 할당하는 토큰 수. 프롬프트 + 새 토큰이 들어가야 합니다.</translation>
    </message>
    <message>
        <source>Tokens a sliding-window cache keeps; each query looks back at most W tokens.</source>
        <translation>슬라이딩 윈도 캐시가 보관하는 토큰 수. 각 쿼리는 최대 W개 토큰까지만 돌아봅니다.</translation>
    </message>
</context>
<context>
    <name>SavedRuns</name>
    <message>
        <source>Save run</source>
        <translation>실행 저장</translation>
    </message>
    <message>
        <source>KV Studio runs (*.json)</source>
        <translation>KV Studio 실행 파일 (*.json)</translation>
    </message>
    <message>
        <source>Saved the run to {0}</source>
        <translation>실행을 {0}에 저장했습니다</translation>
    </message>
    <message>
        <source>Still opening the last saved run; wait for it.</source>
        <translation>저장한 실행을 아직 여는 중입니다. 잠시 기다려 주세요.</translation>
    </message>
    <message>
        <source>Opening {0}…</source>
        <translation>{0} 여는 중…</translation>
    </message>
    <message>
        <source>Open saved run</source>
        <translation>저장한 실행 열기</translation>
    </message>
</context>
<context>
    <name>ServingExports</name>
    <message>
        <source>waiting</source>
        <translation>대기</translation>
    </message>
    <message>
        <source>prefill chunk</source>
        <translation>프리필 청크</translation>
    </message>
    <message>
        <source>decode</source>
        <translation>디코드</translation>
    </message>
    <message>
        <source>idle row (fed, no token)</source>
        <translation>빈 행 (입력만, 토큰 없음)</translation>
    </message>
    <message>
        <source>preempted</source>
        <translation>선점됨</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>끝남</translation>
    </message>
    <message>
        <source>continuous batching</source>
        <translation>연속 배칭</translation>
    </message>
    <message>
        <source>static batching</source>
        <translation>정적 배칭</translation>
    </message>
    <message>
        <source>chunk {0}</source>
        <translation>청크 {0}</translation>
    </message>
    <message>
        <source>block b {0}</source>
        <translation>블록 b {0}</translation>
    </message>
    <message>
        <source>off</source>
        <translation>끔</translation>
    </message>
    <message>
        <source>blocks (vLLM)</source>
        <translation>블록 (vLLM)</translation>
    </message>
    <message>
        <source>radix tree (SGLang)</source>
        <translation>radix 트리 (SGLang)</translation>
    </message>
    <message>
        <source>prefix cache {0}</source>
        <translation>프리픽스 캐시 {0}</translation>
    </message>
    <message>
        <source>max batch {0}</source>
        <translation>최대 배치 {0}</translation>
    </message>
    <message>
        <source>budget {0} blocks</source>
        <translation>예산 {0} 블록</translation>
    </message>
    <message>
        <source>single measurement</source>
        <translation>한 번 측정</translation>
    </message>
    <message>
        <source>median of {0}</source>
        <translation>{0}회 중앙값</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>메모리</translation>
    </message>
    <message>
        <source>compute</source>
        <translation>계산</translation>
    </message>
    <message>
        <source>overhead</source>
        <translation>오버헤드</translation>
    </message>
    <message>
        <source>{0} requests in {1} steps: {2:,.0f} tokens/s ({3}) · wasted slots {4} (formula {5}) · peak {6} blocks, {7}</source>
        <translation>요청 {0}개, {1} 단계: {2:,.0f} 토큰/초 ({3}) · 낭비 슬롯 {4} (공식 {5}) · 최대 {6} 블록, {7}</translation>
    </message>
    <message>
        <source>prefix hits {0} tokens · same tokens as solo runs: {1} of {2}, max |Δlogit| {3} · {4}</source>
        <translation>프리픽스 적중 {0} 토큰 · 단독 실행과 같은 토큰: {2}개 중 {1}개, 최대 |Δ로짓| {3} · {4}</translation>
    </message>
    <message>
        <source>Decode step, batch {0} → {1}: {2:.2f} → {3:.2f} ms ({4}); throughput ×{5:.1f}; weights read once: {6}</source>
        <translation>디코드 단계, 배치 {0} → {1}: {2:.2f} → {3:.2f} ms ({4}); 처리량 ×{5:.1f}; 가중치는 한 번만 읽음: {6}</translation>
    </message>
    <message>
        <source>not arrived yet</source>
        <translation>아직 도착 전</translation>
    </message>
    <message>
        <source>request #{0}</source>
        <translation>요청 #{0}</translation>
    </message>
    <message>
        <source>What each request did, step by step</source>
        <translation>단계마다 각 요청이 한 일</translation>
    </message>
    <message>
        <source>scheduler step</source>
        <translation>스케줄러 단계</translation>
    </message>
    <message>
        <source>Tokens fed per step</source>
        <translation>단계별 입력 토큰</translation>
    </message>
    <message>
        <source>prefill tokens</source>
        <translation>프리필 토큰</translation>
    </message>
    <message>
        <source>decode tokens</source>
        <translation>디코드 토큰</translation>
    </message>
    <message>
        <source>padding slots</source>
        <translation>패딩 슬롯</translation>
    </message>
    <message>
        <source>idle rows</source>
        <translation>빈 행</translation>
    </message>
    <message>
        <source>rows in the batch</source>
        <translation>배치의 행</translation>
    </message>
    <message>
        <source>Cache blocks per step</source>
        <translation>단계마다 캐시 블록</translation>
    </message>
    <message>
        <source>blocks in use</source>
        <translation>쓰는 블록</translation>
    </message>
    <message>
        <source>prefix cache only</source>
        <translation>프리픽스 캐시만</translation>
    </message>
    <message>
        <source>free blocks</source>
        <translation>빈 블록</translation>
    </message>
    <message>
        <source>cache bytes (B)</source>
        <translation>캐시 바이트 (B)</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>요청</translation>
    </message>
    <message>
        <source>request</source>
        <translation>요청</translation>
    </message>
    <message>
        <source>prompt tokens</source>
        <translation>프롬프트 토큰</translation>
    </message>
    <message>
        <source>prefix hits</source>
        <translation>프리픽스 적중</translation>
    </message>
    <message>
        <source>TTFT (ms)</source>
        <translation>TTFT (ms)</translation>
    </message>
    <message>
        <source>ITL p50 (ms)</source>
        <translation>ITL p50 (ms)</translation>
    </message>
    <message>
        <source>ITL p95 (ms)</source>
        <translation>ITL p95 (ms)</translation>
    </message>
    <message>
        <source>answer tokens</source>
        <translation>답변 토큰</translation>
    </message>
    <message>
        <source>same tokens as solo</source>
        <translation>단독 실행과 같은 토큰</translation>
    </message>
    <message>
        <source>max |Δlogit| vs solo</source>
        <translation>단독 실행 대비 최대 |Δ로짓|</translation>
    </message>
    <message>
        <source>ms per step, median</source>
        <translation>단계당 ms, 중앙값</translation>
    </message>
    <message>
        <source>ms per step, fastest round</source>
        <translation>단계당 ms, 가장 빠른 회</translation>
    </message>
    <message>
        <source>ms per step, slowest round</source>
        <translation>단계당 ms, 가장 느린 회</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>토큰/초</translation>
    </message>
    <message>
        <source>weight bytes read (B)</source>
        <translation>읽은 가중치 바이트 (B)</translation>
    </message>
    <message>
        <source>KV bytes read (B)</source>
        <translation>읽은 KV 바이트 (B)</translation>
    </message>
    <message>
        <source>FLOPs</source>
        <translation>FLOPs</translation>
    </message>
    <message>
        <source>FLOP per byte</source>
        <translation>바이트당 FLOP</translation>
    </message>
    <message>
        <source>memory floor (ms)</source>
        <translation>메모리 하한 (ms)</translation>
    </message>
    <message>
        <source>compute floor (ms)</source>
        <translation>계산 하한 (ms)</translation>
    </message>
    <message>
        <source>Decode step time against batch size</source>
        <translation>배치 크기에 따른 디코드 단계 시간</translation>
    </message>
    <message>
        <source>batch size (rows)</source>
        <translation>배치 크기 (행)</translation>
    </message>
    <message>
        <source>TTFT (ms, {0})</source>
        <translation>TTFT (ms, {0})</translation>
    </message>
    <message>
        <source>batch</source>
        <translation>배치</translation>
    </message>
    <message>
        <source>ms per step ({0})</source>
        <translation>단계당 ms ({0})</translation>
    </message>
    <message>
        <source>read (MiB)</source>
        <translation>읽음 (MiB)</translation>
    </message>
    <message>
        <source>GFLOP</source>
        <translation>GFLOP</translation>
    </message>
    <message>
        <source>bound by</source>
        <translation>병목</translation>
    </message>
</context>
<context>
    <name>ServingPanel</name>
    <message>
        <source>Several requests share one model and one pool of cache blocks. The scheduler decides each step which requests run: static batching pads a batch to its longest prompt and feeds finished rows until the last one ends; continuous batching lets requests join and leave every step (chunked prefill shares a token budget per step); a prefix cache serves a shared system prompt once. Every answer is checked against the same request run alone. Then one decode step is timed at each batch size: the weights are read once whatever the batch, so more rows cost little until the step is bound by compute.</source>
        <translation>여러 요청이 모델 하나와 캐시 블록 풀 하나를 함께 씁니다. 스케줄러가 단계마다 어떤 요청을 돌릴지 정합니다. 정적 배칭은 배치를 가장 긴 프롬프트에 맞춰 패딩하고, 끝난 행도 마지막 행이 끝날 때까지 계속 넣습니다. 연속 배칭에서는 요청이 단계마다 들어오고 나갑니다(청크 프리필은 단계마다 토큰 예산을 나눠 씁니다). 프리픽스 캐시는 공유 시스템 프롬프트를 한 번만 계산합니다. 모든 답은 같은 요청을 혼자 돌린 결과와 비교합니다. 이어서 배치 크기마다 디코드 단계 하나의 시간을 잽니다. 가중치는 배치 크기와 상관없이 한 번만 읽으므로, 단계가 계산에 묶이기 전까지는 행을 늘려도 비용이 거의 늘지 않습니다.</translation>
    </message>
    <message>
        <source>the shipped example</source>
        <translation>내장 예제</translation>
    </message>
    <message>
        <source>Choose file…</source>
        <translation>파일 선택…</translation>
    </message>
    <message>
        <source>the example's system prompt</source>
        <translation>예제의 시스템 프롬프트</translation>
    </message>
    <message>
        <source>continuous batching</source>
        <translation>연속 배칭</translation>
    </message>
    <message>
        <source>static batching</source>
        <translation>정적 배칭</translation>
    </message>
    <message>
        <source>off</source>
        <translation>끔</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>제한 없음</translation>
    </message>
    <message>
        <source>blocks (vLLM)</source>
        <translation>블록 (vLLM)</translation>
    </message>
    <message>
        <source>radix tree (SGLang)</source>
        <translation>radix 트리 (SGLang)</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>요청</translation>
    </message>
    <message>
        <source>Answers and timing</source>
        <translation>답과 시간 측정</translation>
    </message>
    <message>
        <source>Open a requests file</source>
        <translation>요청 파일 열기</translation>
    </message>
    <message>
        <source>Text files (*.txt);;All files (*)</source>
        <translation>텍스트 파일 (*.txt);;모든 파일 (*)</translation>
    </message>
    <message>
        <source>no system prompt</source>
        <translation>시스템 프롬프트 없음</translation>
    </message>
</context>
<context>
    <name>ServingView</name>
    <message>
        <source>Press Run to serve the requests and sweep the batch sizes.</source>
        <translation>실행을 누르면 요청들을 처리하고 배치 크기를 스윕합니다.</translation>
    </message>
    <message>
        <source>What each request did, step by step</source>
        <translation>단계마다 각 요청이 한 일</translation>
    </message>
    <message>
        <source>scheduler step</source>
        <translation>스케줄러 단계</translation>
    </message>
    <message>
        <source>request</source>
        <translation>요청</translation>
    </message>
    <message>
        <source>Tokens fed per step</source>
        <translation>단계별 입력 토큰</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>토큰</translation>
    </message>
    <message>
        <source>Cache blocks per step</source>
        <translation>단계마다 캐시 블록</translation>
    </message>
    <message>
        <source>blocks</source>
        <translation>블록</translation>
    </message>
    <message>
        <source>Decode step time against batch size</source>
        <translation>배치 크기에 따른 디코드 단계 시간</translation>
    </message>
    <message>
        <source>batch size (rows)</source>
        <translation>배치 크기 (행)</translation>
    </message>
    <message>
        <source>ms per step</source>
        <translation>단계당 ms</translation>
    </message>
    <message>
        <source>Throughput against batch size</source>
        <translation>배치 크기에 따른 처리량</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation>토큰/초</translation>
    </message>
    <message>
        <source>prefill</source>
        <translation>프리필</translation>
    </message>
    <message>
        <source>decode</source>
        <translation>디코드</translation>
    </message>
    <message>
        <source>padding and idle rows</source>
        <translation>패딩과 빈 행</translation>
    </message>
    <message>
        <source>held by requests</source>
        <translation>요청이 가진 블록</translation>
    </message>
    <message>
        <source>prefix cache only</source>
        <translation>프리픽스 캐시만</translation>
    </message>
    <message>
        <source>free</source>
        <translation>빈 블록</translation>
    </message>
    <message>
        <source>measured (median, min–max)</source>
        <translation>측정값 (중앙값, 최소~최대)</translation>
    </message>
    <message>
        <source>memory floor: bytes ÷ copy speed</source>
        <translation>메모리 하한: 바이트 ÷ 복사 속도</translation>
    </message>
    <message>
        <source>compute floor: FLOPs ÷ matmul speed</source>
        <translation>계산 하한: FLOPs ÷ 행렬곱 속도</translation>
    </message>
    <message>
        <source>new tokens per second</source>
        <translation>초당 새 토큰</translation>
    </message>
    <message>
        <source>The requests run on KV Studio's own models; this model ran the batch sweep only.</source>
        <translation>요청은 KV Studio 자체 모델에서만 돌아갑니다. 이 모델로는 배치 스윕만 했습니다.</translation>
    </message>
    <message>
        <source>No batch sizes given: type some, e.g. 1, 2, 4, 8.</source>
        <translation>배치 크기가 없습니다: 예) 1, 2, 4, 8 처럼 입력하세요.</translation>
    </message>
</context>
<context>
    <name>SlideTables</name>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>phase</source>
        <translation>구간</translation>
    </message>
    <message>
        <source>token</source>
        <translation>토큰</translation>
    </message>
    <message>
        <source>token_id</source>
        <translation>토큰 id</translation>
    </message>
    <message>
        <source>tokens_fed</source>
        <translation>넣은 토큰</translation>
    </message>
    <message>
        <source>elapsed_ms</source>
        <translation>시간 (ms)</translation>
    </message>
    <message>
        <source>cache_bytes</source>
        <translation>캐시 (B)</translation>
    </message>
    <message>
        <source>cache_length</source>
        <translation>캐시 길이 (토큰)</translation>
    </message>
    <message>
        <source>mask</source>
        <translation>마스크</translation>
    </message>
    <message>
        <source>answer no.</source>
        <translation>답 번호</translation>
    </message>
    <message>
        <source>answer</source>
        <translation>답</translation>
    </message>
    <message>
        <source>count at T = {0} (of {1})</source>
        <translation>T = {0}에서 횟수 ({1}회 중)</translation>
    </message>
</context>
<context>
    <name>SpeculativePanel</name>
    <message>
        <source>A small draft proposes k tokens; the target checks all k in one forward over its cache, keeps the longest prefix it agrees with and adds one token of its own (the correction where a draft was rejected, the bonus when all passed). Both caches are then cropped back to the committed tokens: after a of k drafts are accepted the target drops k − a rows and the draft model k − 1 − a. Greedy output must equal plain greedy decoding token for token. Drafts: the 1-layer ko-draft model, or prompt lookup (the tokens that followed the last n-gram earlier in the text).</source>
        <translation>작은 초안이 토큰 k개를 제안하면, 대상 모델이 자기 캐시 위에서 한 번의 forward로 k개를 모두 검사해 동의하는 가장 긴 앞부분을 받아들이고 자기 토큰 하나를 더합니다(초안이 거절된 곳에서는 수정 토큰, 모두 통과하면 보너스 토큰). 그다음 두 캐시를 확정된 토큰까지 잘라 냅니다: k개 중 a개가 받아들여지면 대상은 k − a행을, 초안 모델은 k − 1 − a행을 버립니다. 탐욕(greedy) 출력은 일반 탐욕 디코딩과 토큰 하나하나까지 같아야 합니다. 초안: 1층짜리 ko-draft 모델, 또는 프롬프트 조회(앞 텍스트에서 마지막 n-gram 뒤에 왔던 토큰들).</translation>
    </message>
    <message>
        <source>Show rounds of</source>
        <translation>라운드 보기</translation>
    </message>
</context>
<context>
    <name>SpeculativeView</name>
    <message>
        <source>draft model</source>
        <translation>초안 모델</translation>
    </message>
    <message>
        <source>prompt lookup</source>
        <translation>프롬프트 조회</translation>
    </message>
    <message>
        <source>Run the lab to see every round here.</source>
        <translation>실습을 실행하면 여기에 라운드마다 보입니다.</translation>
    </message>
    <message>
        <source>Cache rows after each round</source>
        <translation>라운드 후 캐시 행 수</translation>
    </message>
    <message>
        <source>round (0 = prefill)</source>
        <translation>라운드 (0 = 프리필)</translation>
    </message>
    <message>
        <source>rows</source>
        <translation>행</translation>
    </message>
    <message>
        <source>Rows appended (+) and cropped (−)</source>
        <translation>추가된 행(+)과 잘라 낸 행(−)</translation>
    </message>
    <message>
        <source>round (prefill left out)</source>
        <translation>라운드 (프리필 제외)</translation>
    </message>
    <message>
        <source>Acceptance rate α vs k</source>
        <translation>k에 따른 수락률 α</translation>
    </message>
    <message>
        <source>Tokens per target call vs k</source>
        <translation>k에 따른 대상 호출당 토큰</translation>
    </message>
    <message>
        <source>tokens per call</source>
        <translation>호출당 토큰</translation>
    </message>
    <message>
        <source>target</source>
        <translation>대상</translation>
    </message>
    <message>
        <source>target +</source>
        <translation>대상 +</translation>
    </message>
    <message>
        <source>target −</source>
        <translation>대상 −</translation>
    </message>
    <message>
        <source>draft +</source>
        <translation>초안 +</translation>
    </message>
    <message>
        <source>draft −</source>
        <translation>초안 −</translation>
    </message>
    <message>
        <source>formula ({0})</source>
        <translation>공식 ({0})</translation>
    </message>
    <message>
        <source>Done. Only prompt lookup ran: {0}</source>
        <translation>완료. 프롬프트 조회만 실행했습니다: {0}</translation>
    </message>
    <message>
        <source>✓ accepted · ✗ rejected · grey: after a rejection, never judged · blue: the target's own token. Rows: after the round (+ appended, − cropped).</source>
        <translation>✓ 수락 · ✗ 거절 · 회색: 거절 뒤라 판정되지 않음 · 파란색: 대상 모델 자신의 토큰. 행: 라운드 후 (+ 추가, − 잘라 냄).</translation>
    </message>
    <message>
        <source>bonus</source>
        <translation>보너스</translation>
    </message>
    <message>
        <source>prefill</source>
        <translation>프리필</translation>
    </message>
    <message>
        <source>correction</source>
        <translation>수정</translation>
    </message>
    <message>
        <source>target {0} (+{1} −{2})</source>
        <translation>대상 {0} (+{1} −{2})</translation>
    </message>
    <message>
        <source>draft {0} (+{1} −{2})</source>
        <translation>초안 {0} (+{1} −{2})</translation>
    </message>
    <message>
        <source>identical to greedy</source>
        <translation>탐욕과 동일</translation>
    </message>
    <message>
        <source>same as plain</source>
        <translation>일반 디코딩과 같음</translation>
    </message>
    <message>
        <source>ms (median of {0})</source>
        <translation>ms ({0}회 중앙값)</translation>
    </message>
    <message>
        <source>ms (single measurement)</source>
        <translation>ms (한 번 측정)</translation>
    </message>
    <message>
        <source>draft</source>
        <translation>초안</translation>
    </message>
    <message>
        <source>tokens / call</source>
        <translation>토큰 / 호출</translation>
    </message>
    <message>
        <source>formula</source>
        <translation>공식</translation>
    </message>
    <message>
        <source>calls / token</source>
        <translation>호출 / 토큰</translation>
    </message>
    <message>
        <source>× plain speed</source>
        <translation>× 일반 속도</translation>
    </message>
    <message>
        <source>median of {0} interleaved repeats</source>
        <translation>교차 반복 {0}회의 중앙값</translation>
    </message>
    <message>
        <source>a single measurement</source>
        <translation>한 번 측정</translation>
    </message>
    <message>
        <source>{0}, {1} new tokens: {2}, k = {3}: α {4:.2f}, {5:.2f} tokens per target call (formula {6:.2f}), {7:.2f} target calls per token</source>
        <translation>{0}, 새 토큰 {1}개: {2}, k = {3}: α {4:.2f}, 대상 호출당 {5:.2f}토큰 (공식 {6:.2f}), 토큰당 대상 호출 {7:.2f}회</translation>
    </message>
    <message>
        <source>wall time {0:.0f} ms vs plain {1:.0f} ms ({2})</source>
        <translation>실제 시간 {0:.0f} ms, 일반 디코딩 {1:.0f} ms ({2})</translation>
    </message>
    <message>
        <source>identical to greedy: {0} of {1} runs</source>
        <translation>탐욕과 동일: {1}회 중 {0}회</translation>
    </message>
    <message>
        <source>drafted</source>
        <translation>초안 수</translation>
    </message>
    <message>
        <source>accepted</source>
        <translation>수락</translation>
    </message>
    <message>
        <source>target rows</source>
        <translation>대상 행</translation>
    </message>
    <message>
        <source>target appended</source>
        <translation>대상 추가</translation>
    </message>
    <message>
        <source>target cropped</source>
        <translation>대상 잘라 냄</translation>
    </message>
    <message>
        <source>draft rows</source>
        <translation>초안 행</translation>
    </message>
    <message>
        <source>draft appended</source>
        <translation>초안 추가</translation>
    </message>
    <message>
        <source>draft cropped</source>
        <translation>초안 잘라 냄</translation>
    </message>
    <message>
        <source>target calls so far</source>
        <translation>지금까지 대상 호출</translation>
    </message>
    <message>
        <source>Rounds of {0}, k = {1}</source>
        <translation>{0}, k = {1}의 라운드</translation>
    </message>
    <message>
        <source>{0} vs k</source>
        <translation>k에 따른 {0}</translation>
    </message>
    <message>
        <source>tokens per call (measured)</source>
        <translation>호출당 토큰 (측정)</translation>
    </message>
    <message>
        <source>tokens per call (formula)</source>
        <translation>호출당 토큰 (공식)</translation>
    </message>
    <message>
        <source>target calls per token</source>
        <translation>토큰당 대상 호출</translation>
    </message>
    <message>
        <source>ms (median)</source>
        <translation>ms (중앙값)</translation>
    </message>
</context>
<context>
    <name>StepTimePlot</name>
    <message>
        <source>Time per step</source>
        <translation>단계별 시간</translation>
    </message>
    <message>
        <source>step (0 = prefill)</source>
        <translation>단계 (0 = 프리필)</translation>
    </message>
    <message>
        <source>ms per step</source>
        <translation>단계당 ms</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <source>cumulative ms</source>
        <translation>누적 ms</translation>
    </message>
    <message>
        <source>Σ ms</source>
        <translation>Σ ms</translation>
    </message>
    <message>
        <source>{0}: ms per step</source>
        <translation>{0}: 단계당 ms</translation>
    </message>
    <message>
        <source>{0}: cumulative</source>
        <translation>{0}: 누적</translation>
    </message>
    <message>
        <source>prefill = TTFT (single measurement)</source>
        <translation>프리필 = TTFT (한 번 측정)</translation>
    </message>
    <message>
        <source>Σ {0:,.0f} ms</source>
        <translation>누적 {0:,.0f} ms</translation>
    </message>
    <message>
        <source>TTFT median of {1}: {0}</source>
        <translation>TTFT {1}회 중앙값: {0}</translation>
    </message>
    <message>
        <source>{0}: {1:.2f} ms per generated token (median of {2} decode steps, {3:.2f}–{4:.2f})</source>
        <translation>{0}: 생성 토큰당 {1:.2f} ms (디코드 {2}개 단계 중앙값, {3:.2f}–{4:.2f})</translation>
    </message>
    <message>
        <source>{0} {1:.1f} ms</source>
        <translation>{0} {1:.1f} ms</translation>
    </message>
    <message>
        <source>TTFT, single measurement: </source>
        <translation>TTFT, 한 번 측정: </translation>
    </message>
    <message>
        <source>(Lecture → Measure TTFT repeats it)</source>
        <translation>(강의 → TTFT 측정으로 반복해 잴 수 있음)</translation>
    </message>
    <message>
        <source>TTFT {0:.1f} ms</source>
        <translation>첫 토큰 {0:.1f} ms</translation>
    </message>
    <message>
        <source>TTFT median of {0} (bar: min–max)</source>
        <translation>TTFT {0}회 중앙값 (막대: 최소~최대)</translation>
    </message>
    <message>
        <source>TTFT: {0}</source>
        <translation>첫 토큰: {0}</translation>
    </message>
    <message>
        <source>{0} {1:.2f} ms ({2:.2f}–{3:.2f})</source>
        <translation>{0} {1:.2f} ms ({2:.2f}–{3:.2f})</translation>
    </message>
    <message>
        <source>TTFT median of {0} rounds: </source>
        <translation>TTFT {0}회 중앙값: </translation>
    </message>
    <message>
        <source>{0}: time of the step (ms)</source>
        <translation>{0}: 단계 시간 (ms)</translation>
    </message>
    <message>
        <source>{0}: time so far (ms)</source>
        <translation>{0}: 누적 시간 (ms)</translation>
    </message>
    <message>
        <source>Time to first token, repeated</source>
        <translation>첫 토큰까지 시간, 반복 측정</translation>
    </message>
    <message>
        <source>round</source>
        <translation>회차</translation>
    </message>
    <message>
        <source>{0}: TTFT (ms)</source>
        <translation>{0}: TTFT (ms)</translation>
    </message>
</context>
<context>
    <name>SteppedLabPanel</name>
    <message>
        <source>Start</source>
        <translation>시작</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>한 단계</translation>
    </message>
    <message>
        <source>Run to end</source>
        <translation>끝까지</translation>
    </message>
</context>
<context>
    <name>TemperaturePanel</name>
    <message>
        <source>Each temperature draws the same number of answers from one seed. Low temperatures repeat one answer; high ones spread out. The same seed gives the same answers in cached and recompute mode, except where float rounding (the two modes' logits differ by about 1e-5) tips a draw that sits right at a boundary.</source>
        <translation>온도마다 같은 시드에서 같은 수의 답을 뽑습니다. 낮은 온도는 한 답을 되풀이하고, 높은 온도는 답이 퍼집니다. 같은 시드는 캐시 모드와 재계산 모드에서 같은 답을 냅니다. 다만 두 모드의 로짓은 부동소수점 반올림 때문에 1e-5 정도 다르므로, 경계에 딱 걸린 뽑기는 다른 쪽으로 넘어갈 수 있습니다.</translation>
    </message>
    <message>
        <source>off</source>
        <translation>끔</translation>
    </message>
</context>
<context>
    <name>TemperatureView</name>
    <message>
        <source>How often each answer came up</source>
        <translation>답별 등장 횟수</translation>
    </message>
    <message>
        <source>answer rank (1 = most frequent)</source>
        <translation>답 순위 (1 = 가장 많음)</translation>
    </message>
    <message>
        <source>count</source>
        <translation>횟수</translation>
    </message>
    <message>
        <source>Distinct answers</source>
        <translation>서로 다른 답</translation>
    </message>
    <message>
        <source>temperature</source>
        <translation>온도</translation>
    </message>
    <message>
        <source>T = {0:g} ({1} distinct)</source>
        <translation>T = {0:g} (서로 다른 답 {1}개)</translation>
    </message>
    <message>
        <source>answer rank (1 = most frequent; {0} rarer answers beyond rank {1} are listed, not drawn)</source>
        <translation>답 순위 (1 = 가장 많음; {1}위 밖의 드문 답 {0}개는 목록에만 있고 그리지 않음)</translation>
    </message>
    <message>
        <source>same seed, both modes</source>
        <translation>같은 시드, 두 모드</translation>
    </message>
    <message>
        <source>T</source>
        <translation>T</translation>
    </message>
    <message>
        <source>distinct</source>
        <translation>서로 다른 답</translation>
    </message>
    <message>
        <source>most common answer</source>
        <translation>가장 많은 답</translation>
    </message>
    <message>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <source>T = {0:g}:</source>
        <translation>T = {0:g}:</translation>
    </message>
    <message>
        <source>(empty: eos at step 0)</source>
        <translation>(빈 답: 0번째 단계에서 eos)</translation>
    </message>
    <message>
        <source>T = {0:g}: {1}</source>
        <translation>T = {0:g}: {1}</translation>
    </message>
    <message>
        <source>Distinct answers out of {0} per temperature: </source>
        <translation>온도별 {0}개 중 서로 다른 답: </translation>
    </message>
    <message>
        <source>recompute mode gave the same answers for the same seed</source>
        <translation>같은 시드에서 재계산 모드도 같은 답</translation>
    </message>
    <message>
        <source>recompute mode gave the same answer for {0} of {1} samples (float rounding tipped the others)</source>
        <translation>재계산 모드는 {1}개 샘플 중 {0}개에서 같은 답 (나머지는 부동소수점 반올림으로 갈림)</translation>
    </message>
    <message>
        <source>T = {0:g}: top answer ×{1}</source>
        <translation>T = {0:g}: 최다 답 ×{1}</translation>
    </message>
    <message>
        <source>T = {0:g}: count (samples)</source>
        <translation>T = {0:g}: 횟수 (샘플)</translation>
    </message>
    <message>
        <source>T = {0:g}: answer</source>
        <translation>T = {0:g}: 답</translation>
    </message>
    <message>
        <source>distinct answers</source>
        <translation>서로 다른 답</translation>
    </message>
    <message>
        <source>samples</source>
        <translation>샘플 수</translation>
    </message>
</context>
<context>
    <name>TokensFedPlot</name>
    <message>
        <source>Tokens fed to the model per step</source>
        <translation>단계별로 모델에 넣은 토큰</translation>
    </message>
    <message>
        <source>step (0 = prefill)</source>
        <translation>단계 (0 = 프리필)</translation>
    </message>
    <message>
        <source>tokens fed (bars)</source>
        <translation>넣은 토큰 (막대)</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>토큰</translation>
    </message>
    <message>
        <source>cumulative</source>
        <translation>누적</translation>
    </message>
    <message>
        <source>{0}: per step</source>
        <translation>{0}: 단계별</translation>
    </message>
    <message>
        <source>{0}: cumulative</source>
        <translation>{0}: 누적</translation>
    </message>
    <message>
        <source>formula P+(N−1)</source>
        <translation>공식 P+(N−1)</translation>
    </message>
    <message>
        <source>formula P·N+N(N−1)/2</source>
        <translation>공식 P·N+N(N−1)/2</translation>
    </message>
    <message>
        <source>{0}: {1:,} tokens fed (formula {2:,})</source>
        <translation>{0}: 입력 토큰 {1:,} (공식 {2:,})</translation>
    </message>
    <message>
        <source>P = {0} prompt tokens, N = {1} steps</source>
        <translation>프롬프트 P = {0} 토큰, N = {1} 단계</translation>
    </message>
    <message>
        <source>cached P+(N−1), recompute P·N+N(N−1)/2</source>
        <translation>캐시 P+(N−1), 재계산 P·N+N(N−1)/2</translation>
    </message>
    <message>
        <source>{0}: tokens fed at the step (tokens)</source>
        <translation>{0}: 그 단계의 입력 토큰 (토큰)</translation>
    </message>
    <message>
        <source>{0}: tokens fed so far (tokens)</source>
        <translation>{0}: 누적 입력 토큰 (토큰)</translation>
    </message>
    <message>
        <source>{0}: formula, so far (tokens)</source>
        <translation>{0}: 공식, 누적 (토큰)</translation>
    </message>
</context>
<context>
    <name>TopPTopKPanel</name>
    <message>
        <source>The bars are the 20 most likely next tokens after the temperature. Top-k keeps the k most likely (hollow grey bars are cut) and renormalises them to sum to 1; the green line adds them up, and top-p keeps the most likely tokens until that sum reaches p (orange bars are cut). The chosen token is outlined; one chosen from past the 20 is drawn after them, with its rank.</source>
        <translation>막대는 온도를 적용한 뒤 가장 가능성 높은 다음 토큰 20개입니다. Top-k는 가장 가능성 높은 k개를 남기고(속이 빈 회색 막대는 잘림) 합이 1이 되도록 다시 정규화합니다. 초록 선은 그 누적합이며, top-p는 누적합이 p에 이를 때까지 가능성 높은 토큰을 남깁니다(주황 막대는 잘림). 선택된 토큰은 테두리로 표시되며, 20위 밖에서 선택된 토큰은 그 뒤에 순위와 함께 그려집니다.</translation>
    </message>
    <message>
        <source>off</source>
        <translation>끔</translation>
    </message>
</context>
<context>
    <name>TopPTopKView</name>
    <message>
        <source>Next-token distribution after temperature and top-k</source>
        <translation>온도와 top-k 적용 후 다음 토큰 분포</translation>
    </message>
    <message>
        <source>probability (renormalised)</source>
        <translation>확률 (재정규화)</translation>
    </message>
    <message>
        <source>cumulative mass</source>
        <translation>누적 확률</translation>
    </message>
    <message>
        <source>Candidates left after each filter</source>
        <translation>필터별 남은 후보 수</translation>
    </message>
    <message>
        <source>step</source>
        <translation>단계</translation>
    </message>
    <message>
        <source>tokens</source>
        <translation>토큰</translation>
    </message>
    <message>
        <source>after top-k</source>
        <translation>top-k 뒤</translation>
    </message>
    <message>
        <source>after top-p</source>
        <translation>top-p 뒤</translation>
    </message>
    <message>
        <source>Step {0}: chose {1!r} (p = {2:.3f} after top-k and top-p renormalised)</source>
        <translation>{0}단계: {1!r} 선택 (top-k와 top-p 후 재정규화한 p = {2:.3f})</translation>
    </message>
    <message>
        <source>Step {0}: the widest cut, {1:,} survivors of {2:,}; p = {3:g}</source>
        <translation>{0}단계 (후보가 가장 많은 단계): {2:,}개 중 {1:,}개 남음, p = {3:g}</translation>
    </message>
    <message>
        <source>Step {0}: {1:,} survivors of {2:,}; p = {3:g}</source>
        <translation>{0}단계: {2:,}개 중 {1:,}개 남음, p = {3:g}</translation>
    </message>
    <message>
        <source>chosen: {0}, rank {1:,}, outside the top {2}</source>
        <translation>선택: {0}, {1:,}위, 상위 {2}개 밖</translation>
    </message>
    <message>
        <source>chosen, rank {0:,}</source>
        <translation>선택, {0:,}위</translation>
    </message>
    <message>
        <source>chosen</source>
        <translation>선택</translation>
    </message>
    <message>
        <source>the {0} most likely tokens at step {1}</source>
        <translation>{1}단계에서 가능성이 높은 토큰 {0}개</translation>
    </message>
    <message>
        <source>the {0} most likely tokens at step {1}; top-p keeps {2:,}, past the bars (mass {3:.2f})</source>
        <translation>{1}단계에서 가능성이 높은 토큰 {0}개. top-p는 막대 너머까지 {2:,}개를 남김 (확률 합 {3:.2f})</translation>
    </message>
    <message>
        <source>top-k = {0}: mass {1:.2f}</source>
        <translation>top-k = {0}: 확률 {1:.2f}</translation>
    </message>
    <message>
        <source>p = {0:g}</source>
        <translation>p = {0:g}</translation>
    </message>
    <message>
        <source>top-p keeps {0}: mass {1:.2f} ≥ {2:g}</source>
        <translation>top-p가 {0}개 남김: 확률 {1:.2f} ≥ {2:g}</translation>
    </message>
    <message>
        <source>p(chosen)</source>
        <translation>p(선택)</translation>
    </message>
    <message>
        <source>(empty: eos at step 0)</source>
        <translation>(빈 답: 0번째 단계에서 eos)</translation>
    </message>
    <message>
        <source>Finished. Text: {0}</source>
        <translation>끝. 생성 글: {0}</translation>
    </message>
    <message>
        <source>Step {0}, the widest cut</source>
        <translation>{0}단계 (후보가 가장 많은 단계)</translation>
    </message>
    <message>
        <source>Step {0}</source>
        <translation>{0}단계</translation>
    </message>
    <message>
        <source>{0}: top-k = {1} keeps {2:,} of {7:,} tokens holding {3:.2f} of the probability; renormalised, top-p = {4:g} keeps {5:,} with mass {6:.2f} ≥ {4:g}</source>
        <translation>{0}: top-k = {1}이(가) 토큰 {7:,}개 중 확률 {3:.2f}를 가진 {2:,}개를 남김; 재정규화 후 top-p = {4:g}가 확률 {6:.2f} ≥ {4:g}인 {5:,}개를 남김</translation>
    </message>
    <message>
        <source>{0}: top-k off; top-p = {1:g} keeps {2:,} of {4:,} tokens with mass {3:.2f} ≥ {1:g}</source>
        <translation>{0}: top-k 끔, top-p = {1:g}가 토큰 {4:,}개 중 {2:,}개를 남기고 그 확률 합은 {3:.2f} ≥ {1:g}</translation>
    </message>
    <message>
        <source>temperature {0:g} · chose «{1}», p = {2:.3f} after both filters</source>
        <translation>온도 {0:g} · «{1}» 선택, 두 필터 후 p = {2:.3f}</translation>
    </message>
    <message>
        <source>Next-token distribution at step {0}</source>
        <translation>{0}단계의 다음 토큰 분포</translation>
    </message>
    <message>
        <source>rank (1 = most likely)</source>
        <translation>순위 (1 = 가장 가능성 높음)</translation>
    </message>
    <message>
        <source>token</source>
        <translation>토큰</translation>
    </message>
    <message>
        <source>probability after temperature</source>
        <translation>온도 적용 후 확률</translation>
    </message>
    <message>
        <source>probability after top-k, renormalised</source>
        <translation>top-k 후 재정규화한 확률</translation>
    </message>
    <message>
        <source>cumulative mass after top-k</source>
        <translation>top-k 후 누적 확률</translation>
    </message>
    <message>
        <source>kept by top-k and top-p</source>
        <translation>top-k와 top-p가 남김</translation>
    </message>
    <message>
        <source>after top-k (tokens)</source>
        <translation>top-k 후 (토큰)</translation>
    </message>
    <message>
        <source>after top-p (tokens)</source>
        <translation>top-p 후 (토큰)</translation>
    </message>
    <message>
        <source>kept mass after top-k (probability)</source>
        <translation>top-k 후 남은 확률</translation>
    </message>
    <message>
        <source>p(chosen) after both filters</source>
        <translation>두 필터 후 p(선택)</translation>
    </message>
</context>
<context>
    <name>TwinView</name>
    <message>
        <source>round (the engines take turns)</source>
        <translation>회차 (두 엔진이 번갈아)</translation>
    </message>
    <message>
        <source>ms/token</source>
        <translation>ms/토큰</translation>
    </message>
    <message>
        <source>Decode ms/token, one thread (dashed: median)</source>
        <translation>디코드 ms/토큰, 스레드 하나 (점선: 중앙값)</translation>
    </message>
    <message>
        <source>Same tokens {0}/{0}</source>
        <translation>같은 토큰 {0}/{0}</translation>
    </message>
    <message>
        <source>Tokens part at step {0} of {1}</source>
        <translation>토큰이 {1}단계 중 {0}단계에서 갈림</translation>
    </message>
    <message>
        <source>greedy</source>
        <translation>그리디</translation>
    </message>
    <message>
        <source>sampled, T {0:g}, seed {1}</source>
        <translation>샘플링, T {0:g}, 시드 {1}</translation>
    </message>
    <message>
        <source>a single measurement</source>
        <translation>한 번 측정</translation>
    </message>
    <message>
        <source>median of {0} interleaved rounds</source>
        <translation>번갈아 잰 {0}회의 중앙값</translation>
    </message>
    <message>
        <source>llama.cpp is {0:.2f}× faster</source>
        <translation>llama.cpp가 {0:.2f}배 빠름</translation>
    </message>
    <message>
        <source>KV Studio is {0:.2f}× faster</source>
        <translation>KV Studio가 {0:.2f}배 빠름</translation>
    </message>
    <message>
        <source>{0:.2f} (one round)</source>
        <translation>{0:.2f} (1회)</translation>
    </message>
    <message>
        <source>{0:.2f} (median of {1}, {2:.2f}–{3:.2f})</source>
        <translation>{0:.2f} ({1}회 중앙값, {2:.2f}–{3:.2f})</translation>
    </message>
    <message>
        <source>✓ {0}/{0}</source>
        <translation>✓ {0}/{0}</translation>
    </message>
    <message>
        <source>✗ from step {0}</source>
        <translation>✗ {0}단계부터 다름</translation>
    </message>
    <message>
        <source>tokens the same ({0})</source>
        <translation>같은 토큰 ({0})</translation>
    </message>
    <message>
        <source>decode ms/token, greedy, 1 thread</source>
        <translation>디코드 ms/토큰, 그리디, 스레드 1개</translation>
    </message>
    <message>
        <source>max |Δlogit| up to there</source>
        <translation>그때까지 최대 |Δlogit|</translation>
    </message>
    <message>
        <source>KV bytes per token</source>
        <translation>토큰당 KV 바이트</translation>
    </message>
    <message>
        <source>read from</source>
        <translation>읽은 곳</translation>
    </message>
    <message>
        <source>cache used bytes / tokens</source>
        <translation>캐시 사용 바이트 / 토큰 수</translation>
    </message>
    <message>
        <source>its 'llama_kv_cache: size' line / cells</source>
        <translation>'llama_kv_cache: size' 줄 / 셀 수</translation>
    </message>
    <message>
        <source>sequence state bytes per token</source>
        <translation>토큰당 시퀀스 상태 바이트</translation>
    </message>
    <message>
        <source>2nd prompt: evaluated, keeping {0} shared</source>
        <translation>2번째 프롬프트: 공유 {0}개 두고 평가</translation>
    </message>
    <message>
        <source>2nd prompt: evaluated, from empty</source>
        <translation>2번째 프롬프트: 빈 캐시에서 평가</translation>
    </message>
    <message>
        <source>copy and crop = straight on</source>
        <translation>복사·자르기 = 그대로 이어가기</translation>
    </message>
    <message>
        <source>ratio (ours ÷ llama.cpp)</source>
        <translation>비율 (우리 ÷ llama.cpp)</translation>
    </message>
    <message>
        <source>our top-2 margin there</source>
        <translation>그 단계의 우리 top-2 차이</translation>
    </message>
    <message>
        <source>max |Δprobability| there</source>
        <translation>그 단계의 최대 |Δ확률|</translation>
    </message>
    <message>
        <source>P = {0}, N = {1}</source>
        <translation>P = {0}, N = {1}</translation>
    </message>
    <message>
        <source>{0}; {1} ({2}).</source>
        <translation>{0}; {1} ({2}).</translation>
    </message>
    <message>
        <source>{0:,} B/token both</source>
        <translation>둘 다 {0:,} B/토큰</translation>
    </message>
    <message>
        <source>{0:,} B/token ours, {1:,} llama.cpp's</source>
        <translation>우리 {0:,} B/토큰, llama.cpp {1:,}</translation>
    </message>
    <message>
        <source>llama.cpp {0:.2f} ms/token vs ours {1:.2f} ({2}; {3})</source>
        <translation>llama.cpp {0:.2f} ms/토큰 vs 우리 {1:.2f} ({2}; {3})</translation>
    </message>
    <message>
        <source>2nd prompt sharing {0} of {1} tokens: evaluated {2} (ours) and {3} (llama.cpp's n_p_eval), {4} and {5} from empty</source>
        <translation>{1}개 중 {0}개 토큰을 공유하는 두 번째 프롬프트: 평가한 토큰 {2} (우리), {3} (llama.cpp의 n_p_eval), 빈 캐시에서는 {4}, {5}</translation>
    </message>
    <message>
        <source>{0}: ms/token</source>
        <translation>{0}: ms/토큰</translation>
    </message>
    <message>
        <source>Decode ms/token on one thread, each round</source>
        <translation>스레드 하나의 디코드 ms/토큰, 회차별</translation>
    </message>
    <message>
        <source>round</source>
        <translation>회차</translation>
    </message>
</context>
<context>
    <name>WeightsNotice</name>
    <message>
        <source>Random weights (the text is noise; counts, bytes and times are real)</source>
        <translation>무작위 가중치 (글은 의미 없음, 토큰 수·바이트·시간은 실제 값)</translation>
    </message>
</context>
</TS>