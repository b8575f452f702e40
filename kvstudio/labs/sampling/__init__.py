"""The sampling labs: repeated samples (`sample`), the temperature lab (`temperature`)
and the top-k / top-p cut-off (`cutoff`).
"""
