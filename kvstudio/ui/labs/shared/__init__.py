"""What every lab panel is built from: the panel base (`base`), its table models
(`lab_models`, `results_table`) and the step navigation (`step_navigation`).
"""
