"""Korean particles that fit the word before them, for texts with numbers and names filled in.

Owns `attach_particles`: a translation marks a particle whose form depends on
the word before it as ``이(가)``, ``을(를)``, ``은(는)``, ``과(와)`` or
``(으)로`` (also in the other order, ``가(이)``), and once the numbers and
names are in, each mark becomes the one form that fits what precedes it:
after a syllable with a final consonant (batchim: ``(code − 0xAC00) % 28 ≠
0``) 이 / 을 / 은 / 과 / 으로, after one without 가 / 를 / 는 / 와 / 로
(``(으)로`` takes 로 after ㄹ too). A number is read the Korean way (1 일,
2 이, 10 십, 6,400 → 백), a Latin letter by its name (k 케이, L 엘).
"""

from __future__ import annotations

import re

# (with batchim, without batchim) for each marked particle, in every spelling a text may use.
PARTICLES: dict[str, tuple[str, str]] = {
    "이(가)": ("이", "가"), "가(이)": ("이", "가"),
    "을(를)": ("을", "를"), "를(을)": ("을", "를"),
    "은(는)": ("은", "는"), "는(은)": ("은", "는"),
    "과(와)": ("과", "와"), "와(과)": ("과", "와"),
    "(으)로": ("으로", "로"),
}
_MARK = re.compile("|".join(re.escape(m) for m in sorted(PARTICLES, key=len, reverse=True)))
# The digit's Korean reading ends in a final consonant (영 일 삼 육 칠 팔; 이 사 오 구 do not).
_DIGIT_BATCHIM = {"0": True, "1": True, "2": False, "3": True, "4": False, "5": False,
                  "6": True, "7": True, "8": True, "9": False}
_DIGIT_RIEUL = {"1", "7", "8"}  # 일 칠 팔 end in ㄹ
# Latin letters read by their names: ending in a consonant sound (엘 엠 엔 알 …).
_LETTER_BATCHIM = set("lmnrLMNR")
_SKIP = " \t\"'’”)]}»›…·:;,."  # look through closing quotes and brackets to the word


def _final(text: str) -> tuple[bool, bool] | None:
    """(has batchim, ends in ㄹ) of the word that ends `text`; None when it cannot tell."""
    end = len(text)
    while end > 0 and text[end - 1] in _SKIP:
        end -= 1
    if end == 0:
        return None
    char = text[end - 1]
    code = ord(char) - 0xAC00
    if 0 <= code < 11172:
        final = code % 28
        return final != 0, final == 8  # 8 = ㄹ
    if char.isdigit():
        number = text[:end].rstrip("0123456789,")
        digits = text[len(number):end].replace(",", "")
        stripped = digits.rstrip("0")
        if not stripped:  # 0 → 영
            return True, False
        if stripped != digits:  # 10 십, 100 백, 1000 천, 10000 만: all end in a consonant
            return True, False
        last = stripped[-1]
        return _DIGIT_BATCHIM[last], last in _DIGIT_RIEUL
    if char.isascii() and char.isalpha():
        return char in _LETTER_BATCHIM, char in "lLrR"
    return None


def attach_particles(text: str) -> str:
    """Every marked particle in `text` in the one form that fits the word before it."""
    out: list[str] = []
    last = 0
    for match in _MARK.finditer(text):
        before = text[last:match.start()]
        out.append(before)
        with_batchim, without = PARTICLES[match.group()]
        final = _final("".join(out))
        if final is None:
            choice = with_batchim  # nothing readable before it: the fuller form
        elif match.group() == "(으)로" and final[1]:
            choice = without  # ㄹ takes 로: 서울로
        else:
            choice = with_batchim if final[0] else without
        out.append(choice)
        last = match.end()
    out.append(text[last:])
    return "".join(out)
