"""The run and its threads: the engine and lab workers, the adapter to `kvstudio.core`, the
run rules, the runs on screen, redraw pacing and replay.
"""
