"""The command's tools beside the labs: `bench`, `convert`, `train`, `info` and
`project` (the serving-scale projector).
"""
