"""The run and its threads: the engine and lab workers, the adapter to `kvstudio.engine`, the
run rules, the runs on screen, redraw pacing and replay.
"""
