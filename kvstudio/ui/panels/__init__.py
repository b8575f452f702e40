"""One widget each: prompt and token chips, controls, sampling knobs, model picker, answers,
status bar.
"""
