"""Error and validation messages in the window's language.

Owns `localize(message)`. The engine and the exporters raise English
`ValueError`/`ExportError` messages (the command line shows them as they
are, and the core never imports Qt). The window passes each message it
shows through `localize`: a message that matches one of the templates
below is rebuilt from its translation with the same values; any other
message is shown unchanged. Templates use {0}, {1} … for the values, which
may be any text.
"""

from __future__ import annotations

import re
from functools import cache

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from kvstudio.charts.korean import attach_particles

CONTEXT = "Messages"

# The English messages the window can show, as raised (keep in step with the raise sites).
TEMPLATES = (
    # prompt and run validation (run/engine_adapter.py, run/engine_worker.py)
    QT_TRANSLATE_NOOP("Messages",
                      "The prompt is empty: type a question or some text, then step again."),
    QT_TRANSLATE_NOOP("Messages",
                      "The prompt has {0} tokens and {1} new tokens are asked for, but the model "
                      "handles {2} positions: shorten the prompt or lower 'max new tokens'."),
    QT_TRANSLATE_NOOP("Messages",
                      "The static cache holds {0} tokens but this run needs {1}: raise the static "
                      "length, shorten the prompt, or pick the dynamic cache."),
    QT_TRANSLATE_NOOP("Messages",
                      "Could not read the temperatures {0}: write numbers separated by commas, "
                      "e.g. 0.5, 1.0, 1.5."),
    QT_TRANSLATE_NOOP("Messages", "Temperatures must be 0 (greedy) or positive."),
    QT_TRANSLATE_NOOP("Messages", "No model is loaded yet; pick one in the Model menu."),
    # sampling settings (engine/records.py)
    QT_TRANSLATE_NOOP("Messages",
                      "Temperature must be 0 (greedy) or between {0} and {1}, got {2}: dividing "
                      "logits by a tinier number overflows, and a huge one makes every token "
                      "equally likely."),
    QT_TRANSLATE_NOOP("Messages",
                      "Repetition penalty must be between {0} and {1} (1.0 = off), got {2}."),
    QT_TRANSLATE_NOOP("Messages", "top-k must be 0 (off) or a positive count, got {0}."),
    QT_TRANSLATE_NOOP("Messages", "top-p must be in (0, 1], got {0}; use 1.0 to turn it off."),
    # labs (labs/*.py)
    QT_TRANSLATE_NOOP("Messages", "The prompt is empty: type a question for the lab."),
    QT_TRANSLATE_NOOP("Messages", "P + N = {0} is more than the model's {1} positions."),
    QT_TRANSLATE_NOOP("Messages",
                      "P + N = {0} is more than the model's {1} positions; lower P or N."),
    QT_TRANSLATE_NOOP("Messages",
                      "Could not read the lengths {0}: write whole numbers separated by commas, "
                      "e.g. 16, 32, 64, 128."),
    QT_TRANSLATE_NOOP("Messages", "Give at least one positive length, e.g. 16, 32, 64, 128."),
    QT_TRANSLATE_NOOP("Messages",
                      "The longest run needs {0} positions but the model has {1}; use shorter "
                      "lengths."),
    QT_TRANSLATE_NOOP("Messages", "Give at least one temperature, e.g. 0.3, 0.7, 1.0, 1.3."),
    # scale labs (labs/scale.py, labs/projector_lab.py)
    QT_TRANSLATE_NOOP("Messages", "No model is loaded yet; wait for it or pick a preset."),
    QT_TRANSLATE_NOOP("Messages", "No config.json at {0}; give a model folder or its config.json."),
    QT_TRANSLATE_NOOP("Messages", "{0} is not a JSON object; give a transformers config.json."),
    QT_TRANSLATE_NOOP("Messages",
                      "{0}: config.json has no {1}; give a transformers config.json."),
    QT_TRANSLATE_NOOP("Messages", "{0} must be true or false, got {1}."),
    # chat and cache inspector (labs/chat/session.py, labs/inspector.py)
    QT_TRANSLATE_NOOP("Messages",
                      "This turn needs {0} more tokens, but the conversation already holds {1} of "
                      "its {2} positions. Start a new chat (or raise the context limit) to go on; "
                      "the conversation so far is kept."),
    QT_TRANSLATE_NOOP("Messages",
                      "This turn needs {0} more tokens, but the conversation already holds {1} of "
                      "its {2} positions. Start a new chat to go on; the conversation so far is "
                      "kept."),
    QT_TRANSLATE_NOOP("Messages",
                      "This turn needs {0} tokens, but the context limit is {1} positions and the "
                      "answer needs at least one more: shorten the turn (or raise the context "
                      "limit)."),
    QT_TRANSLATE_NOOP("Messages",
                      "This turn needs {0} tokens, but the context limit is {1} positions and the "
                      "answer needs at least one more: shorten the turn."),
    QT_TRANSLATE_NOOP("Messages",
                      "This turn needs {0} tokens, but the context limit is {1} positions and the "
                      "answer needs at least one more: shorten the turn (or raise the context "
                      "limit); the conversation so far is kept."),
    QT_TRANSLATE_NOOP("Messages",
                      "This turn needs {0} tokens, but the context limit is {1} positions and the "
                      "answer needs at least one more: shorten the turn; the conversation so far "
                      "is kept."),
    QT_TRANSLATE_NOOP("Messages", "Type a user turn first (or take the next scripted one)."),
    # typed control tokens (engine/backends/hf.py)
    QT_TRANSLATE_NOOP("Messages",
                      "The text holds {0}, one of the model's control tokens, and this model's "
                      "chat template rewrites its messages, so it cannot be sent as plain text: "
                      "remove it or turn the chat template off."),
    QT_TRANSLATE_NOOP("Messages",
                      "Tick at least one way: reuse the cache, re-feed the history, or both."),
    QT_TRANSLATE_NOOP("Messages",
                      "The static cache holds {0} tokens but this run needs {1}; raise its length "
                      "or generate fewer tokens."),
    # export (charts/export.py)
    QT_TRANSLATE_NOOP("Messages",
                      "Cannot save {0}: the disk is full. Free some space or choose a folder "
                      "on another drive; nothing was written."),
    QT_TRANSLATE_NOOP("Messages",
                      "Cannot save {0}: {1} is not writable. Choose a folder you can write to "
                      "(for example your Documents folder); nothing was written."),
    QT_TRANSLATE_NOOP("Messages",
                      "Cannot save {0} in {1}: {2}. Choose another folder; nothing was written."),
    QT_TRANSLATE_NOOP("Messages", "Cannot save {0}: {1} does not exist. Choose another folder."),
    QT_TRANSLATE_NOOP("Messages",
                      "Cannot save {0}: {1} is a file, not a folder. Choose another folder."),
    QT_TRANSLATE_NOOP("Messages", "Nothing to export yet: run the model or a lab first."),
    QT_TRANSLATE_NOOP("Messages", "Nothing to export: no charts were given."),
    QT_TRANSLATE_NOOP("Messages",
                      "The chart rendered as an empty image; is it visible and sized?"),
    QT_TRANSLATE_NOOP("Messages", "Qt produced an empty PDF; is the chart visible and sized?"),
    QT_TRANSLATE_NOOP("Messages", "Qt could not encode the PNG image (out of memory?)."),
    QT_TRANSLATE_NOOP("Messages", "The SVG export has no drawing in it; is the chart empty?"),
    # checkpoints, sizes, broken models (files/checkpoints.py, engine/limits.py, engine/generate.py)
    QT_TRANSLATE_NOOP("Messages",
                      "{0} holds code ({1}) and was refused: KV Studio loads only tensors and "
                      "never runs code from a file. Use a plain state dict saved with "
                      "torch.save(model.state_dict(), path)."),
    QT_TRANSLATE_NOOP("Messages",
                      "{0} is empty (0 bytes); download or copy the checkpoint again."),
    QT_TRANSLATE_NOOP("Messages",
                      "Cannot read {0}: it is damaged or not a PyTorch checkpoint. Download or "
                      "copy it again."),
    QT_TRANSLATE_NOOP("Messages",
                      "The model produced NaN logits at step {0}: its weights are broken (NaN or "
                      "inf inside). Load another checkpoint; this one cannot generate text."),
    QT_TRANSLATE_NOOP("Messages",
                      "This run ({0} row(s) × {1} positions) needs about {2} of memory but only "
                      "{3} is free. Use fewer samples, fewer new tokens or a shorter static "
                      "cache."),
    QT_TRANSLATE_NOOP("Messages",
                      "P + N = {0} + {1} = {2} positions, but the model handles {3}: shorten the "
                      "prompt or ask for fewer new tokens."),
    QT_TRANSLATE_NOOP("Messages", "Cannot load the model ({0})."),
    # saved runs (files/runfile.py, files/runfile_checks.py)
    QT_TRANSLATE_NOOP("Messages",
                      "{0} is not a regular file (a device, pipe or folder); choose a saved run "
                      "(.kvrun.json)."),
    QT_TRANSLATE_NOOP("Messages",
                      "{0} is larger than {1} MiB, far more than a saved run holds; it is not a "
                      "KV Studio run file."),
    QT_TRANSLATE_NOOP("Messages",
                      "{0}: {1} prompt tokens + max_new_tokens {2} is more than the {3} positions "
                      "a model can have; the file is damaged."),
    QT_TRANSLATE_NOOP("Messages", "{0} must be between {1} and {2}, got {3}."),
    QT_TRANSLATE_NOOP("Messages", "{0} must be a whole number, got {1}."),
    QT_TRANSLATE_NOOP("Messages", "{0} must be numbers separated by commas, e.g. {1}; got {2}."),
    QT_TRANSLATE_NOOP("Messages", "{0} must be a finite number between {1} and {2}, got {3}."),
    QT_TRANSLATE_NOOP("Messages", "{0} must be a finite number, got {1}."),
    # any file read as text or JSON (engine/small_files.py), after the run files' own wording
    QT_TRANSLATE_NOOP("Messages",
                      "{0} is not a regular file (a device, pipe or folder); choose {1}."),
    QT_TRANSLATE_NOOP("Messages", "{0} does not exist; choose {1}."),
    QT_TRANSLATE_NOOP("Messages", "{0} is not UTF-8 text ({1}); save it as UTF-8 or choose {2}."),
    QT_TRANSLATE_NOOP("Messages", "{0} is not valid JSON ({1} at line {2}); fix it or choose {3}."),
    QT_TRANSLATE_NOOP("Messages",
                      "{0} is nested thousands of levels deep; it is damaged or not {1}."),
    QT_TRANSLATE_NOOP("Messages", "{0} cannot be read as JSON ({1}); choose {2}."),
    # the engine twin lab without the llama extra (engine/backends/llamacpp.py,
    # files/gguf_export.py) and its own check (labs/twin.py)
    QT_TRANSLATE_NOOP("Messages",
                      "The llama.cpp engine needs llama-cpp-python (the optional llama extra): "
                      "pip install 'kvstudio[llama]'  (it builds llama.cpp from source: about "
                      "{0} CPU-minutes)."),
    QT_TRANSLATE_NOOP("Messages",
                      "Writing GGUF needs the `gguf` package (the optional llama extra): "
                      "pip install 'kvstudio[llama]'  (or: pip install gguf)."),
    QT_TRANSLATE_NOOP("Messages",
                      "The twin lab needs P > {0} tokens (its copy and size checks use the first "
                      "{1})."),
)

_FIELD = re.compile(r"\\\{(\d+)\\\}")


@cache
def _pattern(template: str) -> re.Pattern[str]:
    """"Cannot save {0}: …" → a regex with one group per field, matching the whole message."""
    return re.compile("^" + _FIELD.sub(r"(?P<f\1>.+?)", re.escape(template)) + "$", re.DOTALL)


def match(message: str) -> tuple[str, list[str]] | None:
    """The template `message` was made from and its values, or None."""
    for template in TEMPLATES:
        found = _pattern(template).match(message)
        if found is not None:
            values = found.groupdict()
            return str(template), [values[f"f{i}"] for i in range(len(values))]
    return None


def localize(message: str) -> str:
    """`message` in the current language (unchanged when it is not one of ours)."""
    found = match(message.strip())
    if found is None:
        return message
    template, values = found
    # A Korean translation marks particles that depend on the value before them ("{0}을(를)"):
    # with the values in, each mark takes the one form that fits ("모델을", "파일를" never).
    return attach_particles(QCoreApplication.translate(CONTEXT, template).format(*values))
